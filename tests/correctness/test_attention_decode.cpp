// The kernel library's decode attention (ctile/kernels/attention_decode.hpp) against a float64
// reference on fresh random inputs: GQA groups of 1 to 8 query heads, per-sequence lengths that
// are not multiples of the key block (1, a block, one past, lengths past the cache, 0), one split
// or many (empty ranges included), every head dim; and the shape errors of its host entry.
#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include <ctile/ctile.hpp>
#include <ctile/kernels/attention_decode.hpp>

#include "attention_reference.hpp"

namespace ct = ctile;

namespace {

template <class T>
void check(std::int64_t b, std::int64_t hq, std::int64_t hkv, std::int64_t smax, std::int64_t d, std::vector<std::int64_t> lens,
           std::int64_t splits, std::uint64_t seed, std::int64_t group_rows = 0) {
  auto qs = ct::randn<T>({b, hq, d}, seed).share();
  auto ks = ct::randn<T>({b, hkv, smax, d}, seed + 1).share();
  auto vs = ct::randn<T>({b, hkv, smax, d}, seed + 2).share();
  auto ls = ct::from_host<std::int64_t>(lens, {b}).share();
  auto o = ct::full<T>({b, hq, d}, T(NAN));
  auto [o2, q2, k2, v2, l2] = ct::kernels::attention_decode(std::move(o), qs, ks, vs, ls, {.splits = splits, .rows = group_rows}).sync();
  const auto got = o2.to_host();
  const auto ref = attention_test::decode_reference(b, hq, hkv, smax, d, q2.to_host(), k2.to_host(), v2.to_host(), lens,
                                                    1.0 / std::sqrt(double(d)));
  const attention_test::Shape4 rows{b, hq, hkv, 1, smax, d};
  const double tol = std::is_same_v<T, ct::bf16> ? 0x1p-6 : 0x1p-9;
  EXPECT_LE(attention_test::worst_row_error(rows, got, ref), tol)
      << "b " << b << " hq " << hq << " hkv " << hkv << " smax " << smax << " d " << d << " splits " << splits;
  for (std::int64_t i = 0; i < b; ++i)  // a sequence of no keys: zeros
    if (lens[std::size_t(i)] == 0)
      for (std::int64_t c = 0; c < hq * d; ++c) EXPECT_EQ(static_cast<float>(got[std::size_t(i * hq * d + c)]), 0.0f);
}

TEST(AttentionDecode, VariableLengthsOneSplit) {
  check<ct::bf16>(4, 8, 2, 200, 64, {1, 64, 65, 200}, 1, 31);
}
TEST(AttentionDecode, ManySplitsWithEmptyRanges) {
  check<ct::bf16>(3, 8, 2, 300, 64, {300, 70, 129}, 8, 32);  // 70 keys: 2 blocks over 8 ranges
}
TEST(AttentionDecode, GroupsOfOneToEightQueryHeads) {
  check<ct::bf16>(2, 4, 4, 130, 128, {130, 77}, 2, 33);   // no grouping
  check<ct::bf16>(2, 8, 1, 130, 128, {100, 130}, 4, 34);  // MQA: 8 query heads on one KV head
  check<ct::f16>(1, 6, 2, 100, 64, {99}, 2, 35);          // a group of 3 (padded to 16 rows)
}
TEST(AttentionDecode, HeadDimsAndChosenSplits) {
  check<ct::bf16>(1, 4, 2, 600, 128, {600}, 0, 36);
  check<ct::f16>(1, 2, 1, 90, 256, {90}, 0, 37);
}
TEST(AttentionDecode, GroupRowsOfSixteen) {  // mma.sync's rows (the default is 64: wgmma on sm_90)
  check<ct::bf16>(2, 8, 2, 260, 128, {260, 3}, 4, 39, 16);
}
TEST(AttentionDecode, LengthsPastTheCacheAndZero) {
  check<ct::bf16>(3, 4, 2, 100, 64, {1000, 0, 50}, 2, 38);
}

using attention_test::user_error_of;

TEST(AttentionDecode, ShapeErrorsNameTheArgumentAndTheShapes) {
  auto run = [](ct::Shape q, ct::Shape k, std::int64_t nb, std::int64_t splits = 0) {
    return user_error_of([&] {
      auto l = ct::kernels::attention_decode(ct::zeros<ct::bf16>(q), ct::zeros<ct::bf16>(q).share(), ct::zeros<ct::bf16>(k).share(),
                                             ct::zeros<ct::bf16>(k).share(), ct::zeros<std::int64_t>({nb}).share(),
                                             {.splits = splits});
      (void)std::move(l).sync();
    });
  };
  const std::string heads = run({1, 3, 64}, {1, 2, 8, 64}, 1);
  EXPECT_NE(heads.find("query heads (3) must be a multiple of the KV heads (2)"), std::string::npos) << heads;
  EXPECT_NE(heads.find("q [1, 3, 64]"), std::string::npos) << heads;
  EXPECT_NE(heads.find("test_attention_decode.cpp"), std::string::npos) << heads;
  EXPECT_NE(run({1, 2, 96}, {1, 2, 8, 96}, 1).find("head_dim 96 is not one the kernel takes"), std::string::npos);
  EXPECT_NE(run({1, 2, 64}, {1, 2, 8, 128}, 1).find("k has head_dim 128, q has 64"), std::string::npos);
  EXPECT_NE(run({2, 2, 64}, {2, 2, 8, 64}, 3).find("one batch"), std::string::npos);
  EXPECT_NE(run({1, 2, 64}, {1, 2, 0, 64}, 1).find("cache_len = 0"), std::string::npos);
  EXPECT_NE(run({1, 2, 64}, {1, 2, 8, 64}, 1, 3).find("splits 3 is not a power of two"), std::string::npos);
  EXPECT_NE(run({1, 2, 64}, {1, 2, 8}, 1).find("k and v must be rank 4"), std::string::npos);
  const std::string rows = user_error_of([] {
    auto l = ct::kernels::attention_decode(ct::zeros<ct::bf16>({1, 2, 64}), ct::zeros<ct::bf16>({1, 2, 64}).share(),
                                           ct::zeros<ct::bf16>({1, 2, 8, 64}).share(), ct::zeros<ct::bf16>({1, 2, 8, 64}).share(),
                                           ct::zeros<std::int64_t>({1}).share(), {.rows = 24});
    (void)std::move(l).sync();
  });
  EXPECT_NE(rows.find("rows 24 is not a power of two in [16, 128]"), std::string::npos) << rows;
}

}  // namespace
