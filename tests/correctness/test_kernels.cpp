// End-to-end correctness: kernels traced, run by the CPU backend through the launch API, and
// compared with float64 references on fresh random inputs (outputs poisoned first).
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include <gtest/gtest.h>

#include <ctile/ctile.hpp>
#include <ctile/kernels/gemv.hpp>

#include "product_check.hpp"
#include "test_kernels.hpp"

namespace ct = ctile;
using namespace test_kernels;  // NOLINT(google-build-using-namespace): the shared test kernels

namespace {

template <class T>
double to_d(T v) {
  if constexpr (std::is_same_v<T, ct::f16> || std::is_same_v<T, ct::bf16>) return static_cast<double>(static_cast<float>(v));
  else return static_cast<double>(v);
}

template <class T>
double rel_l2(const std::vector<T>& out, const std::vector<double>& ref) {
  EXPECT_EQ(out.size(), ref.size());
  double num = 0, den = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const double o = to_d(out[i]);
    if (std::isnan(o)) return INFINITY;
    num += (o - ref[i]) * (o - ref[i]);
    den += ref[i] * ref[i];
  }
  return den == 0 ? std::sqrt(num) : std::sqrt(num / den);
}

template <class T>
ct::Tensor<T> poisoned(ct::Shape s) {
  if constexpr (std::is_floating_point_v<T>) return ct::full<T>(s, std::numeric_limits<T>::quiet_NaN());
  else if constexpr (std::is_same_v<T, ct::f16> || std::is_same_v<T, ct::bf16>) return ct::full<T>(s, T(NAN));
  else return ct::full<T>(s, static_cast<T>(0x5a));
}

// ---- element-wise over every float type, non-divisible extents ----
template <class T>
void check_axpby(double tol) {
  const std::int64_t n = 10'007;
  auto x = ct::randn<T>({n}, 21).share();
  auto y = ct::randn<T>({n}, 22).share();
  auto [z, x2, y2] = ct::launch(axpby<T>, poisoned<T>({n}).partition({512}), x, y).sync();
  const auto hz = std::move(z).unpartition().to_host();
  const auto hx = x2.to_host(), hy = y2.to_host();
  std::vector<double> ref(hz.size());
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double a = to_d(hx[i]), b = to_d(hy[i]);
    ref[i] = std::exp(a * 0.5) - b * b + std::max(a, b);
  }
  EXPECT_LT(rel_l2(hz, ref), tol) << ct::dtype_name(ct::dtype_of<T>);
}

TEST(Elementwise, F32) { check_axpby<float>(1e-6); }
TEST(Elementwise, F64) { check_axpby<double>(1e-6); }
TEST(Elementwise, F16) { check_axpby<ct::f16>(2e-3); }
TEST(Elementwise, BF16) { check_axpby<ct::bf16>(1e-2); }

// ---- integer arithmetic, bit ops, comparisons, select ----
TEST(Elementwise, Int32OpsMatchCSemantics) {
  const std::int64_t n = 3000;
  auto x = ct::rand<std::int32_t>({n}, 23, -1000, 1000).share();
  auto y = ct::rand<std::int32_t>({n}, 24, 1, 50).share();
  auto [z, x2, y2] = ct::launch(int_ops, poisoned<std::int32_t>({n}).partition({256}), x, y).sync();
  const auto hz = std::move(z).unpartition().to_host();
  const auto hx = x2.to_host(), hy = y2.to_host();
  for (std::size_t i = 0; i < hz.size(); ++i) {
    const std::int32_t a = hx[i], b = hy[i];
    const std::int32_t q = a / b + a % b * 3 - (a & 0xff) + (b << 2) - (a >> 1) + (a ^ b);
    ASSERT_EQ(hz[i], a > b ? q : -q) << "at " << i;
  }
}

