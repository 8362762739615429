// Creation functions: values, determinism, every element type, ranks 0 and 6.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <vector>

#include "ctile/runtime/creation.hpp"

namespace ct = ctile;

namespace {

template <class T>
double as_double(T v) {
  return ct::detail::to_double(v);
}

template <class T>
class CreationAllTypes : public ::testing::Test {};
using AllElements = ::testing::Types<bool, std::int8_t, std::int16_t, std::int32_t, std::int64_t, std::uint8_t,
                                     std::uint16_t, std::uint32_t, std::uint64_t, ct::f16, ct::bf16, float, double,
                                     ct::f8e4m3, ct::f8e5m2>;
TYPED_TEST_SUITE(CreationAllTypes, AllElements);

TYPED_TEST(CreationAllTypes, ZerosOnesFull) {
  using T = TypeParam;
  auto z = ct::zeros<T>({2, 3});
  EXPECT_EQ(z.dtype(), ct::dtype_of<T>);
  EXPECT_EQ(z.shape(), (ct::Shape{2, 3}));
  EXPECT_EQ(z.strides(), (ct::Shape{3, 1}));
  EXPECT_EQ(z.numel(), 6);
  EXPECT_EQ(z.device(), ct::cpu());
  for (auto v : z.to_host()) EXPECT_EQ(as_double<T>(v), 0.0);
  auto o = ct::ones<T>({4});
  for (auto v : o.to_host()) EXPECT_EQ(as_double<T>(v), 1.0);
  const T seven = ct::detail::from_double<T>(7.0, "test");
  auto f = ct::full<T>({3, 1, 2}, seven);
  EXPECT_EQ(f.rank(), 3);
  for (auto v : f.to_host()) EXPECT_EQ(as_double<T>(v), as_double<T>(seven));
}

TYPED_TEST(CreationAllTypes, ArangeAndLinspace) {
  using T = TypeParam;
  const std::int64_t n = std::is_same_v<T, bool> ? 2 : 6;
  auto a = ct::arange<T>(n).to_host();
  ASSERT_EQ(a.size(), static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) EXPECT_EQ(as_double<T>(a[static_cast<std::size_t>(i)]), static_cast<double>(i));
  auto l = ct::linspace<T>(0, 1, 2).to_host();
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(as_double<T>(l[0]), 0.0);
  EXPECT_EQ(as_double<T>(l[1]), 1.0);
}

TYPED_TEST(CreationAllTypes, RandDeterministicAndInRange) {
  using T = TypeParam;
  auto a = ct::rand<T>({1000}, 7).to_host();
  auto b = ct::rand<T>({1000}, 7).to_host();
  auto c = ct::rand<T>({1000}, 8).to_host();
  ASSERT_EQ(a.size(), 1000u);
  int differ = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(as_double<T>(a[i]), as_double<T>(b[i]));
    differ += as_double<T>(a[i]) != as_double<T>(c[i]);
    const double v = as_double<T>(a[i]);
    EXPECT_GE(v, 0.0);
    if constexpr (ct::detail::is_float_elem<T>) {
      EXPECT_LT(v, 1.0);
    } else if constexpr (std::is_same_v<T, bool>) {
      EXPECT_LE(v, 1.0);
    } else {
      EXPECT_LT(v, 100.0);
      EXPECT_EQ(v, std::floor(v));
    }
  }
  EXPECT_GT(differ, 100);  // another seed, another sequence
}

TYPED_TEST(CreationAllTypes, FromHostRoundTrip) {
  using T = TypeParam;
  std::array<T, 6> src{};
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = ct::detail::from_double<T>(static_cast<double>(i % 2), "t");
  auto t = ct::from_host<T>(std::span<const T>(src), {3, 2});
  auto back = t.to_host();
  ASSERT_EQ(back.size(), 6u);
  for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(as_double<T>(back[i]), static_cast<double>(i % 2));
}

