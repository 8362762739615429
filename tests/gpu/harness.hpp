// A tiny self-contained test harness for the GPU suite (the GPU machine has no GoogleTest).
//
//   GPU_TEST(kernels_vector_add) { ... CHECK(a == b) << "detail"; ... }
//
// CHECK records a failure and goes on; REQUIRE records it and ends the test. An exception that
// escapes a test fails it. main() (harness.cpp) runs the tests whose names contain one of the
// command-line arguments (all without arguments; an argument "-text" leaves out the tests whose names
// contain "text"), prints one line per test and a summary, and
// exits 0 when all passed, 1 otherwise. It refuses to start (exit 1) with CTILE_RACE_CHECK set,
// with CTILE_BACKEND other than cuda, or without a usable GPU: the GPU suite never passes or skips
// without running on the GPU. A test in which no kernel was launched on the GPU fails
// (gpu_launches()). `test_gpu --list [filters]` lists the tests (those selected); `test_gpu --probe` prints the GPU (exit 0)
// or why there is none (77). Tests named selftest_* run only when a filter names them.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <ctile/ctile.hpp>

namespace gpu_test {

namespace ct = ctile;

using TestFn = void (*)();
struct Registrar {
  Registrar(const char* name, TestFn fn);
};

// Counts a failure of the running test and prints where (the message is built by the stream).
class FailureMessage {
 public:
  FailureMessage(const char* file, int line, const char* expr, bool fatal);
  ~FailureMessage() noexcept(false);
  template <class V>
  FailureMessage& operator<<(const V& v) {
    os_ << v;
    return *this;
  }

 private:
  std::ostringstream os_;
  const char* file_;
  int line_;
  const char* expr_;
  bool fatal_;
};

struct AbortTest {};  // thrown by a failed REQUIRE

// The seed for this run (CTILE_GPU_SEED, else random; printed at the start) mixed with `salt`.
std::uint64_t seed(std::uint64_t salt);
// The GPU under test.
ct::Device gpu();
// Number of failures recorded so far in the running test.
int failures();
// Kernels launched on the GPUs so far (ctile::cuda_launch_count over every device). main() fails a
// test in which it does not grow.
std::uint64_t gpu_launches();

// ---- comparisons of GPU output with CPU output ----

template <class T>
double as_double(T v) {
  if constexpr (std::is_same_v<T, ct::f16> || std::is_same_v<T, ct::bf16> || std::is_same_v<T, ct::f8e4m3> ||
                std::is_same_v<T, ct::f8e5m2>)
    return static_cast<double>(static_cast<float>(v));
  else
    return static_cast<double>(v);
}

template <class T>
std::string show(T v) {
  std::ostringstream os;
  if constexpr (std::is_same_v<T, bool>)
    os << (v ? "true" : "false");
  else if constexpr (std::is_integral_v<T>)
    os << static_cast<long long>(v);
  else
    os.precision(9), os << as_double(v);
  return os.str();
}

// Element by element, exactly (NaN equals NaN). Reports the first few mismatches.
template <class T>
bool expect_equal(const std::vector<T>& got, const std::vector<T>& want, const std::string& what, const char* file,
                  int line) {
  if (got.size() != want.size()) {
    FailureMessage(file, line, what.c_str(), false) << "size " << got.size() << " != " << want.size();
    return false;
  }
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const T g = got[i], w = want[i];
    bool same;
    if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, ct::f16> || std::is_same_v<T, ct::bf16>)
      same = as_double(g) == as_double(w) || (std::isnan(as_double(g)) && std::isnan(as_double(w)));
    else
      same = g == w;
    if (!same && bad++ < 8)
      FailureMessage(file, line, what.c_str(), false) << "element " << i << ": GPU " << show(g) << ", CPU " << show(w);
  }
  if (bad > 8) FailureMessage(file, line, what.c_str(), false) << bad << " elements differ in all (of " << got.size() << ")";
  return bad == 0;
}