// ---- conversions round like the hardware ----
TEST(Convert, Bf16RoundsToNearestEvenAndIntsSaturate) {
  const std::int64_t n = 4096;
  auto x = ct::randn<float>({n}, 25, 0.0, 3.0).share();
  auto [b, i8, x2] = ct::launch(convert_k, poisoned<ct::bf16>({n}).partition({1024}),
                                poisoned<std::int8_t>({n}).partition({1024}), x)
                         .sync();
  const auto hb = std::move(b).unpartition().to_host();
  const auto hi = std::move(i8).unpartition().to_host();
  const auto hx = x2.to_host();
  for (std::size_t i = 0; i < hx.size(); ++i) {
    ASSERT_EQ(hb[i].bits, ct::bf16(hx[i]).bits);
    const double s = std::trunc(double(hx[i]) * 100.0);
    ASSERT_EQ(hi[i], static_cast<std::int8_t>(std::clamp(s, -128.0, 127.0)));
  }
}

// ---- reductions and scans along each axis of 2-D tiles ----
TEST(Reduce, RowSumArgmaxCumsum) {
  const std::int64_t m = 37, n = 64;
  auto x = ct::randn<float>({m, n}, 26).share();
  auto [s, a, c, x2] = ct::launch(reduce_rows, poisoned<float>({m, 1}).partition({8, 1}),
                                  poisoned<std::int64_t>({m, 1}).partition({8, 1}),
                                  poisoned<float>({m, n}).partition({8, 64}), x)
                           .sync();
  const auto hs = std::move(s).unpartition().to_host();
  const auto ha = std::move(a).unpartition().to_host();
  const auto hc = std::move(c).unpartition().to_host();
  const auto hx = x2.to_host();
  std::vector<double> rs(static_cast<std::size_t>(m)), rc(static_cast<std::size_t>(m * n));
  for (std::int64_t i = 0; i < m; ++i) {
    double acc = 0;
    std::int64_t best = 0;
    for (std::int64_t j = 0; j < n; ++j) {
      acc += hx[std::size_t(i * n + j)];
      rc[std::size_t(i * n + j)] = acc;
      if (hx[std::size_t(i * n + j)] > hx[std::size_t(i * n + best)]) best = j;
    }
    rs[std::size_t(i)] = acc;
    EXPECT_EQ(ha[std::size_t(i)], best) << "row " << i;
  }
  EXPECT_LT(rel_l2(hs, rs), 1e-6);
  EXPECT_LT(rel_l2(hc, rc), 1e-6);
}

// ---- outputs of different rank on one grid ([rows] beside [rows, cols]) ----
TEST(MixedRank, RowStatisticsBesideTheRows) {
  const std::int64_t m = 37, n = 64;
  auto x = ct::randn<float>({m, n}, 27, 1.0, 2.0).share();
  auto [sums, maxes, y, x2] = ct::launch(row_stats, poisoned<float>({m}).partition({8}), poisoned<float>({m}).partition({8}),
                                         poisoned<float>({m, n}).partition({8, 64}), x)
                                  .sync();
  const auto hs = std::move(sums).unpartition().to_host();
  const auto hm = std::move(maxes).unpartition().to_host();
  const auto hy = std::move(y).unpartition().to_host();
  const auto hx = x2.to_host();
  std::vector<double> rs, ry;
  for (std::int64_t i = 0; i < m; ++i) {
    double s = 0;
    float mx = hx[std::size_t(i * n)];
    for (std::int64_t j = 0; j < n; ++j) {
      s += hx[std::size_t(i * n + j)];
      mx = std::max(mx, hx[std::size_t(i * n + j)]);
    }
    rs.push_back(s);
    ASSERT_EQ(hm[std::size_t(i)], mx) << "row " << i;
    for (std::int64_t j = 0; j < n; ++j) ASSERT_EQ(hy[std::size_t(i * n + j)], hx[std::size_t(i * n + j)] - mx);
  }
  EXPECT_LT(rel_l2(hs, rs), 1e-6);
}

