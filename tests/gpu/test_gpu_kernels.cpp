// Every example kernel and every kernel of tests/correctness/test_kernels.cpp, run on the CPU
// backend and on the GPU with the same fresh random inputs (outputs poisoned first on both), and
// compared element by element: exactly for integer results, copies, conversions and exact float
// ops; within the bound the error-bound table gives (tests/unit/cuda_codegen/error_bounds.hpp,
// docs/ir.md "Numerics: error bounds") for the rest. Also: every element type, misaligned views (slice
// offset 1, with guard elements that must stay untouched), non-divisible and strided shapes.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include <ctile/kernels/matmul_fp8.hpp>
#include <ctile/kernels/matmul_split_k.hpp>

#include "../unit/cuda_codegen/error_bounds.hpp"
#include "test_kernels.hpp"
#include "harness.hpp"

namespace ct = ctile;
using namespace test_kernels;  // NOLINT(google-build-using-namespace): the shared test kernels
using gpu_test::gpu;
using gpu_test::seed;

namespace {

const ct::Device kCpu = ct::cpu();

template <class T>
T poison_value() {
  if constexpr (std::is_same_v<T, bool>)
    return true;
  else if constexpr (std::is_floating_point_v<T>)
    return std::numeric_limits<T>::quiet_NaN();
  else if constexpr (std::is_same_v<T, ct::f16> || std::is_same_v<T, ct::bf16>)
    return T(NAN);
  else
    return static_cast<T>(0x5a);
}

template <class T>
ct::Tensor<T> poisoned(ct::Shape s, ct::Device d) {
  return ct::full<T>(std::move(s), poison_value<T>(), d);
}

// Random values of any element type (floats normal, integers in [lo, hi)).
template <class T>
ct::Tensor<T> random(ct::Shape s, std::uint64_t sd, ct::Device d, double lo = 0, double hi = 100) {
  if constexpr (ct::detail::is_float_elem<T>)
    return ct::randn<T>(std::move(s), sd, 0.0, 1.0, d);
  else if constexpr (std::is_same_v<T, bool>)
    return ct::rand<T>(std::move(s), sd, 0.0, 2.0, d);
  else
    return ct::rand<T>(std::move(s), sd, lo, hi, d);
}

// A rank-1 input of n elements that starts one element into its allocation (misaligned for
// vector loads when `offset` is 1).
template <class T>
ct::Shared<T> input1(std::int64_t n, std::uint64_t sd, ct::Device d, int offset, double lo = 0, double hi = 100) {
  auto t = random<T>({n + offset}, sd, d, lo, hi);
  return std::move(t).slice(0, offset, n + offset).share();
}

// An output of n elements at `offset` inside a poisoned allocation of n + 2 * offset elements.
// After the run, check_guards() reads the whole allocation and checks the guard elements.
template <class T>
struct Output1 {
  std::int64_t n;
  int offset;
  ct::Tensor<T> view;
  Output1(std::int64_t n_, ct::Device d, int offset_) : n(n_), offset(offset_), view(make(n_, d, offset_)) {}
  static ct::Tensor<T> make(std::int64_t n, ct::Device d, int offset) {
    return poisoned<T>({n + 2 * offset}, d).slice(0, offset, n + offset);
  }
};

// The elements of `view` and whether the `offset` elements on each side of it still hold the
// poison (nothing was stored outside the view). `view` must be a slice made by Output1.
template <class T>
std::vector<T> read_guarded(const ct::Tensor<T>& view, int offset, const std::string& what) {
  std::vector<T> out = view.to_host();  // waits for the writes
  if (offset == 0) return out;
  const T* base = view.data(ct::unchecked) - offset;
  const std::int64_t total = view.numel() + 2 * offset;
  auto whole = ct::Tensor<T>::borrow(ct::unchecked, const_cast<T*>(base), {total}, {}, view.device());
  const auto all = whole.to_host();
  for (int i = 0; i < offset; ++i) {
    const T lo = all[static_cast<std::size_t>(i)], hi = all[static_cast<std::size_t>(total - 1 - i)];
    CHECK(gpu_test::show(lo) == gpu_test::show(poison_value<T>()) && gpu_test::show(hi) == gpu_test::show(poison_value<T>()))
        << what << ": a guard element next to the output was overwritten (" << gpu_test::show(lo) << ", "
        << gpu_test::show(hi) << ")";
  }
  return out;
}

// ---- kernels (from tests/correctness/test_kernels.cpp) ----

// ---- kernels (from the examples) ----

constexpr std::int64_t kSumBlock = 4096;
// ---- kernels for every element type ----

template <class T>
void copy_k(ct::Mut<T, 1> z, ct::Ref<T, 1> x) {
  z.store(ct::load_like(x, z));
}

template <class T>
void to_f32(ct::Mut<float, 1> z, ct::Ref<T, 1> x) {
  z.store(ct::load_like(x, z).template to<float>());
}

template <class T>
void from_f32(ct::Mut<T, 1> z, ct::Ref<float, 1> x) {
  z.store(ct::load_like(x, z).template to<T>());
}

template <class T>
void int_arith(ct::Mut<T, 1> z, ct::Ref<T, 1> x, ct::Ref<T, 1> y) {
  auto a = ct::load_like(x, z);
  auto b = ct::load_like(y, z, T(1));
  z.store((a * b + a) / b + a % b + (a ^ b) + (a << 1) - (a & b) + (a | b) + ct::maximum(a, b) - ct::minimum(a, b));
}

// A strided 2-D copy with scaling (a column slice of a wider matrix as input).
void scale2(ct::Mut<float, 2> z, ct::Ref<float, 2> x) { z.store(ct::load_like(x, z) * 3.0f); }

// ---- helpers ----

// Runs `body(device)` on the CPU and on the GPU; body returns the outputs to compare.
template <class F>
auto both(F&& body) {
  auto c = body(kCpu);
  auto g = body(gpu());
  return std::make_pair(std::move(g), std::move(c));
}

template <class T>
constexpr bool is_float_t = std::is_floating_point_v<T> || std::is_same_v<T, ct::f16> || std::is_same_v<T, ct::bf16>;

namespace eb = error_bounds;
constexpr double kEps32 = eb::eps(ct::DType::f32);

// One ulp of T at v when T is narrower than the f32 the math ran in (0 for f32 and f64 results).
template <class T>
double narrowing_ulp(double v) {
  return eb::eps(ct::dtype_of<T>) > kEps32 ? eb::kNarrowingUlps * eb::ulp(ct::dtype_of<T>, v) : 0.0;
}

// The table's softmax bound (relative to each result) for rows of `cols` f32 elements.
std::vector<double> softmax_bound(const std::vector<float>& want, std::int64_t cols) {
  std::vector<double> b;
  for (float w : want) b.push_back(eb::softmax_rel_ulps(cols) * eb::ulp(ct::DType::f32, w));
  return b;
}

// Host copies of what a creation function makes on any device (same seed, same values).
template <class T>
std::vector<double> host_values(const ct::Tensor<T>& t) {
  std::vector<double> v;
  for (const T& x : t.to_host()) v.push_back(gpu_test::as_double(x));
  return v;
}

template <class T>
std::string tname() {
  return std::string(ct::dtype_name(ct::dtype_of<T>));
}

}  // namespace

