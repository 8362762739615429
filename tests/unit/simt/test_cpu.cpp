// The SIMT CPU backend: index spaces, spans, uniforms, atomics, shared memory, barriers and warp
// collectives, each checked against a host reference on fresh random inputs; and the misuse the
// emulator reports (barrier and warp divergence, partial warps, out-of-bounds unchecked accesses).
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "../../../examples/simt_kernels.hpp"
#include "helpers.hpp"
#include "interop.hpp"
#include "kernels.hpp"

namespace simt_test {
namespace {

std::uint64_t fresh_seed() {
  static std::random_device rd;
  const std::uint64_t s = (static_cast<std::uint64_t>(rd()) << 32) | rd();
  std::printf("[   seed   ] %llu\n", static_cast<unsigned long long>(s));
  return s;
}

TEST(SimtIndex, Index1dIsAPermutationOfTheGridIn3d) {
  // grid 3x2x2 blocks of 4x4x2 threads = 384 threads; the span has 400 elements (16 untouched).
  auto out = ct::full<std::int64_t>({400}, -1);
  auto [o] = cs::prepare(k_index_1d, cs::grid(3, 2, 2), std::move(out)).sync();
  const auto v = o.to_host();
  for (std::int64_t i = 0; i < 400; ++i) EXPECT_EQ(v[i], i < 384 ? i : -1) << i;
}

TEST(SimtIndex, GridStrideHitsEveryElementOnce) {
  for (std::int64_t n : {1, 63, 64, 1000, 4097}) {
    auto [h] = cs::prepare(k_grid_stride, cs::grid(3), ct::zeros<std::int32_t>({n})).sync();
    const auto v = h.to_host();
    EXPECT_TRUE(std::all_of(v.begin(), v.end(), [](std::int32_t x) { return x == 1; })) << "n = " << n;
  }
}

TEST(SimtIndex, Index2dFoldsZIntoRows) {
  // grid 5x3x2 of 8x4x2 threads: cols 40, rows 2 (z) * 2 (block z) * 3 * 4 = 48 rows in all.
  auto [h] = cs::prepare(k_index_2d, cs::grid(5, 3, 2), ct::zeros<std::int32_t>({50, 41})).sync();
  const auto v = h.to_host();
  for (std::int64_t r = 0; r < 50; ++r)
    for (std::int64_t c = 0; c < 41; ++c) ASSERT_EQ(v[r * 41 + c], (r < 48 && c < 40) ? 1 : 0) << r << "," << c;
}

TEST(SimtIndex, TilesCoverEachElementOnce) {
  // 16 x 8 tiles over a 40 x 20 output: grid x = 3 tile columns, y = 3 tile rows.
  auto [h] = cs::prepare(k_tile, cs::grid(3, 3), ct::zeros<std::int32_t>({40, 20})).sync();
  const auto v = h.to_host();
  for (std::int64_t r = 0; r < 40; ++r)
    for (std::int64_t c = 0; c < 20; ++c) ASSERT_EQ(v[r * 20 + c], (r < 48 && c < 24) ? 1 : 0) << r << "," << c;
  // Transposed: block (bx, by) covers the tile at (bx * 16, by * 8): grid 3 x 3 covers 48 x 24.
  auto [t] = cs::prepare(k_tile_transposed, cs::grid(3, 3), ct::zeros<std::int32_t>({50, 30})).sync();
  const auto w = t.to_host();
  for (std::int64_t r = 0; r < 50; ++r)
    for (std::int64_t c = 0; c < 30; ++c) ASSERT_EQ(w[r * 30 + c], (r < 48 && c < 24) ? 1 : 0) << r << "," << c;
}

TEST(SimtIndex, LeadersWriteOncePerBlockAndWarp) {
  // 4 blocks of 96 threads = 3 warps each.
  auto [b, w] =
      cs::prepare(k_leaders, cs::grid(4), ct::zeros<std::int64_t>({5}), ct::zeros<std::int64_t>({13})).sync();
  EXPECT_EQ(b.to_host(), (std::vector<std::int64_t>{1, 2, 3, 4, 0}));
  std::vector<std::int64_t> want(13, 0);
  for (int i = 0; i < 12; ++i) want[i] = i + 1;
  EXPECT_EQ(w.to_host(), want);
}

TEST(SimtIndex, CallingItOutsideAKernelIsAUserError) {
  EXPECT_USER_ERROR((void)cs::index_1d(), "outside a SIMT kernel");
  EXPECT_USER_ERROR((void)cs::lane_id(), "outside a SIMT kernel");
  EXPECT_USER_ERROR(cs::sync_threads(), "outside a SIMT kernel");
}

TEST(SimtSpan, UniformsAndFallbacks) {
  const std::uint64_t seed = fresh_seed();
  const std::int64_t n = 77;
  auto x = ct::rand<float>({n}, seed).share();
  auto [o, around, x2, a, k] =
      cs::prepare(k_uniform_and_fallbacks, cs::cover(n), ct::zeros<double>({n}), ct::zeros<float>({n}), x, 1.5, 7)
          .sync();
  const auto ov = o.to_host();
  const auto av = around.to_host();
  const auto xv = x2.to_host();
  for (std::int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(ov[i], 1.5 * static_cast<double>(i) + 7);
    const float left = i > 0 ? xv[i - 1] : -1.0f, right = i + 1 < n ? xv[i + 1] : -2.0f;
    EXPECT_EQ(av[i], left + 10.0f * right) << i;
  }
  EXPECT_EQ(a, 1.5);
  EXPECT_EQ(k, 7);
}

TEST(SimtSpan, SmallIntegersKeepTheirValues) {
  const std::int64_t n = 65536;
  const std::vector<std::int64_t> v = run_small_ints(ct::cpu(), n);
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t a = i % 256 - 128, b = i % 256, c = (257 * i) % 65536 - 32768, d = (263 * i) % 65536;
    ASSERT_EQ(v[static_cast<std::size_t>(i)], a + 256 * (b + 256 * (c + 65536 * d))) << i;
  }
}

TEST(SimtSpan, Vec4LoadsNeedAlignment) {
  const std::uint64_t seed = fresh_seed();
  auto t = ct::rand<float>({42}, seed);
  const auto host = t.to_host();
  auto x = std::move(t).share();
  // Aligned: 10 whole vectors; the 11th (elements 40, 41 and two missing) is not one.
  auto [o, x2] = cs::prepare(k_vec4, cs::cover(12), ct::zeros<float>({12}), x).sync();
  const auto v = o.to_host();
  for (int q = 0; q < 12; ++q) {
    const float want = q < 10 ? host[4 * q] + host[4 * q + 1] + host[4 * q + 2] + host[4 * q + 3] : -1.0f;
    EXPECT_EQ(v[q], want) << q;
  }
  // A view that starts at element 1 is not 16-byte aligned: no vectors at all.
  auto shifted = x2.slice(0, 1, 41);
  auto [o2, s2] = cs::prepare(k_vec4, cs::cover(4), ct::zeros<float>({4}), shifted).sync();
  for (float f : o2.to_host()) EXPECT_EQ(f, -1.0f);
}

TEST(SimtSpan, Vec4StoresCoverTheTailAndUnalignedViews) {
  // simt_vector_add4: a Vec4Index q names elements [4q, 4q + 4); the last group of an output whose
  // size is not a multiple of 4 is written element by element, and so is an unaligned view. The
  // race checker sees every element written once.
  const std::uint64_t seed = fresh_seed();
  for (const std::int64_t n : {std::int64_t{1}, std::int64_t{8}, std::int64_t{1001}}) {
    auto ta = ct::rand<float>({n + 1}, seed), tb = ct::rand<float>({n + 1}, seed + 1);
    const auto ha = ta.to_host(), hb = tb.to_host();
    auto a = std::move(ta).share(), b = std::move(tb).share();
    const std::int64_t threads = (n + 3) / 4;
    // Aligned views, and views from element 1 (not 16-byte aligned) into an output that is not
    // either (a slice of a larger buffer whose other elements must stay as they were).
    auto [o, a2, b2] = cs::prepare(simt_examples::simt_vector_add4, cs::cover(threads), ct::full<float>({n}, -9.0f),
                                   a.slice(0, 0, n), b.slice(0, 0, n))
                           .race_check()
                           .sync();
    auto wide = ct::full<float>({n + 2}, -9.0f).slice(0, 1, n + 1);
    auto [u, a3, b3] = cs::prepare(simt_examples::simt_vector_add4, cs::cover(threads), std::move(wide), a.slice(0, 1, n + 1),
                                   b.slice(0, 1, n + 1))
                           .race_check()
                           .sync();
    const auto v = o.to_host(), w = u.to_host();
    for (std::int64_t i = 0; i < n; ++i) {
      const auto k = static_cast<std::size_t>(i);
      ASSERT_EQ(v[k], ha[k] + hb[k]) << "n " << n << ", element " << i;
      ASSERT_EQ(w[k], ha[k + 1] + hb[k + 1]) << "n " << n << ", unaligned, element " << i;
    }
  }
}

TEST(SimtSpan, StridedTwoDimensionalInput) {
  const std::uint64_t seed = fresh_seed();
  auto wide = ct::rand<float>({13, 40}, seed);
  const auto host = wide.to_host();
  auto in = std::move(wide).share().slice(1, 5, 30);  // 13 x 25, row stride 40
  auto [o, in2] = cs::prepare(k_plus_one_2d, cs::cover_2d(13, 25), ct::zeros<float>({13, 25}), in).sync();
  const auto v = o.to_host();
  for (int r = 0; r < 13; ++r)
    for (int c = 0; c < 25; ++c) EXPECT_EQ(v[r * 25 + c], host[r * 40 + 5 + c] + 1.0f);
}

TEST(SimtSpan, StridedTwoDimensionalOutput) {
  // The output is a column slice of a wider matrix (row stride 40); the columns around it stay.
  const std::uint64_t seed = fresh_seed();
  auto in = ct::rand<float>({13, 25}, seed).share();
  auto wide = ct::full<float>({13, 40}, -7.0f).slice(1, 5, 30);
  auto [o, in2] = cs::prepare(k_plus_one_2d, cs::cover_2d(13, 25), std::move(wide), in).sync();
  EXPECT_EQ(o.strides(), (ct::Shape{40, 1}));
  const auto v = o.to_host(), x = in2.to_host();
  for (int i = 0; i < 13 * 25; ++i) EXPECT_EQ(v[i], x[i] + 1.0f) << i;
}

TEST(SimtSpan, NeighboursRowsAndGridStrideOverASpan) {
  const std::uint64_t seed = fresh_seed();
  const int rows = 9, cols = 13, nflat = 777;
  auto in = ct::rand<float>({rows, cols}, seed).share();
  auto flat = ct::rand<float>({nflat}, seed + 1).share();
  // grid 2 x 3 blocks of 8 x 4 threads: 192 threads over the 777 elements of flat.
  auto [o, o2, in2, f2] = cs::prepare(k_neighbours, cs::grid(2, 3), ct::zeros<float>({rows, cols}), ct::zeros<float>({rows, cols}), in, flat).sync();
  const auto v = o.to_host(), v2 = o2.to_host(), x = in2.to_host();
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const int thread = (r / 4 * 2 + c / 8) * 32 + (r % 4) * 8 + c % 8;  // linear index of (r, c)'s thread
      const int visits = (nflat - thread + 191) / 192;
      const bool interior = r > 0 && c > 0 && r + 1 < rows && c + 1 < cols;
      const float want = interior ? (x[(r - 1) * cols + c] + x[(r + 1) * cols + c]) + (x[r * cols + c - 1] + x[r * cols + c + 1]) : -1.0f;
      EXPECT_EQ(v[r * cols + c], want + 1000.0f * visits) << r << "," << c;
      EXPECT_EQ(v2[r * cols + c], want) << r << "," << c;
    }
}

