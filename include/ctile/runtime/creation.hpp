// Creation functions: new, owned, contiguous tensors. Random ones are deterministic for a seed on
// every platform: they use std::mt19937_64's raw output (fixed by the standard) and ctile's own
// conversions (53-bit uniforms; Box-Muller with ctile's own log and cos), never std distributions.
// Every function takes the device last (default: default_device()). On a GPU the values are made
// on the host, exactly as for the CPU, and copied to the device (zeros is a device-side fill).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <type_traits>

#include "ctile/runtime/tensor.hpp"

namespace ctile {

namespace detail {

// Deterministic random numbers (the same sequence on every platform for a seed).
class DetRng {
 public:
  explicit DetRng(std::uint64_t seed) : g_(seed) {}
  std::uint64_t bits() { return g_(); }
  double uniform();                       // [0, 1), 53 random bits
  double uniform(double lo, double hi);   // lo + uniform() * (hi - lo)
  double normal(double mean, double stddev);  // Box-Muller (cos branch), one normal per two draws

 private:
  std::mt19937_64 g_;
};

// Pieces of the random functions that are the same for every T (in creation.cpp).
double det_log(double x);      // natural log, x > 0; basic IEEE operations only
double det_cos2pi(double u);   // cos(2 pi u), u in [0, 1); basic IEEE operations only

template <Element T>
constexpr bool is_float_elem = is_float_element<T>;

template <Element T>
T from_double_unchecked(double v) {
  if constexpr (is_narrow_float_element<T>)
    return T(static_cast<float>(v));
  else
    return static_cast<T>(v);
}

template <Element T>
double to_double(T v) {
  if constexpr (is_narrow_float_element<T>)
    return static_cast<double>(static_cast<float>(v));
  else
    return static_cast<double>(v);
}

// Value -> element: floats round (f16/bf16/fp8 through float; fp8 saturates at its largest finite
// value); bool is v != 0; integers truncate toward zero and must then be in range (UserError otherwise).
template <Element T>
T from_double(double v, std::string_view what) {
  if constexpr (is_float_elem<T>) {
    return from_double_unchecked<T>(v);
  } else if constexpr (std::is_same_v<T, bool>) {
    return v != 0.0;
  } else {
    // [min, max + 1) is exactly representable as doubles for every integer type.
    const double lo = static_cast<double>(std::numeric_limits<T>::min());
    const double hi = std::ldexp(1.0, std::numeric_limits<T>::digits);  // max + 1
    const double t = std::trunc(v);
    if (!(t >= lo && t < hi))
      throw UserError(cat(what, ": value ", v, " does not fit in ", dtype_name(dtype_of<T>)));
    return static_cast<T>(t);
  }
}

template <Element T>
T* fresh(const std::shared_ptr<TensorCore>& c) {
  return reinterpret_cast<T*>(c->data());
}

template <Element T>
std::string fn_name(std::string_view fn) {
  return cat(fn, "<", dtype_name(dtype_of<T>), ">");
}

// A new owned tensor whose element i is gen(i), in order (made on the host, then copied to a GPU).
template <Element T, class Gen>
Tensor<T> generate(Shape shape, Device d, std::string_view what, Gen&& gen) {
  auto c = new_tensor(std::move(shape), dtype_of<T>, d, false, what);
  const std::int64_t n = c->numel();
  if (d.kind == DeviceKind::Cpu) {
    T* p = fresh<T>(c);
    for (std::int64_t i = 0; i < n; ++i) p[i] = gen(i);
  } else {
    std::unique_ptr<T[]> host(new T[static_cast<std::size_t>(n)]);
    for (std::int64_t i = 0; i < n; ++i) host[static_cast<std::size_t>(i)] = gen(i);
    fill_from_host(*c, reinterpret_cast<const std::byte*>(host.get()));
  }
  return Tensor<T>::from_core(unchecked, std::move(c));
}

// Smallest and largest integers k with lo <= k < hi that fit T (bool: 0..1).
template <Element T>
void int_range(double lo, double hi, std::string_view what, std::int64_t& kmin, std::uint64_t& span) {
  if (!(lo < hi)) throw UserError(cat(what, ": empty range [", lo, ", ", hi, ")"));
  const double a = std::ceil(lo), b = std::ceil(hi) - 1.0;
  double tmin, tmax;
  if constexpr (std::is_same_v<T, bool>) {
    tmin = 0.0;
    tmax = 1.0;
  } else {
    tmin = static_cast<double>(std::numeric_limits<T>::min());
    tmax = static_cast<double>(std::numeric_limits<T>::max());
  }
  if (a > b) throw UserError(cat(what, ": no integer in [", lo, ", ", hi, ")"));
  if (a < tmin || b > tmax || b > 9.2e18 || a < -9.2e18)
    throw UserError(cat(what, ": range [", lo, ", ", hi, ") does not fit in ", dtype_name(dtype_of<T>)));
  kmin = static_cast<std::int64_t>(a);
  span = static_cast<std::uint64_t>(static_cast<std::int64_t>(b) - kmin) + 1u;
}

}  // namespace detail

// Every element 0 (false).
template <Element T>
[[nodiscard]] Tensor<T> zeros(Shape shape, Device d = default_device()) {
  return Tensor<T>::from_core(unchecked, detail::new_tensor(std::move(shape), dtype_of<T>, d, true, detail::fn_name<T>("zeros")));
}

// Every element `value`.
template <Element T>
[[nodiscard]] Tensor<T> full(Shape shape, T value, Device d = default_device()) {
  return detail::generate<T>(std::move(shape), d, detail::fn_name<T>("full"), [&](std::int64_t) { return value; });
}

// Every element 1 (true).
template <Element T>
[[nodiscard]] Tensor<T> ones(Shape shape, Device d = default_device()) {
  T one;
  if constexpr (std::is_same_v<T, bool>)
    one = true;
  else
    one = detail::from_double_unchecked<T>(1.0);
  return detail::generate<T>(std::move(shape), d, detail::fn_name<T>("ones"), [&](std::int64_t) { return one; });
}

// [0, 1, ..., n - 1], rank 1. For integer (and bool) T, n - 1 must fit in T.
template <Element T>
[[nodiscard]] Tensor<T> arange(std::int64_t n, Device d = default_device()) {
  const std::string what = detail::fn_name<T>("arange");
  if (n < 0) throw UserError(detail::cat(what, "(", n, "): negative length"));
  if (n > 0) (void)detail::from_double<T>(static_cast<double>(n - 1), what);
  return detail::generate<T>({n}, d, what,
                             [&](std::int64_t i) { return detail::from_double_unchecked<T>(static_cast<double>(i)); });
}

// start, start + step, ... while < stop (> stop for a negative step): ceil((stop - start) / step)
// elements, rank 1.
template <Element T>
[[nodiscard]] Tensor<T> arange(double start, double stop, double step, Device d = default_device()) {
  const std::string what = detail::fn_name<T>("arange");
  if (step == 0.0 || !std::isfinite(step) || !std::isfinite(start) || !std::isfinite(stop))
    throw UserError(detail::cat(what, "(", start, ", ", stop, ", ", step, "): bounds and step must be finite, step non-zero"));
  const double count = std::ceil((stop - start) / step);
  if (count > 9.2e18) throw UserError(detail::cat(what, "(", start, ", ", stop, ", ", step, "): too many elements"));
  const std::int64_t n = count > 0 ? static_cast<std::int64_t>(count) : 0;
  if (n > 0) {
    (void)detail::from_double<T>(start, what);
    (void)detail::from_double<T>(start + static_cast<double>(n - 1) * step, what);
  }
  return detail::generate<T>({n}, d, what, [&](std::int64_t i) {
    return detail::from_double<T>(start + static_cast<double>(i) * step, what);
  });
}

// n evenly spaced values from a to b, both included (n == 1: just a), rank 1.
template <Element T>
[[nodiscard]] Tensor<T> linspace(double a, double b, std::int64_t n, Device d = default_device()) {
  const std::string what = detail::fn_name<T>("linspace");
  if (n < 0) throw UserError(detail::cat(what, "(", a, ", ", b, ", ", n, "): negative length"));
  const double step = n > 1 ? (b - a) / static_cast<double>(n - 1) : 0.0;
  return detail::generate<T>({n}, d, what, [&](std::int64_t i) {
    const double v = (n > 1 && i == n - 1) ? b : a + static_cast<double>(i) * step;
    return detail::from_double<T>(v, what);
  });
}

// Uniform random values in [lo, hi). Floats: the draw is redrawn if rounding to T reaches hi.
// Integers and bool: uniform over the integers k with lo <= k < hi (they must fit in T).
template <Element T>
[[nodiscard]] Tensor<T> rand(Shape shape, std::uint64_t seed, double lo, double hi, Device d = default_device()) {
  const std::string what = detail::fn_name<T>("rand");
  detail::DetRng rng(seed);
  if constexpr (detail::is_float_elem<T>) {
    if (!(lo < hi) || !std::isfinite(lo) || !std::isfinite(hi))
      throw UserError(detail::cat(what, ": range [", lo, ", ", hi, ") must be finite and non-empty"));
    return detail::generate<T>(std::move(shape), d, what, [&](std::int64_t) {
      for (int attempt = 0; attempt < 64; ++attempt) {
        const T v = detail::from_double_unchecked<T>(rng.uniform(lo, hi));
        const double dv = detail::to_double(v);
        if (dv >= lo && dv < hi) return v;
      }
      return detail::from_double_unchecked<T>(lo);  // no value of T rounds into [lo, hi)
    });
  } else {
    std::int64_t kmin = 0;
    std::uint64_t span = 0;
    detail::int_range<T>(lo, hi, what, kmin, span);
    return detail::generate<T>(std::move(shape), d, what, [&](std::int64_t) {
      const std::int64_t k = static_cast<std::int64_t>(static_cast<std::uint64_t>(kmin) + rng.bits() % span);
      if constexpr (std::is_same_v<T, bool>)
        return k != 0;
      else
        return static_cast<T>(k);
    });
  }
}

// Uniform random values: floats in [0, 1), integers in [0, 100), bool false/true.
template <Element T>
[[nodiscard]] Tensor<T> rand(Shape shape, std::uint64_t seed, Device d = default_device()) {
  if constexpr (detail::is_float_elem<T>)
    return rand<T>(std::move(shape), seed, 0.0, 1.0, d);
  else if constexpr (std::is_same_v<T, bool>)
    return rand<T>(std::move(shape), seed, 0.0, 2.0, d);
  else
    return rand<T>(std::move(shape), seed, 0.0, 100.0, d);
}

// Normally distributed random values (floating-point T only).
template <Element T>
[[nodiscard]] Tensor<T> randn(Shape shape, std::uint64_t seed, double mean = 0.0, double stddev = 1.0,
                            Device d = default_device()) {
  static_assert(detail::is_float_elem<T>,
                "ctile::randn<T>: T must be a floating-point element type (f16, bf16, f8e4m3, f8e5m2, float, double)");
  const std::string what = detail::fn_name<T>("randn");
  if (!(stddev >= 0.0) || !std::isfinite(stddev) || !std::isfinite(mean))
    throw UserError(detail::cat(what, ": mean ", mean, " and stddev ", stddev, " must be finite, stddev >= 0"));
  detail::DetRng rng(seed);
  return detail::generate<T>(std::move(shape), d, what,
                             [&](std::int64_t) { return detail::from_double_unchecked<T>(rng.normal(mean, stddev)); });
}

// A tensor of `shape` holding a copy of `values` (row-major); values.size() must equal the
// element count. (std::vector<bool> has no span: use a bool array.)
template <Element T>
[[nodiscard]] Tensor<T> from_host(std::span<const T> values, Shape shape, Device d = default_device()) {
  const std::string what = detail::fn_name<T>("from_host");
  const std::int64_t n = detail::validate_shape(shape, dtype_of<T>, what);
  if (static_cast<std::uint64_t>(n) != values.size())
    throw UserError(detail::cat(what, ": ", values.size(), " values given for shape ", shape_str(shape), " (", n,
                                " elements)"));
  auto c = detail::new_tensor(std::move(shape), dtype_of<T>, d, false, what);
  if (n > 0) detail::fill_from_host(*c, reinterpret_cast<const std::byte*>(values.data()));
  return Tensor<T>::from_core(unchecked, std::move(c));
}

}  // namespace ctile