// ================================ correctness kernels ================================

template <class T>
void check_axpby(int offset) {
  const std::int64_t n = 10'007;
  const auto s1 = seed(1), s2 = seed(2);
  auto [g, c] = both([&](ct::Device d) {
    auto x = input1<T>(n, s1, d, offset);
    auto y = input1<T>(n, s2, d, offset);
    Output1<T> z(n, d, offset);
    auto [z2, x2, y2] = ct::launch(axpby<T>, std::move(z.view).partition({512}), x, y).sync();
    return read_guarded(std::move(z2).unpartition(), offset, "axpby<" + tname<T>() + ">");
  });
  // The kernel does its math in f32 whatever T is: the table's axpby model, relative to the
  // output's scale, plus one ulp of T when T is narrower.
  const double scale = gpu_test::max_abs(c) * (eb::ulps(eb::Fn::Exp, ct::DType::f32) + eb::kContractionUlps + 2) * kEps32;
  std::vector<double> bound;
  for (const T& w : c) bound.push_back(scale + narrowing_ulp<T>(gpu_test::as_double(w)));
  CHECK_WITHIN(g, c, bound, "axpby<" + tname<T>() + "> offset " + std::to_string(offset));
}

GPU_TEST(kernels_axpby_f32) { check_axpby<float>(0), check_axpby<float>(1); }
GPU_TEST(kernels_axpby_f64) { check_axpby<double>(0), check_axpby<double>(1); }
GPU_TEST(kernels_axpby_f16) { check_axpby<ct::f16>(0), check_axpby<ct::f16>(1); }
GPU_TEST(kernels_axpby_bf16) { check_axpby<ct::bf16>(0), check_axpby<ct::bf16>(1); }

GPU_TEST(kernels_int_ops) {
  for (int offset : {0, 1}) {
    const std::int64_t n = 3001;
    auto [g, c] = both([&](ct::Device d) {
      auto x = input1<std::int32_t>(n, seed(3), d, offset, -1000, 1000);
      auto y = input1<std::int32_t>(n, seed(4), d, offset, 1, 50);
      Output1<std::int32_t> z(n, d, offset);
      auto [z2, x2, y2] = ct::launch(int_ops, std::move(z.view).partition({256}), x, y).sync();
      return read_guarded(std::move(z2).unpartition(), offset, "int_ops");
    });
    CHECK_EQUAL(g, c, "int_ops offset " + std::to_string(offset));
  }
}

GPU_TEST(kernels_sigmoid_equals_its_formula_bit_for_bit) {
  // Products of a GEMM reach far into both tails: standard deviation 40 puts one element in six
  // below -40 (a division by 1 + e^x whose numerator is under 2^-57) and many below -87 (subnormal
  // e^x, the tail the device returns without dividing).
  const std::int64_t n = 1 << 20;
  auto x = ct::randn<float>({n}, seed(31), 0.0, 40.0, gpu()).share();
  auto [s, f, x2] = ct::launch(sigmoid_and_formula, poisoned<float>({n}, gpu()).partition({1024}),
                               poisoned<float>({n}, gpu()).partition({1024}), x)
                        .sync();
  CHECK_EQUAL(std::move(s).unpartition().to_host(), std::move(f).unpartition().to_host(), "sigmoid against its formula");
}

GPU_TEST(kernels_convert_bf16_rounding_and_int8_saturation) {
  const std::int64_t n = 4099;
  auto [g, c] = both([&](ct::Device d) {
    auto x = ct::randn<float>({n}, seed(5), 0.0, 3.0, d).share();
    auto [b, i8, x2] = ct::launch(convert_k, poisoned<ct::bf16>({n}, d).partition({1024}),
                                  poisoned<std::int8_t>({n}, d).partition({1024}), x)
                           .sync();
    return std::make_pair(std::move(b).unpartition().to_host(), std::move(i8).unpartition().to_host());
  });
  CHECK_EQUAL(g.first, c.first, "convert to bf16");
  CHECK_EQUAL(g.second, c.second, "convert to int8 (saturating)");
}