// |got - want| <= rtol * |want| + atol for every element; NaN only where both are NaN.
template <class T>
bool expect_close(const std::vector<T>& got, const std::vector<T>& want, double rtol, double atol, const std::string& what,
                  const char* file, int line) {
  if (got.size() != want.size()) {
    FailureMessage(file, line, what.c_str(), false) << "size " << got.size() << " != " << want.size();
    return false;
  }
  std::size_t bad = 0;
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = as_double(got[i]), w = as_double(want[i]);
    bool ok;
    if (std::isnan(g) || std::isnan(w))
      ok = std::isnan(g) && std::isnan(w);
    else if (std::isinf(g) || std::isinf(w))
      ok = g == w;
    else
      ok = std::abs(g - w) <= rtol * std::abs(w) + atol;
    if (!ok) {
      worst = std::max(worst, std::abs(g - w));
      if (bad++ < 8)
        FailureMessage(file, line, what.c_str(), false)
            << "element " << i << ": GPU " << show(got[i]) << ", CPU " << show(want[i]) << " (rtol " << rtol << ", atol "
            << atol << ")";
    }
  }
  if (bad > 8)
    FailureMessage(file, line, what.c_str(), false) << bad << " elements differ in all (of " << got.size()
                                                     << "), worst by " << worst;
  return bad == 0;
}

// |got - want| <= bound[i] for every element (bounds from the error-bound table,
// tests/unit/cuda_codegen/error_bounds.hpp); a NaN only matches a NaN, an infinity only itself.
template <class T>
bool expect_within(const std::vector<T>& got, const std::vector<T>& want, const std::vector<double>& bound,
                   const std::string& what, const char* file, int line) {
  if (got.size() != want.size() || bound.size() != want.size()) {
    FailureMessage(file, line, what.c_str(), false) << "size " << got.size() << " != " << want.size() << " (bounds "
                                                    << bound.size() << ")";
    return false;
  }
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = as_double(got[i]), w = as_double(want[i]);
    bool ok;
    if (std::isnan(g) || std::isnan(w)) ok = std::isnan(g) && std::isnan(w);
    else if (std::isinf(g) || std::isinf(w)) ok = g == w;
    else ok = std::abs(g - w) <= bound[i];
    if (!ok && bad++ < 8)
      FailureMessage(file, line, what.c_str(), false) << "element " << i << ": GPU " << show(got[i]) << ", CPU "
                                                      << show(want[i]) << " (bound " << bound[i] << ")";
  }
  if (bad > 8) FailureMessage(file, line, what.c_str(), false) << bad << " elements differ in all (of " << got.size() << ")";
  return bad == 0;
}

// The largest |v| (for tolerances relative to the output's scale).
template <class T>
double max_abs(const std::vector<T>& v) {
  double m = 0;
  for (const T& x : v)
    if (std::isfinite(as_double(x))) m = std::max(m, std::abs(as_double(x)));
  return m;
}

}  // namespace gpu_test

#define GPU_TEST(name)                                                          \
  static void gpu_test_##name();                                                \
  static const ::gpu_test::Registrar gpu_test_reg_##name(#name, &gpu_test_##name); \
  static void gpu_test_##name()

#define CHECK(cond) \
  if (cond) {       \
  } else            \
    ::gpu_test::FailureMessage(__FILE__, __LINE__, #cond, false)
#define REQUIRE(cond) \
  if (cond) {         \
  } else              \
    ::gpu_test::FailureMessage(__FILE__, __LINE__, #cond, true)
#define CHECK_EQUAL(got, want, what) ::gpu_test::expect_equal(got, want, what, __FILE__, __LINE__)
#define CHECK_CLOSE(got, want, rtol, atol, what) ::gpu_test::expect_close(got, want, rtol, atol, what, __FILE__, __LINE__)
#define CHECK_WITHIN(got, want, bounds, what) ::gpu_test::expect_within(got, want, bounds, what, __FILE__, __LINE__)
