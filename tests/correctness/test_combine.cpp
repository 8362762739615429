// Reductions and scans over a user combine function (ct::reduce, ct::scan), run by the CPU backend
// through the launch API and compared with references computed here on fresh random inputs:
// float64 sums, exact maxima, argmax with the first index on ties, running maxima, products, and
// the reference order of combination (left to right along the axis, docs/language.md).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include <ctile/ctile.hpp>

#include "test_kernels.hpp"

namespace ct = ctile;
using namespace test_kernels;  // NOLINT(google-build-using-namespace): the shared test kernels

namespace {

template <class T>
std::vector<T> random_values(std::size_t n, unsigned seed, bool ties) {
  std::mt19937 g(seed);
  std::vector<T> v(n);
  if constexpr (std::is_floating_point_v<T>) {
    std::normal_distribution<double> d(0.0, 3.0);
    // With ties: halves in [-4, 4], so a row of 32 repeats its maximum often.
    for (auto& x : v) x = ties ? static_cast<T>(std::round(std::clamp(d(g), -4.0, 4.0) * 2) / 2) : static_cast<T>(d(g));
  } else {
    std::uniform_int_distribution<int> d(ties ? -3 : -1000, ties ? 3 : 1000);
    for (auto& x : v) x = static_cast<T>(d(g));
  }
  return v;
}

template <class T>
ct::Shared<T> shared_of(const std::vector<T>& v, ct::Shape s) {
  return ct::from_host<T>(std::span<const T>(v), s).share();
}

template <class T>
ct::Tensor<T> poisoned(ct::Shape s) {
  if constexpr (std::is_floating_point_v<T>) return ct::full<T>(s, std::numeric_limits<T>::quiet_NaN());
  else return ct::full<T>(s, static_cast<T>(0x5a));
}

// ---- reductions: a sum by a combine function, the largest magnitude, along either axis ----
// x is [m, n] with n a multiple of BN and m not of BM (the last row of tiles is partial: its rows
// past m are padding and their outputs are not stored).
template <class T, std::int64_t BM, std::int64_t BN, int A>
void check_reduce(std::int64_t m, std::int64_t n, unsigned seed) {
  SCOPED_TRACE(testing::Message() << ct::dtype_name(ct::dtype_of<T>) << " [" << BM << ", " << BN << "] axis " << A << " m " << m
                                  << " n " << n);
  const auto hx = random_values<T>(static_cast<std::size_t>(m * n), seed, false);
  const std::int64_t gm = (m + BM - 1) / BM, gn = n / BN;
  // A = 1: one value per row and tile column ([m, gn]); A = 0: per tile row and column ([gm, n]).
  const ct::Shape os = A == 1 ? ct::Shape{m, gn} : ct::Shape{gm, n};
  const ct::Shape ot = A == 1 ? ct::Shape{BM, 1} : ct::Shape{1, BN};
  auto [sf, sb, ma, x] = ct::launch(combine_reduce<T, BM, BN, A>, poisoned<T>(os).partition(ot), poisoned<T>(os).partition(ot),
                                    poisoned<T>(os).partition(ot), shared_of(hx, {m, n}))
                             .sync();
  const auto hsf = std::move(sf).unpartition().to_host();
  const auto hsb = std::move(sb).unpartition().to_host();
  const auto hma = std::move(ma).unpartition().to_host();
  const std::int64_t rows = os[0], cols = os[1];
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) {
      // The elements combined into output (r, c).
      double sum = 0, sum_abs = 0, most = 0;
      std::int64_t isum = 0;
      const std::int64_t len = A == 1 ? BN : BM;
      for (std::int64_t k = 0; k < len; ++k) {
        const std::int64_t i = A == 1 ? r : r * BM + k, j = A == 1 ? c * BN + k : c;
        if (i >= m) continue;  // padding (0)
        const T v = hx[static_cast<std::size_t>(i * n + j)];
        sum += static_cast<double>(v);
        sum_abs += std::fabs(static_cast<double>(v));
        most = std::max(most, std::fabs(static_cast<double>(v)));
        if constexpr (std::is_integral_v<T>) isum += v;
      }
      const auto o = static_cast<std::size_t>(r * cols + c);
      if constexpr (std::is_integral_v<T>) {
        ASSERT_EQ(hsf[o], static_cast<T>(isum)) << "sum at " << r << ", " << c;
        ASSERT_EQ(hsf[o], hsb[o]) << "the combine sum differs from ct::sum at " << r << ", " << c;
      } else {
        ASSERT_NEAR(hsf[o], sum, 1e-6 * sum_abs + 1e-30) << "sum at " << r << ", " << c;
        ASSERT_NEAR(hsf[o], hsb[o], 1e-6 * sum_abs + 1e-30) << "the combine sum differs from ct::sum at " << r << ", " << c;
      }
      ASSERT_EQ(static_cast<double>(hma[o]), most) << "max |x| at " << r << ", " << c;
    }
}