GPU_TEST(kernels_reduce_rows_sum_argmax_cumsum) {
  const std::int64_t m = 37, n = 64;
  auto [g, c] = both([&](ct::Device d) {
    auto x = ct::randn<float>({m, n}, seed(6), 0.0, 1.0, d).share();
    auto [s, a, cs, x2] = ct::launch(reduce_rows, poisoned<float>({m, 1}, d).partition({8, 1}),
                                     poisoned<std::int64_t>({m, 1}, d).partition({8, 1}),
                                     poisoned<float>({m, n}, d).partition({8, 64}), x)
                              .sync();
    return std::make_tuple(std::move(s).unpartition().to_host(), std::move(a).unpartition().to_host(),
                           std::move(cs).unpartition().to_host());
  });
  // Row sums: sqrt(K) ulps of sum |x| over the row, plus the rounding; argmax and scans are exact.
  const auto hx = host_values(ct::randn<float>({m, n}, seed(6), 0.0, 1.0, kCpu));
  std::vector<double> bound;
  for (std::int64_t r = 0; r < m; ++r) {
    double mag = 0;
    for (std::int64_t j = 0; j < n; ++j) mag += std::abs(hx[std::size_t(r * n + j)]);
    bound.push_back((eb::accumulation_ulps(n) + 1) * kEps32 * mag);
  }
  CHECK_WITHIN(std::get<0>(g), std::get<0>(c), bound, "row sums");
  CHECK_EQUAL(std::get<1>(g), std::get<1>(c), "row argmax");
  CHECK_EQUAL(std::get<2>(g), std::get<2>(c), "row cumsum (scans accumulate in f64 in order on both)");
}

GPU_TEST(kernels_windows_at_element_offsets) {
  // load_window across pieces and past both ends (stencil, misaligned and vector-aligned shifts),
  // store_window in parts of a piece (the rest keeps its -1): every element exact on both.
  const std::int64_t n = 100003;
  auto [g, c] = both([&](ct::Device d) {
    auto x = ct::randn<float>({n}, seed(17), 0.0, 1.0, d).share();
    auto [y, x2] = ct::launch(stencil3<float>, poisoned<float>({n}, d).partition({256}), x).sync();
    auto [s, x3] = ct::launch(shifted_difference<float, 4>, poisoned<float>({n}, d).partition({512}), std::move(x2)).sync();
    auto x2d = ct::randn<float>({203, 301}, seed(18), 0.0, 1.0, d).share();
    auto [p, x4] = ct::launch(window_parts, poisoned<float>({203, 301}, d).partition({8, 32}), x2d).sync();
    return std::make_tuple(std::move(y).unpartition().to_host(), std::move(s).unpartition().to_host(),
                           std::move(p).unpartition().to_host());
  });
  CHECK_EQUAL(std::get<0>(g), std::get<0>(c), "3-point stencil through load_window");
  CHECK_EQUAL(std::get<1>(g), std::get<1>(c), "windows shifted by a whole vector");
  CHECK_EQUAL(std::get<2>(g), std::get<2>(c), "a piece written in parts by store_window");
}

GPU_TEST(kernels_row_stats_outputs_of_two_ranks) {
  const std::int64_t m = 37, n = 64;
  auto [g, c] = both([&](ct::Device d) {
    auto x = ct::randn<float>({m, n}, seed(16), 1.0, 2.0, d).share();
    auto [sums, maxes, y, x2] = ct::launch(row_stats, poisoned<float>({m}, d).partition({8}),
                                           poisoned<float>({m}, d).partition({8}), poisoned<float>({m, n}, d).partition({8, 64}), x)
                                    .sync();
    return std::make_tuple(std::move(sums).unpartition().to_host(), std::move(maxes).unpartition().to_host(),
                           std::move(y).unpartition().to_host());
  });
  // Row sums: sqrt(K) ulps of sum |x| over the row, plus the rounding; maxima and x - max are exact.
  const auto hx = host_values(ct::randn<float>({m, n}, seed(16), 1.0, 2.0, kCpu));
  std::vector<double> bound;
  for (std::int64_t r = 0; r < m; ++r) {
    double mag = 0;
    for (std::int64_t j = 0; j < n; ++j) mag += std::abs(hx[std::size_t(r * n + j)]);
    bound.push_back((eb::accumulation_ulps(n) + 1) * kEps32 * mag);
  }
  CHECK_WITHIN(std::get<0>(g), std::get<0>(c), bound, "row sums ([rows] output)");
  CHECK_EQUAL(std::get<1>(g), std::get<1>(c), "row maxima ([rows] output)");
  CHECK_EQUAL(std::get<2>(g), std::get<2>(c), "rows minus their maximum ([rows, cols] output)");
}

