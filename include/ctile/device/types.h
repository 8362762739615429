// ctile device library: element types, their traits, and conversions between them, matching the
// numeric rules of docs/ir.md bit for bit (f16/bf16/fp8 rounding to nearest even, also for NaN
// patterns on the host; fp8 saturating to its largest finite value; one rounding from f64 and from
// 64-bit integers; saturating float -> int, NaN -> 0).
#pragma once

#include "ctile/device/config.h"

namespace ct {

// IEEE binary16 and bfloat16, held as their bit patterns (arithmetic is done in f32).
struct f16 {
  u16 bits;
};
struct bf16 {
  u16 bits;
};
// OCP FP8 (E4M3FN and E5M2, include/ctile/core/dtype.hpp), held as their bit patterns (arithmetic
// in f32; one byte in memory and in a tile's registers, like i8).
struct f8e4m3 {
  u8 bits;
};
struct f8e5m2 {
  u8 bits;
};

template <class A, class B>
struct is_same {
  static constexpr bool value = false;
};
template <class A>
struct is_same<A, A> {
  static constexpr bool value = true;
};

// kNarrow: the floats held as bit patterns and computed in f32 (f16, bf16, f8e4m3, f8e5m2).
enum Kind { kBool, kSigned, kUnsigned, kNarrow, kFloat };

// Traits of an element type: kind, width, compute type C (the narrow floats compute in float), Mem
// (the representation in tensors: bool is a byte), W (the unsigned type integer arithmetic wraps in).
template <class T>
struct Traits;
#define CT_INT_TRAITS(T, K, B, WT, LO, HI) \
  template <>                              \
  struct Traits<T> {                       \
    static constexpr int kind = K;         \
    static constexpr int bits = B;         \
    typedef T C;                           \
    typedef T Mem;                         \
    typedef WT W;                          \
    static CT_DEV T lowest() { return LO; } \
    static CT_DEV T highest() { return HI; } \
  };
CT_INT_TRAITS(i8, kSigned, 8, u32, (i8)(-128), (i8)127)
CT_INT_TRAITS(i16, kSigned, 16, u32, (i16)(-32768), (i16)32767)
CT_INT_TRAITS(i32, kSigned, 32, u32, (-2147483647 - 1), 2147483647)
CT_INT_TRAITS(i64, kSigned, 64, u64, kI64Min, kI64Max)
CT_INT_TRAITS(u8, kUnsigned, 8, u32, (u8)0, (u8)255)
CT_INT_TRAITS(u16, kUnsigned, 16, u32, (u16)0, (u16)65535)
CT_INT_TRAITS(u32, kUnsigned, 32, u32, 0u, 0xffffffffu)
CT_INT_TRAITS(u64, kUnsigned, 64, u64, 0ull, 0xffffffffffffffffull)
#undef CT_INT_TRAITS
template <>
struct Traits<bool> {
  static constexpr int kind = kBool;
  static constexpr int bits = 8;
  typedef bool C;
  typedef u8 Mem;
  typedef u32 W;
  static CT_DEV bool lowest() { return false; }
  static CT_DEV bool highest() { return true; }
};
template <>
struct Traits<f16> {
  static constexpr int kind = kNarrow;
  static constexpr int bits = 16;
  typedef float C;
  typedef f16 Mem;
};
template <>
struct Traits<bf16> {
  static constexpr int kind = kNarrow;
  static constexpr int bits = 16;
  typedef float C;
  typedef bf16 Mem;
};
template <>
struct Traits<f8e4m3> {
  static constexpr int kind = kNarrow;
  static constexpr int bits = 8;
  typedef float C;
  typedef f8e4m3 Mem;
};
template <>
struct Traits<f8e5m2> {
  static constexpr int kind = kNarrow;
  static constexpr int bits = 8;
  typedef float C;
  typedef f8e5m2 Mem;
};
template <>
struct Traits<float> {
  static constexpr int kind = kFloat;
  static constexpr int bits = 32;
  typedef float C;
  typedef float Mem;
};
template <>
struct Traits<double> {
  static constexpr int kind = kFloat;
  static constexpr int bits = 64;
  typedef double C;
  typedef double Mem;
};

template <class T>
constexpr bool is_int_v = Traits<T>::kind == kSigned || Traits<T>::kind == kUnsigned;
template <class T>
constexpr bool is_floaty_v = Traits<T>::kind == kNarrow || Traits<T>::kind == kFloat;
template <class T>
constexpr bool is_narrow_v = Traits<T>::kind == kNarrow;

// ---- 16-bit float <-> f32 -------------------------------------------------------------------------
// The hardware conversions round to nearest even like the CPU reference; NaNs are given the CPU's
// bit patterns (sign | 0x7e00 for f16, the truncated quiet NaN for bf16, payload-preserving widening).

CT_DEV float f16_bits_to_f32(u16 h) {
  if ((h & 0x7fffu) > 0x7c00u)
    return __uint_as_float(((u32)(h & 0x8000u) << 16) | 0x7f800000u | ((u32)(h & 0x3ffu) << 13));
#if defined(__CUDA_ARCH__)
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
#else
  const u32 sign = (u32)(h & 0x8000u) << 16;
  u32 e = (h >> 10) & 0x1fu;
  u32 m = h & 0x3ffu;
  if (e == 0x1f) return __uint_as_float(sign | 0x7f800000u | (m << 13));
  if (e == 0) {
    if (m == 0) return __uint_as_float(sign);
    int k = -1;
    do {
      ++k;
      m <<= 1;
    } while ((m & 0x400u) == 0);
    m &= 0x3ffu;
    return __uint_as_float(sign | ((u32)(112 - k) << 23) | (m << 13));
  }
  return __uint_as_float(sign | ((e + 112u) << 23) | (m << 13));
#endif
}

CT_DEV u16 f32_to_f16_bits(float f) {
  const u32 x = __float_as_uint(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (u16)(((x >> 16) & 0x8000u) | 0x7e00u);
#if defined(__CUDA_ARCH__)
  u16 r;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r) : "f"(f));
  return r;
#else
  const u32 sign = (x >> 16) & 0x8000u;
  const u32 ax = x & 0x7fffffffu;
  if (ax >= 0x477ff000u) return (u16)(sign | 0x7c00u);
  if (ax < 0x38800000u) {
    if (ax < 0x33000000u) return (u16)sign;
    const u32 mant = (ax & 0x7fffffu) | 0x800000u;
    const u32 drop = 126u - (ax >> 23);
    u32 r = mant >> drop;
    const u32 rem = mant & ((1u << drop) - 1u);
    const u32 half = 1u << (drop - 1u);
    if (rem > half || (rem == half && (r & 1u))) ++r;
    return (u16)(sign | r);
  }
  u32 r = ax - 0x38000000u;
  const u32 rem = r & 0x1fffu;
  r >>= 13;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;
  return (u16)(sign | r);
#endif
}

