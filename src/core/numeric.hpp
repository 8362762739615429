// Element-level numeric rules of the IR (docs/ir.md, "Numeric rules"): compute types, exact
// rounding to the narrow floats (f16, bf16, fp8), wrap-around integer arithmetic, conversions. The CPU reference interpreter
// computes with them, the constant folder folds with them, and the CUDA code generator casts its
// literals with them, so all three agree bit for bit. Internal to the library (src/).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "ctile/core/dtype.hpp"
#include "ctile/core/error.hpp"
#include "ctile/ir/ir.hpp"

namespace ctile::numeric {

template <class T>
inline constexpr bool is_float_v = is_float_element<T>;
template <class T>
inline constexpr bool is_bool_v = std::is_same_v<T, bool>;
template <class T>
inline constexpr bool is_int_v = std::is_integral_v<T> && !is_bool_v<T>;
// The narrow floats: f16, bf16, f8e4m3, f8e5m2 (bit patterns, computed in float).
template <class T>
inline constexpr bool is_narrow_v = is_narrow_float_element<T>;

// Calls f(std::type_identity<T>{}) with T the element type of `d` (bool, ints, f16, bf16, float,
// double, f8e4m3, f8e5m2).
template <class F>
decltype(auto) dispatch(DType d, F&& f) {
  switch (d) {
    case DType::b1: return f(std::type_identity<bool>{});
    case DType::i8: return f(std::type_identity<std::int8_t>{});
    case DType::i16: return f(std::type_identity<std::int16_t>{});
    case DType::i32: return f(std::type_identity<std::int32_t>{});
    case DType::i64: return f(std::type_identity<std::int64_t>{});
    case DType::u8: return f(std::type_identity<std::uint8_t>{});
    case DType::u16: return f(std::type_identity<std::uint16_t>{});
    case DType::u32: return f(std::type_identity<std::uint32_t>{});
    case DType::u64: return f(std::type_identity<std::uint64_t>{});
    case DType::f16: return f(std::type_identity<f16>{});
    case DType::bf16: return f(std::type_identity<bf16>{});
    case DType::f32: return f(std::type_identity<float>{});
    case DType::f64: return f(std::type_identity<double>{});
    case DType::f8e4m3: return f(std::type_identity<f8e4m3>{});
    case DType::f8e5m2: return f(std::type_identity<f8e5m2>{});
  }
  throw InternalError("bad dtype");
}

// Same, but only over byte-width carriers (for type-agnostic copies): u8, u16, u32, u64.
template <class F>
decltype(auto) dispatch_width(DType d, F&& f) {
  switch (dtype_size(d)) {
    case 1: return f(std::type_identity<std::uint8_t>{});
    case 2: return f(std::type_identity<std::uint16_t>{});
    case 4: return f(std::type_identity<std::uint32_t>{});
    default: return f(std::type_identity<std::uint64_t>{});
  }
}

// ---- compute types: the narrow floats compute in float and round after each op (the fp8 types
// saturating: dtype.hpp); others in their own type.
template <class T>
struct Arith {
  using C = T;
  static C up(T v) { return v; }
  static T down(C v) { return v; }
};
template <>
struct Arith<f16> {
  using C = float;
  static float up(f16 v) { return f16::to_float(v.bits); }
  static f16 down(float v) { return f16::from_bits(f16::from_float(v)); }
};
template <>
struct Arith<bf16> {
  using C = float;
  static float up(bf16 v) { return bf16::to_float(v.bits); }
  static bf16 down(float v) { return bf16::from_bits(bf16::from_float(v)); }
};
template <>
struct Arith<f8e4m3> {
  using C = float;
  static float up(f8e4m3 v) { return f8e4m3::to_float(v.bits); }
  static f8e4m3 down(float v) { return f8e4m3::from_bits(f8e4m3::from_float(v)); }
};
template <>
struct Arith<f8e5m2> {
  using C = float;
  static float up(f8e5m2 v) { return f8e5m2::to_float(v.bits); }
  static f8e5m2 down(float v) { return f8e5m2::from_bits(f8e5m2::from_float(v)); }
};

// ---- exact rounding of a double (or a 64-bit integer) to the narrow floats. Rounding first to
// float with round-to-odd (24 >= 11 + 2 bits) and then to the narrow format with
// round-to-nearest-even gives the correctly rounded result in one step, without double rounding
// (every narrow format's subnormals are normal floats; the fp8 saturation keeps the order of values).
inline float round_to_odd_float(double x) {
  float t = static_cast<float>(x);
  if (static_cast<double>(t) == x || std::isnan(x)) return t;
  if (std::fabs(static_cast<double>(t)) > std::fabs(x)) t = std::nextafter(t, 0.0f);  // truncate
  std::uint32_t b = std::bit_cast<std::uint32_t>(t);
  b |= 1u;  // sticky: inexact results are odd
  return std::bit_cast<float>(b);
}
inline float round_to_odd_float_u64(std::uint64_t m) {
  if (m < (1ull << 24)) return static_cast<float>(m);
  const int nbits = 64 - std::countl_zero(m);
  const int shift = nbits - 24;
  std::uint64_t t = m >> shift;
  if ((m & ((1ull << shift) - 1)) != 0) t |= 1u;
  return std::ldexp(static_cast<float>(t), shift);
}

// Rounds a double to the float element type T (one rounding, to nearest even).
template <class T>
T float_from_double(double v) {
  if constexpr (std::is_same_v<T, double>) return v;
  else if constexpr (std::is_same_v<T, float>) return static_cast<float>(v);
  else return Arith<T>::down(round_to_odd_float(v));
}

template <class T>
double to_double(T v) {
  if constexpr (is_narrow_v<T>) return static_cast<double>(Arith<T>::up(v));
  else return static_cast<double>(v);
}

// ---- integer wrap-around arithmetic (computed in unsigned types: no UB).
template <class T>
using Wide = std::conditional_t<(sizeof(T) <= 4), std::uint32_t, std::uint64_t>;

template <class T> T wadd(T a, T b) { return static_cast<T>(static_cast<Wide<T>>(static_cast<Wide<T>>(a) + static_cast<Wide<T>>(b))); }
template <class T> T wsub(T a, T b) { return static_cast<T>(static_cast<Wide<T>>(static_cast<Wide<T>>(a) - static_cast<Wide<T>>(b))); }
template <class T> T wmul(T a, T b) { return static_cast<T>(static_cast<Wide<T>>(static_cast<Wide<T>>(a) * static_cast<Wide<T>>(b))); }
template <class T> T wneg(T a) { return wsub<T>(T(0), a); }
template <class T>
T idiv(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>) {
    if (a == std::numeric_limits<T>::min() && b == T(-1)) return a;
  }
  return static_cast<T>(a / b);
}
template <class T>
T irem(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return 0;
  }
  return static_cast<T>(a % b);
}
template <class T>
T ishl(T a, T b) {
  constexpr auto bits = static_cast<Wide<T>>(sizeof(T) * 8);
  const auto s = static_cast<Wide<T>>(static_cast<std::make_unsigned_t<T>>(b));
  if (s >= bits) return 0;
  return static_cast<T>(static_cast<Wide<T>>(static_cast<Wide<T>>(static_cast<std::make_unsigned_t<T>>(a)) << s));
}
template <class T>
T ishr(T a, T b) {
  constexpr auto bits = static_cast<Wide<T>>(sizeof(T) * 8);
  const auto s = static_cast<Wide<T>>(static_cast<std::make_unsigned_t<T>>(b));
  if constexpr (std::is_signed_v<T>) {
    if (s >= bits) return a < 0 ? T(-1) : T(0);
    return static_cast<T>(a >> s);  // arithmetic shift (C++20)
  } else {
    if (s >= bits) return 0;
    return static_cast<T>(a >> s);
  }
}