GPU_TEST(kernels_reductions_and_scans_over_combine_functions) {
  // ct::reduce / ct::scan with user combine functions: a sum (any order: within the sum's bound of
  // ct::sum's), the largest magnitude, argmax pairs with the first index on ties, the extremes of a
  // whole tile across warps (exact in any order), and scans (walked in order on both: exact).
  const std::int64_t m = 200, n = 64;
  auto [g, c] = both([&](ct::Device d) {
    auto x = ct::randn<float>({m, n}, seed(19), 0.0, 1.0, d).share();
    auto [sf, sb, ma, x2] = ct::launch(combine_reduce<float, 128, 16, 0>, poisoned<float>({2, n}, d).partition({1, 16}),
                                       poisoned<float>({2, n}, d).partition({1, 16}),
                                       poisoned<float>({2, n}, d).partition({1, 16}), x)
                                .sync();
    auto xi = ct::rand<std::int32_t>({m, n}, seed(20), -4, 4, d).share();
    auto [best, at, bat, xi2] = ct::launch(combine_argmax<std::int32_t, 8, 32>, poisoned<std::int32_t>({m, 2}, d).partition({8, 1}),
                                           poisoned<std::int64_t>({m, 2}, d).partition({8, 1}),
                                           poisoned<std::int64_t>({m, 2}, d).partition({8, 1}), xi)
                                    .sync();
    auto [rm, ap, rb, ra, x3] = ct::launch(combine_scan<float, 8, 32, 1>, poisoned<float>({m, n}, d).partition({8, 32}),
                                           poisoned<float>({m, n}, d).partition({8, 32}),
                                           poisoned<float>({m, n}, d).partition({8, 32}),
                                           poisoned<std::int32_t>({m, n}, d).partition({8, 32}), std::move(x2))
                                    .sync();
    auto xe = ct::randn<float>({4 * 1024}, seed(21), 0.0, 1.0, d).share();
    auto [lo, hi, xe2] = ct::launch(combine_extremes<float, 1024>, poisoned<float>({4}, d).partition({1}),
                                    poisoned<float>({4}, d).partition({1}), xe)
                             .sync();
    return std::make_tuple(std::move(sf).unpartition().to_host(), std::move(sb).unpartition().to_host(),
                           std::move(ma).unpartition().to_host(), std::move(at).unpartition().to_host(),
                           std::move(bat).unpartition().to_host(), std::move(best).unpartition().to_host(),
                           std::move(rm).unpartition().to_host(), std::move(ap).unpartition().to_host(),
                           std::move(ra).unpartition().to_host(), std::move(lo).unpartition().to_host(),
                           std::move(hi).unpartition().to_host());
  });
  // Column sums of 128 rows (the last tile row: 72 real rows and padding zeros): sqrt(K) ulps of
  // sum |x| plus the rounding, as for ct::sum.
  const auto hx = host_values(ct::randn<float>({m, n}, seed(19), 0.0, 1.0, kCpu));
  std::vector<double> bound;
  for (std::int64_t r = 0; r < 2; ++r)
    for (std::int64_t j = 0; j < n; ++j) {
      double mag = 0;
      for (std::int64_t i = r * 128; i < std::min(m, (r + 1) * 128); ++i) mag += std::abs(hx[std::size_t(i * n + j)]);
      bound.push_back((eb::accumulation_ulps(128) + 1) * kEps32 * mag);
    }
  CHECK_WITHIN(std::get<0>(g), std::get<0>(c), bound, "column sums by a combine function");
  CHECK_WITHIN(std::get<1>(g), std::get<0>(c), bound, "ct::sum beside the combine function's sums");
  CHECK_EQUAL(std::get<2>(g), std::get<2>(c), "largest magnitude per column");
  CHECK_EQUAL(std::get<3>(g), std::get<3>(c), "argmax of (value, index) pairs, first index on ties");
  CHECK_EQUAL(std::get<4>(g), std::get<3>(c), "ct::argmax beside the pairs' argmax");
  CHECK_EQUAL(std::get<5>(g), std::get<5>(c), "the maxima of the pairs");
  CHECK_EQUAL(std::get<6>(g), std::get<6>(c), "running largest magnitude");
  CHECK_EQUAL(std::get<7>(g), std::get<7>(c), "products after each element (exclusive, reverse)");
  CHECK_EQUAL(std::get<8>(g), std::get<8>(c), "running argmax");
  CHECK_EQUAL(std::get<9>(g), std::get<9>(c), "smallest element of whole tiles");
  CHECK_EQUAL(std::get<10>(g), std::get<10>(c), "largest element of whole tiles");
}

template <class In, class Acc>
void check_mm(std::int64_t m, std::int64_t n, std::int64_t k) {
  auto [g, c] = both([&](ct::Device d) {
    auto a = ct::randn<In>({m, k}, seed(7), 0.0, 1.0, d).share();
    auto b = ct::randn<In>({k, n}, seed(8), 0.0, 1.0, d).share();
    auto [cc, a2, b2] = ct::launch(mm<In, Acc, 16>, poisoned<Acc>({m, n}, d).partition({32, 16}), a, b).sync();
    return std::move(cc).unpartition().to_host();
  });
  // Sums of k products in another precision and order: sqrt(k) ulps of sum |a| |b| plus one ulp
  // per k-step's rounding (the table's accumulation bound).
  const auto ha = host_values(ct::randn<In>({m, k}, seed(7), 0.0, 1.0, kCpu));
  const auto hb = host_values(ct::randn<In>({k, n}, seed(8), 0.0, 1.0, kCpu));
  const double e = eb::eps(std::is_same_v<Acc, double> ? ct::DType::f64 : ct::DType::f32);
  const double per = (eb::accumulation_ulps(k) + static_cast<double>((k + 15) / 16)) * e;
  std::vector<double> bound;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double mag = 0;
      for (std::int64_t q = 0; q < k; ++q) mag += std::abs(ha[std::size_t(i * k + q)] * hb[std::size_t(q * n + j)]);
      bound.push_back(per * mag);
    }
  CHECK_WITHIN(g, c, bound, "mma " + tname<In>() + " -> " + tname<Acc>());
}

// The library's FP8 product with per-tensor scales (on sm_90a on wgmma's 8-bit form, m64nNk32):
// fp8 products are exact, so GPU and CPU backend differ by the order of the sums (the f32
// accumulation bound, plus the 8-bit instructions' narrower accumulator: error_bounds.hpp,
// kFp8WgmmaAccumulationEps per step of 32 terms, of sum |a b| * scale) and C's one rounding.
template <class TA, class TB, class TC>
void check_matmul_fp8(std::int64_t m, std::int64_t n, std::int64_t k, ct::kernels::Fp8MatmulOptions opt) {
  const float sa = 0.5f, sb = 0.25f;
  auto [g, c] = both([&](ct::Device d) {
    auto a = ct::randn<TA>({m, k}, seed(31), 0.0, 1.0, d).share();
    auto bt = ct::randn<TB>({n, k}, seed(32), 0.0, 1.0, d).share();
    auto [cc, a2, bt2, s] = ct::kernels::matmul_fp8(poisoned<TC>({m, n}, d), a, bt, sa, sb, opt).sync();
    return std::move(cc).unpartition().to_host();
  });
  const auto ha = host_values(ct::randn<TA>({m, k}, seed(31), 0.0, 1.0, kCpu));
  const auto hb = host_values(ct::randn<TB>({n, k}, seed(32), 0.0, 1.0, kCpu));
  const double per = (eb::accumulation_ulps(k) + 2) * kEps32 + static_cast<double>((k + 31) / 32) * eb::kFp8WgmmaAccumulationEps;
  std::vector<double> bound;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double mag = 0, sum = 0;
      for (std::int64_t q = 0; q < k; ++q) {
        mag += std::abs(ha[std::size_t(i * k + q)] * hb[std::size_t(j * k + q)]);
        sum += ha[std::size_t(i * k + q)] * hb[std::size_t(j * k + q)];
      }
      const double scale = double(sa) * double(sb);
      bound.push_back(per * mag * scale + 2 * narrowing_ulp<TC>(sum * scale));
    }
  CHECK_WITHIN(g, c, bound, "matmul_fp8 " + tname<TA>() + " x " + tname<TB>() + " -> " + tname<TC>());
}

