// Element-wise ops of the CPU interpreter: Unary, Binary, Fma, Cmp, Select, Convert.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "interp.hpp"
#include "numeric.hpp"

namespace ctile::backend::cpu {
namespace {

using ir::BinaryFn;
using ir::CmpPred;
using ir::UnaryFn;

[[noreturn]] void unsupported(const char* what, DType d) {
  throw InternalError(detail::cat("cpu backend: ", what, " not supported on ", dtype_name(d)));
}

// out[i] = down(f(up(x[i])))
template <class T, class F>
void map1(const Tile& x, Tile& out, F f) {
  using A = Arith<T>;
  const T* a = x.as<T>();
  T* o = out.as<T>();
  for (std::int64_t i = 0; i < x.n; ++i) o[i] = A::down(f(A::up(a[i])));
}

template <class T, class F>
void map2(const Tile& x, const Tile& y, Tile& out, F f) {
  using A = Arith<T>;
  const T* a = x.as<T>();
  const T* b = y.as<T>();
  T* o = out.as<T>();
  for (std::int64_t i = 0; i < x.n; ++i) o[i] = A::down(f(A::up(a[i]), A::up(b[i])));
}

template <class T>
void unary_float(UnaryFn fn, const Tile& x, Tile& out) {
  using C = typename Arith<T>::C;
  switch (fn) {
    case UnaryFn::Neg: return map1<T>(x, out, [](C v) { return -v; });
    case UnaryFn::Exp: return map1<T>(x, out, [](C v) { return std::exp(v); });
    case UnaryFn::Exp2: return map1<T>(x, out, [](C v) { return std::exp2(v); });
    case UnaryFn::Log: return map1<T>(x, out, [](C v) { return std::log(v); });
    case UnaryFn::Log2: return map1<T>(x, out, [](C v) { return std::log2(v); });
    case UnaryFn::Sqrt: return map1<T>(x, out, [](C v) { return std::sqrt(v); });
    case UnaryFn::Rsqrt: return map1<T>(x, out, [](C v) { return C(1) / std::sqrt(v); });
    case UnaryFn::Tanh: return map1<T>(x, out, [](C v) { return std::tanh(v); });
    case UnaryFn::Sin: return map1<T>(x, out, [](C v) { return std::sin(v); });
    case UnaryFn::Cos: return map1<T>(x, out, [](C v) { return std::cos(v); });
    case UnaryFn::Abs: return map1<T>(x, out, [](C v) { return std::fabs(v); });
    case UnaryFn::Floor: return map1<T>(x, out, [](C v) { return std::floor(v); });
    case UnaryFn::Ceil: return map1<T>(x, out, [](C v) { return std::ceil(v); });
    case UnaryFn::Erf: return map1<T>(x, out, [](C v) { return std::erf(v); });
    case UnaryFn::Erfc: return map1<T>(x, out, [](C v) { return std::erfc(v); });
    // 1 / (1 + e^-x), and e^x / (1 + e^x) for x < 0, where e^-x could overflow (the tail stays
    // a small number, not 0). NaN takes the second form and stays NaN.
    case UnaryFn::Sigmoid:
      return map1<T>(x, out, [](C v) {
        if (v >= C(0)) return C(1) / (C(1) + std::exp(-v));
        const C e = std::exp(v);
        return e / (C(1) + e);
      });
    case UnaryFn::Log1p: return map1<T>(x, out, [](C v) { return std::log1p(v); });
    case UnaryFn::Expm1: return map1<T>(x, out, [](C v) { return std::expm1(v); });
    case UnaryFn::Not: case UnaryFn::Popcount: case UnaryFn::Clz: break;
  }
  unsupported(ir::unary_name(fn), x.dtype);
}

template <class T>
void unary_int(UnaryFn fn, const Tile& x, Tile& out) {
  switch (fn) {
    case UnaryFn::Neg: return map1<T>(x, out, [](T v) { return wneg<T>(v); });
    case UnaryFn::Abs:
      if constexpr (std::is_signed_v<T>) return map1<T>(x, out, [](T v) { return v < 0 ? wneg<T>(v) : v; });
      else break;
    case UnaryFn::Not: return map1<T>(x, out, [](T v) { return static_cast<T>(~v); });
    // Of the bit pattern in T's own width.
    case UnaryFn::Popcount:
      return map1<T>(x, out, [](T v) { return static_cast<T>(std::popcount(static_cast<std::make_unsigned_t<T>>(v))); });
    case UnaryFn::Clz:
      return map1<T>(x, out, [](T v) { return static_cast<T>(std::countl_zero(static_cast<std::make_unsigned_t<T>>(v))); });
    default: break;
  }
  unsupported(ir::unary_name(fn), x.dtype);
}

template <class T>
void binary_float(BinaryFn fn, const Tile& a, const Tile& b, Tile& out, bool propagate_nan) {
  using C = typename Arith<T>::C;
  if (propagate_nan && (fn == BinaryFn::Min || fn == BinaryFn::Max)) {
    const bool mx = fn == BinaryFn::Max;
    return map2<T>(a, b, out, [mx](C x, C y) {
      if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<C>::quiet_NaN();
      return mx ? std::fmax(x, y) : std::fmin(x, y);
    });
  }
  switch (fn) {
    case BinaryFn::Add: return map2<T>(a, b, out, [](C x, C y) { return x + y; });
    case BinaryFn::Sub: return map2<T>(a, b, out, [](C x, C y) { return x - y; });
    case BinaryFn::Mul: return map2<T>(a, b, out, [](C x, C y) { return x * y; });
    case BinaryFn::Div: return map2<T>(a, b, out, [](C x, C y) { return x / y; });
    case BinaryFn::Rem: return map2<T>(a, b, out, [](C x, C y) { return std::fmod(x, y); });
    case BinaryFn::Min: return map2<T>(a, b, out, [](C x, C y) { return std::fmin(x, y); });
    case BinaryFn::Max: return map2<T>(a, b, out, [](C x, C y) { return std::fmax(x, y); });
    case BinaryFn::Pow: return map2<T>(a, b, out, [](C x, C y) { return std::pow(x, y); });
    case BinaryFn::Atan2: return map2<T>(a, b, out, [](C y, C x) { return std::atan2(y, x); });
    default: break;
  }
  unsupported(ir::binary_name(fn), a.dtype);
}

template <class T>
void binary_int(BinaryFn fn, const Tile& a, const Tile& b, Tile& out) {
  switch (fn) {
    case BinaryFn::Add: return map2<T>(a, b, out, [](T x, T y) { return wadd<T>(x, y); });
    case BinaryFn::Sub: return map2<T>(a, b, out, [](T x, T y) { return wsub<T>(x, y); });
    case BinaryFn::Mul: return map2<T>(a, b, out, [](T x, T y) { return wmul<T>(x, y); });
    case BinaryFn::Div: return map2<T>(a, b, out, [](T x, T y) { return idiv<T>(x, y); });
    case BinaryFn::Rem: return map2<T>(a, b, out, [](T x, T y) { return irem<T>(x, y); });
    case BinaryFn::Min: return map2<T>(a, b, out, [](T x, T y) { return std::min(x, y); });
    case BinaryFn::Max: return map2<T>(a, b, out, [](T x, T y) { return std::max(x, y); });
    case BinaryFn::And: return map2<T>(a, b, out, [](T x, T y) { return static_cast<T>(x & y); });
    case BinaryFn::Or: return map2<T>(a, b, out, [](T x, T y) { return static_cast<T>(x | y); });
    case BinaryFn::Xor: return map2<T>(a, b, out, [](T x, T y) { return static_cast<T>(x ^ y); });
    case BinaryFn::Shl: return map2<T>(a, b, out, [](T x, T y) { return ishl<T>(x, y); });
    case BinaryFn::Shr: return map2<T>(a, b, out, [](T x, T y) { return ishr<T>(x, y); });
    case BinaryFn::Pow: case BinaryFn::Atan2: break;
  }
  unsupported(ir::binary_name(fn), a.dtype);
}

void binary_bool(BinaryFn fn, const Tile& a, const Tile& b, Tile& out) {
  switch (fn) {
    case BinaryFn::And: return map2<bool>(a, b, out, [](bool x, bool y) { return x && y; });
    case BinaryFn::Or: return map2<bool>(a, b, out, [](bool x, bool y) { return x || y; });
    case BinaryFn::Xor: return map2<bool>(a, b, out, [](bool x, bool y) { return x != y; });
    default: break;
  }
  unsupported(ir::binary_name(fn), a.dtype);
}

template <class T, class P>
void cmp_loop(const Tile& a, const Tile& b, Tile& out, P p) {
  using A = Arith<T>;
  const T* x = a.as<T>();
  const T* y = b.as<T>();
  bool* o = out.as<bool>();
  for (std::int64_t i = 0; i < a.n; ++i) o[i] = p(A::up(x[i]), A::up(y[i]));
}

}  // namespace

void op_unary(UnaryFn fn, const Tile& x, Tile& out) {
  dispatch(x.dtype, [&]<class T>(std::type_identity<T>) {
    if constexpr (is_float_v<T>) {
      unary_float<T>(fn, x, out);
    } else if constexpr (is_bool_v<T>) {
      if (fn != UnaryFn::Not) unsupported(ir::unary_name(fn), x.dtype);
      map1<bool>(x, out, [](bool v) { return !v; });
    } else {
      unary_int<T>(fn, x, out);
    }
  });
}

void op_binary(BinaryFn fn, const Tile& a, const Tile& b, Tile& out, bool propagate_nan) {
  dispatch(a.dtype, [&]<class T>(std::type_identity<T>) {
    if constexpr (is_float_v<T>) binary_float<T>(fn, a, b, out, propagate_nan);
    else if constexpr (is_bool_v<T>) binary_bool(fn, a, b, out);
    else binary_int<T>(fn, a, b, out);
  });
}

void op_fma(const Tile& a, const Tile& b, const Tile& c, Tile& out) {
  dispatch(a.dtype, [&]<class T>(std::type_identity<T>) {
    if constexpr (is_bool_v<T>) {
      unsupported("fma", a.dtype);
    } else {
      const T* x = a.as<T>();
      const T* y = b.as<T>();
      const T* z = c.as<T>();
      T* o = out.as<T>();
      for (std::int64_t i = 0; i < a.n; ++i) {
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
          o[i] = std::fma(x[i], y[i], z[i]);
        } else if constexpr (is_narrow_v<T>) {
          // a*b is exact in double; fma in double rounds once, the round-to-odd step keeps it exact.
          o[i] = float_from_double<T>(std::fma(to_double(x[i]), to_double(y[i]), to_double(z[i])));
        } else {
          o[i] = wadd<T>(wmul<T>(x[i], y[i]), z[i]);
        }
      }
    }
  });
}