// f16 pairs in one 32-bit register (lo = element 2k), for tiles of packed 16-bit registers: the
// hardware conversions without the NaN fix-ups above (docs/ir.md: NaN payloads are unspecified;
// the host path is the exact one).
CT_DEV u32 pack_f16x2(float lo, float hi) {
#if defined(__CUDA_ARCH__)
  u32 r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
#else
  return (u32)f32_to_f16_bits(lo) | ((u32)f32_to_f16_bits(hi) << 16);
#endif
}
CT_DEV float f16_lo(u32 w) {
#if defined(__CUDA_ARCH__)
  float f;
  asm("{ .reg .b16 l, h; mov.b32 {l, h}, %1; cvt.f32.f16 %0, l; }" : "=f"(f) : "r"(w));
  return f;
#else
  return f16_bits_to_f32((u16)(w & 0xffffu));
#endif
}
CT_DEV float f16_hi(u32 w) {
#if defined(__CUDA_ARCH__)
  float f;
  asm("{ .reg .b16 l, h; mov.b32 {l, h}, %1; cvt.f32.f16 %0, h; }" : "=f"(f) : "r"(w));
  return f;
#else
  return f16_bits_to_f32((u16)(w >> 16));
#endif
}

CT_DEV float bf16_bits_to_f32(u16 b) { return __uint_as_float((u32)b << 16); }

CT_DEV u16 f32_to_bf16_bits(float f) {
  u32 u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (u16)((u >> 16) | 0x40u);
#if defined(__CUDA_ARCH__)
  u16 r;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(f));
  return r;
#else
  u += 0x7fffu + ((u >> 16) & 1u);
  return (u16)(u >> 16);
#endif
}