TEST(CombineReduce, SumAndLargestMagnitudeAlongRows) {
  check_reduce<float, 8, 64, 1>(37, 128, 1);
  check_reduce<float, 2, 16, 1>(5, 48, 2);
  check_reduce<std::int32_t, 4, 256, 1>(9, 256, 3);
}

TEST(CombineReduce, SumAndLargestMagnitudeAlongColumns) {
  check_reduce<float, 128, 16, 0>(200, 32, 4);
  check_reduce<float, 16, 8, 0>(21, 24, 5);
  check_reduce<std::int32_t, 16, 32, 0>(40, 64, 6);
}

// ---- argmax as a reduction of (value, index) pairs: the first index wins ties ----
template <class T, std::int64_t BM, std::int64_t BN>
void check_argmax(std::int64_t m, std::int64_t n, unsigned seed) {
  SCOPED_TRACE(testing::Message() << ct::dtype_name(ct::dtype_of<T>) << " [" << BM << ", " << BN << "]");
  const auto hx = random_values<T>(static_cast<std::size_t>(m * n), seed, /*ties=*/true);
  const std::int64_t gn = n / BN;
  auto [best, at, builtin, x] = ct::launch(combine_argmax<T, BM, BN>, poisoned<T>({m, gn}).partition({BM, 1}),
                                           poisoned<std::int64_t>({m, gn}).partition({BM, 1}),
                                           poisoned<std::int64_t>({m, gn}).partition({BM, 1}), shared_of(hx, {m, n}))
                                    .sync();
  const auto hb = std::move(best).unpartition().to_host();
  const auto ha = std::move(at).unpartition().to_host();
  const auto hi = std::move(builtin).unpartition().to_host();
  int ties = 0;
  for (std::int64_t r = 0; r < m; ++r)
    for (std::int64_t c = 0; c < gn; ++c) {
      std::int64_t want = c * BN;
      int count = 0;
      for (std::int64_t j = c * BN; j < (c + 1) * BN; ++j) {
        const T v = hx[static_cast<std::size_t>(r * n + j)], w = hx[static_cast<std::size_t>(r * n + want)];
        if (v > w) {
          want = j;
          count = 1;
        } else if (v == w) {
          ++count;
        }
      }
      ties += count > 1;
      const auto o = static_cast<std::size_t>(r * gn + c);
      ASSERT_EQ(ha[o], want) << "row " << r << " tile column " << c;
      ASSERT_EQ(hb[o], hx[static_cast<std::size_t>(r * n + want)]) << "row " << r << " tile column " << c;
      ASSERT_EQ(hi[o], ha[o]) << "ct::argmax disagrees at row " << r << " tile column " << c;
    }
  EXPECT_GT(ties, 0) << "the inputs should repeat their maxima (ties decide the index)";
}

TEST(CombineReduce, ArgmaxOfPairsTakesTheFirstIndexOnTies) {
  check_argmax<float, 8, 32>(19, 64, 7);
  check_argmax<std::int32_t, 16, 128>(16, 256, 8);
}

