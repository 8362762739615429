// Element types: the closed set of scalar types a tile or tensor may hold, the host
// representations of the 16-bit and 8-bit float formats, and the C++ type <-> DType mapping.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>

namespace ctile {

enum class DType : std::uint8_t {
  b1,  // bool, one byte in memory
  i8, i16, i32, i64,
  u8, u16, u32, u64,
  f16, bf16, f32, f64,
  f8e4m3, f8e5m2,  // OCP FP8 (E4M3FN and E5M2); after the others, which keep their numbers
};

inline constexpr int kNumDTypes = 15;

// IEEE binary16, stored as its bit pattern. Conversions round to nearest even, like cvt.rn.
struct f16 {
  std::uint16_t bits;  // no initializer: trivially default-constructible (f16{} is +0)
  f16() = default;
  explicit f16(float v) : bits(from_float(v)) {}
  explicit operator float() const { return to_float(bits); }
  static f16 from_bits(std::uint16_t b) { f16 h{}; h.bits = b; return h; }
  static std::uint16_t from_float(float v);
  static float to_float(std::uint16_t b);
  friend bool operator==(f16 a, f16 b) { return a.bits == b.bits; }
};

// bfloat16 (8-bit exponent, 7-bit mantissa), stored as its bit pattern; round to nearest even.
struct bf16 {
  std::uint16_t bits;  // no initializer: trivially default-constructible (bf16{} is +0)
  bf16() = default;
  explicit bf16(float v) : bits(from_float(v)) {}
  explicit operator float() const { return to_float(bits); }
  static bf16 from_bits(std::uint16_t b) { bf16 h{}; h.bits = b; return h; }
  static std::uint16_t from_float(float v) {
    std::uint32_t u = std::bit_cast<std::uint32_t>(v);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x40u);  // quiet NaN
    u += 0x7fffu + ((u >> 16) & 1u);
    return static_cast<std::uint16_t>(u >> 16);
  }
  static float to_float(std::uint16_t b) { return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16); }
  friend bool operator==(bf16 a, bf16 b) { return a.bits == b.bits; }
};

// OCP 8-bit floats ("OCP 8-bit Floating Point Specification (OFP8)"), stored as their bit
// patterns; arithmetic is done in f32 like f16/bf16.
//   f8e4m3 (E4M3FN): 1 sign, 4 exponent (bias 7), 3 mantissa bits; no infinities, one NaN per sign
//                    (S.1111.111); largest finite 448 (S.1111.110), smallest subnormal 2^-9.
//   f8e5m2:          1 sign, 5 exponent (bias 15), 2 mantissa bits, IEEE-like (the top byte of an
//                    f16): infinities S.11111.00, NaNs S.11111.{01,10,11}; largest finite 57344,
//                    smallest subnormal 2^-16.
// From float: round to nearest even, saturating like PTX `cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32`:
// a value whose magnitude is above the largest finite one, infinities included, becomes the
// largest finite value of its sign; NaN stays NaN (e4m3: S.1111.111; e5m2: the sign, the top
// mantissa bits of the f32 payload, quiet). To float: exact.
namespace detail {
template <int E, int M, bool FN>  // FN: no infinities, NaN only with every exponent and mantissa bit set (E4M3FN)
struct Fp8Format {
  static constexpr int kBias = (1 << (E - 1)) - 1;
  static constexpr int kEmin = 1 - kBias;  // exponent of the smallest normal
  static constexpr std::uint8_t kMaxBits = FN ? static_cast<std::uint8_t>(0x7e) : static_cast<std::uint8_t>(((1 << E) - 2) << M | ((1 << M) - 1));
  // The largest finite value as f32 bits: exponent of kMaxBits, its mantissa bits on top.
  static constexpr std::uint32_t kMaxF32 =
      static_cast<std::uint32_t>((kMaxBits >> M) - kBias + 127) << 23 | static_cast<std::uint32_t>(kMaxBits & ((1 << M) - 1)) << (23 - M);
  // Half the smallest subnormal (2^(kEmin - M - 1)) as f32 bits: at or below it, zero.
  static constexpr std::uint32_t kHalfMinSub = static_cast<std::uint32_t>(kEmin - M - 1 + 127) << 23;

