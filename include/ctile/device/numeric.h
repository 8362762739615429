// ctile device library: element-wise operations with the semantics of docs/ir.md. The narrow floats
// (f16, bf16, fp8) compute in f32 and round after each op; integers wrap (computed in unsigned
// types); division by zero gives 0; shifts by >= the width give 0 (or -1 for arithmetic shifts of
// negatives); min/max on floats follow fmin/fmax. Accurate math functions (no fast-math); rsqrt is
// 1 / sqrt like the reference.
#pragma once

#include "ctile/device/arch.h"
#include "ctile/device/types.h"

namespace ct {

// libm by compute type
CT_DEV float m_exp(float x) { return expf(x); }
CT_DEV double m_exp(double x) { return exp(x); }
CT_DEV float m_exp2(float x) { return exp2f(x); }
CT_DEV double m_exp2(double x) { return exp2(x); }
CT_DEV float m_log(float x) { return logf(x); }
CT_DEV double m_log(double x) { return log(x); }
CT_DEV float m_log2(float x) { return log2f(x); }
CT_DEV double m_log2(double x) { return log2(x); }
CT_DEV float m_sqrt(float x) { return sqrtf(x); }
CT_DEV double m_sqrt(double x) { return sqrt(x); }
CT_DEV float m_tanh(float x) { return tanhf(x); }
CT_DEV double m_tanh(double x) { return tanh(x); }
CT_DEV float m_sin(float x) { return sinf(x); }
CT_DEV double m_sin(double x) { return sin(x); }
CT_DEV float m_cos(float x) { return cosf(x); }
CT_DEV double m_cos(double x) { return cos(x); }
CT_DEV float m_abs(float x) { return fabsf(x); }
CT_DEV double m_abs(double x) { return fabs(x); }
CT_DEV float m_floor(float x) { return floorf(x); }
CT_DEV double m_floor(double x) { return floor(x); }
CT_DEV float m_ceil(float x) { return ceilf(x); }
CT_DEV double m_ceil(double x) { return ceil(x); }
CT_DEV float m_fmod(float x, float y) { return fmodf(x, y); }
CT_DEV double m_fmod(double x, double y) { return fmod(x, y); }
CT_DEV float m_fmin(float x, float y) { return fminf(x, y); }
CT_DEV double m_fmin(double x, double y) { return fmin(x, y); }
CT_DEV float m_fmax(float x, float y) { return fmaxf(x, y); }
CT_DEV double m_fmax(double x, double y) { return fmax(x, y); }
CT_DEV float m_pow(float x, float y) { return powf(x, y); }
CT_DEV double m_pow(double x, double y) { return pow(x, y); }
CT_DEV float m_fma(float x, float y, float z) { return fmaf(x, y, z); }
CT_DEV float m_erf(float x) { return erff(x); }
CT_DEV double m_erf(double x) { return erf(x); }
CT_DEV float m_erfc(float x) { return erfcf(x); }
CT_DEV double m_erfc(double x) { return erfc(x); }
CT_DEV float m_log1p(float x) { return log1pf(x); }
CT_DEV double m_log1p(double x) { return log1p(x); }
CT_DEV float m_expm1(float x) { return expm1f(x); }
CT_DEV double m_expm1(double x) { return expm1(x); }
CT_DEV float m_atan2(float y, float x) { return atan2f(y, x); }
CT_DEV double m_atan2(double y, double x) { return atan2(y, x); }
CT_DEV double m_fma(double x, double y, double z) { return fma(x, y, z); }

// ---- integer helpers (wrap-around via the unsigned type W) --------------------------------------------
template <class T>
CT_DEV T wadd(T a, T b) {
  typedef typename Traits<T>::W W;
  return (T)(W)((W)a + (W)b);
}
template <class T>
CT_DEV T wsub(T a, T b) {
  typedef typename Traits<T>::W W;
  return (T)(W)((W)a - (W)b);
}
template <class T>
CT_DEV T wmul(T a, T b) {
  typedef typename Traits<T>::W W;
  return (T)(W)((W)a * (W)b);
}
template <class T>
CT_DEV T wneg(T a) {
  return wsub<T>((T)0, a);
}

// ---- unary ----------------------------------------------------------------------------------------------
#define CT_FLOAT_UNARY(NAME, EXPR)                               \
  template <class T>                                             \
  CT_DEV T NAME(T a) {                                           \
    const typename Traits<T>::C x = up(a);                       \
    return down<T>(EXPR);                                        \
  }
CT_FLOAT_UNARY(op_exp, m_exp(x))
CT_FLOAT_UNARY(op_exp2, m_exp2(x))
CT_FLOAT_UNARY(op_log, m_log(x))
CT_FLOAT_UNARY(op_log2, m_log2(x))
CT_FLOAT_UNARY(op_sqrt, m_sqrt(x))
CT_FLOAT_UNARY(op_rsqrt, (typename Traits<T>::C)1 / m_sqrt(x))
CT_FLOAT_UNARY(op_tanh, m_tanh(x))
CT_FLOAT_UNARY(op_sin, m_sin(x))
CT_FLOAT_UNARY(op_cos, m_cos(x))
CT_FLOAT_UNARY(op_floor, m_floor(x))
CT_FLOAT_UNARY(op_ceil, m_ceil(x))
CT_FLOAT_UNARY(op_erf, m_erf(x))
CT_FLOAT_UNARY(op_erfc, m_erfc(x))
CT_FLOAT_UNARY(op_log1p, m_log1p(x))
CT_FLOAT_UNARY(op_expm1, m_expm1(x))
#undef CT_FLOAT_UNARY

// 1 / (1 + e^-x), and e^x / (1 + e^x) below 0 (no overflow of e^-x), like the reference.
template <class T>
CT_DEV T op_sigmoid(T a) {
  typedef typename Traits<T>::C C;
  // 1 / (1 + e^-x) for x >= 0, e^x / (1 + e^x) below (docs/ir.md), with one exp and one division
  // chosen by selects instead of a branch per element: the same roundings, a third less code for
  // NVRTC (an unrolled epilogue of 128 sigmoids a thread compiles in 1.0 s instead of 1.5).
  //
  // Below 0 a tail e^x under 2^-30 (2^-60 for f64) is the result itself: e / (1 + e) lies within
  // e * 2^-30 of e, far inside half an ulp, so the correctly rounded quotient is e. Taking it by a
  // select keeps the division's numerator normal: a subnormal one (x < -87 in f32) sends IEEE
  // division down its slow path, and in a warp of random products nearly every element has a lane
  // that does. Bit for bit the quotient of the formula above.
  const C x = up(a);
  const bool neg = !(x >= (C)0);  // NaN too: e^NaN is NaN below
  const C e = m_exp(neg ? x : -x);
  // The quotient then lies in [2^-31, 1] with a denominator in (1, 2]: in f32 it takes the
  // division's fast path without its range check (no branch per element).
  const bool tail = neg && e < (sizeof(C) == 4 ? (C)0x1p-30 : (C)0x1p-60);
  const C n = neg && !tail ? e : (C)1;
  C q;
  if constexpr (sizeof(C) == 4)
    q = div_rn_in_range(n, (C)1 + e);
  else
    q = n / ((C)1 + e);
  return down<T>(tail ? e : q);
}
template <class T>
CT_DEV T op_neg(T a) {
  if constexpr (is_floaty_v<T>) return down<T>(-up(a));
  else return wneg<T>(a);
}
template <class T>
CT_DEV T op_abs(T a) {
  if constexpr (is_floaty_v<T>) return down<T>(m_abs(up(a)));
  else if constexpr (Traits<T>::kind == kSigned) return a < 0 ? wneg<T>(a) : a;
  else return a;
}
template <class T>
CT_DEV T op_not(T a) {
  if constexpr (Traits<T>::kind == kBool) return !a;
  else return (T)~a;
}

// Bit counts of the pattern in T's own width (the result in T).
template <class T>
CT_DEV T op_popcount(T a) {
  if constexpr (sizeof(T) == 8) return (T)__popcll((u64)a);
  else if constexpr (sizeof(T) == 4) return (T)__popc((u32)a);
  else if constexpr (sizeof(T) == 2) return (T)__popc((u32)(u16)a);
  else return (T)__popc((u32)(u8)a);
}
template <class T>
CT_DEV T op_clz(T a) {
  if constexpr (sizeof(T) == 8) return (T)__clzll((i64)a);
  else if constexpr (sizeof(T) == 4) return (T)__clz((i32)a);
  else if constexpr (sizeof(T) == 2) return (T)(__clz((i32)(u32)(u16)a) - 16);
  else return (T)(__clz((i32)(u32)(u8)a) - 24);
}
// The same bits as element type To (same width: the type rule checks it).
template <class To, class From>
CT_DEV To op_bitcast(From a) {
  static_assert(sizeof(To) == sizeof(From), "bitcast keeps the width");
  union {
    From f;
    To t;
  } u;
  u.f = a;
  return u.t;
}

// ---- binary ---------------------------------------------------------------------------------------------
template <class T>
CT_DEV T op_add(T a, T b) {
  if constexpr (is_floaty_v<T>) return down<T>(up(a) + up(b));
  else return wadd<T>(a, b);
}
template <class T>
CT_DEV T op_sub(T a, T b) {
  if constexpr (is_floaty_v<T>) return down<T>(up(a) - up(b));
  else return wsub<T>(a, b);
}
template <class T>
CT_DEV T op_mul(T a, T b) {
  if constexpr (is_floaty_v<T>) return down<T>(up(a) * up(b));
  else return wmul<T>(a, b);
}
template <class T>
CT_DEV T op_div(T a, T b) {
  if constexpr (is_floaty_v<T>) {
    return down<T>(up(a) / up(b));
  } else {
    if (b == 0) return (T)0;
    if constexpr (Traits<T>::kind == kSigned) {
      if (a == Traits<T>::lowest() && b == (T)-1) return a;
    }
    return (T)(a / b);
  }
}
template <class T>
CT_DEV T op_rem(T a, T b) {
  if constexpr (is_floaty_v<T>) {
    return down<T>(m_fmod(up(a), up(b)));
  } else {
    if (b == 0) return (T)0;
    if constexpr (Traits<T>::kind == kSigned) {
      if (b == (T)-1) return (T)0;
    }
    return (T)(a % b);
  }
}
template <class T>
CT_DEV T op_min(T a, T b) {
  if constexpr (is_floaty_v<T>) return down<T>(m_fmin(up(a), up(b)));
  else return b < a ? b : a;
}
template <class T>
CT_DEV T op_max(T a, T b) {
  if constexpr (is_floaty_v<T>) return down<T>(m_fmax(up(a), up(b)));
  else return b > a ? b : a;
}
template <class T>
CT_DEV T op_pow(T a, T b) {
  return down<T>(m_pow(up(a), up(b)));
}
template <class T>
CT_DEV T op_atan2(T a, T b) {
  return down<T>(m_atan2(up(a), up(b)));
}
template <class T>
CT_DEV T op_and(T a, T b) {
  if constexpr (Traits<T>::kind == kBool) return a && b;
  else return (T)(a & b);
}
template <class T>
CT_DEV T op_or(T a, T b) {
  if constexpr (Traits<T>::kind == kBool) return a || b;
  else return (T)(a | b);
}
template <class T>
CT_DEV T op_xor(T a, T b) {
  if constexpr (Traits<T>::kind == kBool) return a != b;
  else return (T)(a ^ b);
}
// Unsigned of the same width as T.
template <int Bytes>
struct UnsignedOf;
template <>
struct UnsignedOf<1> {
  typedef u8 type;
};
template <>
struct UnsignedOf<2> {
  typedef u16 type;
};
template <>
struct UnsignedOf<4> {
  typedef u32 type;
};
template <>
struct UnsignedOf<8> {
  typedef u64 type;
};
template <class T>
CT_DEV T op_shl(T a, T b) {
  typedef typename Traits<T>::W W;
  typedef typename UnsignedOf<sizeof(T)>::type U;
  const W s = (W)(U)b;
  if (s >= (W)Traits<T>::bits) return (T)0;
  return (T)(W)((W)(U)a << s);
}
template <class T>
CT_DEV T op_shr(T a, T b) {
  typedef typename Traits<T>::W W;
  typedef typename UnsignedOf<sizeof(T)>::type U;
  const W s = (W)(U)b;
  if constexpr (Traits<T>::kind == kSigned) {
    if (s >= (W)Traits<T>::bits) return a < 0 ? (T)-1 : (T)0;
    return (T)(a >> s);  // arithmetic
  } else {
    if (s >= (W)Traits<T>::bits) return (T)0;
    return (T)(a >> s);
  }
}

// a * b + c: floats rounded once (the narrow floats: exact in f64, then one rounding); integers wrap.
template <class T>
CT_DEV T op_fma(T a, T b, T c) {
  if constexpr (is_narrow_v<T>) return float_from_double<T>(fma((double)up(a), (double)up(b), (double)up(c)));
  else if constexpr (is_floaty_v<T>) return m_fma(a, b, c);
  else return wadd<T>(wmul<T>(a, b), c);
}

// ---- comparisons (IEEE; bool orders false < true) --------------------------------------------------------
template <class T>
CT_DEV bool op_eq(T a, T b) { return up(a) == up(b); }
template <class T>
CT_DEV bool op_ne(T a, T b) { return up(a) != up(b); }
template <class T>
CT_DEV bool op_lt(T a, T b) { return up(a) < up(b); }
template <class T>
CT_DEV bool op_le(T a, T b) { return up(a) <= up(b); }
template <class T>
CT_DEV bool op_gt(T a, T b) { return up(a) > up(b); }
template <class T>
CT_DEV bool op_ge(T a, T b) { return up(a) >= up(b); }

// ct.select: both operands are evaluated (they are pure), then one is picked, as the unfused code
// does; a C++ `c ? a : b` over a fused expression would evaluate one side only, behind a branch per
// element (an exp2 with its slow path on one side: a divergent call instead of a select).
template <class T>
CT_DEV T op_select(bool c, T a, T b) { return c ? a : b; }

// ---- precision variants (docs/ir.md, "Numerics"): the generated code names the one the op's
// rounding attribute asks for. The narrow floats compute in f32; approx exists for f32 compute only.
CT_DEV float flush(float x) { return fabsf(x) < 1.17549435e-38f ? copysignf(0.0f, x) : x; }
CT_DEV double flush(double x) { return x; }
#define CT_APPROX_UNARY(NAME, EXPR)                 \
  template <class T>                                \
  CT_DEV T NAME(T a) {                              \
    const float x = up(a);                          \
    return down<T>(EXPR);                           \
  }
CT_APPROX_UNARY(op_exp_approx, ex2_approx(x * 1.44269504088896341f))
CT_APPROX_UNARY(op_exp2_approx, ex2_approx(x))
CT_APPROX_UNARY(op_log_approx, lg2_approx(x) * 0.693147180559945309f)
CT_APPROX_UNARY(op_log2_approx, lg2_approx(x))
CT_APPROX_UNARY(op_sqrt_approx, sqrt_approx(x))
CT_APPROX_UNARY(op_rsqrt_approx, rsqrt_approx(x))
CT_APPROX_UNARY(op_tanh_approx, tanh_approx(x))
#undef CT_APPROX_UNARY
template <class T>
CT_DEV T op_div_full(T a, T b) {
  if constexpr (is_same<T, double>::value) return a / b;
  else return down<T>(div_full(up(a), up(b)));
}
template <class T>
CT_DEV T op_div_approx(T a, T b) {
  return down<T>(div_approx(up(a), up(b)));
}
// Subnormal inputs and results flushed (the ftz attribute with an exact rounding).
template <class T, class F>
CT_DEV T with_ftz(F f, T a) {
  if constexpr (is_same<T, double>::value) return f(a);
  else return down<T>(flush(up(f(down<T>(flush(up(a)))))));
}
template <class T, class F>
CT_DEV T with_ftz(F f, T a, T b) {
  if constexpr (is_same<T, double>::value) return f(a, b);
  else return down<T>(flush(up(f(down<T>(flush(up(a))), down<T>(flush(up(b)))))));
}
template <class T>
CT_DEV T op_max_nan(T a, T b) {
  return down<T>(fmax_nan(up(a), up(b)));
}
template <class T>
CT_DEV T op_min_nan(T a, T b) {
  return down<T>(fmin_nan(up(a), up(b)));
}

// Index operands of gather/scatter/atomics as i64: u64 values past INT64_MAX are out of bounds (-1).
template <class T>
CT_DEV i64 to_index(T x) {
  if constexpr (is_same<T, u64>::value) return x > (u64)kI64Max ? (i64)-1 : (i64)x;
  else return (i64)x;
}

}  // namespace ct