GPU_TEST(kernels_matmul_fp8) {
  check_matmul_fp8<ct::f8e4m3, ct::f8e4m3, ct::bf16>(300, 200, 520, {});
  check_matmul_fp8<ct::f8e4m3, ct::f8e5m2, float>(129, 256, 256, {.block_n = 256});
  check_matmul_fp8<ct::f8e5m2, ct::f8e4m3, ct::f16>(64, 70, 96, {.block_m = 64, .block_n = 64});
}

// The library's split-K product: the partial products (mma.sync tiles of 16 rows in K steps of 64;
// on sm_90 wgmma tiles of 64 rows in K steps of 128 through TMA and the producer warpgroup) and
// the sum over 1 x 256 row pieces with the splits unrolled; GPU against the CPU backend, each
// element within f32 sums in another order (twice: the partials and the sum) and a rounding per
// k16 step of the tensor cores (as check_mm), of sum |a b|, plus the one rounding to T of each side.
template <class T>
void check_matmul_split_k(std::int64_t m, std::int64_t n, std::int64_t k, ct::kernels::SplitKOptions opt) {
  auto [g, c] = both([&](ct::Device d) {
    auto a = ct::randn<T>({m, k}, seed(41), 0.0, 1.0, d).share();
    auto b = ct::randn<T>({k, n}, seed(42), 0.0, 1.0, d).share();
    auto [cc, a2, b2] = ct::kernels::matmul_split_k(poisoned<T>({m, n}, d), a, b, opt).sync();
    return cc.to_host();
  });
  const auto ha = host_values(ct::randn<T>({m, k}, seed(41), 0.0, 1.0, kCpu));
  const auto hb = host_values(ct::randn<T>({k, n}, seed(42), 0.0, 1.0, kCpu));
  const double per = (2 * eb::accumulation_ulps(k) + static_cast<double>((k + 15) / 16) + 2) * kEps32;
  std::vector<double> bound;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double mag = 0, sum = 0;
      for (std::int64_t q = 0; q < k; ++q) {
        mag += std::abs(ha[std::size_t(i * k + q)] * hb[std::size_t(q * n + j)]);
        sum += ha[std::size_t(i * k + q)] * hb[std::size_t(q * n + j)];
      }
      bound.push_back(per * mag + 2 * narrowing_ulp<T>(sum));
    }
  CHECK_WITHIN(g, c, bound, "matmul_split_k " + tname<T>() + " splits " + std::to_string(opt.splits));
}

GPU_TEST(kernels_matmul_split_k) {
  check_matmul_split_k<ct::bf16>(16, 300, 1000, {.splits = 4});                                 // 16 rows, K steps of 64
  check_matmul_split_k<ct::bf16>(70, 200, 777, {.splits = 2, .block_m = 64, .block_n = 64});    // 64 rows, K steps of 128
  check_matmul_split_k<ct::f16>(130, 260, 520, {.splits = 4, .block_m = 128, .block_n = 128});  // 128 rows
  check_matmul_split_k<ct::bf16>(5, 1000, 300, {.splits = 16});                                 // empty splits, 16 unrolled
}

GPU_TEST(kernels_mma_f16_to_f32) { check_mm<ct::f16, float>(70, 50, 90); }
GPU_TEST(kernels_mma_bf16_to_f32) { check_mm<ct::bf16, float>(70, 50, 90); }
GPU_TEST(kernels_mma_f32_to_f32) { check_mm<float, float>(70, 50, 90); }
GPU_TEST(kernels_mma_f64_to_f64) { check_mm<double, double>(70, 50, 90); }

// Batched products (rank-3 mma, split per batch index by the batch-mma pass): same bound per
// output element as check_mm, over each batch's own rows and columns.
template <class In, class Acc>
void check_bmm(std::int64_t p, std::int64_t m, std::int64_t n, std::int64_t k) {
  auto [g, c] = both([&](ct::Device d) {
    auto a = ct::randn<In>({p, m, k}, seed(19), 0.0, 1.0, d).share();
    auto b = ct::randn<In>({p, k, n}, seed(20), 0.0, 1.0, d).share();
    auto [cc, a2, b2] = ct::launch(bmm<In, Acc, 16>, poisoned<Acc>({p, m, n}, d).partition({2, 32, 16}), a, b).sync();
    return std::move(cc).unpartition().to_host();
  });
  const auto ha = host_values(ct::randn<In>({p, m, k}, seed(19), 0.0, 1.0, kCpu));
  const auto hb = host_values(ct::randn<In>({p, k, n}, seed(20), 0.0, 1.0, kCpu));
  const double e = eb::eps(std::is_same_v<Acc, double> ? ct::DType::f64 : ct::DType::f32);
  const double per = (eb::accumulation_ulps(k) + static_cast<double>((k + 15) / 16)) * e;
  std::vector<double> bound;
  for (std::int64_t h = 0; h < p; ++h)
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        double mag = 0;
        for (std::int64_t q = 0; q < k; ++q)
          mag += std::abs(ha[std::size_t((h * m + i) * k + q)] * hb[std::size_t((h * k + q) * n + j)]);
        bound.push_back(per * mag);
      }
  CHECK_WITHIN(g, c, bound, "batched mma " + tname<In>() + " -> " + tname<Acc>());
}

