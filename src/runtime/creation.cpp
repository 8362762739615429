// The platform-independent part of the random creation functions. Only IEEE basic operations
// (+ - * / sqrt, exact frexp) are used, and this file is compiled without FMA contraction
// (sources.cmake), so a seed gives the same bits everywhere.
#include "ctile/runtime/creation.hpp"

#include <cmath>

namespace ctile::detail {

double DetRng::uniform() { return static_cast<double>(g_() >> 11) * 0x1p-53; }

double DetRng::uniform(double lo, double hi) { return lo + uniform() * (hi - lo); }

double DetRng::normal(double mean, double stddev) {
  const double u1 = static_cast<double>((g_() >> 11) + 1) * 0x1p-53;  // (0, 1]: log is finite
  const double u2 = uniform();
  const double r = std::sqrt(-2.0 * det_log(u1));
  return mean + stddev * (r * det_cos2pi(u2));
}

double det_log(double x) {
  // x = m * 2^e with m in [sqrt(1/2), sqrt(2)); log m = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.1716.
  int e = 0;
  double m = std::frexp(x, &e);  // [0.5, 1)
  if (m < 0.70710678118654752440) {
    m *= 2.0;
    --e;
  }
  const double s = (m - 1.0) / (m + 1.0);
  const double s2 = s * s;
  // 2 * (s + s^3/3 + s^5/5 + ...), Horner from the smallest term; 15 terms exceed double precision.
  double p = 0.0;
  for (int k = 14; k >= 0; --k) p = 1.0 / static_cast<double>(2 * k + 1) + s2 * p;
  constexpr double ln2_hi = 0x1.62e42feep-1;  // 32 significant bits: e * ln2_hi is exact
  constexpr double ln2_lo = 0x1.a39ef35793c76p-33;
  const double de = static_cast<double>(e);
  return de * ln2_hi + (2.0 * s * p + de * ln2_lo);
}

namespace {

// Taylor series on [0, pi/4]; 12 terms are beyond double precision there.
double cos_poly(double x) {
  const double x2 = x * x;
  double p = 0.0;
  for (int k = 11; k >= 1; --k) p = (1.0 - x2 * p) / static_cast<double>((2 * k - 1) * (2 * k));
  return 1.0 - x2 * p;
}

double sin_poly(double x) {
  const double x2 = x * x;
  double p = 0.0;
  for (int k = 11; k >= 1; --k) p = (1.0 - x2 * p) / static_cast<double>((2 * k) * (2 * k + 1));
  return x * (1.0 - x2 * p);
}

}  // namespace

double det_cos2pi(double u) {
  // Reduce with exact operations (u is a multiple of 2^-53 in [0, 1)) to r in [0, 1/8].
  constexpr double two_pi = 0x1.921fb54442d18p+2;
  double sign = 1.0;
  if (u > 0.5) u = 1.0 - u;  // cos(2 pi u) = cos(2 pi (1 - u))
  if (u > 0.25) {            // cos(2 pi u) = -cos(2 pi (1/2 - u))
    u = 0.5 - u;
    sign = -1.0;
  }
  if (u > 0.125) return sign * sin_poly(two_pi * (0.25 - u));  // cos(2 pi u) = sin(2 pi (1/4 - u))
  return sign * cos_poly(two_pi * u);
}

}  // namespace ctile::detail