// ---- windows at element offsets (load_window / store_window) ----
TEST(Windows, StencilReadsAcrossPiecesAndPastBothEnds) {
  for (std::int64_t n : {1, 7, 64, 1000, 1024}) {
    auto x = ct::randn<float>({n}, 31 + static_cast<std::uint64_t>(n)).share();
    auto [y, x2] = ct::launch(stencil3<float>, poisoned<float>({n}).partition({64}), x).sync();
    const auto hy = std::move(y).unpartition().to_host();
    const auto hx = x2.to_host();
    auto at = [&](std::int64_t i) { return i < 0 || i >= n ? 0.0 : double(hx[std::size_t(i)]); };
    for (std::int64_t i = 0; i < n; ++i)
      ASSERT_NEAR(hy[std::size_t(i)], at(i - 1) + 2 * at(i) + at(i + 1), 1e-5) << "n " << n << " element " << i;
  }
}

TEST(Windows, OffsetsAtTheIntegerLimitsReadPadAndWriteNothingOutside) {
  const std::int64_t n = 40, tile = 16;  // pieces of 16 (the last one partial)
  const std::int64_t big = std::numeric_limits<std::int64_t>::max(), small = std::numeric_limits<std::int64_t>::min();
  auto x = ct::arange<float>(n).share();
  for (std::int64_t at : std::vector<std::int64_t>{small, small + 1, -tile, -tile + 1, -1, 0, n - 1, n, big - tile, big})
    for (std::int64_t off : std::vector<std::int64_t>{small, -tile, -tile + 1, -3, 0, 5, tile - 1, tile, big}) {
      auto [y, x2, a2, o2] = ct::launch(window_at_offsets, ct::zeros<float>({n}).partition({tile}), x, at, off).sync();
      const auto hy = std::move(y).unpartition().to_host();
      for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t e = i % tile;  // element e of its piece
        // The window read: x[at + e] where that is inside [0, n) (no overflow: at + e is compared
        // as at < n - e and at >= -e), else -1.
        float want = (at >= -e && at < n - e) ? static_cast<float>(at + e) : -1.0f;
        // The window written: piece elements off .. off + tile - 1 inside the piece.
        if (off <= e && off > e - tile) want = 7.0f;  // e - off < tile, without overflow
        ASSERT_EQ(hy[std::size_t(i)], want) << "at " << at << " off " << off << " element " << i;
      }
    }
}

TEST(Windows, OneElementWindows) {
  const std::int64_t n = 40, tile = 16;
  auto x = ct::arange<float>(n).share();
  for (std::int64_t k : std::vector<std::int64_t>{std::numeric_limits<std::int64_t>::min(), -1, 0, 5, 15, 16, 30}) {
    auto [y, x2, k2] = ct::launch(window_one_element, poisoned<float>({n}).partition({tile}), x, k).sync();
    const auto hy = std::move(y).unpartition().to_host();
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t e = i % tile;
      const float want = (e == k && i < n) ? static_cast<float>(i) : 0.0f;
      ASSERT_EQ(hy[std::size_t(i)], want) << "k " << k << " element " << i;
    }
  }
}

TEST(Windows, PieceWrittenInPartsKeepsTheRest) {
  const std::int64_t m = 21, n = 45, bm = 8, bn = 16;  // partial pieces on both axes
  auto x = ct::randn<float>({m, n}, 77).share();
  auto [y, x2] = ct::launch(window_parts, poisoned<float>({m, n}).partition({bm, bn}), x).sync();
  const auto hy = std::move(y).unpartition().to_host();
  const auto hx = x2.to_host();
  auto xa = [&](std::int64_t r, std::int64_t c) { return r < 0 || r >= m || c < 0 || c >= n ? 0.0f : hx[std::size_t(r * n + c)]; };
  for (std::int64_t r = 0; r < m; ++r)
    for (std::int64_t c = 0; c < n; ++c) {
      const std::int64_t pr = r % bm, pc = c % bn, r0 = r - pr, c0 = c - pc;
      float want = -1.0f;
      if (pc < bn / 2) want = xa(r0 + pr + 1, c0 + pc + 3);
      else if (pr >= 2) want = xa(r0 - 2 + (pr - 2), c0 + bn / 2 + (pc - bn / 2));
      else if (pr == 0) want = float(bm - 1) * 1000.0f + float(pc - bn / 2);
      ASSERT_EQ(hy[std::size_t(r * n + c)], want) << "element (" << r << ", " << c << ")";
    }
}

