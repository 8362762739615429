// The kernel library's split-K product (ctile/kernels/matmul_split_k.hpp) against a float64
// product on fresh random inputs: shapes that are not multiples of the tiles, more splits than K
// blocks (empty splits), one split, f16; and the errors of its host entry.
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <ctile/ctile.hpp>
#include <ctile/kernels/matmul_split_k.hpp>

#include "../unit/runtime/test_helpers.hpp"
#include "product_check.hpp"

namespace ct = ctile;

namespace {

template <class T>
void check(std::int64_t m, std::int64_t n, std::int64_t k, ct::kernels::SplitKOptions opt, std::uint64_t seed) {
  auto a = ct::randn<T>({m, k}, seed).share();
  auto b = ct::randn<T>({k, n}, seed + 1).share();
  auto [c, a2, b2] = ct::kernels::matmul_split_k(ct::full<T>({m, n}, T(NAN)), a, b, opt).sync();
  const auto got = c.to_host(), ha = a2.to_host(), hb = b2.to_host();
  // Each element within its rounding to T plus f32 accumulation: 2^-8 (bf16) or 2^-11 (f16) of
  // the element's magnitude, and K * 2^-22 of sum |a b|.
  const double unit = std::is_same_v<T, ct::bf16> ? 0x1p-8 : 0x1p-11;
  EXPECT_EQ(ctile_test::check_product(
                m, n, k, [&](std::int64_t i, std::int64_t kk) { return double(float(ha[std::size_t(i * k + kk)])); },
                [&](std::int64_t kk, std::int64_t j) { return double(float(hb[std::size_t(kk * n + j)])); },
                [&](std::int64_t i, std::int64_t j) { return double(float(got[std::size_t(i * n + j)])); }, 1.0, unit,
                double(k) * 0x1p-22,
                "m " + std::to_string(m) + " n " + std::to_string(n) + " k " + std::to_string(k) + " splits " +
                    std::to_string(opt.splits)),
            0);
}

TEST(MatmulSplitK, OddShapes) {
  check<ct::bf16>(16, 200, 1000, {.splits = 4}, 1);
  check<ct::bf16>(7, 130, 333, {.splits = 2}, 2);
  check<ct::bf16>(70, 96, 520, {.splits = 8, .block_m = 64, .block_n = 64}, 3);  // K steps of 128 (64 rows)
  check<ct::bf16>(70, 96, 520, {.splits = 2, .block_m = 64, .block_n = 64, .block_k = 64}, 7);
  check<ct::bf16>(16, 300, 777, {.splits = 2, .block_k = 128}, 8);  // 16 rows in K steps of 128
  check<ct::f16>(3, 1000, 260, {.splits = 16}, 9);  // more than one row piece of the sum, 16 splits unrolled
}
TEST(MatmulSplitK, MoreSplitsThanKBlocks) {  // the last splits' ranges are empty: they add zeros
  check<ct::bf16>(16, 64, 130, {.splits = 16}, 4);
}
TEST(MatmulSplitK, OneSplitAndTheLibrarysChoice) {
  check<ct::f16>(20, 70, 200, {.splits = 1}, 5);
  check<ct::bf16>(16, 256, 4096, {}, 6);
}
// The caller's workspace: the same product, the workspace handed back; then captured into a graph
// (nothing allocated inside) and replayed twice, C poisoned between the replays.
TEST(MatmulSplitK, TheCallersWorkspaceAndAGraph) {
  const std::int64_t m = 16, n = 130, k = 700;
  const ct::kernels::SplitKOptions opt{.splits = 4};
  EXPECT_EQ(ct::kernels::matmul_split_k_workspace(m, n, k, opt), (ct::Shape{4, m, n}));
  EXPECT_EQ(ct::kernels::matmul_split_k_workspace(16, 2560, 9728), (ct::Shape{8, 16, 2560}));  // the library's choice
  auto a = ct::randn<ct::bf16>({m, k}, 21).share();
  auto b = ct::randn<ct::bf16>({k, n}, 22).share();
  const auto ha = a.to_host(), hb = b.to_host();
  auto expect_product = [&](const std::vector<ct::bf16>& got, const char* what) {
    EXPECT_EQ(ctile_test::check_product(
                  m, n, k, [&](std::int64_t i, std::int64_t kk) { return double(float(ha[std::size_t(i * k + kk)])); },
                  [&](std::int64_t kk, std::int64_t j) { return double(float(hb[std::size_t(kk * n + j)])); },
                  [&](std::int64_t i, std::int64_t j) { return double(float(got[std::size_t(i * n + j)])); }, 1.0, 0x1p-8,
                  double(k) * 0x1p-22, what),
              0);
  };
  auto ws = ct::zeros<float>(ct::kernels::matmul_split_k_workspace(m, n, k, opt));
  auto [c, ws2, a2, b2] = ct::kernels::matmul_split_k(ct::full<ct::bf16>({m, n}, ct::bf16(NAN)), std::move(ws), a, b, opt).sync();
  EXPECT_EQ(ws2.shape(), (ct::Shape{4, m, n}));
  expect_product(c.to_host(), "eager");

  auto g = ct::capture([&](ct::Capture& cap) {
    return ct::kernels::matmul_split_k(std::move(c), std::move(ws2), a2, b2, opt).async_on(cap.stream());
  });
  EXPECT_EQ(g.kernel_nodes(), 2u);
  const std::vector<ct::bf16> poison(std::size_t(m * n), ct::bf16(NAN));
  for (int replay = 0; replay < 2; ++replay) {
    g.copy_in<0>(std::span<const ct::bf16>(poison));
    g = std::move(g).replay(ct::default_stream()).get();
    expect_product(g.read<0>(), "graph replay");
  }
  auto [c3, ws3, a3, b3] = std::move(g).unwrap();
  EXPECT_EQ(ws3.shape(), (ct::Shape{4, m, n}));
}

TEST(MatmulSplitK, ChoosesSplitsForFewTiles) {
  using ct::kernels::matmul_split_k_splits;
  EXPECT_EQ(ct::kernels::matmul_split_k_block_m(16), 16);
  EXPECT_EQ(ct::kernels::matmul_split_k_block_m(100), 128);
  EXPECT_EQ(matmul_split_k_splits(16, 2560, 9728, 16, 64), 8);   // 40 tiles, 152 K blocks: 320 tile blocks
  EXPECT_EQ(matmul_split_k_splits(16, 24576, 4096, 16, 64), 1);  // 384 tiles: enough already
  EXPECT_EQ(matmul_split_k_splits(16, 64, 512, 16, 64), 1);      // 8 K blocks: too few to split
  // 64 rows take K steps of 128: 80 tiles of 64 x 64, 32 K blocks, 4 splits of 8. The splits
  // count K blocks of the K step: 16 rows at 4096 take 8 splits of 8 blocks of 64, 4 of 128.
  EXPECT_EQ(ct::kernels::matmul_split_k_block_k(64), 128);
  EXPECT_EQ(ct::kernels::matmul_split_k_block_k(16), 64);
  // 128 x 128 tiles take K steps of 64: rings of 128-deep steps would need 263 KB (sm_90 has 227).
  EXPECT_EQ(ct::kernels::matmul_split_k_block_k(64, 128), 128);
  EXPECT_EQ(ct::kernels::matmul_split_k_block_k(128, 64), 128);
  EXPECT_EQ(ct::kernels::matmul_split_k_block_k(128, 128), 64);
  EXPECT_EQ(matmul_split_k_splits(128, 2560, 4096, 64, 64), 4);
  EXPECT_EQ(matmul_split_k_splits(16, 2560, 4096, 16, 64), 8);
  EXPECT_EQ(matmul_split_k_splits(16, 2560, 4096, 16, 64, 128), 4);
  EXPECT_EQ(ct::kernels::matmul_split_k_sum_cols(2560), 256);
  EXPECT_EQ(ct::kernels::matmul_split_k_sum_cols(70), 128);
}

TEST(MatmulSplitK, ErrorsNameTheProblemAndTheShapes) {
  // Each a UserError at this file's line, naming the problem and the three shapes.
  auto run = [](ct::Shape as, ct::Shape bs, ct::Shape cs, ct::kernels::SplitKOptions opt, std::initializer_list<std::string_view> parts) {
    ct::test::expect_user_error(
        [&] {
          auto l = ct::kernels::matmul_split_k(ct::zeros<ct::bf16>(cs), ct::zeros<ct::bf16>(as).share(), ct::zeros<ct::bf16>(bs).share(), opt);
          (void)std::move(l).sync();
        },
        parts);
  };
  run({16, 64}, {32, 8}, {16, 8}, {}, {"a has K = 64, b has 32 rows", "a [16, 64], b [32, 8], c [16, 8]", "test_matmul_split_k.cpp"});
  run({16, 64}, {64, 8}, {8, 16}, {}, {"c must be [M, N] = [16, 8]"});
  run({16, 64}, {64, 8}, {16, 8}, {.splits = 3}, {"splits 3 is not a power of two in [1, 16]"});
  run({16, 64}, {64, 8}, {16, 8}, {.block_m = 48}, {"block_m 48 is not 16, 32, 64 or 128"});
  run({16, 64}, {64, 8}, {16, 8}, {.block_k = 32}, {"block_k 32 is not 64 or 128"});
  run({16, 64, 1}, {64, 8}, {16, 8}, {}, {"must be rank 2"});
  ct::test::expect_user_error(
      [] {
        auto l = ct::kernels::matmul_split_k(ct::zeros<ct::bf16>({16, 8}), ct::zeros<float>({2, 16, 8}), ct::zeros<ct::bf16>({16, 64}).share(),
                                             ct::zeros<ct::bf16>({64, 8}).share(), {.splits = 4});
        (void)std::move(l).sync();
      },
      {"the workspace is [2, 16, 8], the product needs [4, 16, 8]", "matmul_split_k_workspace", "test_matmul_split_k.cpp"});
}

}  // namespace
