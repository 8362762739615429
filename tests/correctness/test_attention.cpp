// The kernel library's prefill attention (ctile/kernels/attention.hpp) against a float64
// reference on fresh random inputs: causal and not, GQA and MQA, sequence lengths that are not
// multiples of the blocks, every head dim the kernel takes, large score magnitudes; and the shape
// errors of its host entry.
#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include <ctile/ctile.hpp>
#include <ctile/kernels/attention.hpp>

#include "attention_reference.hpp"

namespace ct = ctile;
using attention_test::Shape4;

namespace {

template <class T>
void check(const Shape4& s, bool causal, std::uint64_t seed, float amplitude = 1.0f, std::int64_t block_m = 0,
           std::int64_t block_n = 0) {
  // amplitude > 1 gives large scores: every row's softmax is nearly one-hot
  auto qs = ct::randn<T>({s.b, s.hq, s.sq, s.d}, seed, 0.0, amplitude).share();
  auto ks = ct::randn<T>({s.b, s.hkv, s.sk, s.d}, seed + 1).share();
  auto vs = ct::randn<T>({s.b, s.hkv, s.sk, s.d}, seed + 2).share();
  auto o = ct::full<T>({s.b, s.hq, s.sq, s.d}, T(NAN));
  auto [o2, q2, k2, v2, sc] = ct::kernels::attention_prefill(std::move(o), qs, ks, vs, {.causal = causal, .block_m = block_m, .block_n = block_n}).sync();
  const auto got = std::move(o2).unpartition().to_host();
  const auto ref = attention_test::reference(s, q2.to_host(), k2.to_host(), v2.to_host(), causal, 1.0 / std::sqrt(double(s.d)));
  const double tol = std::is_same_v<T, ct::bf16> ? 0x1p-6 : 0x1p-9;
  EXPECT_LE(attention_test::worst_row_error(s, got, ref), tol) << "b " << s.b << " hq " << s.hq << " hkv " << s.hkv << " sq " << s.sq
                                               << " sk " << s.sk << " d " << s.d << (causal ? " causal" : "")
                                                                      << " block_m " << block_m << " block_n " << block_n;
}

TEST(AttentionPrefill, NonCausalOddLengths) {
  check<ct::bf16>({1, 2, 2, 130, 200, 64}, false, 11);
  check<ct::bf16>({2, 1, 1, 7, 129, 64}, false, 12);
}
TEST(AttentionPrefill, CausalOddLengths) {
  check<ct::bf16>({1, 2, 2, 200, 200, 64}, true, 13);
  check<ct::bf16>({1, 1, 1, 129, 129, 128}, true, 14);
}
TEST(AttentionPrefill, CausalWithFewerKeysThanQueries) {
  check<ct::bf16>({1, 1, 1, 150, 70, 64}, true, 15);  // top-left: rows past Sk see every key
}
TEST(AttentionPrefill, GroupedAndMultiQuery) {
  check<ct::bf16>({1, 4, 2, 100, 140, 64}, true, 16);  // GQA, 2 query heads per KV head
  check<ct::bf16>({2, 3, 1, 40, 70, 64}, false, 17);   // MQA
}
TEST(AttentionPrefill, HeadDims) {
  check<ct::bf16>({1, 1, 1, 70, 90, 128}, false, 18);
  check<ct::f16>({1, 1, 1, 70, 90, 256}, true, 19);
}
TEST(AttentionPrefill, BlocksChosenByTheCaller) {  // other blocks than the library's choice
  check<ct::bf16>({1, 2, 1, 200, 150, 64}, true, 24, 1.0f, 128);
  check<ct::bf16>({1, 1, 1, 130, 70, 128}, false, 25, 1.0f, 64);
  check<ct::bf16>({1, 2, 2, 200, 300, 128}, true, 26, 1.0f, 128, 128);  // odd lengths, key blocks of 128
  check<ct::f16>({1, 1, 1, 70, 129, 64}, false, 27, 1.0f, 0, 128);
}
TEST(AttentionPrefill, LargeScoresStayFinite) {
  check<ct::bf16>({1, 1, 1, 64, 300, 64}, false, 20, 30.0f);
  check<ct::f16>({1, 2, 1, 64, 130, 64}, true, 21, 12.0f);
}

// The log-sum-exp output beside o: each row's log(sum exp(scores)) within 2^-12 of max(1, |lse|)
// (f32 statistics), and o as without it.
template <class T>
void check_lse(const Shape4& s, bool causal, std::uint64_t seed) {
  auto qs = ct::randn<T>({s.b, s.hq, s.sq, s.d}, seed).share();
  auto ks = ct::randn<T>({s.b, s.hkv, s.sk, s.d}, seed + 1).share();
  auto vs = ct::randn<T>({s.b, s.hkv, s.sk, s.d}, seed + 2).share();
  auto [o2, q2, k2, v2, sc, l2] = ct::kernels::attention_prefill(ct::full<T>({s.b, s.hq, s.sq, s.d}, T(NAN)),
                                                                 ct::full<float>({s.b, s.hq, s.sq, 1}, NAN), qs, ks, vs,
                                                                 {.causal = causal})
                                      .sync();
  const double scale = 1.0 / std::sqrt(double(s.d));
  const auto got = std::move(l2).unpartition().to_host();
  const auto ref = attention_test::reference_lse(s, q2.to_host(), k2.to_host(), causal, scale);
  double worst = 0;
  for (std::size_t r = 0; r < ref.size(); ++r) worst = std::max(worst, std::fabs(double(got[r]) - ref[r]) / std::max(1.0, std::fabs(ref[r])));
  EXPECT_LE(worst, 0x1p-12) << "lse, sq " << s.sq << " sk " << s.sk << (causal ? " causal" : "");
  const auto o = std::move(o2).unpartition().to_host();
  const auto oref = attention_test::reference(s, q2.to_host(), k2.to_host(), v2.to_host(), causal, scale);
  EXPECT_LE(attention_test::worst_row_error(s, o, oref), (std::is_same_v<T, ct::bf16> ? 0x1p-6 : 0x1p-9));
}

TEST(AttentionPrefill, QueryBlockFitsTheDevice) {
  EXPECT_EQ(ct::device_limits(ct::cpu()).max_smem_per_block, 0);
  EXPECT_EQ(ct::kernels::attention_prefill_block_m(128, 0), 128);           // the CPU
  EXPECT_EQ(ct::kernels::attention_prefill_block_m(128, 232448), 128);      // sm_90: 227 KB
  EXPECT_EQ(ct::kernels::attention_prefill_block_m(128, 166912), 64);       // sm_80: 163 KB
  EXPECT_EQ(ct::kernels::attention_prefill_block_m(64, 232448), 64);
  EXPECT_EQ(ct::kernels::attention_prefill_block_m(256, 232448), 64);
  EXPECT_EQ(ct::kernels::attention_prefill_block_m(64, 232448, 90), 128);  // sm_90: TMA, a producer warpgroup
  EXPECT_EQ(ct::kernels::attention_prefill_block_m(256, 232448, 90), 64);
  EXPECT_EQ(ct::kernels::attention_prefill_block_n(128, 90), 128);
  EXPECT_EQ(ct::kernels::attention_prefill_block_n(64, 90), 128);
  EXPECT_EQ(ct::kernels::attention_prefill_block_n(256, 90), 64);
  EXPECT_EQ(ct::kernels::attention_prefill_block_n(128, 80), 64);
  EXPECT_EQ(ct::kernels::attention_prefill_block_n(128, 0), 64);  // the CPU
}

TEST(AttentionPrefill, LogSumExpOutput) {
  check_lse<ct::bf16>({1, 2, 1, 150, 200, 64}, true, 22);
  check_lse<ct::f16>({2, 1, 1, 70, 129, 128}, false, 23);
}

using attention_test::user_error_of;

TEST(AttentionPrefill, ShapeErrorsNameTheArgumentAndTheShapes) {
  auto run = [](ct::Shape q, ct::Shape k, ct::Shape o) {
    return user_error_of([&] {
      auto l = ct::kernels::attention_prefill(ct::zeros<ct::bf16>(o), ct::zeros<ct::bf16>(q).share(),
                                              ct::zeros<ct::bf16>(k).share(), ct::zeros<ct::bf16>(k).share());
      (void)std::move(l).sync();
    });
  };
  const std::string heads = run({1, 3, 8, 64}, {1, 2, 8, 64}, {1, 3, 8, 64});
  EXPECT_NE(heads.find("query heads (3) must be a multiple of the KV heads (2)"), std::string::npos) << heads;
  EXPECT_NE(heads.find("q [1, 3, 8, 64]"), std::string::npos) << heads;
  EXPECT_NE(heads.find("test_attention.cpp"), std::string::npos) << heads;
  const std::string dim = run({1, 1, 8, 96}, {1, 1, 8, 96}, {1, 1, 8, 96});
  EXPECT_NE(dim.find("head_dim 96 is not one the kernel takes"), std::string::npos) << dim;
  const std::string mism = run({1, 1, 8, 64}, {1, 1, 8, 128}, {1, 1, 8, 64});
  EXPECT_NE(mism.find("k has head_dim 128, q has 64"), std::string::npos) << mism;
  const std::string out = run({1, 1, 8, 64}, {1, 1, 8, 64}, {1, 1, 9, 64});
  EXPECT_NE(out.find("o must have the shape of q"), std::string::npos) << out;
  const std::string empty = run({1, 1, 8, 64}, {1, 1, 0, 64}, {1, 1, 8, 64});
  EXPECT_NE(empty.find("Sk = 0"), std::string::npos) << empty;
  const std::string bm = user_error_of([] {
    auto l = ct::kernels::attention_prefill(ct::zeros<ct::bf16>({1, 1, 8, 64}), ct::zeros<ct::bf16>({1, 1, 8, 64}).share(),
                                            ct::zeros<ct::bf16>({1, 1, 8, 64}).share(), ct::zeros<ct::bf16>({1, 1, 8, 64}).share(),
                                            {.block_m = 96});
    (void)std::move(l).sync();
  });
  EXPECT_NE(bm.find("block_m 96 is not one the kernel takes (64 or 128"), std::string::npos) << bm;
  EXPECT_NE(bm.find("test_attention.cpp"), std::string::npos) << bm;
  const std::string bn = user_error_of([] {
    auto l = ct::kernels::attention_prefill(ct::zeros<ct::bf16>({1, 1, 8, 64}), ct::zeros<ct::bf16>({1, 1, 8, 64}).share(),
                                            ct::zeros<ct::bf16>({1, 1, 8, 64}).share(), ct::zeros<ct::bf16>({1, 1, 8, 64}).share(),
                                            {.block_n = 32});
    (void)std::move(l).sync();
  });
  EXPECT_NE(bn.find("block_n 32 is not one the kernel takes (64 or 128"), std::string::npos) << bn;
  const std::string lse = user_error_of([] {
    auto l = ct::kernels::attention_prefill(ct::zeros<ct::bf16>({1, 2, 8, 64}), ct::zeros<float>({1, 2, 8}),
                                            ct::zeros<ct::bf16>({1, 2, 8, 64}).share(), ct::zeros<ct::bf16>({1, 2, 8, 64}).share(),
                                            ct::zeros<ct::bf16>({1, 2, 8, 64}).share());
    (void)std::move(l).sync();
  });
  EXPECT_NE(lse.find("lse must be [batch, heads, seq, 1] for q [1, 2, 8, 64]; got [1, 2, 8]"), std::string::npos) << lse;
}

}  // namespace