void op_cmp(CmpPred p, const Tile& a, const Tile& b, Tile& out) {
  dispatch(a.dtype, [&]<class T>(std::type_identity<T>) {
    using C = typename Arith<T>::C;
    switch (p) {
      case CmpPred::Eq: return cmp_loop<T>(a, b, out, [](C x, C y) { return x == y; });
      case CmpPred::Ne: return cmp_loop<T>(a, b, out, [](C x, C y) { return x != y; });
      case CmpPred::Lt: return cmp_loop<T>(a, b, out, [](C x, C y) { return x < y; });
      case CmpPred::Le: return cmp_loop<T>(a, b, out, [](C x, C y) { return x <= y; });
      case CmpPred::Gt: return cmp_loop<T>(a, b, out, [](C x, C y) { return x > y; });
      case CmpPred::Ge: return cmp_loop<T>(a, b, out, [](C x, C y) { return x >= y; });
    }
  });
}

void op_select(const Tile& c, const Tile& a, const Tile& b, Tile& out) {
  dispatch_width(a.dtype, [&]<class W>(std::type_identity<W>) {
    const bool* s = c.as<bool>();
    const W* x = a.as<W>();
    const W* y = b.as<W>();
    W* o = out.as<W>();
    for (std::int64_t i = 0; i < a.n; ++i) o[i] = s[i] ? x[i] : y[i];
  });
}

// Same width (the type rule checks it): the bytes as they are.
void op_bitcast(const Tile& x, Tile& out) {
  dispatch_width(x.dtype, [&]<class W>(std::type_identity<W>) {
    std::memcpy(out.as<W>(), x.as<W>(), static_cast<std::size_t>(x.n) * sizeof(W));
  });
}

void op_convert(const Tile& x, Tile& out) {
  dispatch(x.dtype, [&]<class S>(std::type_identity<S>) {
    dispatch(out.dtype, [&]<class D>(std::type_identity<D>) {
      const S* a = x.as<S>();
      D* o = out.as<D>();
      for (std::int64_t i = 0; i < x.n; ++i) o[i] = convert_elem<D, S>(a[i]);
    });
  });
}

}  // namespace ctile::backend::cpu