TEST(Creation, ArangeWithStep) {
  EXPECT_EQ(ct::arange<std::int32_t>(0, 10, 3).to_host(), (std::vector<std::int32_t>{0, 3, 6, 9}));
  EXPECT_EQ(ct::arange<double>(1, 0, -0.25).to_host(), (std::vector<double>{1, 0.75, 0.5, 0.25}));
  EXPECT_EQ(ct::arange<float>(0, 0, 1).numel(), 0);
  EXPECT_EQ(ct::arange<float>(5, 0, 1).numel(), 0);
  EXPECT_EQ(ct::arange<float>(1 << 20).to_host()[(1 << 20) - 1], static_cast<float>((1 << 20) - 1));
}

TEST(Creation, Linspace) {
  EXPECT_EQ(ct::linspace<float>(0, 1, 5).to_host(), (std::vector<float>{0, 0.25f, 0.5f, 0.75f, 1}));
  EXPECT_EQ(ct::linspace<double>(2, 3, 1).to_host(), (std::vector<double>{2}));
  EXPECT_EQ(ct::linspace<double>(2, 3, 0).numel(), 0);
  auto l = ct::linspace<double>(-1, 1, 7).to_host();
  EXPECT_EQ(l.front(), -1);
  EXPECT_EQ(l.back(), 1);
}

TEST(Creation, HalfTypesUseTheirFloatConstructors) {
  auto h = ct::full<ct::f16>({2}, ct::f16(1.5f)).to_host();
  EXPECT_EQ(h[0].bits, 0x3e00);
  auto b = ct::full<ct::bf16>({2}, ct::bf16(-2.0f)).to_host();
  EXPECT_EQ(b[1].bits, 0xc000);
  EXPECT_EQ(ct::ones<ct::f16>({1}).to_host()[0].bits, 0x3c00);
  EXPECT_EQ(ct::ones<ct::bf16>({1}).to_host()[0].bits, 0x3f80);
}

// fp8 values round to nearest even and saturate at the largest finite value (448 for e4m3,
// 57344 for e5m2), in every creation function.
TEST(Creation, Fp8TypesRoundAndSaturate) {
  EXPECT_EQ(ct::ones<ct::f8e4m3>({1}).to_host()[0].bits, 0x38);
  EXPECT_EQ(ct::ones<ct::f8e5m2>({1}).to_host()[0].bits, 0x3c);
  EXPECT_EQ(ct::full<ct::f8e4m3>({2}, ct::f8e4m3(500.0f)).to_host()[1].bits, 0x7e);
  EXPECT_EQ(ct::full<ct::f8e5m2>({2}, ct::f8e5m2(-1e9f)).to_host()[0].bits, 0xfb);
  // 0 .. 19: 17 and 19 are ties (to 16 and 20: e4m3 has four significant bits).
  const auto a = ct::arange<ct::f8e4m3>(20).to_host();
  EXPECT_EQ(static_cast<float>(a[17]), 16.0f);
  EXPECT_EQ(static_cast<float>(a[18]), 18.0f);
  EXPECT_EQ(static_cast<float>(a[19]), 20.0f);
  const auto l = ct::linspace<ct::f8e5m2>(0, 100000, 3).to_host();
  EXPECT_EQ(static_cast<float>(l[1]), 49152.0f);  // 50000: the nearest e5m2 is 1.5 * 2^15
  EXPECT_EQ(static_cast<float>(l[2]), 57344.0f);  // saturated
  auto r = ct::rand<ct::f8e4m3>({4096}, 3, -1000.0, 1000.0).to_host();
  for (auto v : r) EXPECT_LE(std::fabs(static_cast<float>(v)), 448.0f);
  auto n = ct::randn<ct::f8e5m2>({100000}, 12).to_host();
  double sum = 0, sq = 0;
  for (auto v : n) {
    sum += static_cast<float>(v);
    sq += static_cast<double>(static_cast<float>(v)) * static_cast<float>(v);
  }
  EXPECT_NEAR(sum / 100000.0, 0.0, 0.02);
  EXPECT_NEAR(std::sqrt(sq / 100000.0), 1.0, 0.05);  // e5m2's rounding (2 mantissa bits) moves it a little
  EXPECT_EQ(ct::randn<ct::f8e5m2>({8}, 12).to_host(), std::vector<ct::f8e5m2>(n.begin(), n.begin() + 8));
}

