// The kernel library's split-K product (ctile/kernels/matmul_split_k.hpp) against a float64
// product on fresh random inputs: shapes that are not multiples of the tiles, more splits than K
// blocks (empty splits), one split, f16; and the errors of its host entry.
#include <cmath>
#include <cstdint>
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
  check<ct::bf16>(70, 96, 520, {.splits = 8, .block_m = 64, .block_n = 64}, 3);
}
TEST(MatmulSplitK, MoreSplitsThanKBlocks) {  // the last splits' ranges are empty: they add zeros
  check<ct::bf16>(16, 64, 130, {.splits = 16}, 4);
}
TEST(MatmulSplitK, OneSplitAndTheLibrarysChoice) {
  check<ct::f16>(20, 70, 200, {.splits = 1}, 5);
  check<ct::bf16>(16, 256, 4096, {}, 6);
}
TEST(MatmulSplitK, ChoosesSplitsForFewTiles) {
  using ct::kernels::matmul_split_k_splits;
  EXPECT_EQ(ct::kernels::matmul_split_k_block_m(16), 16);
  EXPECT_EQ(ct::kernels::matmul_split_k_block_m(100), 128);
  EXPECT_EQ(matmul_split_k_splits(16, 2560, 9728, 16, 64), 8);   // 40 tiles, 152 K blocks: 320 tile blocks
  EXPECT_EQ(matmul_split_k_splits(16, 24576, 4096, 16, 64), 1);  // 384 tiles: enough already
  EXPECT_EQ(matmul_split_k_splits(16, 64, 512, 16, 64), 1);      // 8 K blocks: too few to split
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
  run({16, 64, 1}, {64, 8}, {16, 8}, {}, {"must be rank 2"});
}

}  // namespace