// ---- fp8 <-> f32 ------------------------------------------------------------------------------------
// To f32 exactly; from f32 rounded to nearest even and saturating (a magnitude past the largest
// finite value, infinities included, gives the largest finite value of its sign; NaN stays NaN),
// as PTX `cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32` does. sm_89 and newer convert with those
// instructions (two elements each); older targets and the host emulation take the exact software
// conversion below, the CPU reference's (include/ctile/core/dtype.hpp), NaN patterns included (the
// hardware's NaN patterns may differ: docs/ir.md leaves them unspecified).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
#define CT_FP8_CVT 1
#else
#define CT_FP8_CVT 0
#endif

// E exponent bits, M mantissa bits; FN: no infinities, NaN only as S.1..1.1..1 (E4M3FN).
template <int E, int M, bool FN>
struct Fp8 {
  static constexpr int kBias = (1 << (E - 1)) - 1;
  static constexpr int kEmin = 1 - kBias;
  static constexpr u32 kMaxBits = FN ? 0x7eu : ((((1u << E) - 2u) << M) | ((1u << M) - 1u));
  static constexpr u32 kMaxF32 = ((u32)((int)(kMaxBits >> M) - kBias + 127) << 23) | ((kMaxBits & ((1u << M) - 1u)) << (23 - M));
  static constexpr u32 kHalfMinSub = (u32)(kEmin - M - 1 + 127) << 23;

  static CT_DEV u8 from_f32(float v) {
    const u32 x = __float_as_uint(v);
    const u32 sign = (x >> 24) & 0x80u;
    const u32 ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) {  // NaN
      if constexpr (FN) return (u8)(sign | 0x7fu);
      else return (u8)(sign | ((1u << (E + M)) - (1u << M)) | ((ax >> (23 - M)) & ((1u << M) - 1u)) | (1u << (M - 1)));
    }
    if (ax >= kMaxF32) return (u8)(sign | kMaxBits);
    if (ax < ((u32)(kEmin + 127) << 23)) {  // subnormal or zero
      if (ax <= kHalfMinSub) return (u8)sign;
      const u32 mant = (ax & 0x7fffffu) | 0x800000u;
      const u32 drop = (u32)(kEmin - M + 150) - (ax >> 23);
      u32 r = mant >> drop;
      const u32 rem = mant & ((1u << drop) - 1u);
      const u32 half = 1u << (drop - 1u);
      if (rem > half || (rem == half && (r & 1u))) ++r;
      return (u8)(sign | r);
    }
    u32 r = ax - ((u32)(127 - kBias) << 23);
    const u32 rem = r & ((1u << (23 - M)) - 1u);
    const u32 half = 1u << (22 - M);
    r >>= 23 - M;
    if (rem > half || (rem == half && (r & 1u))) ++r;
    return (u8)(sign | r);
  }

  static CT_DEV float to_f32(u8 b) {
    const u32 sign = (u32)(b & 0x80u) << 24;
    const u32 e = ((u32)b >> M) & ((1u << E) - 1u);
    u32 m = b & ((1u << M) - 1u);
    if (FN && e == (1u << E) - 1u && m == (1u << M) - 1u) return __uint_as_float(sign | 0x7fc00000u);
    if (!FN && e == (1u << E) - 1u) return __uint_as_float(sign | 0x7f800000u | (m << (23 - M)));
    if (e == 0) {
      if (m == 0) return __uint_as_float(sign);
      int k = 0;
      while ((m & (1u << M)) == 0) {
        m <<= 1;
        ++k;
      }
      m &= (1u << M) - 1u;
      return __uint_as_float(sign | ((u32)(kEmin + 127 - k) << 23) | (m << (23 - M)));
    }
    return __uint_as_float(sign | ((e - (u32)kBias + 127u) << 23) | (m << (23 - M)));
  }
};
typedef Fp8<4, 3, true> Fp8E4M3;
typedef Fp8<5, 2, false> Fp8E5M2;