  static std::uint8_t from_float(float v) {
    const std::uint32_t x = std::bit_cast<std::uint32_t>(v);
    const auto sign = static_cast<std::uint8_t>((x >> 24) & 0x80u);
    const std::uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) {  // NaN
      if constexpr (FN) return static_cast<std::uint8_t>(sign | 0x7fu);
      else return static_cast<std::uint8_t>(sign | ((1u << (E + M)) - (1u << M)) | ((ax >> (23 - M)) & ((1u << M) - 1)) | (1u << (M - 1)));
    }
    if (ax >= kMaxF32) return static_cast<std::uint8_t>(sign | kMaxBits);  // saturate (infinities too)
    if (ax < static_cast<std::uint32_t>(kEmin + 127) << 23) {  // subnormal or zero
      if (ax <= kHalfMinSub) return sign;  // half the smallest subnormal rounds to even: 0
      // value = mant * 2^(e - 150); the subnormal unit is 2^(kEmin - M): drop (kEmin - M + 150 - e) bits.
      const std::uint32_t mant = (ax & 0x7fffffu) | 0x800000u;
      const std::uint32_t drop = static_cast<std::uint32_t>(kEmin - M + 150) - (ax >> 23);
      std::uint32_t r = mant >> drop;
      const std::uint32_t rem = mant & ((1u << drop) - 1u);
      const std::uint32_t half = 1u << (drop - 1u);
      if (rem > half || (rem == half && (r & 1u))) ++r;
      return static_cast<std::uint8_t>(sign | r);
    }
    // normal: rebias the exponent 127 -> kBias and round the mantissa from 23 to M bits (a carry
    // into the exponent is right; below kMaxF32 it never passes the largest finite value).
    std::uint32_t r = ax - (static_cast<std::uint32_t>(127 - kBias) << 23);
    const std::uint32_t rem = r & ((1u << (23 - M)) - 1u);
    const std::uint32_t half = 1u << (22 - M);
    r >>= 23 - M;
    if (rem > half || (rem == half && (r & 1u))) ++r;
    return static_cast<std::uint8_t>(sign | r);
  }

  static float to_float(std::uint8_t b) {
    const std::uint32_t sign = static_cast<std::uint32_t>(b & 0x80u) << 24;
    const std::uint32_t e = (b >> M) & ((1u << E) - 1u);
    std::uint32_t m = b & ((1u << M) - 1u);
    if (FN && e == (1u << E) - 1u && m == (1u << M) - 1u) return std::bit_cast<float>(sign | 0x7fc00000u);
    if (!FN && e == (1u << E) - 1u) return std::bit_cast<float>(sign | 0x7f800000u | (m << (23 - M)));  // inf, NaN
    if (e == 0) {
      if (m == 0) return std::bit_cast<float>(sign);
      int k = 0;  // subnormal: normalise
      while ((m & (1u << M)) == 0) {
        m <<= 1;
        ++k;
      }
      m &= (1u << M) - 1u;
      return std::bit_cast<float>(sign | (static_cast<std::uint32_t>(kEmin + 127 - k) << 23) | (m << (23 - M)));
    }
    return std::bit_cast<float>(sign | ((e - kBias + 127) << 23) | (m << (23 - M)));
  }
};
using Fp8E4M3 = Fp8Format<4, 3, true>;
using Fp8E5M2 = Fp8Format<5, 2, false>;
static_assert(Fp8E4M3::kMaxF32 == 0x43e00000u && Fp8E5M2::kMaxF32 == 0x47600000u, "largest finite: 448 and 57344");
static_assert(Fp8E5M2::kMaxBits == 0x7b, "e5m2's largest finite is S.11110.11");
}  // namespace detail

struct f8e4m3 {
  std::uint8_t bits;  // no initializer: trivially default-constructible (f8e4m3{} is +0)
  f8e4m3() = default;
  explicit f8e4m3(float v) : bits(from_float(v)) {}
  explicit operator float() const { return to_float(bits); }
  static f8e4m3 from_bits(std::uint8_t b) { f8e4m3 h{}; h.bits = b; return h; }
  static std::uint8_t from_float(float v) { return detail::Fp8E4M3::from_float(v); }
  static float to_float(std::uint8_t b) { return detail::Fp8E4M3::to_float(b); }
  friend bool operator==(f8e4m3 a, f8e4m3 b) { return a.bits == b.bits; }
};

struct f8e5m2 {
  std::uint8_t bits;  // no initializer: trivially default-constructible (f8e5m2{} is +0)
  f8e5m2() = default;
  explicit f8e5m2(float v) : bits(from_float(v)) {}
  explicit operator float() const { return to_float(bits); }
  static f8e5m2 from_bits(std::uint8_t b) { f8e5m2 h{}; h.bits = b; return h; }
  static std::uint8_t from_float(float v) { return detail::Fp8E5M2::from_float(v); }
  static float to_float(std::uint8_t b) { return detail::Fp8E5M2::to_float(b); }
  friend bool operator==(f8e5m2 a, f8e5m2 b) { return a.bits == b.bits; }
};

inline std::uint16_t f16::from_float(float v) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(v);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u);  // NaN
  if (ax >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // overflow (incl. rounding) -> inf
  if (ax < 0x38800000u) {  // result is subnormal or zero: scale into the 10-bit subnormal grid
    if (ax < 0x33000000u) return static_cast<std::uint16_t>(sign);  // < half the smallest subnormal
    // value = mant * 2^(e-150); the subnormal unit is 2^-24, so drop (126 - e) bits and round.
    const std::uint32_t mant = (ax & 0x7fffffu) | 0x800000u;
    const std::uint32_t drop = 126u - (ax >> 23);
    std::uint32_t r = mant >> drop;
    const std::uint32_t rem = mant & ((1u << drop) - 1u);
    const std::uint32_t half = 1u << (drop - 1u);
    if (rem > half || (rem == half && (r & 1u))) ++r;
    return static_cast<std::uint16_t>(sign | r);
  }
  // normal: rebias exponent 127 -> 15 and round the mantissa from 23 to 10 bits
  std::uint32_t r = ax - 0x38000000u;  // exponent rebiased, mantissa still 23 bits
  const std::uint32_t rem = r & 0x1fffu;
  r >>= 13;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;
  return static_cast<std::uint16_t>(sign | r);
}