TEST(SimtSpan, ReadsItsOwnElement) {
  auto [v] = cs::prepare(k_double_own, cs::cover(50), ct::arange<std::int32_t>(50)).sync();
  const auto h = v.to_host();
  for (int i = 0; i < 50; ++i) EXPECT_EQ(h[i], 2 * i);
}

TEST(SimtAtomics, EveryOperation) {
  const int threads = 64 * 5;
  auto [a, b, d, c, missed] =
      cs::prepare(k_atomics, cs::grid(5), ct::full<std::int32_t>({8}, 0), ct::zeros<std::int64_t>({1}),
                  ct::zeros<double>({1}), ct::zeros<std::uint32_t>({1}), ct::zeros<std::int32_t>({threads}))
          .sync();
  const auto av = a.to_host();
  EXPECT_EQ(av[0], threads);
  EXPECT_EQ(av[1], threads - 1);
  EXPECT_EQ(av[2], -(threads - 1));
  EXPECT_EQ(av[3], 0x7fffffff);  // bits 0..30 set by some thread
  int x = 0;
  for (int i = 0; i < threads; ++i) x ^= i;
  EXPECT_EQ(av[4], x);
  EXPECT_EQ(av[5], 0);
  EXPECT_EQ(av[6], 7);
  EXPECT_EQ(b.to_host()[0], static_cast<std::int64_t>(threads) << 33);
  EXPECT_EQ(d.to_host()[0], 0.5 * threads);
  EXPECT_EQ(c.to_host()[0], static_cast<std::uint32_t>(threads));
  const auto m = missed.to_host();
  EXPECT_TRUE(std::all_of(m.begin(), m.end(), [](std::int32_t v) { return v == 1; }));
}