// Two f32 -> two fp8 in one 16-bit word (lo in the low byte), and one.
CT_DEV u16 pack_e4m3x2(float lo, float hi) {
#if CT_FP8_CVT
  u16 r;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
  return r;
#else
  return (u16)((u32)Fp8E4M3::from_f32(lo) | ((u32)Fp8E4M3::from_f32(hi) << 8));
#endif
}
CT_DEV u16 pack_e5m2x2(float lo, float hi) {
#if CT_FP8_CVT
  u16 r;
  asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
  return r;
#else
  return (u16)((u32)Fp8E5M2::from_f32(lo) | ((u32)Fp8E5M2::from_f32(hi) << 8));
#endif
}
CT_DEV u8 f32_to_e4m3_bits(float f) {
#if CT_FP8_CVT
  return (u8)pack_e4m3x2(f, 0.0f);
#else
  return Fp8E4M3::from_f32(f);
#endif
}
CT_DEV u8 f32_to_e5m2_bits(float f) {
#if CT_FP8_CVT
  return (u8)pack_e5m2x2(f, 0.0f);
#else
  return Fp8E5M2::from_f32(f);
#endif
}
// Two fp8 (lo in the low byte of w) -> f32 (through f16x2 on the hardware: every fp8 value is an f16).
CT_DEV void unpack_e4m3x2(u16 w, float& lo, float& hi) {
#if CT_FP8_CVT
  u32 h;
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h) : "h"(w));
  asm("{ .reg .b16 l, u; mov.b32 {l, u}, %2; cvt.f32.f16 %0, l; cvt.f32.f16 %1, u; }" : "=f"(lo), "=f"(hi) : "r"(h));
#else
  lo = Fp8E4M3::to_f32((u8)(w & 0xffu));
  hi = Fp8E4M3::to_f32((u8)(w >> 8));
#endif
}
CT_DEV void unpack_e5m2x2(u16 w, float& lo, float& hi) {
#if CT_FP8_CVT
  u32 h;
  asm("cvt.rn.f16x2.e5m2x2 %0, %1;" : "=r"(h) : "h"(w));
  asm("{ .reg .b16 l, u; mov.b32 {l, u}, %2; cvt.f32.f16 %0, l; cvt.f32.f16 %1, u; }" : "=f"(lo), "=f"(hi) : "r"(h));
#else
  lo = Fp8E5M2::to_f32((u8)(w & 0xffu));
  hi = Fp8E5M2::to_f32((u8)(w >> 8));
#endif
}
CT_DEV float e4m3_bits_to_f32(u8 b) {
#if CT_FP8_CVT
  float f;
  asm("{ .reg .b32 h; .reg .b16 l, u; cvt.rn.f16x2.e4m3x2 h, %1; mov.b32 {l, u}, h; cvt.f32.f16 %0, l; }" : "=f"(f) : "h"((u16)b));
  return f;
#else
  return Fp8E4M3::to_f32(b);
#endif
}
CT_DEV float e5m2_bits_to_f32(u8 b) {
#if CT_FP8_CVT
  float f;
  asm("{ .reg .b32 h; .reg .b16 l, u; cvt.rn.f16x2.e5m2x2 h, %1; mov.b32 {l, u}, h; cvt.f32.f16 %0, l; }" : "=f"(f) : "h"((u16)b));
  return f;
#else
  return Fp8E5M2::to_f32(b);
#endif
}

// ---- compute types: up (to the compute type) and down (rounded back to the element type) -----------
CT_DEV float up(f16 h) { return f16_bits_to_f32(h.bits); }
CT_DEV float up(bf16 h) { return bf16_bits_to_f32(h.bits); }
CT_DEV float up(f8e4m3 h) { return e4m3_bits_to_f32(h.bits); }
CT_DEV float up(f8e5m2 h) { return e5m2_bits_to_f32(h.bits); }
template <class T>
CT_DEV T up(T x) {
  return x;
}

template <class T>
CT_DEV T down(typename Traits<T>::C c) {
  if constexpr (is_same<T, f16>::value) return f16{f32_to_f16_bits(c)};
  else if constexpr (is_same<T, bf16>::value) return bf16{f32_to_bf16_bits(c)};
  else if constexpr (is_same<T, f8e4m3>::value) return f8e4m3{f32_to_e4m3_bits(c)};
  else if constexpr (is_same<T, f8e5m2>::value) return f8e5m2{f32_to_e5m2_bits(c)};
  else return (T)c;
}

