// The float64 reference of the correctness suites' matrix products: every element of C against
// scale * sum_k a(i, k) b(k, j), computed in double from the operands' values as stored.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

namespace ctile_test {

// Checks c(i, j) for i < m, j < n against the reference: within `unit` of its magnitude (the
// rounding to C's type) plus `sum_eps` of scale * sum_k |a(i, k) b(k, j)| (the accumulation). The
// accessors return doubles. Reports the first five misses (with `what`) and returns how many.
template <class A, class B, class C>
int check_product(std::int64_t m, std::int64_t n, std::int64_t k, A a, B b, C c, double scale, double unit,
                  double sum_eps, const std::string& what) {
  int bad = 0;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double want = 0, mag = 0;
      for (std::int64_t kk = 0; kk < k; ++kk) {
        const double p = a(i, kk) * b(kk, j);
        want += p;
        mag += std::fabs(p);
      }
      want *= scale;
      mag *= std::fabs(scale);
      const double g = c(i, j);
      if (!(std::fabs(g - want) <= unit * std::fabs(want) + sum_eps * mag + 1e-30) && bad++ < 5)
        ADD_FAILURE() << "c[" << i << ", " << j << "] = " << g << ", want " << want << " (" << what << ")";
    }
  return bad;
}

}  // namespace ctile_test