// ---- scans: running largest magnitude, the product after each element, a running argmax ----
template <class T, std::int64_t BM, std::int64_t BN, int A>
void check_scan(std::int64_t m, std::int64_t n, unsigned seed) {
  SCOPED_TRACE(testing::Message() << ct::dtype_name(ct::dtype_of<T>) << " [" << BM << ", " << BN << "] axis " << A);
  auto hx = random_values<T>(static_cast<std::size_t>(m * n), seed, /*ties=*/true);
  if constexpr (std::is_floating_point_v<T>)  // products of values near 1 stay in range
    for (auto& v : hx) v = static_cast<T>(1 + v / 16);
  auto [rm, ap, rb, ra, x] = ct::launch(combine_scan<T, BM, BN, A>, poisoned<T>({m, n}).partition({BM, BN}),
                                        poisoned<T>({m, n}).partition({BM, BN}), poisoned<T>({m, n}).partition({BM, BN}),
                                        poisoned<std::int32_t>({m, n}).partition({BM, BN}), shared_of(hx, {m, n}))
                                 .sync();
  const auto hrm = std::move(rm).unpartition().to_host();
  const auto hap = std::move(ap).unpartition().to_host();
  const auto hrb = std::move(rb).unpartition().to_host();
  const auto hra = std::move(ra).unpartition().to_host();
  auto at = [&](std::int64_t i, std::int64_t j) { return static_cast<std::size_t>(i * n + j); };
  // Each line along the axis within its tile: (i0, j0) its first element, (di, dj) its step.
  const std::int64_t len = A == 0 ? BM : BN, di = A == 0 ? 1 : 0, dj = A == 0 ? 0 : 1;
  for (std::int64_t i0 = 0; i0 < m; i0 += A == 0 ? BM : 1)
    for (std::int64_t j0 = 0; j0 < n; j0 += A == 0 ? 1 : BN) {
      T run = 0;
      std::int64_t best = 0;
      for (std::int64_t k = 0; k < len; ++k) {
        const auto e = at(i0 + k * di, j0 + k * dj);
        const T mag = hx[e] < 0 ? static_cast<T>(-hx[e]) : hx[e];
        run = k == 0 ? mag : std::max(run, mag);
        ASSERT_EQ(hrm[e], run) << "running max |x|, step " << k << " of the line at " << i0 << ", " << j0;
        if (hx[e] > hx[at(i0 + best * di, j0 + best * dj)]) best = k;
        ASSERT_EQ(hra[e], best) << "running argmax, step " << k << " of the line at " << i0 << ", " << j0;
        ASSERT_EQ(hrb[e], hx[at(i0 + best * di, j0 + best * dj)]) << "running max, step " << k;
      }
      T prod = 1;  // exclusive, reverse: the product of the elements after each one, from the end
      for (std::int64_t k = len; k-- > 0;) {
        const auto e = at(i0 + k * di, j0 + k * dj);
        if constexpr (std::is_floating_point_v<T>)
          ASSERT_NEAR(hap[e], prod, 1e-5 * std::fabs(prod)) << "product after step " << k << " of the line at " << i0 << ", " << j0;
        else
          ASSERT_EQ(hap[e], prod) << "product after step " << k << " of the line at " << i0 << ", " << j0;
        if constexpr (std::is_floating_point_v<T>) prod = prod * hx[e];
        else prod = static_cast<T>(static_cast<std::uint32_t>(prod) * static_cast<std::uint32_t>(hx[e]));  // wraps
      }
    }
}

TEST(CombineScan, RunningMaximaProductsAndArgmaxAlongEitherAxis) {
  check_scan<float, 8, 32, 1>(16, 64, 9);
  check_scan<float, 16, 4, 0>(32, 8, 10);
  check_scan<std::int32_t, 32, 8, 0>(64, 16, 11);
  check_scan<std::int32_t, 4, 16, 1>(8, 32, 12);
}

