// Helpers shared by the examples: a float64 comparison and a one-line verdict.
#pragma once

#include <cmath>
#include <cstdio>
#include <vector>

namespace example {

// ||out - ref|| / ||ref|| over float64 copies; NaN never passes.
template <class A, class B>
double rel_l2(const std::vector<A>& out, const std::vector<B>& ref) {
  if (out.size() != ref.size()) return INFINITY;
  double num = 0, den = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const double o = static_cast<double>(static_cast<float>(out[i]));
    const double r = static_cast<double>(ref[i]);
    if (std::isnan(o)) return INFINITY;
    num += (o - r) * (o - r);
    den += r * r;
  }
  return den == 0 ? std::sqrt(num) : std::sqrt(num / den);
}

// Prints the verdict and returns the process exit code.
inline int verdict(const char* name, bool ok, double err = 0.0) {
  std::printf("%-14s %s (relative L2 error %.2e)\n", name, ok ? "matches its reference" : "DOES NOT MATCH its reference", err);
  return ok ? 0 : 1;
}

}  // namespace example