// ---- matrix multiply with a run-time K loop, every input type ----
template <class In, class Acc>
void check_mm(double tol) {
  const std::int64_t m = 70, n = 50, k = 90;
  auto a = ct::randn<In>({m, k}, 27).share();
  auto b = ct::randn<In>({k, n}, 28).share();
  auto [c, a2, b2] = ct::launch(mm<In, Acc, 16>, poisoned<Acc>({m, n}).partition({32, 16}), a, b).sync();
  const auto hc = std::move(c).unpartition().to_host();
  const auto ha = a2.to_host(), hb = b2.to_host();
  std::vector<double> ref(static_cast<std::size_t>(m * n), 0.0);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t kk = 0; kk < k; ++kk) ref[std::size_t(i * n + j)] += to_d(ha[std::size_t(i * k + kk)]) * to_d(hb[std::size_t(kk * n + j)]);
  EXPECT_LT(rel_l2(hc, ref), tol);
}

TEST(Mma, F16ToF32) { check_mm<ct::f16, float>(1e-6); }
TEST(Mma, Bf16ToF32) { check_mm<ct::bf16, float>(1e-6); }
TEST(Mma, F32ToF32) { check_mm<float, float>(1e-6); }
TEST(Mma, F64ToF64) { check_mm<double, double>(1e-12); }

// Batched (rank-3) products: P matrices per tile, partial tiles on every axis.
template <class In, class Acc>
void check_bmm(double tol) {
  const std::int64_t p = 5, m = 40, n = 20, k = 36;
  auto a = ct::randn<In>({p, m, k}, 41).share();
  auto b = ct::randn<In>({p, k, n}, 42).share();
  auto [c, a2, b2] = ct::launch(bmm<In, Acc, 16>, poisoned<Acc>({p, m, n}).partition({2, 32, 16}), a, b).sync();
  const auto hc = std::move(c).unpartition().to_host();
  const auto ha = a2.to_host(), hb = b2.to_host();
  std::vector<double> ref(static_cast<std::size_t>(p * m * n), 0.0);
  for (std::int64_t h = 0; h < p; ++h)
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t kk = 0; kk < k; ++kk)
          ref[std::size_t((h * m + i) * n + j)] +=
              to_d(ha[std::size_t((h * m + i) * k + kk)]) * to_d(hb[std::size_t((h * k + kk) * n + j)]);
  EXPECT_LT(rel_l2(hc, ref), tol);
}

