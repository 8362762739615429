// The kernel library's FP8 product with per-tensor scales (ctile/kernels/matmul_fp8.hpp) against a
// float64 product of the same fp8 values on fresh random inputs: shapes that are not multiples of
// the tiles, K shorter than one K step, mixed formats, every output type and block; and the errors
// of its host entry.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <ctile/ctile.hpp>
#include <ctile/kernels/matmul_fp8.hpp>

#include "../unit/runtime/test_helpers.hpp"
#include "product_check.hpp"

namespace ct = ctile;

namespace {

template <class TA, class TB, class TC>
void check(std::int64_t m, std::int64_t n, std::int64_t k, float sa, float sb, ct::kernels::Fp8MatmulOptions opt,
           std::uint64_t seed) {
  auto a = ct::randn<TA>({m, k}, seed).share();
  auto bt = ct::randn<TB>({n, k}, seed + 1).share();
  auto [c, a2, bt2, s] = ct::kernels::matmul_fp8(ct::full<TC>({m, n}, TC(NAN)), a, bt, sa, sb, opt).sync();
  EXPECT_EQ(s, sa * sb);
  const auto got = std::move(c).unpartition().to_host();
  const auto ha = a2.to_host(), hb = bt2.to_host();
  // fp8 products are exact in f32; the f32 sum of K of them is within K * 2^-24 of sum |a b| (and
  // the scale's product one rounding), then one rounding to C: 2^-8 (bf16), 2^-11 (f16), 2^-24.
  const double unit = std::is_same_v<TC, ct::bf16> ? 0x1p-8 : std::is_same_v<TC, ct::f16> ? 0x1p-11 : 0x1p-24;
  const double scale = double(sa * sb);
  const auto at = [&](const auto& h, std::int64_t row, std::int64_t col) { return double(float(h[std::size_t(row * k + col)])); };
  EXPECT_EQ(ctile_test::check_product(
                m, n, k, [&](std::int64_t i, std::int64_t kk) { return at(ha, i, kk); },
                [&](std::int64_t kk, std::int64_t j) { return at(hb, j, kk); },  // Bt [N, K]
                [&](std::int64_t i, std::int64_t j) { return double(float(got[std::size_t(i * n + j)])); }, scale, unit,
                (double(k) + 2) * 0x1p-24, "m " + std::to_string(m) + " n " + std::to_string(n) + " k " + std::to_string(k)),
            0);
}

TEST(MatmulFp8, OddShapesIntoBf16) {
  check<ct::f8e4m3, ct::f8e4m3, ct::bf16>(70, 130, 300, 0.5f, 0.25f, {}, 1);
  check<ct::f8e4m3, ct::f8e4m3, ct::bf16>(7, 9, 20, 2.0f, 3.0f, {.block_m = 64, .block_n = 64}, 2);  // K below one step
}
TEST(MatmulFp8, MixedFormatsAndOutputTypes) {
  check<ct::f8e4m3, ct::f8e5m2, float>(64, 200, 256, 1.0f, 0.125f, {.block_n = 256}, 3);
  check<ct::f8e5m2, ct::f8e4m3, ct::f16>(129, 64, 130, 0.75f, 1.5f, {.block_m = 128, .block_n = 64}, 4);
  check<ct::f8e5m2, ct::f8e5m2, ct::bf16>(33, 65, 129, 1.0f, 1.0f, {}, 5);
}

TEST(MatmulFp8, ErrorsNameTheProblemAndTheShapes) {
  using F = ct::f8e4m3;
  // Each a UserError at this file's line, naming the problem (and the three shapes).
  auto run = [](ct::Shape as, ct::Shape bs, ct::Shape cs, float sa, float sb, ct::kernels::Fp8MatmulOptions opt,
                std::initializer_list<std::string_view> parts) {
    ct::test::expect_user_error(
        [&] {
          auto l = ct::kernels::matmul_fp8(ct::zeros<ct::bf16>(cs), ct::zeros<F>(as).share(), ct::zeros<F>(bs).share(), sa, sb, opt);
          (void)std::move(l).sync();
        },
        parts);
  };
  run({16, 64}, {32, 48}, {16, 32}, 1, 1, {},
      {"matmul_fp8: a has K = 64, bt has K = 48 (a [16, 64], bt [32, 48], c [16, 32])", "test_matmul_fp8.cpp:"});
  run({16, 64}, {32, 64}, {16, 16}, 1, 1, {}, {"c must be [M, N] = [16, 32]"});
  run({16, 64, 1}, {32, 64}, {16, 32}, 1, 1, {}, {"must be rank 2"});
  run({16, 64}, {32, 64}, {16, 32}, 0.0f, 1.0f, {}, {"the scales must be finite and positive, got scale_a 0"});
  run({16, 64}, {32, 64}, {16, 32}, 1.0f, NAN, {}, {"the scales must be finite and positive"});
  run({16, 64}, {32, 64}, {16, 32}, 1, 1, {.block_m = 32}, {"block_m 32 is not 64 or 128"});
  run({16, 64}, {32, 64}, {16, 32}, 1, 1, {.block_n = 512}, {"block_n 512 is not 64, 128 or 256"});
}

}  // namespace