GPU_TEST(kernels_batched_mma_bf16_to_f32) { check_bmm<ct::bf16, float>(5, 70, 50, 90); }
GPU_TEST(kernels_batched_mma_f32_to_f32) { check_bmm<float, float>(3, 40, 20, 36); }

GPU_TEST(kernels_gather_rows_with_out_of_range_ids) {
  const std::int64_t vocab = 50, dim = 24, tokens = 20;
  std::vector<std::int32_t> ids(tokens);
  std::mt19937 gen(static_cast<unsigned>(seed(9)));
  for (auto& v : ids) v = static_cast<std::int32_t>(gen() % (vocab + 10)) - 5;
  auto [g, c] = both([&](ct::Device d) {
    auto table = ct::randn<float>({vocab, dim}, seed(10), 0.0, 1.0, d).share();
    auto hid = ct::from_host<std::int32_t>(std::span<const std::int32_t>(ids), {tokens}, d).share();
    auto [out, t2, i2] = ct::launch(gather_rows, poisoned<float>({tokens, dim}, d).partition({4, 8}), table, hid).sync();
    return std::move(out).unpartition().to_host();
  });
  CHECK_EQUAL(g, c, "gather_rows");
}

GPU_TEST(kernels_scatter_stays_inside_the_piece) {
  const std::int64_t n = 100;
  auto [g, c] = both([&](ct::Device d) {
    auto x = ct::randn<float>({n}, seed(11), 0.0, 1.0, d).share();
    auto [z, x2] = ct::launch(reverse_piece, ct::full<float>({n}, 9.0f, d).partition({32}), x).sync();
    return std::move(z).unpartition().to_host();
  });
  CHECK_EQUAL(g, c, "reverse_piece");
}

GPU_TEST(kernels_atomic_histogram_across_blocks) {
  const std::int64_t n = 50'000, bins = 17;
  auto [g, c] = both([&](ct::Device d) {
    auto x = ct::rand<std::int32_t>({n}, seed(12), 0, bins, d).share();
    auto [h, x2] = ct::launch(histogram, ct::zeros<std::int64_t>({bins}, d), x).grid({ct::ceil_div(n, 128)}).sync();
    return h.to_host();
  });
  CHECK_EQUAL(g, c, "histogram");
  CHECK(std::accumulate(g.begin(), g.end(), std::int64_t{0}) == n) << "every element counted once";
}

GPU_TEST(kernels_collatz_while_with_nested_if) {
  const std::int64_t n = 1000;
  auto [g, c] = both([&](ct::Device d) {
    auto s = ct::rand<std::int64_t>({n}, seed(13), 1, 100000, d).share();
    auto [st, s2] = ct::launch(collatz, poisoned<std::int64_t>({n}, d).partition({1}), s).sync();
    return std::move(st).unpartition().to_host();
  });
  CHECK_EQUAL(g, c, "collatz steps");
}

GPU_TEST(kernels_rank6_partitions) {
  const ct::Shape s = {3, 2, 5, 2, 3, 7};
  auto [g, c] = both([&](ct::Device d) {
    auto x = ct::randn<float>(s, seed(14), 0.0, 1.0, d).share();
    auto [z, x2] = ct::launch(copy6, poisoned<float>(s, d).partition({2, 2, 4, 1, 2, 4}), x).sync();
    return std::move(z).unpartition().to_host();
  });
  CHECK_EQUAL(g, c, "rank-6 copy * 2");
}

GPU_TEST(kernels_const_parameters_specialise) {
  for (int k : {1, 3, 5}) {
    auto [g, c] = both([&](ct::Device d) {
      auto x = ct::randn<float>({100}, seed(15), 0.0, 1.0, d).share();
      auto [z, x2, kk] = ct::launch(scale_by, poisoned<float>({100}, d).partition({64}), x, k).sync();
      return std::move(z).unpartition().to_host();
    });
    CHECK_EQUAL(g, c, "scale_by k=" + std::to_string(k));  // adds of exact values: exact
  }
}

GPU_TEST(kernels_indices_past_2_to_32_elements) {
  // A stride-0 view of 2^33 + 8 elements over one float of GPU memory.
  const std::int64_t n = (std::int64_t{1} << 33) + 8;
  auto run = [&](ct::Device d, std::int64_t t) {
    auto one = ct::full<float>({1}, 2.5f, d);
    auto x = ct::Tensor<float>::borrow(ct::unchecked, one.data(ct::unchecked), {n}, {0}, d).share();
    auto [o, x2, tt] = ct::launch(pick_tile, poisoned<float>({16}, d).partition({16}), x, t).sync();
    return std::move(o).unpartition().to_host();
  };
  for (std::int64_t t : {(std::int64_t{1} << 29) - 1, std::int64_t{1} << 29})
    CHECK_EQUAL(run(gpu(), t), run(kCpu, t), "tile " + std::to_string(t) + " of a 2^33-element view");
}

// ================================ example kernels ================================

GPU_TEST(examples_hello_world) {
  auto [g, c] = both([&](ct::Device d) {
    auto [done] = ct::launch(hello, poisoned<std::int64_t>({3, 4}, d).partition({1, 1})).sync();
    return std::move(done).unpartition().to_host();
  });
  CHECK_EQUAL(g, c, "hello");
}

GPU_TEST(examples_vector_add) {
  for (int offset : {0, 1}) {
    const std::int64_t n = (1 << 20) + 3;
    auto [g, c] = both([&](ct::Device d) {
      auto x = input1<float>(n, seed(16), d, offset);
      auto y = input1<float>(n, seed(17), d, offset);
      Output1<float> z(n, d, offset);
      auto [z2, x2, y2] = ct::launch(vector_add, std::move(z.view).partition({1024}), x, y).sync();
      return read_guarded(std::move(z2).unpartition(), offset, "vector_add");
    });
    CHECK_EQUAL(g, c, "vector_add offset " + std::to_string(offset));  // one IEEE add: exact
  }
}