// ---- a whole tile to one element, two values at once ----
TEST(CombineReduce, ExtremesOfWholeTiles) {
  const std::int64_t n = 3 * 1024;
  const auto hx = random_values<float>(static_cast<std::size_t>(n), 13, false);
  auto [lo, hi, x] =
      ct::launch(combine_extremes<float, 1024>, poisoned<float>({3}).partition({1}), poisoned<float>({3}).partition({1}),
                 shared_of(hx, {n}))
          .sync();
  const auto hl = std::move(lo).unpartition().to_host();
  const auto hh = std::move(hi).unpartition().to_host();
  for (std::int64_t b = 0; b < 3; ++b) {
    const auto first = hx.begin() + b * 1024, last = first + 1024;
    EXPECT_EQ(hl[static_cast<std::size_t>(b)], *std::min_element(first, last)) << "tile " << b;
    EXPECT_EQ(hh[static_cast<std::size_t>(b)], *std::max_element(first, last)) << "tile " << b;
  }
}

// ---- the reference order: left to right along the axis, the running value on the left ----
// "Take the left operand" and "take the right one" are associative (not commutative): a reduction
// gives the first or the last element, an inclusive scan repeats the first element (the last, in
// reverse), an exclusive one lags by one from the identity.
void order_probe(ct::Mut<std::int32_t, 2> first, ct::Mut<std::int32_t, 2> last, ct::Mut<std::int32_t, 2> keep_first,
                 ct::Mut<std::int32_t, 2> keep_last_rev, ct::Mut<std::int32_t, 2> shift, ct::Ref<std::int32_t, 2> x) {
  auto t = x.tiles({4, 8}).load({0, 0});
  auto left = [](auto a, auto b) {
    (void)b;
    return a;
  };
  auto right = [](auto a, auto b) {
    (void)a;
    return b;
  };
  first.store(ct::reduce(t, 1, left, true));
  last.store(ct::reduce(t, 1, right, true));
  keep_first.store(ct::scan(t, 1, left));
  keep_last_rev.store(ct::scan(t, 1, left, ct::reverse));
  shift.store(ct::scan(t, 1, right, ct::exclusive, -1));
}

TEST(CombineOrder, TheReferenceCombinesLeftToRight) {
  std::vector<std::int32_t> hx(32);
  for (std::size_t i = 0; i < hx.size(); ++i) hx[i] = static_cast<std::int32_t>(i * 7 % 32);
  auto [f, l, kf, kl, sh, x] =
      ct::launch(order_probe, poisoned<std::int32_t>({4, 1}).partition({4, 1}), poisoned<std::int32_t>({4, 1}).partition({4, 1}),
                 poisoned<std::int32_t>({4, 8}).partition({4, 8}), poisoned<std::int32_t>({4, 8}).partition({4, 8}),
                 poisoned<std::int32_t>({4, 8}).partition({4, 8}), shared_of(hx, {4, 8}))
          .sync();
  const auto hf = std::move(f).unpartition().to_host(), hl = std::move(l).unpartition().to_host();
  const auto hkf = std::move(kf).unpartition().to_host(), hkl = std::move(kl).unpartition().to_host();
  const auto hs = std::move(sh).unpartition().to_host();
  for (std::size_t r = 0; r < 4; ++r) {
    EXPECT_EQ(hf[r], hx[r * 8]) << "row " << r;
    EXPECT_EQ(hl[r], hx[r * 8 + 7]) << "row " << r;
    for (std::size_t c = 0; c < 8; ++c) {
      EXPECT_EQ(hkf[r * 8 + c], hx[r * 8]) << r << ", " << c;
      EXPECT_EQ(hkl[r * 8 + c], hx[r * 8 + 7]) << r << ", " << c;
      EXPECT_EQ(hs[r * 8 + c], c == 0 ? -1 : hx[r * 8 + c - 1]) << r << ", " << c;
    }
  }
}

}  // namespace