// ---- one rounding from f64 / 64-bit integers to the narrow floats ----------------------------------------
// Rounding to f32 with round-to-odd first (24 >= 11 + 2 bits) and then to nearest even is exact.
CT_DEV float round_to_odd_f32(double x) {
  const float t = (float)x;
  if ((double)t == x || x != x) return t;
  u32 u = __float_as_uint(t);
  if (fabs((double)t) > fabs(x)) u -= 1u;  // toward zero
  return __uint_as_float(u | 1u);
}
CT_DEV float round_to_odd_f32_u64(u64 m) {
  if (m < (1ull << 24)) return (float)m;
  const int nbits = 64 - __clzll((long long)m);
  const int shift = nbits - 24;
  u64 t = m >> shift;
  if ((m & ((1ull << shift) - 1ull)) != 0) t |= 1ull;
  return (float)t * __uint_as_float((u32)(127 + shift) << 23);
}

// A double rounded once to the float element type T.
template <class T>
CT_DEV T float_from_double(double v) {
  if constexpr (is_same<T, double>::value) return v;
  else if constexpr (is_same<T, float>::value) return (float)v;
  else return down<T>(round_to_odd_f32(v));
}

// ---- element conversions (ct.convert, docs/ir.md "Conversions") --------------------------------------
CT_DEV double pow2(int n) {
  double r = 1.0;
  for (int i = 0; i < n; ++i) r *= 2.0;
  return r;
}

// float -> int: truncate toward zero, saturate, NaN -> 0.
template <class D, class C>
CT_DEV D float_to_int(C v) {
  if (v != v) return (D)0;
  C t;
  if constexpr (is_same<C, float>::value) t = truncf(v);
  else t = trunc(v);
  constexpr bool sgn = Traits<D>::kind == kSigned;
  const C lo = sgn ? (C)(-pow2(Traits<D>::bits - 1)) : (C)0;
  const C hi = (C)pow2(sgn ? Traits<D>::bits - 1 : Traits<D>::bits);
  if (t <= lo) return Traits<D>::lowest();
  if (t >= hi) return Traits<D>::highest();
  return (D)t;
}

template <class T>
CT_DEV bool nonzero(T x) {
  if constexpr (is_narrow_v<T>) return up(x) != 0.0f;
  else return x != (T)0;
}

template <class D, class S>
CT_DEV D convert(S x) {
  if constexpr (is_same<D, S>::value) {
    return x;
  } else if constexpr (Traits<D>::kind == kBool) {
    return nonzero(x);
  } else if constexpr (Traits<S>::kind == kBool) {
    if constexpr (is_narrow_v<D>) return down<D>(x ? 1.0f : 0.0f);
    else return (D)(x ? 1 : 0);
  } else if constexpr (is_int_v<S> && is_int_v<D>) {
    return (D)x;  // modular
  } else if constexpr (is_int_v<S>) {  // int -> float
    if constexpr (is_narrow_v<D>) {
      float r;
      if constexpr (Traits<S>::kind == kSigned) {
        const u64 m = x < 0 ? 0ull - (u64)(i64)x : (u64)(i64)x;
        r = round_to_odd_f32_u64(m);
        if (x < 0) r = -r;
      } else {
        r = round_to_odd_f32_u64((u64)x);
      }
      return down<D>(r);
    } else {
      return (D)x;  // one rounding to nearest even
    }
  } else if constexpr (is_int_v<D>) {  // float -> int
    return float_to_int<D>(up(x));
  } else {  // float -> float
    if constexpr (is_same<D, double>::value) return (double)up(x);
    else if constexpr (is_same<D, float>::value) return (float)up(x);
    else if constexpr (is_same<S, double>::value) return down<D>(round_to_odd_f32(x));
    else return down<D>(up(x));  // f32 or another narrow type (exact in f32) -> D
  }
}

// Scalar kernel parameters arrive as 64-bit words holding the bit pattern in the low bytes.
template <class T>
CT_DEV T from_word(u64 w) {
  if constexpr (is_same<T, float>::value) return __uint_as_float((u32)w);
  else if constexpr (is_same<T, double>::value) return __longlong_as_double((long long)w);
  else if constexpr (is_same<T, f16>::value) return f16{(u16)w};
  else if constexpr (is_same<T, bf16>::value) return bf16{(u16)w};
  else if constexpr (is_same<T, f8e4m3>::value) return f8e4m3{(u8)w};
  else if constexpr (is_same<T, f8e5m2>::value) return f8e5m2{(u8)w};
  else if constexpr (is_same<T, bool>::value) return (w & 0xffu) != 0;
  else return (T)w;
}

}  // namespace ct