GPU_TEST(examples_saxpy_bf16) {
  for (int offset : {0, 1}) {
    const std::int64_t n = 100'003;
    auto [g, c] = both([&](ct::Device d) {
      auto x = input1<ct::bf16>(n, seed(18), d, offset);
      auto y = ct::randn<ct::bf16>({n + 2 * offset}, seed(19), 0.0, 1.0, d).slice(0, offset, n + offset);
      auto [y2, a, x2] = ct::launch(saxpy, std::move(y).partition({2048}), 2.5f, x).sync();
      return std::move(y2).unpartition().to_host();
    });
    // a * x + y may be contracted into an FMA on the GPU (one ulp of |a x| in f32), then rounded
    // to bf16 (one ulp of bf16).
    const auto hx = host_values(ct::randn<ct::bf16>({n + offset}, seed(18), 0.0, 1.0, kCpu));
    const auto hy = host_values(ct::randn<ct::bf16>({n + 2 * offset}, seed(19), 0.0, 1.0, kCpu));
    std::vector<double> bound;
    for (std::int64_t i = 0; i < n; ++i)
      bound.push_back(narrowing_ulp<ct::bf16>(gpu_test::as_double(c[std::size_t(i)])) +
                      2 * kEps32 * (2.5 * std::abs(hx[std::size_t(i + offset)]) + std::abs(hy[std::size_t(i + offset)])));
    CHECK_WITHIN(g, c, bound, "saxpy offset " + std::to_string(offset));
  }
}

GPU_TEST(examples_softmax) {
  const std::int64_t rows = 300, cols = 1000;
  auto [g, c] = both([&](ct::Device d) {
    auto x = ct::randn<float>({rows, cols}, seed(20), 0.0, 1.0, d).share();
    auto [o, x2] = ct::launch(softmax, poisoned<float>({rows, cols}, d).partition({1, 1024}), x).sync();
    return std::move(o).unpartition().to_host();
  });
  CHECK_WITHIN(g, c, softmax_bound(c, cols), "softmax");
}

GPU_TEST(examples_softmax_strided_misaligned_rows) {
  // Rows of a column slice [1, cols + 1) of a wider matrix: row stride cols + 3, offset 1.
  const std::int64_t rows = 77, cols = 1000;
  auto [g, c] = both([&](ct::Device d) {
    auto wide = ct::randn<float>({rows, cols + 3}, seed(21), 0.0, 1.0, d);
    auto x = std::move(wide).slice(1, 1, cols + 1).share();
    auto [o, x2] = ct::launch(softmax, poisoned<float>({rows, cols}, d).partition({1, 1024}), x).sync();
    return std::move(o).unpartition().to_host();
  });
  CHECK_WITHIN(g, c, softmax_bound(c, cols), "softmax of a strided view");
}

GPU_TEST(examples_rms_norm) {
  const std::int64_t rows = 64, cols = 3000;
  auto [g, c] = both([&](ct::Device d) {
    auto x = ct::randn<ct::bf16>({rows, cols}, seed(22), 0.0, 1.0, d).share();
    auto w = ct::rand<ct::bf16>({cols}, seed(23), 0.5, 1.5, d).share();
    auto [y2, x2, w2, e] = ct::launch(rms_norm, poisoned<ct::bf16>({rows, cols}, d).partition({1, 4096}), x, w, 1e-6f).sync();
    return std::move(y2).unpartition().to_host();
  });
  std::vector<double> bound;
  for (const ct::bf16& w : c) {
    const double v = gpu_test::as_double(w);
    bound.push_back(narrowing_ulp<ct::bf16>(v) + eb::rms_norm_rel_ulps(cols) * eb::ulp(ct::DType::f32, v));
  }
  CHECK_WITHIN(g, c, bound, "rms_norm");
}

GPU_TEST(examples_matmul_bf16) {
  const std::int64_t m = 200, n = 136, k = 300;
  auto [g, c] = both([&](ct::Device d) {
    auto a = ct::randn<ct::bf16>({m, k}, seed(24), 0.0, 1.0, d).share();
    auto b = ct::randn<ct::bf16>({k, n}, seed(25), 0.0, 1.0, d).share();
    auto [c2, a2, b2] = ct::launch(matmul<32>, poisoned<float>({m, n}, d).partition({64, 64}), a, b).sync();
    return std::move(c2).unpartition().to_host();
  });
  const auto ha = host_values(ct::randn<ct::bf16>({m, k}, seed(24), 0.0, 1.0, kCpu));
  const auto hb = host_values(ct::randn<ct::bf16>({k, n}, seed(25), 0.0, 1.0, kCpu));
  const double per = (eb::accumulation_ulps(k) + static_cast<double>((k + 31) / 32)) * kEps32;
  std::vector<double> bound;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double mag = 0;
      for (std::int64_t q = 0; q < k; ++q) mag += std::abs(ha[std::size_t(i * k + q)] * hb[std::size_t(q * n + j)]);
      bound.push_back(per * mag);
    }
  CHECK_WITHIN(g, c, bound, "matmul");
}

GPU_TEST(examples_reduce_sum_atomic_f64) {
  const std::int64_t n = 1'000'003;
  auto [g, c] = both([&](ct::Device d) {
    auto x = ct::randn<double>({n}, seed(26), 0.0, 1.0, d).share();
    auto [total, x2] = ct::launch(reduce_sum, ct::zeros<double>({1}, d), x).grid({ct::ceil_div(n, kSumBlock)}).sync();
    return total.to_host();
  });
  // Block sums in a tree, then atomic adds in any order: sqrt(n) ulps of sum |x| in f64.
  double mag = 0;
  for (double v : host_values(ct::randn<double>({n}, seed(26), 0.0, 1.0, kCpu))) mag += std::abs(v);
  const double bound = (eb::accumulation_ulps(n) + 2) * eb::eps(ct::DType::f64) * mag;
  CHECK_WITHIN(g, c, std::vector<double>{bound}, "sum (atomic adds in any order)");
}