// ---- conversions between element types (Convert; constants; padding values).
// float -> int: truncate toward zero, saturate, NaN -> 0.
template <class D>
D int_from_double(double v) {
  if (std::isnan(v)) return 0;
  const double t = std::trunc(v);
  constexpr double lo = static_cast<double>(std::numeric_limits<D>::min());        // exact: 0 or -2^(n-1)
  constexpr double hi = 2.0 * static_cast<double>(std::numeric_limits<D>::max() / 2 + 1);  // 2^bits or 2^(bits-1)
  if (t <= lo) return std::numeric_limits<D>::min();
  if (t >= hi) return std::numeric_limits<D>::max();
  return static_cast<D>(t);
}

template <class D, class S>
D convert_elem(S x) {
  if constexpr (std::is_same_v<S, D>) {
    return x;
  } else if constexpr (is_bool_v<D>) {
    if constexpr (is_narrow_v<S>) return Arith<S>::up(x) != 0.0f;
    else return x != S(0);
  } else if constexpr (is_bool_v<S>) {
    if constexpr (is_narrow_v<D>) return Arith<D>::down(x ? 1.0f : 0.0f);
    else return static_cast<D>(x ? 1 : 0);
  } else if constexpr (is_int_v<S> && is_int_v<D>) {
    return static_cast<D>(x);  // modular (C++20)
  } else if constexpr (is_int_v<S>) {  // int -> float
    if constexpr (is_narrow_v<D>) {
      float r;
      if constexpr (std::is_signed_v<S>) {
        const std::uint64_t m = x < 0 ? std::uint64_t(0) - static_cast<std::uint64_t>(x) : static_cast<std::uint64_t>(x);
        r = round_to_odd_float_u64(m);
        if (x < 0) r = -r;
      } else {
        r = round_to_odd_float_u64(static_cast<std::uint64_t>(x));
      }
      return Arith<D>::down(r);
    } else {
      return static_cast<D>(x);  // one rounding to nearest
    }
  } else if constexpr (is_int_v<D>) {  // float -> int
    return int_from_double<D>(to_double(x));
  } else {  // float -> float
    if constexpr ((std::is_same_v<S, float> || is_narrow_v<S>) && is_narrow_v<D>) return Arith<D>::down(Arith<S>::up(x));
    else return float_from_double<D>(to_double(x));
  }
}

// A constant (Scalar) as an element of type T: floats convert like Convert from f64, integers like
// Convert from i64 (u64 constants are stored as their bit pattern in `i`, so wrap-around is exact).
template <class T>
T scalar_to(const ir::Scalar& s) {
  if (s.is_float) return convert_elem<T, double>(s.f);
  if constexpr (std::is_same_v<T, std::uint64_t>) return static_cast<std::uint64_t>(s.i);
  else return convert_elem<T, std::int64_t>(s.i);
}

}  // namespace ctile::numeric