inline float f16::to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  std::uint32_t exp = (h >> 10) & 0x1fu;
  std::uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    if (mant == 0) return std::bit_cast<float>(sign);
    // subnormal: normalise
    int e = -1;
    do { ++e; mant <<= 1; } while ((mant & 0x400u) == 0);
    mant &= 0x3ffu;
    return std::bit_cast<float>(sign | (static_cast<std::uint32_t>(112 - e) << 23) | (mant << 13));
  }
  return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 13));
}

// C++ element type <-> DType.
template <class T> struct dtype_traits;  // undefined: a type that is not an element type fails to compile here
#define CTILE_DTYPE_TRAIT(T, D, NAME)                                  \
  template <> struct dtype_traits<T> {                                 \
    static constexpr DType value = DType::D;                           \
    static constexpr std::string_view name = NAME;                     \
  };
CTILE_DTYPE_TRAIT(bool, b1, "bool")
CTILE_DTYPE_TRAIT(std::int8_t, i8, "i8")
CTILE_DTYPE_TRAIT(std::int16_t, i16, "i16")
CTILE_DTYPE_TRAIT(std::int32_t, i32, "i32")
CTILE_DTYPE_TRAIT(std::int64_t, i64, "i64")
CTILE_DTYPE_TRAIT(std::uint8_t, u8, "u8")
CTILE_DTYPE_TRAIT(std::uint16_t, u16, "u16")
CTILE_DTYPE_TRAIT(std::uint32_t, u32, "u32")
CTILE_DTYPE_TRAIT(std::uint64_t, u64, "u64")
CTILE_DTYPE_TRAIT(f16, f16, "f16")
CTILE_DTYPE_TRAIT(bf16, bf16, "bf16")
CTILE_DTYPE_TRAIT(float, f32, "f32")
CTILE_DTYPE_TRAIT(double, f64, "f64")
CTILE_DTYPE_TRAIT(f8e4m3, f8e4m3, "f8e4m3")
CTILE_DTYPE_TRAIT(f8e5m2, f8e5m2, "f8e5m2")
#undef CTILE_DTYPE_TRAIT

template <class T>
concept Element = requires { dtype_traits<T>::value; };

template <Element T>
inline constexpr DType dtype_of = dtype_traits<T>::value;

// Kinds of C++ element types (literals combine with tiles of the same kind). The narrow floats
// (f16, bf16 and the fp8 types) are held as bit patterns and computed in float.
template <class T>
inline constexpr bool is_fp8_element = std::is_same_v<T, f8e4m3> || std::is_same_v<T, f8e5m2>;
template <class T>
inline constexpr bool is_narrow_float_element = std::is_same_v<T, f16> || std::is_same_v<T, bf16> || is_fp8_element<T>;
template <class T>
inline constexpr bool is_float_element = std::is_same_v<T, float> || std::is_same_v<T, double> || is_narrow_float_element<T>;
template <class T>
inline constexpr bool is_int_element = std::is_integral_v<T> && !std::is_same_v<T, bool>;

constexpr std::string_view dtype_name(DType d) {
  constexpr std::string_view names[] = {"bool", "i8",   "i16", "i32", "i64", "u8",     "u16",   "u32",
                                        "u64",  "f16",  "bf16", "f32", "f64", "f8e4m3", "f8e5m2"};
  return names[static_cast<int>(d)];
}

constexpr int dtype_size(DType d) {
  switch (d) {
    case DType::b1: case DType::i8: case DType::u8: case DType::f8e4m3: case DType::f8e5m2: return 1;
    case DType::i16: case DType::u16: case DType::f16: case DType::bf16: return 2;
    case DType::i32: case DType::u32: case DType::f32: return 4;
    case DType::i64: case DType::u64: case DType::f64: return 8;
  }
  return 0;
}

constexpr bool is_fp8(DType d) { return d == DType::f8e4m3 || d == DType::f8e5m2; }
constexpr bool is_float(DType d) { return d == DType::f16 || d == DType::bf16 || d == DType::f32 || d == DType::f64 || is_fp8(d); }
constexpr bool is_signed_int(DType d) { return d == DType::i8 || d == DType::i16 || d == DType::i32 || d == DType::i64; }
constexpr bool is_unsigned_int(DType d) { return d == DType::u8 || d == DType::u16 || d == DType::u32 || d == DType::u64; }
constexpr bool is_integer(DType d) { return is_signed_int(d) || is_unsigned_int(d); }
constexpr bool is_bool(DType d) { return d == DType::b1; }

// Parses "f32", "bf16", ... (the printer's spelling). Returns false for an unknown name.
bool parse_dtype(std::string_view s, DType& out);

}  // namespace ctile