TEST(Creation, RankZeroAndRankSix) {
  auto s = ct::full<float>({}, 3.5f);
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(s.numel(), 1);
  EXPECT_EQ(s.to_host(), (std::vector<float>{3.5f}));
  auto r6 = ct::arange<std::int32_t>(24);
  auto t6 = std::move(r6).reshape({2, 1, 3, 1, 2, 2});
  EXPECT_EQ(t6.rank(), 6);
  EXPECT_EQ(t6.strides(), (ct::Shape{12, 12, 4, 4, 2, 1}));
  EXPECT_EQ(t6.to_host()[23], 23);
  auto z6 = ct::zeros<double>({1, 2, 1, 2, 1, 2});
  EXPECT_EQ(z6.numel(), 8);
  auto e = ct::zeros<float>({3, 0, 2});
  EXPECT_EQ(e.numel(), 0);
  EXPECT_TRUE(e.to_host().empty());
}

TEST(Creation, RandMatchesTheDocumentedGenerator) {
  // floats: (mt19937_64() >> 11) * 2^-53, so any platform gives these exact values.
  std::mt19937_64 g(42);
  auto r = ct::rand<double>({4}, 42).to_host();
  for (double v : r) EXPECT_EQ(v, static_cast<double>(g() >> 11) * 0x1p-53);
  std::mt19937_64 g2(5);
  auto ri = ct::rand<std::int32_t>({4}, 5).to_host();
  for (auto v : ri) EXPECT_EQ(v, static_cast<std::int32_t>(g2() % 100));
  // ranged
  auto rr = ct::rand<float>({1000}, 3, -2.0, 2.0).to_host();
  for (float v : rr) {
    EXPECT_GE(v, -2.0f);
    EXPECT_LT(v, 2.0f);
  }
  auto ir = ct::rand<std::int8_t>({1000}, 3, -5, 5).to_host();
  bool saw_lo = false, saw_hi = false;
  for (auto v : ir) {
    EXPECT_GE(v, -5);
    EXPECT_LT(v, 5);
    saw_lo |= v == -5;
    saw_hi |= v == 4;
  }
  EXPECT_TRUE(saw_lo && saw_hi);
}

TEST(Creation, RandnStatistics) {
  auto a = ct::randn<double>({100000}, 11, 2.0, 3.0).to_host();
  double sum = 0, sq = 0;
  for (double v : a) sum += v;
  const double mean = sum / static_cast<double>(a.size());
  for (double v : a) sq += (v - mean) * (v - mean);
  const double sd = std::sqrt(sq / static_cast<double>(a.size()));
  EXPECT_NEAR(mean, 2.0, 0.05);
  EXPECT_NEAR(sd, 3.0, 0.05);
  EXPECT_EQ(ct::randn<double>({16}, 11, 2.0, 3.0).to_host(), std::vector<double>(a.begin(), a.begin() + 16));
  auto h = ct::randn<ct::f16>({64}, 1).to_host();
  auto h2 = ct::randn<ct::f16>({64}, 1).to_host();
  EXPECT_EQ(h, h2);
  auto b = ct::randn<ct::bf16>({64}, 1).to_host();
  for (std::size_t i = 0; i < 64; ++i) EXPECT_NEAR(static_cast<float>(b[i]), static_cast<float>(h[i]), 0.05f);
}

TEST(Creation, DeterministicMathIsAccurate) {
  for (double x : {1e-16, 0x1p-53, 0.001, 0.3, 0.5, 0.7071, 0.99, 1.0}) EXPECT_NEAR(ct::detail::det_log(x), std::log(x), 1e-14);
  for (int i = 0; i < 1000; ++i) {
    const double u = i / 1000.0;
    EXPECT_NEAR(ct::detail::det_cos2pi(u), std::cos(2 * std::numbers::pi * u), 1e-15) << u;
  }
}

}  // namespace