TEST(SimtAtomics, SharedMemoryAtomics) {
  auto [t] = cs::prepare(k_shared_atomics, cs::grid(3), ct::zeros<std::uint32_t>({1})).sync();
  EXPECT_EQ(t.to_host()[0], 3u * (128u * 129u / 2u));
}

TEST(SimtShared, ReverseThroughSharedMemory) {
  const std::uint64_t seed = fresh_seed();
  auto in = ct::rand<std::int32_t>({384}, seed, -1000, 1000).share();
  auto [o, in2] = cs::prepare(k_reverse, cs::cover(384), ct::zeros<std::int32_t>({384}), in).sync();
  const auto v = o.to_host(), x = in2.to_host();
  for (int i = 0; i < 384; ++i) EXPECT_EQ(v[i], x[i / 128 * 128 + 127 - i % 128]) << i;
}

TEST(SimtWarp, CollectivesMatchTheirDefinitions) {
  const std::uint64_t seed = fresh_seed();
  const int n = 128;
  auto in = ct::rand<std::int32_t>({n}, seed, 0, 1000).share();
  auto [o, in2] = cs::prepare(k_warp_ops, cs::cover(n), ct::zeros<std::int32_t>({9 * n}), in).sync();
  const auto v = o.to_host(), x = in2.to_host();
  for (int w = 0; w < n / 32; ++w) {
    const int* xs = &x[w * 32];
    bool any = false, all = true;
    std::uint32_t ballot = 0;
    for (int l = 0; l < 32; ++l) {
      any |= xs[l] % 7 == 0;
      all &= xs[l] >= 0;
      if (xs[l] % 3 == 0) ballot |= 1u << l;
    }
    for (int l = 0; l < 32; ++l) {
      const int* r = &v[9 * (w * 32 + l)];
      EXPECT_EQ(r[0], xs[(l * 7) % 32]);
      EXPECT_EQ(r[1], l >= 3 ? xs[l - 3] : xs[l]);
      EXPECT_EQ(r[2], l + 5 < 32 ? xs[l + 5] : xs[l]);
      EXPECT_EQ(r[3], xs[l ^ 6]);
      EXPECT_EQ(r[4], xs[l / 8 * 8 + 3]);
      EXPECT_EQ(r[5], l % 16 + 2 < 16 ? xs[l + 2] : xs[l]);
      EXPECT_EQ(r[6], any ? 1 : 0);
      EXPECT_EQ(r[7], all ? 1 : 0);
      EXPECT_EQ(static_cast<std::uint32_t>(r[8]), ballot);
    }
  }
}

