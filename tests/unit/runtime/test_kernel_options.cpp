// Kernel options on a launch (.options()), warm_up and bind (WarmUpOptions::kernel): a launch is
// compiled with its options, the options are part of the kernel cache's key (a launch with other
// options compiles its own kernel, the same options hit), and a bad option is a UserError at the
// caller's line naming the kernel and the option. Results are checked against float64 references.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <ctile/ctile.hpp>

#include "test_helpers.hpp"

namespace ct = ctile;
namespace spec = ctile::spec;

namespace {

void scaled_exp(ct::Mut<float, 2> out, ct::Ref<float, 2> x, ct::Scalar<float> a) {
  auto t = ct::load_like(x, out);
  out.store(ct::exp(t * a) / (t * t + 1.0f));
}

std::vector<double> reference(const std::vector<float>& x, float a) {
  std::vector<double> r(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double t = x[i];
    r[i] = std::exp(t * double(a)) / (t * t + 1.0);
  }
  return r;
}

double max_rel_diff(const std::vector<float>& got, const std::vector<double>& want) {
  EXPECT_EQ(got.size(), want.size());
  double m = 0;
  for (std::size_t i = 0; i < got.size() && i < want.size(); ++i)
    m = std::max(m, std::abs(double(got[i]) - want[i]) / std::max(1.0, std::abs(want[i])));
  return m;
}

constexpr std::int64_t kRows = 37, kCols = 300;

std::vector<float> run(const ct::Shared<float>& x, float a, const ct::KernelOptions* o) {
  auto l = ct::launch(scaled_exp, ct::zeros<float>({kRows, kCols}).partition({8, 128}), x, a);
  if (o) {
    auto [out, x2, a2] = std::move(l).options(*o).sync();
    return std::move(out).unpartition().to_host();
  }
  auto [out, x2, a2] = std::move(l).sync();
  return std::move(out).unpartition().to_host();
}

TEST(KernelOptions, EachOptionSetCompilesOnceAndTheSameSetHits) {
  auto x = ct::rand<float>({kRows, kCols}, 41, -2.0, 2.0).share();
  const float a = 0.75f;
  const auto ref = reference(x.to_host(), a);
  const auto s0 = ct::detail::kernel_cache_stats(scaled_exp);

  EXPECT_LT(max_rel_diff(run(x, a, nullptr), ref), 1e-5);
  const auto s1 = ct::detail::kernel_cache_stats(scaled_exp);
  EXPECT_EQ(s1.compiles, s0.compiles + 1);

  const ct::KernelOptions warps2{.warps = 2};
  EXPECT_LT(max_rel_diff(run(x, a, &warps2), ref), 1e-5);
  const auto s2 = ct::detail::kernel_cache_stats(scaled_exp);
  EXPECT_EQ(s2.compiles, s1.compiles + 1) << "a launch with other options must compile its own kernel";
  EXPECT_EQ(s2.specialisations, s1.specialisations + 1);

  EXPECT_LT(max_rel_diff(run(x, a, &warps2), ref), 1e-5);
  EXPECT_LT(max_rel_diff(run(x, a, nullptr), ref), 1e-5);
  const ct::KernelOptions defaults{};
  EXPECT_LT(max_rel_diff(run(x, a, &defaults), ref), 1e-5);  // the defaults given explicitly: the same key
  const auto s3 = ct::detail::kernel_cache_stats(scaled_exp);
  EXPECT_EQ(s3.compiles, s2.compiles) << "the same options must find their kernel";
  EXPECT_EQ(s3.hits, s2.hits + 3);

  // fast_math changes the code (approximate exp and division), within its documented bound.
  const ct::KernelOptions fast{.fast_math = true};
  EXPECT_LT(max_rel_diff(run(x, a, &fast), ref), 1e-4);
  EXPECT_EQ(ct::detail::kernel_cache_stats(scaled_exp).compiles, s3.compiles + 1);
}

TEST(KernelOptions, WarmUpAndBindWithOptionsPrepareTheLaunchWithTheSameOptions) {
  const ct::KernelOptions o{.warps = 4, .min_ctas_per_sm = 2};
  const auto out_spec = spec::partition<float>({kRows, kCols}, {8, 128});
  const auto x_spec = spec::shared<float>({kRows, kCols});
  const ct::WarmUpResult w = ct::warm_up(scaled_exp, ct::WarmUpOptions{.kernel = o}, out_spec, x_spec, 0.0f);
  const ct::WarmUpResult again = ct::warm_up(scaled_exp, ct::WarmUpOptions{.kernel = o}, out_spec, x_spec, 0.0f);
  EXPECT_TRUE(again.was_cached);
  (void)w;
  const auto s0 = ct::detail::kernel_cache_stats(scaled_exp);
  auto x = ct::rand<float>({kRows, kCols}, 42, -2.0, 2.0).share();
  const float a = -0.5f;
  const auto ref = reference(x.to_host(), a);
  EXPECT_LT(max_rel_diff(run(x, a, &o), ref), 1e-5);
  EXPECT_EQ(ct::detail::kernel_cache_stats(scaled_exp).compiles, s0.compiles) << "warm_up prepared this launch";

  auto k = ct::bind(scaled_exp, ct::WarmUpOptions{.kernel = o}, out_spec, x_spec, 0.0f);
  EXPECT_EQ(ct::detail::kernel_cache_stats(scaled_exp).compiles, s0.compiles) << "bind found the warmed-up kernel";
  auto [out, x2, a2] = k(ct::default_stream(), ct::zeros<float>({kRows, kCols}).partition({8, 128}), x, a).get();
  EXPECT_LT(max_rel_diff(std::move(out).unpartition().to_host(), ref), 1e-5);
}

TEST(KernelOptions, BadOptionIsAUserErrorAtTheCallersLineNamingKernelAndOption) {
  auto x = ct::rand<float>({kRows, kCols}, 43, -1.0, 1.0).share();
  int line = 0;
  try {
    line = __LINE__ + 1;
    auto l = ct::launch(scaled_exp, ct::zeros<float>({kRows, kCols}).partition({8, 128}), x, 1.0f).options({.warps = 3});
    ADD_FAILURE() << "warps = 3 was accepted";
  } catch (const ct::UserError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("scaled_exp"), std::string::npos) << msg;
    EXPECT_NE(msg.find("warps = 3"), std::string::npos) << msg;
    EXPECT_NE(msg.find("test_kernel_options.cpp:" + std::to_string(line)), std::string::npos) << msg;
  }
  ct::test::expect_user_error(
      [&] {
        (void)ct::warm_up(scaled_exp, ct::WarmUpOptions{.kernel = {.stages = 9}}, spec::partition<float>({kRows, kCols}, {8, 128}),
                          spec::shared<float>({kRows, kCols}), 0.0f);
      },
      {"scaled_exp", "stages = 9"});
  ct::test::expect_user_error(
      [&] {
        (void)ct::bind(scaled_exp, ct::WarmUpOptions{.kernel = {.min_ctas_per_sm = 12}},
                       spec::partition<float>({kRows, kCols}, {8, 128}), spec::shared<float>({kRows, kCols}), 0.0f);
      },
      {"scaled_exp", "min_ctas_per_sm = 12"});
  ct::test::expect_user_error(
      [&] {
        (void)ct::warm_up(scaled_exp, ct::WarmUpOptions{.kernel = {.pingpong = 2}}, spec::partition<float>({kRows, kCols}, {8, 128}),
                          spec::shared<float>({kRows, kCols}), 0.0f);
      },
      {"scaled_exp", "pingpong = 2", "the consumer warpgroups take turns"});
  ct::test::expect_user_error(
      [&] {
        (void)ct::warm_up(scaled_exp, ct::WarmUpOptions{.kernel = {.epilogue_overlap = -2}},
                          spec::partition<float>({kRows, kCols}, {8, 128}), spec::shared<float>({kRows, kCols}), 0.0f);
      },
      {"scaled_exp", "epilogue_overlap = -2", "the next tile block's copies during the epilogue"});
  ct::test::expect_user_error(
      [&] {
        (void)ct::warm_up(scaled_exp, ct::WarmUpOptions{.kernel = {.ring_slots = 1}},
                          spec::partition<float>({kRows, kCols}, {8, 128}), spec::shared<float>({kRows, kCols}), 0.0f);
      },
      {"scaled_exp", "ring_slots = 1", "2..32"});
  // Nothing was lost: the shared input is still usable.
  EXPECT_EQ(x.to_host().size(), static_cast<std::size_t>(kRows * kCols));
}

}  // namespace
