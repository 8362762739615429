// Lambdas without captures are kernels everywhere a kernel function is: launch, ctile::kernel,
// warm_up, bind, kernel_cache_stats, with no unary `+`. (A capturing lambda does not compile:
// tests/compile_fail/lambda_kernel_captures.cpp.)
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <ctile/ctile.hpp>

#include "../../error/error_util.hpp"

namespace ct = ctile;

namespace {
std::vector<float> random_floats(std::size_t n) {
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> d(-4.0f, 4.0f);
  std::vector<float> v(n);
  for (float& e : v) e = d(rng);
  return v;
}
}  // namespace

TEST(LambdaKernels, LaunchTakesALambdaWithoutPlus) {
  const auto relu = [](ct::Mut<float, 1> z, ct::Ref<float, 1> x) { z.store(ct::maximum(ct::load_like(x, z), 0.0f)); };
  const std::int64_t n = 1000;
  const auto h = random_floats(static_cast<std::size_t>(n));
  auto x = ct::from_host<float>(h, {n}, ct::cpu()).share();
  auto [z, x2] = ct::launch(relu, ct::zeros<float>({n}, ct::cpu()).partition({128}), x).sync();
  (void)x2;
  const auto out = std::move(z).unpartition().to_host();
  for (std::size_t i = 0; i < h.size(); ++i) ASSERT_EQ(out[i], h[i] > 0.0f ? h[i] : 0.0f) << i;
  // The same lambda is one kernel: the second launch finds its specialisation.
  const auto before = ct::detail::kernel_cache_stats(relu);
  EXPECT_EQ(before.specialisations, 1u);
  auto [z3, x3] = ct::launch(relu, ct::zeros<float>({n}, ct::cpu()).partition({128}), x).sync();
  (void)z3;
  (void)x3;
  EXPECT_EQ(ct::detail::kernel_cache_stats(relu).hits, before.hits + 1);
  EXPECT_EQ(ct::detail::kernel_cache_stats(relu).compiles, before.compiles);
}

TEST(LambdaKernels, PlusStillWorksAndNamesTheSameKernel) {
  const auto twice = [](ct::Mut<float, 1> z) { z.store(2.0f); };
  auto [z] = ct::launch(+twice, ct::zeros<float>({16}, ct::cpu()).partition({16})).sync();
  EXPECT_EQ(std::move(z).unpartition().to_host()[3], 2.0f);
  auto [z2] = ct::launch(twice, ct::zeros<float>({16}, ct::cpu()).partition({16})).sync();
  (void)z2;
  EXPECT_EQ(ct::detail::kernel_cache_stats(twice).specialisations, 1u);
  EXPECT_GE(ct::detail::kernel_cache_stats(twice).hits, 1u);
}

TEST(LambdaKernels, NamedLambdaKernelsNameThemselvesInErrors) {
  const auto k = ct::kernel([](ct::Mut<float, 2> z) { z.store(1.0f); }, "fill2d");
  // A rank-1 partition for a rank-2 parameter: the launch error names the kernel.
  EXPECT_USER_ERROR(ct::launch(k, ct::zeros<float>({16}, ct::cpu()).partition({16})).sync(), "'fill2d'");
}

TEST(LambdaKernels, WarmUpAndBindTakeALambda) {
  const auto add1 = [](ct::Mut<float, 1> z, ct::Ref<float, 1> x) { z.store(ct::load_like(x, z) + 1.0f); };
  const ct::WarmUpResult w =
      ct::warm_up_on(ct::cpu(), add1, ct::spec::partition<float>({64}, {16}), ct::spec::shared<float>({64}));
  EXPECT_FALSE(w.was_cached);
  EXPECT_TRUE(ct::warm_up_on(ct::cpu(), add1, ct::spec::partition<float>({64}, {16}), ct::spec::shared<float>({64}))
                  .was_cached);
  auto b = ct::bind_on(ct::cpu(), add1, ct::spec::partition<float>({64}, {16}), ct::spec::shared<float>({64}));
  auto x = ct::arange<float>(64, ct::cpu()).share();
  auto [z, x2] = b(ct::default_stream(ct::cpu()), ct::zeros<float>({64}, ct::cpu()).partition({16}), x).get();
  (void)x2;
  const auto out = std::move(z).unpartition().to_host();
  for (int i = 0; i < 64; ++i) EXPECT_EQ(out[static_cast<std::size_t>(i)], static_cast<float>(i) + 1.0f);
}

TEST(LambdaKernels, AnUnnamedLambdaIsNamedByWhereItIsDefined) {
  // The static invoker's symbol, read like a function name: the enclosing function and the
  // lambda's number, without parameter lists.
  const auto fill2d = [](ct::Mut<float, 2> z) { z.store(1.0f); };
  const std::string m = EXPECT_USER_ERROR(ct::launch(fill2d, ct::zeros<float>({16}, ct::cpu()).partition({16})).sync(),
                                          "launch of kernel 'LambdaKernels_AnUnnamedLambdaIsNamedByWhereItIsDefined_Test::"
                                          "TestBody::{lambda#1}', argument 0");
  EXPECT_EQ(m.find("ctile::Mut<"), std::string::npos) << m;
}
