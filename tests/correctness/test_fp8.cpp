// End-to-end FP8: tensors of f8e4m3 and f8e5m2 made on the host, kernels launched through the
// launch API on the CPU backend, results compared with float64 references. The recipe with
// per-tensor scales: f32 data quantized to fp8 (x / scale, scale = amax / the largest finite
// value), an e4m3 x e5m2 product accumulated in f32 and rescaled by the product of the scales.
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include <ctile/ctile.hpp>

#include "test_kernels.hpp"

namespace ct = ctile;
using namespace test_kernels;  // NOLINT(google-build-using-namespace): the shared test kernels

namespace {

template <class T>
ct::Tensor<T> poisoned(ct::Shape s) {
  if constexpr (std::is_same_v<T, float>) return ct::full<T>(s, NAN);
  else return ct::full<T>(s, T::from_bits(0x7f));  // NaN in both formats
}

std::vector<float> normal_floats(std::size_t n, unsigned seed, float sd) {
  std::mt19937 g(seed);
  std::normal_distribution<float> d(0.0f, sd);
  std::vector<float> v(n);
  for (auto& x : v) x = d(g);
  return v;
}

float amax(const std::vector<float>& v) {
  float m = 0;
  for (float x : v) m = std::max(m, std::fabs(x));
  return m;
}

TEST(Fp8, PerTensorScaledProductOfE4m3AndE5m2) {
  const std::int64_t M = 96, K = 80, N = 64;
  const auto hx = normal_floats(static_cast<std::size_t>(M * K), 1, 3.0f);
  const auto hw = normal_floats(static_cast<std::size_t>(K * N), 2, 0.02f);
  const float sx = amax(hx) / 448.0f, sw = amax(hw) / 57344.0f;
  auto x = ct::from_host<float>(hx, {M, K}).share();
  auto w = ct::from_host<float>(hw, {K, N}).share();
  // Quantize: each element x / scale, rounded to nearest even (saturating) in f32 arithmetic.
  auto [qx, x2, s1] = ct::launch(quantize<ct::f8e4m3>, poisoned<ct::f8e4m3>({M, K}).partition({16, 32}), x, 1.0f / sx).sync();
  auto [qw, w2, s2] = ct::launch(quantize<ct::f8e5m2>, poisoned<ct::f8e5m2>({K, N}).partition({32, 32}), w, 1.0f / sw).sync();
  (void)x2, (void)w2, (void)s1, (void)s2;
  auto a = std::move(qx).unpartition();
  auto b = std::move(qw).unpartition();
  const auto ha = a.to_host();
  const auto hb = b.to_host();
  float top_a = 0, top_b = 0;
  for (std::size_t i = 0; i < ha.size(); ++i) {
    ASSERT_EQ(ha[i].bits, ct::f8e4m3(hx[i] * (1.0f / sx)).bits) << i;
    top_a = std::max(top_a, std::fabs(static_cast<float>(ha[i])));
  }
  for (std::size_t i = 0; i < hb.size(); ++i) ASSERT_EQ(hb[i].bits, ct::f8e5m2(hw[i] * (1.0f / sw)).bits) << i;
  for (auto v : hb) top_b = std::max(top_b, std::fabs(static_cast<float>(v)));
  EXPECT_EQ(top_a, 448.0f);    // the largest |x| lands on the largest finite value
  EXPECT_EQ(top_b, 57344.0f);
  // The product, rescaled: against the float64 product of the dequantized operands (the only
  // differences are the f32 roundings of the K-tile sums and of the rescaling), and against the
  // unquantized f32 data within fp8's precision.
  auto sa = std::move(a).share();
  auto sb = std::move(b).share();
  auto [c, a2, b2, s3] =
      ct::launch(scaled_mm<ct::f8e4m3, ct::f8e5m2, 16>, poisoned<float>({M, N}).partition({32, 32}), sa, sb, sx * sw).sync();
  (void)a2, (void)b2, (void)s3;
  const auto hc = std::move(c).unpartition().to_host();
  double num = 0, den = 0;
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      double deq = 0, mag = 0, exact = 0;
      for (std::int64_t k = 0; k < K; ++k) {
        const double t = static_cast<double>(static_cast<float>(ha[static_cast<std::size_t>(i * K + k)])) *
                         static_cast<float>(hb[static_cast<std::size_t>(k * N + j)]);
        deq += t;
        mag += std::fabs(t);
        exact += static_cast<double>(hx[static_cast<std::size_t>(i * K + k)]) * hw[static_cast<std::size_t>(k * N + j)];
      }
      const double scale = static_cast<double>(sx * sw);
      // One f32 rounding per K tile (5) of a partial sum at most sum |term|, and the rescaling's.
      const double tol = (5 * mag + std::fabs(deq)) * scale * 0x1p-24;
      const double got = hc[static_cast<std::size_t>(i * N + j)];
      ASSERT_NEAR(got, deq * scale, tol) << "[" << i << ", " << j << "]";
      num += (got - exact) * (got - exact);
      den += exact * exact;
    }
  EXPECT_LT(std::sqrt(num / den), 0.08);  // e4m3 (2^-4) and e5m2 (2^-3) relative roundings of the operands
}

// A Scalar<f8e5m2> argument and fp8 arithmetic rounded after every op: y = a * x + y.
void fp8_axpy(ct::Mut<ct::f8e5m2, 1> y, ct::Ref<ct::f8e5m2, 1> x, ct::Scalar<ct::f8e5m2> a) {
  y.store(a * ct::load_like(x, y) + y.load());
}

TEST(Fp8, ScalarArgumentAndRoundingAfterEachOp) {
  const std::int64_t n = 1000;
  auto x = ct::randn<ct::f8e5m2>({n}, 5).share();
  auto y0 = ct::randn<ct::f8e5m2>({n}, 6, 0.0, 100.0);
  const auto hy0 = y0.to_host();
  const ct::f8e5m2 a(1.75f);
  auto [y, x2, a2] = ct::launch(fp8_axpy, std::move(y0).partition({256}), x, a).sync();
  (void)a2;
  const auto hy = std::move(y).unpartition().to_host();
  const auto hx = x2.to_host();
  for (std::int64_t i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    const ct::f8e5m2 prod(static_cast<float>(a) * static_cast<float>(hx[k]));  // rounded to e5m2
    const ct::f8e5m2 want(static_cast<float>(prod) + static_cast<float>(hy0[k]));
    ASSERT_EQ(hy[k].bits, want.bits) << i;
  }
}

}  // namespace
