// ctile::bind: pre-bound launches give the results of launch(), take arguments under the same
// ownership rules, and reject arguments of another spec with a UserError naming them.
#include <gtest/gtest.h>

#include <random>
#include <tuple>
#include <vector>

#include <ctile/ctile.hpp>

#include "test_helpers.hpp"

namespace ct = ctile;
using ct::test::expect_user_error;

namespace {

void axpy(ct::Mut<float, 1> y, ct::Scalar<float> a, ct::Ref<float, 1> x) { y.store(a * ct::load_like(x, y) + y.load()); }
void fill_rows(ct::Mut<float, 2> z, ct::Ref<float, 2> x, ct::Const<int> k) { z.store(ct::load_like(x, z) * static_cast<float>(k.value())); }
void sum_into(ct::Atomic<float, 1> total, ct::Ref<float, 1> x) { total.add({0}, ct::sum(x.tiles({64}).load({ct::block_id(0)}), 0)); }

std::vector<float> random_floats(std::size_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_int_distribution<int> d(-8, 8);
  std::vector<float> v(n);
  for (auto& x : v) x = static_cast<float>(d(g));
  return v;
}

ct::Shared<float> shared_of(const std::vector<float>& v) {
  return ct::from_host<float>(std::span<const float>(v), {static_cast<std::int64_t>(v.size())}, ct::cpu()).share();
}

TEST(Bind, BoundLaunchesGiveTheResultsOfLaunch) {
  const std::int64_t n = 1000;
  auto k = ct::bind_on(ct::cpu(), axpy, ct::spec::partition<float>({n}, {128}), 0.0f, ct::spec::shared<float>({n}));
  EXPECT_TRUE(k.valid());
  EXPECT_EQ(k.device(), ct::cpu());
  EXPECT_NE(k.name().find("axpy"), std::string::npos);
  auto s = ct::Stream::create(ct::cpu());
  const unsigned seed = std::random_device{}();
  // Several calls with new tensors and scalars each time: the bound kernel's parameter block is
  // rewritten where the arguments changed, and only there.
  for (int round = 0; round < 4; ++round) {
    const auto hx = random_floats(n, seed + round), hy = random_floats(n, seed + 100 + round);
    auto x = shared_of(hx);
    auto y = ct::from_host<float>(std::span<const float>(hy), {n}, ct::cpu()).partition({128});
    const float a = static_cast<float>(round) - 1.5f;
    auto [y2, a2, x2] = k(s, std::move(y), a, x).get();
    EXPECT_EQ(a2, a);
    auto [y3, a3, x3] = k(s, std::move(y2), a, x2).get();  // the same views again
    const auto out = std::move(y3).unpartition().to_host();
    for (std::int64_t i = 0; i < n; ++i)
      ASSERT_EQ(out[static_cast<std::size_t>(i)], hy[static_cast<std::size_t>(i)] + 2 * a * hx[static_cast<std::size_t>(i)]) << i;
  }
}

TEST(Bind, ChainsThroughThenAndSharesTheLaunchCache) {
  const std::int64_t n = 256;
  const auto before = ct::detail::kernel_cache_stats(axpy);
  auto k = ct::bind_on(ct::cpu(), axpy, ct::spec::partition<float>({n}, {64}), 0.0f, ct::spec::shared<float>({n}));
  auto x = ct::ones<float>({n}, ct::cpu()).share();
  auto s = ct::Stream::create(ct::cpu());
  auto f = k(s, ct::zeros<float>({n}, ct::cpu()).partition({64}), 1.0f, x);
  for (int i = 0; i < 9; ++i)
    f = std::move(f).then([&](std::tuple<ct::Partition<float>, float, ct::Shared<float>>&& t) {
      return k.launch(std::move(std::get<0>(t)), std::get<1>(t), std::get<2>(t));
    });
  auto [y, a, x2] = std::move(f).get();
  EXPECT_EQ(std::move(y).unpartition().to_host()[17], 10.0f);
  // launch() of the same specialisation compiles nothing more.
  const auto mid = ct::detail::kernel_cache_stats(axpy);
  auto [y4, a4, x4] = ct::launch(axpy, ct::zeros<float>({n}, ct::cpu()).partition({64}), 2.0f, x2).sync_on(s);
  const auto after = ct::detail::kernel_cache_stats(axpy);
  EXPECT_EQ(after.compiles, mid.compiles);
  EXPECT_LE(mid.compiles, before.compiles + 1);
  EXPECT_GE(after.hits, mid.hits + 1);
  EXPECT_EQ(std::move(y4).unpartition().to_host()[3], 2.0f);
}

TEST(Bind, ConstsAndGridsAreBound) {
  auto k = ct::bind_on(ct::cpu(), fill_rows, ct::spec::partition<float>({4, 64}, {1, 64}), ct::spec::shared<float>({4, 64}), 3);
  auto s = ct::Stream::create(ct::cpu());
  auto x = ct::ones<float>({4, 64}, ct::cpu()).share();
  auto [z, x2, c] = k(s, ct::zeros<float>({4, 64}, ct::cpu()).partition({1, 64}), x, 3).get();
  EXPECT_EQ(std::move(z).unpartition().to_host()[70], 3.0f);
  expect_user_error([&] { (void)k(s, ct::zeros<float>({4, 64}, ct::cpu()).partition({1, 64}), x2, 4).get(); },
                    {"bound launch of kernel", "argument 2", "= 3", "but the argument is", "= 4"});
  // A kernel without a Mut parameter takes its grid from grid().
  auto ks = ct::bind_on(ct::cpu(), sum_into, ct::WarmUpOptions{.grid_rank = 1}, ct::spec::tensor<float>({1}), ct::spec::shared<float>({256}));
  expect_user_error([&] { (void)ks(s, ct::zeros<float>({1}, ct::cpu()), ct::ones<float>({256}, ct::cpu()).share()).get(); },
                    {"no Mut parameter to take the grid from"});
  ks.grid({4});
  auto [total, xs] = ks(s, ct::zeros<float>({1}, ct::cpu()), ct::ones<float>({256}, ct::cpu()).share()).get();
  EXPECT_EQ(total.to_host()[0], 256.0f);
}

// A launch with the views, tiles and Const values of the previous one skips the argument checks
// (bind.hpp): what it can change is still rejected.
TEST(Bind, RepeatedViewsStillCheckTilesAndConsts) {
  auto k = ct::bind_on(ct::cpu(), fill_rows, ct::spec::partition<float>({4, 64}, {1, 64}), ct::spec::shared<float>({4, 64}), 3);
  auto s = ct::Stream::create(ct::cpu());
  auto x = ct::ones<float>({4, 64}, ct::cpu()).share();
  auto z = ct::zeros<float>({4, 64}, ct::cpu()).partition({1, 64});
  for (int i = 0; i < 3; ++i) std::tie(z, x, std::ignore) = k(s, std::move(z), x, 3).get();  // the same views each time
  // The same view in other tiles (a partition keeps its view): the spec it was bound for differs.
  auto other_tiles = std::move(z).unpartition().partition({2, 64});
  expect_user_error([&] { (void)k(s, std::move(other_tiles), x, 3); }, {"bound launch of kernel", "argument 0", "in tiles of [1, 64]", "in tiles of [2, 64]"});
  // The same views with another Const.
  auto z2 = ct::zeros<float>({4, 64}, ct::cpu()).partition({1, 64});
  std::tie(z2, x, std::ignore) = k(s, std::move(z2), x, 3).get();
  expect_user_error([&] { (void)k(s, std::move(z2), x, 5); }, {"argument 2", "= 3", "but the argument is", "= 5"});
  auto z3 = ct::zeros<float>({4, 64}, ct::cpu()).partition({1, 64});
  std::tie(z3, x, std::ignore) = k(s, std::move(z3), x, 3).get();
  std::tie(z3, x, std::ignore) = k(s, std::move(z3), x, 3).get();
  EXPECT_EQ(std::move(z3).unpartition().to_host()[130], 3.0f);
}

TEST(Bind, ArgumentsOfAnotherSpecAreUserErrors) {
  const std::int64_t n = 256;
  auto k = ct::bind_on(ct::cpu(), axpy, ct::spec::partition<float>({n}, {64}), 0.0f, ct::spec::shared<float>({n}));
  auto s = ct::Stream::create(ct::cpu());
  auto x = ct::ones<float>({n}, ct::cpu()).share();
  // Another tile shape.
  expect_user_error([&] { (void)k(s, ct::zeros<float>({n}, ct::cpu()).partition({32}), 1.0f, x); },
                    {"bound launch of kernel", "argument 0", "was bound for", "in tiles of [64]", "in tiles of [32]"});
  // A misaligned view: other specialisation facts.
  auto big = ct::ones<float>({n + 1}, ct::cpu());
  auto view = std::move(big).slice(0, 1, n + 1).share();
  expect_user_error([&] { (void)k(s, ct::zeros<float>({n}, ct::cpu()).partition({64}), 1.0f, view); },
                    {"argument 2", "was bound for", "with facts"});
  // An extent that is not a multiple of 16 any more.
  expect_user_error([&] { (void)k(s, ct::zeros<float>({n - 1}, ct::cpu()).partition({64}), 1.0f, x); }, {"argument 0"});
  // Other extents with the same facts are fine.
  auto [y, a, x2] = k(s, ct::zeros<float>({2 * n}, ct::cpu()).partition({64}), 1.0f, ct::ones<float>({2 * n}, ct::cpu()).share()).get();
  EXPECT_EQ(std::move(y).unpartition().to_host()[300], 1.0f);
  // Moved-from arguments and a moved-from bound kernel.
  auto p = ct::zeros<float>({n}, ct::cpu()).partition({64});
  auto p2 = std::move(p);
  expect_user_error([&] { (void)k(s, std::move(p), 1.0f, x); }, {"Partition was moved from"});
  auto k2 = std::move(k);
  expect_user_error([&] { (void)k.name(); }, {"use of a moved-from BoundKernel"});
  EXPECT_TRUE(k2.valid());
}

}  // namespace