TEST(Mma, BatchedSpecialValuesStayInTheirBatch) {
  // f32: batch 0 has an inf in a, batch 1 a NaN in b, batches 2 and 3 are finite; each batch's
  // result sees only its own matrices. i8 -> i32 at the limits: -128 * -128 summed over K, exact.
  const std::int64_t p = 4, m = 16, n = 16, k = 32;
  std::vector<float> ha(static_cast<std::size_t>(p * m * k), 1.0f), hb(static_cast<std::size_t>(p * k * n), 0.5f);
  ha[std::size_t((0 * m + 3) * k + 5)] = INFINITY;                        // batch 0, row 3
  hb[std::size_t((1 * k + 7) * n + 9)] = std::numeric_limits<float>::quiet_NaN();  // batch 1, column 9
  auto a = ct::from_host<float>(std::span<const float>(ha), {p, m, k}).share();
  auto b = ct::from_host<float>(std::span<const float>(hb), {p, k, n}).share();
  auto [c, a2, b2] = ct::launch(bmm<float, float, 16>, poisoned<float>({p, m, n}).partition({4, 16, 16}), a, b).sync();
  const auto hc = std::move(c).unpartition().to_host();
  for (std::int64_t h = 0; h < p; ++h)
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        const float v = hc[std::size_t((h * m + i) * n + j)];
        if (h == 0 && i == 3) EXPECT_EQ(v, INFINITY) << h << "," << i << "," << j;
        else if (h == 1 && j == 9) EXPECT_TRUE(std::isnan(v)) << h << "," << i << "," << j;
        else EXPECT_EQ(v, 16.0f) << h << "," << i << "," << j;
      }
  std::vector<std::int8_t> ia(static_cast<std::size_t>(p * m * k), -128), ib(static_cast<std::size_t>(p * k * n), -128);
  for (std::size_t q = 0; q < ib.size(); q += 3) ib[q] = 127;
  auto ai = ct::from_host<std::int8_t>(std::span<const std::int8_t>(ia), {p, m, k}).share();
  auto bi = ct::from_host<std::int8_t>(std::span<const std::int8_t>(ib), {p, k, n}).share();
  auto [ci, ai2, bi2] = ct::launch(bmm<std::int8_t, std::int32_t, 16>, ct::zeros<std::int32_t>({p, m, n}).partition({2, 16, 16}), ai, bi).sync();
  const auto hci = std::move(ci).unpartition().to_host();
  for (std::int64_t h = 0; h < p; ++h)
    for (std::int64_t j = 0; j < n; ++j) {
      std::int64_t want = 0;
      for (std::int64_t q = 0; q < k; ++q) want += -128 * static_cast<std::int64_t>(ib[std::size_t((h * k + q) * n + j)]);
      for (std::int64_t i = 0; i < m; ++i) ASSERT_EQ(hci[std::size_t((h * m + i) * n + j)], want) << h << "," << i << "," << j;
    }
}
TEST(Mma, BatchedBf16ToF32) { check_bmm<ct::bf16, float>(1e-6); }
TEST(Mma, BatchedF32ToF32) { check_bmm<float, float>(1e-6); }
TEST(Mma, BatchedF64ToF64) { check_bmm<double, double>(1e-12); }

// ---- gather, scatter within the piece, atomics ----
TEST(Memory, GatherRowsWithOutOfRangeIds) {
  const std::int64_t vocab = 50, dim = 24, tokens = 20;
  auto table = ct::randn<float>({vocab, dim}, 29).share();
  std::vector<std::int32_t> ids(tokens);
  std::mt19937 g(30);
  for (auto& v : ids) v = static_cast<std::int32_t>(g() % (vocab + 10)) - 5;  // some out of range
  auto hid = ct::from_host<std::int32_t>(std::span<const std::int32_t>(ids), {tokens}).share();
  auto [out, t2, i2] = ct::launch(gather_rows, poisoned<float>({tokens, dim}).partition({4, 8}), table, hid).sync();
  const auto ho = std::move(out).unpartition().to_host();
  const auto ht = t2.to_host();
  for (std::int64_t t = 0; t < tokens; ++t)
    for (std::int64_t d = 0; d < dim; ++d) {
      const std::int32_t id = ids[std::size_t(t)];
      const float want = (id >= 0 && id < vocab) ? ht[std::size_t(id * dim + d)] : -7.0f;
      ASSERT_EQ(ho[std::size_t(t * dim + d)], want) << t << "," << d;
    }
}