GPU_TEST(examples_unsafe_scatter) {
  const std::int64_t n = 4096;
  std::vector<std::int64_t> perm(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) perm[std::size_t(i)] = (i * 1237) % n;
  auto [g, c] = both([&](ct::Device d) {
    auto src = ct::rand<float>({n}, seed(27), d).share();
    auto idx = ct::from_host<std::int64_t>(std::span<const std::int64_t>(perm), {n}, d).share();
    auto dst = ct::unchecked_mut(ct::unchecked, poisoned<float>({n}, d));
    auto [d2, i2, s2] = ct::launch(scatter, std::move(dst), idx, src).grid({n / 256}).sync();
    return std::move(d2).into_tensor().to_host();
  });
  CHECK_EQUAL(g, c, "permutation scatter");
  // With the race checker (on a GPU the launch runs on the CPU interpreter) colliding stores are found.
  std::vector<std::int64_t> folded(perm);
  for (auto& v : folded) v %= n / 2;
  auto src = ct::rand<float>({n}, seed(28), gpu()).share();
  auto idx_bad = ct::from_host<std::int64_t>(std::span<const std::int64_t>(folded), {n}, gpu()).share();
  bool caught = false;
  try {
    auto r = ct::launch(scatter, ct::unchecked_mut(ct::unchecked, ct::zeros<float>({n}, gpu())), idx_bad, src)
                 .grid({n / 256})
                 .race_check()
                 .sync();
    (void)r;
  } catch (const ct::RaceError&) {
    caught = true;
  }
  CHECK(caught) << "the race checker did not report colliding stores of a GPU launch";
}

// ================================ every element type ================================

template <class T>
void check_type() {
  const std::string t = tname<T>();
  for (int offset : {0, 1, 3}) {
    const std::int64_t n = 5000 + offset;  // not a multiple of the tile
    const std::string at = " (" + t + ", offset " + std::to_string(offset) + ")";
    // Copies are exact.
    auto [g, c] = both([&](ct::Device d) {
      auto x = input1<T>(n, seed(30), d, offset);
      Output1<T> z(n, d, offset);
      auto [z2, x2] = ct::launch(copy_k<T>, std::move(z.view).partition({1024}), x).sync();
      return read_guarded(std::move(z2).unpartition(), offset, "copy" + at);
    });
    CHECK_EQUAL(g, c, "copy" + at);
    // Conversions to and from f32 are exact where the value fits (inputs are small).
    auto [g2, c2] = both([&](ct::Device d) {
      auto x = input1<T>(n, seed(31), d, offset);
      auto [z2, x2] = ct::launch(to_f32<T>, poisoned<float>({n}, d).partition({512}), x).sync();
      return std::move(z2).unpartition().to_host();
    });
    CHECK_EQUAL(g2, c2, "to f32" + at);
    auto [g3, c3] = both([&](ct::Device d) {
      auto x = input1<float>(n, seed(32), d, offset, 0, 100);
      Output1<T> z(n, d, offset);
      auto [z2, x2] = ct::launch(from_f32<T>, std::move(z.view).partition({256}), x).sync();
      return read_guarded(std::move(z2).unpartition(), offset, "from f32" + at);
    });
    CHECK_EQUAL(g3, c3, "from f32" + at);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      auto [g4, c4] = both([&](ct::Device d) {
        auto x = input1<T>(n, seed(33), d, offset, 0, 10);
        auto y = input1<T>(n, seed(34), d, offset, 1, 10);
        Output1<T> z(n, d, offset);
        auto [z2, x2, y2] = ct::launch(int_arith<T>, std::move(z.view).partition({2048}), x, y).sync();
        return read_guarded(std::move(z2).unpartition(), offset, "integer arithmetic" + at);
      });
      CHECK_EQUAL(g4, c4, "integer arithmetic" + at);
    }
  }
}

GPU_TEST(types_bool) { check_type<bool>(); }
GPU_TEST(types_i8) { check_type<std::int8_t>(); }
GPU_TEST(types_i16) { check_type<std::int16_t>(); }
GPU_TEST(types_i32) { check_type<std::int32_t>(); }
GPU_TEST(types_i64) { check_type<std::int64_t>(); }
GPU_TEST(types_u8) { check_type<std::uint8_t>(); }
GPU_TEST(types_u16) { check_type<std::uint16_t>(); }
GPU_TEST(types_u32) { check_type<std::uint32_t>(); }
GPU_TEST(types_u64) { check_type<std::uint64_t>(); }
GPU_TEST(types_f16) { check_type<ct::f16>(); }
GPU_TEST(types_bf16) { check_type<ct::bf16>(); }
GPU_TEST(types_f32) { check_type<float>(); }
GPU_TEST(types_f64) { check_type<double>(); }

GPU_TEST(shapes_strided_2d_non_divisible) {
  for (auto [rows, cols] : {std::pair<std::int64_t, std::int64_t>{1, 1}, {5, 7}, {33, 65}, {129, 1000}, {1000, 3}}) {
    auto [g, c] = both([&](ct::Device d) {
      auto wide = ct::randn<float>({rows + 1, cols + 5}, seed(40), 0.0, 1.0, d);
      auto x = std::move(wide).slice(0, 1, rows + 1).slice(1, 2, cols + 2).share();  // offset and row stride
      auto [z, x2] = ct::launch(scale2, poisoned<float>({rows, cols}, d).partition({16, 64}), x).sync();
      return std::move(z).unpartition().to_host();
    });
    CHECK_EQUAL(g, c, "strided 2-D " + std::to_string(rows) + "x" + std::to_string(cols));
  }
}