TEST(SimtWarp, ReduceSumPerWarp) {
  const std::uint64_t seed = fresh_seed();
  auto in = ct::rand<double>({200}, seed).share();
  // 4 blocks of 64 threads = 8 warps; elements 200..255 read as 0.
  auto [s, in2] = cs::prepare(k_warp_sum, cs::grid(4), ct::zeros<double>({8}), in).sync();
  const auto v = s.to_host(), x = in2.to_host();
  for (int w = 0; w < 8; ++w) {
    double want = 0;
    for (int l = 0; l < 32; ++l) want += w * 32 + l < 200 ? x[w * 32 + l] : 0.0;
    EXPECT_NEAR(v[w], want, 1e-12) << w;
  }
}

TEST(SimtMisuse, BarrierAfterAnEarlyReturn) {
  EXPECT_USER_ERROR(cs::prepare(k_barrier_early_return, cs::grid(1), ct::zeros<std::int32_t>({64})).sync(),
                    "barrier divergence in SIMT kernel 'k_barrier_early_return'");
  EXPECT_USER_ERROR(cs::prepare(k_barrier_early_return, cs::grid(1), ct::zeros<std::int32_t>({64})).sync(),
                    "returned without reaching it");
}

TEST(SimtMisuse, BarriersAtTwoSites) {
  EXPECT_USER_ERROR(cs::prepare(k_barrier_two_sites, cs::grid(1), ct::zeros<std::int32_t>({64})).sync(),
                    "at another one");
}