TEST(Memory, ScatterStaysInsideThePiece) {
  const std::int64_t n = 100;  // last piece is partial: its reversed indices past the end are dropped
  auto x = ct::randn<float>({n}, 31).share();
  auto [z, x2] = ct::launch(reverse_piece, ct::full<float>({n}, 9.0f).partition({32}), x).sync();
  const auto hz = std::move(z).unpartition().to_host();
  const auto hx = x2.to_host();
  for (std::int64_t i = 0; i < 96; ++i) {
    const std::int64_t base = i / 32 * 32;
    ASSERT_EQ(hz[std::size_t(i)], hx[std::size_t(base + 31 - (i - base))]) << i;
  }
  // Piece 3 covers 96..127 of which only 96..99 exist. Its loaded tile holds x[96..99] then
  // padding (0); reversed, slots 96..99 receive tile elements 31..28, i.e. padding, and the
  // stores of the real values (to 124..127) fall outside the tensor and are dropped.
  for (std::int64_t i = 96; i < n; ++i) EXPECT_EQ(hz[std::size_t(i)], 0.0f) << "slot " << i;
}

TEST(Memory, ScatterOfConsecutivePositionsWritesTheShiftedBlock) {
  // canonicalize turns the scatter into a window store of the whole unchecked tensor: rows shifted
  // by -1 (the first tile's row 0 falls before the tensor), the last tiles padded past both ends.
  const std::int64_t rows = 10, cols = 13;
  auto src = ct::randn<float>({rows, cols}, 33).share();
  const auto hs = src.to_host();
  for (bool race_check : {false, true}) {
    auto launch = ct::launch(scatter_block_2d<4, 8>, ct::unchecked_mut(ct::unchecked, ct::full<float>({rows, cols}, 9.0f)), src,
                             std::int64_t{-1})
                      .grid({3, 2});
    auto [dst, s2, sh] = race_check ? std::move(launch).race_check().sync() : std::move(launch).sync();
    const auto hd = std::move(dst).into_tensor().to_host();
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < cols; ++c) {
        // Row r holds source row r + 1; the last row receives the padding of source row 10.
        const float want = r + 1 < rows ? hs[std::size_t((r + 1) * cols + c)] : 0.0f;
        ASSERT_EQ(hd[std::size_t(r * cols + c)], want) << r << "," << c << (race_check ? " (race check)" : "");
      }
  }
}

TEST(Memory, AtomicHistogramAcrossBlocks) {
  const std::int64_t n = 5000, bins = 17;
  auto x = ct::rand<std::int32_t>({n}, 32, 0, bins).share();
  auto [h, x2] = ct::launch(histogram, ct::zeros<std::int64_t>({bins}), x).grid({ct::ceil_div(n, 128)}).sync();
  const auto hh = h.to_host();
  std::vector<std::int64_t> ref(bins, 0);
  for (std::int32_t v : x2.to_host()) ++ref[std::size_t(v)];
  EXPECT_EQ(hh, ref);
}

// ---- control flow: per-block while loop and branch ----
TEST(ControlFlow, WhileWithNestedIfPerBlock) {
  const std::int64_t n = 64;
  auto s = ct::rand<std::int64_t>({n}, 33, 1, 1000).share();
  auto [st, s2] = ct::launch(collatz, poisoned<std::int64_t>({n}).partition({1}), s).sync();
  const auto hst = std::move(st).unpartition().to_host();
  const auto hs = s2.to_host();
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t v = hs[std::size_t(i)], c = 0;
    while (v > 1) {
      v = v % 2 == 0 ? v / 2 : 3 * v + 1;
      ++c;
    }
    ASSERT_EQ(hst[std::size_t(i)], c) << "start " << hs[std::size_t(i)];
  }
}

// ---- rank 6 inputs and outputs ----
TEST(Ranks, SixDimensionalPartitions) {
  const ct::Shape s = {3, 2, 5, 2, 3, 7};
  auto x = ct::randn<float>(s, 34).share();
  auto [z, x2] = ct::launch(copy6, poisoned<float>(s).partition({2, 2, 4, 1, 2, 4}), x).sync();
  const auto hz = std::move(z).unpartition().to_host();
  const auto hx = x2.to_host();
  for (std::size_t i = 0; i < hx.size(); ++i) ASSERT_EQ(hz[i], 2.0f * hx[i]) << i;
}

