// Element types: the closed set of scalar types a tile or tensor may hold, the host
// representations of the two 16-bit float formats, and the C++ type <-> DType mapping.
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
};

inline constexpr int kNumDTypes = 13;

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
#undef CTILE_DTYPE_TRAIT

template <class T>
concept Element = requires { dtype_traits<T>::value; };

template <Element T>
inline constexpr DType dtype_of = dtype_traits<T>::value;

// Kinds of C++ element types (literals combine with tiles of the same kind).
template <class T>
inline constexpr bool is_float_element =
    std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, f16> || std::is_same_v<T, bf16>;
template <class T>
inline constexpr bool is_int_element = std::is_integral_v<T> && !std::is_same_v<T, bool>;

constexpr std::string_view dtype_name(DType d) {
  constexpr std::string_view names[] = {"bool", "i8", "i16", "i32", "i64", "u8", "u16",
                                        "u32",  "u64", "f16", "bf16", "f32", "f64"};
  return names[static_cast<int>(d)];
}

constexpr int dtype_size(DType d) {
  switch (d) {
    case DType::b1: case DType::i8: case DType::u8: return 1;
    case DType::i16: case DType::u16: case DType::f16: case DType::bf16: return 2;
    case DType::i32: case DType::u32: case DType::f32: return 4;
    case DType::i64: case DType::u64: case DType::f64: return 8;
  }
  return 0;
}

constexpr bool is_float(DType d) { return d == DType::f16 || d == DType::bf16 || d == DType::f32 || d == DType::f64; }
constexpr bool is_signed_int(DType d) { return d == DType::i8 || d == DType::i16 || d == DType::i32 || d == DType::i64; }
constexpr bool is_unsigned_int(DType d) { return d == DType::u8 || d == DType::u16 || d == DType::u32 || d == DType::u64; }
constexpr bool is_integer(DType d) { return is_signed_int(d) || is_unsigned_int(d); }
constexpr bool is_bool(DType d) { return d == DType::b1; }

// Parses "f32", "bf16", ... (the printer's spelling). Returns false for an unknown name.
bool parse_dtype(std::string_view s, DType& out);

}  // namespace ctile