TEST(SimtMisuse, WarpCollectiveInDivergentCode) {
  EXPECT_USER_ERROR(cs::prepare(k_warp_divergent, cs::grid(1), ct::zeros<std::int32_t>({64})).sync(),
                    "warp divergence");
  EXPECT_USER_ERROR(cs::prepare(k_warp_divergent, cs::grid(1), ct::zeros<std::int32_t>({64})).sync(),
                    "every lane of a warp must take part");
}

TEST(SimtMisuse, WarpCollectiveInAPartialWarp) {
  EXPECT_USER_ERROR(cs::prepare(k_warp_partial, cs::grid(1), ct::zeros<std::int32_t>({48})).sync(),
                    "not a multiple of 32");
}

TEST(SimtMisuse, ShuffleWidthNotAPowerOfTwo) {
  EXPECT_USER_ERROR(cs::prepare(k_warp_bad_width, cs::grid(1), ct::zeros<std::int32_t>({32})).sync(),
                    "the width 12 must be a power of two");
}

TEST(SimtMisuse, UncheckedAccessesOutsideTheirBufferAreReportedOnTheCpu) {
  EXPECT_USER_ERROR(cs::prepare(k_oob_unchecked, cs::grid(2), ct::zeros<std::int32_t>({10})).sync(),
                    "DisjointSpan::get_unchecked_mut: index 10 is outside [0, 10) in thread (0,0,0) of block (0,0,0)");
  EXPECT_USER_ERROR(cs::prepare(k_oob_shared, cs::grid(1), ct::zeros<std::int32_t>({32})).sync(),
                    "shared memory (SharedSpan::operator[]): index 16 is outside [0, 16)");
  auto in = ct::ones<float>({5}).share();
  EXPECT_USER_ERROR(cs::prepare(k_oob_read, cs::grid(1), ct::zeros<float>({32}), in).sync(),
                    "Span::get_unchecked: index 5 is outside [0, 5)");
}

TEST(SimtMisuse, AFailedLaunchPoisonsItsOutput) {
  auto f = cs::prepare(k_oob_unchecked, cs::grid(2), ct::zeros<std::int32_t>({10})).async_on(ct::default_stream(ct::cpu()));
  EXPECT_USER_ERROR((void)std::move(f).get(), "is outside [0, 10)");
}

TEST(SimtCpu, LargeLaunchAcrossWorkers) {
  // Many blocks in parallel on the worker pool, each with barriers: results must be exact.
  const std::uint64_t seed = fresh_seed();
  const int n = 128 * 64;
  auto in = ct::rand<std::int32_t>({n}, seed, -5, 5).share();
  auto [o, in2] = cs::prepare(k_reverse, cs::cover(n), ct::zeros<std::int32_t>({n}), in).sync();
  const auto v = o.to_host(), x = in2.to_host();
  for (int i = 0; i < n; ++i) ASSERT_EQ(v[i], x[i / 128 * 128 + 127 - i % 128]) << i;
}

}  // namespace
}  // namespace simt_test