// ---- trace-time constants specialise the kernel ----
TEST(Specialisation, ConstParametersAreTraceTimeValues) {
  auto x = ct::randn<float>({100}, 35).share();
  for (int k : {1, 3, 5}) {
    auto [z, x2, kk] = ct::launch(scale_by, poisoned<float>({100}).partition({64}), x, k).sync();
    const auto hz = std::move(z).unpartition().to_host();
    const auto hx = x2.to_host();
    for (std::size_t i = 0; i < hx.size(); ++i) ASSERT_NEAR(hz[i], k * hx[i], 1e-5f * std::abs(hx[i]) * k);
  }
}

}  // namespace

namespace {
}  // namespace

TEST(Ranks, IndicesPast2To32Elements) {
  // A borrowed view of 2^33 + 8 elements over one float of real memory (stride 0). Tile 2^29 - 1
  // covers elements 2^33 - 16 .. 2^33 - 1, all inside; with 32-bit index arithmetic they would
  // wrap to about 2^32 and compare against a wrapped extent of 8, reading padding instead.
  float v = 2.5f;
  const std::int64_t n = (std::int64_t{1} << 33) + 8;
  auto x = ct::Tensor<float>::borrow(ct::unchecked, &v, {n}, {0}).share();
  auto run = [&](std::int64_t t) {
    auto [o, x2, tt] = ct::launch(pick_tile, poisoned<float>({16}).partition({16}), x, t).sync();
    return std::move(o).unpartition().to_host();
  };
  EXPECT_EQ(run((std::int64_t{1} << 29) - 1), std::vector<float>(16, 2.5f));
  std::vector<float> last(16, 0.0f);  // the partial last tile: 8 elements, then padding
  for (int i = 0; i < 8; ++i) last[std::size_t(i)] = 2.5f;
  EXPECT_EQ(run(std::int64_t{1} << 29), last);
}

// ---- the matrix-vector product of the kernel library (ctile/kernels/gemv.hpp) ----
// Irregular N and K (a partial last row block, a K tail, K smaller than one step), against a
// float64 reference with the f32 summation bound.
template <class T>
void check_gemv(std::int64_t n, std::int64_t k, std::uint64_t seed) {
  auto w = ct::randn<T>({n, k}, seed).share();
  auto x = ct::randn<T>({k}, seed + 1).share();
  auto [y, w2, x2] = ct::launch(ct::kernels::gemv<T, 64>, poisoned<T>({n}).partition({4}), w, x).sync();
  const auto hy = std::move(y).unpartition().to_host();
  const auto hw = w2.to_host(), hx = x2.to_host();
  // f32 sums (K * 2^-24 of the magnitude), then one rounding to T.
  const double eps_t = std::is_same_v<T, ct::bf16> ? 0x1p-8 : std::is_same_v<T, ct::f16> ? 0x1p-11 : 0x1p-24;
  EXPECT_EQ(ctile_test::check_product(
                n, 1, k, [&](std::int64_t i, std::int64_t j) { return to_d(hw[std::size_t(i * k + j)]); },
                [&](std::int64_t j, std::int64_t) { return to_d(hx[std::size_t(j)]); },
                [&](std::int64_t i, std::int64_t) { return to_d(hy[std::size_t(i)]); }, 1.0, eps_t, double(k) * 0x1p-24,
                "gemv n " + std::to_string(n) + " k " + std::to_string(k)),
            0);
}

TEST(Gemv, Bf16IrregularShapes) {
  for (auto [n, k] : {std::pair<std::int64_t, std::int64_t>{1, 1}, {7, 129}, {37, 1000}, {64, 64}, {9, 20}})
    check_gemv<ct::bf16>(n, k, 40 + static_cast<std::uint64_t>(n));
}
TEST(Gemv, F32AndF16) {
  check_gemv<float>(13, 300, 7);
  check_gemv<ct::f16>(21, 77, 8);
}
