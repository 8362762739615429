// Host views (docs/host_api.md#views): Shared::slice/permute/expand/reshape are read-only,
// cheap (the same storage, no copy) and checked against their parent; Tensor::slice gives the
// parent back through unslice(); views are launchable kernel inputs whose strides the backend
// honours and whose specialisation facts describe the view, not its parent.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "ctile/ctile.hpp"
#include "test_helpers.hpp"

namespace ct = ctile;
using ct::test::expect_user_error;

namespace {

unsigned seed() {
  static const unsigned s = std::random_device{}();
  return s;
}

std::vector<float> random_floats(std::size_t n, unsigned s) {
  std::mt19937 g(s);
  std::uniform_real_distribution<float> d(-4.0f, 4.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(g);
  return v;
}

// Row-major element (i, j) of a rank-2 view: the reference every view must agree with.
float at(const std::vector<float>& host, std::int64_t cols, std::int64_t i, std::int64_t j) {
  return host[static_cast<std::size_t>(i * cols + j)];
}

void add2(ct::Mut<float, 2> z, ct::Ref<float, 2> x, ct::Ref<float, 2> y) {
  z.store(ct::load_like(x, z) + ct::load_like(y, z));
}

void scale1(ct::Mut<float, 1> z, ct::Ref<float, 1> x) { z.store(ct::load_like(x, z) * 3.0f); }

TEST(Views, PermuteIsATransposeWithoutACopy) {
  SCOPED_TRACE(testing::Message() << "seed " << seed());
  const auto h = random_floats(5 * 7, seed());
  auto s = ct::from_host<float>(h, {5, 7}).share();
  auto t = s.permute({1, 0});
  EXPECT_EQ(t.shape(), (ct::Shape{7, 5}));
  EXPECT_EQ(t.strides(), (ct::Shape{1, 7}));
  EXPECT_FALSE(t.contiguous());
  EXPECT_EQ(t.core(ct::unchecked)->storage, s.core(ct::unchecked)->storage);  // no copy
  EXPECT_EQ(s.holders(), 2);
  const auto got = t.to_host();
  for (std::int64_t i = 0; i < 7; ++i)
    for (std::int64_t j = 0; j < 5; ++j) ASSERT_EQ(at(got, 5, i, j), at(h, 7, j, i)) << i << "," << j;
  // Rank 3: axis i of the view is axis order[i].
  auto r3 = ct::arange<float>(24).reshape({2, 3, 4}).share().permute({2, 0, 1});
  EXPECT_EQ(r3.shape(), (ct::Shape{4, 2, 3}));
  EXPECT_EQ(r3.strides(), (ct::Shape{1, 12, 4}));
  EXPECT_EQ(r3.to_host()[1], 4.0f);  // element (0, 0, 1) is source (0, 1, 0)
}

TEST(Views, ExpandBroadcastsWithStrideZero) {
  auto row = ct::arange<float>(4).share();
  auto b = row.expand({3, 4});
  EXPECT_EQ(b.shape(), (ct::Shape{3, 4}));
  EXPECT_EQ(b.strides(), (ct::Shape{0, 1}));
  EXPECT_EQ(b.to_host(), (std::vector<float>{0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3}));
  auto col = ct::arange<float>(3).reshape({3, 1}).share().expand({2, 3, 2});
  EXPECT_EQ(col.strides(), (ct::Shape{0, 1, 0}));
  EXPECT_EQ(col.to_host(), (std::vector<float>{0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2}));
  auto same = row.expand({4});  // nothing to broadcast: the same layout
  EXPECT_EQ(same.strides(), (ct::Shape{1}));
}

TEST(Views, ReshapeFollowsStridesWhenItCan) {
  auto m = ct::arange<float>(24).reshape({4, 6}).share();
  // Columns [0, 4) of every row: rows stay evenly strided inside, so [4, 4] -> [4, 2, 2] is a view.
  auto cols = m.slice(1, 0, 4);
  auto split = cols.reshape({4, 2, 2});
  EXPECT_EQ(split.strides(), (ct::Shape{6, 2, 1}));
  EXPECT_EQ(split.to_host(), cols.to_host());
  // A transposed matrix cannot be flattened without a copy...
  auto t = m.permute({1, 0});
  expect_user_error([&] { (void)t.reshape({24}); },
                    {"Shared<f32>::reshape of a non-contiguous view", "shape [6, 4]", "strides [1, 6]", "to [24]", "needs a copy"});
  // ... but its axes can be split and extents of 1 added.
  auto t2 = t.reshape({3, 2, 1, 4});
  EXPECT_EQ(t2.strides(), (ct::Shape{2, 1, 24, 6}));  // any stride suits an extent of 1
  EXPECT_EQ(t2.to_host(), t.to_host());
  expect_user_error([&] { (void)m.reshape({5, 5}); }, {"Shared<f32>::reshape from [4, 6] (24 elements) to [5, 5] (25 elements)"});
  EXPECT_EQ(m.holders(), 5);  // m, cols, split, t, t2: failed views left nothing behind
}

TEST(Views, BadViewsNameTheViewShapesAndProblem) {
  auto s = ct::zeros<float>({2, 3}).share();
  expect_user_error([&] { (void)s.permute({0}); }, {"Shared<f32>::permute({0})", "[2, 3]", "names 1 axes, the tensor has 2"});
  expect_user_error([&] { (void)s.permute({0, 2}); }, {"permute({0, 2})", "axis 2 is out of range for rank 2"});
  expect_user_error([&] { (void)s.permute({1, 1}); }, {"permute({1, 1})", "axis 1 appears twice"});
  expect_user_error([&] { (void)s.permute({-1, 0}); }, {"axis -1 is out of range"});
  expect_user_error([&] { (void)s.expand({3}); }, {"Shared<f32>::expand", "[2, 3] to [3]", "target rank 1 is lower"});
  expect_user_error([&] { (void)s.expand({4, 3}); }, {"expand", "[2, 3] to [4, 3]", "axis 0 has extent 2", "neither 1 nor"});
  expect_user_error([&] { (void)s.expand({2, -3}); }, {"Shared<f32>::expand", "negative extent"});
  const std::int64_t big = std::int64_t{1} << 62;
  expect_user_error([&] { (void)ct::zeros<float>({1, 1}).share().expand({big, 4}); }, {"expand", "overflows int64"});
  expect_user_error([&] { (void)s.slice(1, 1, 4); }, {"slice", "[1, 4)", "axis 1 of extent 3"});
  expect_user_error([&] { (void)s.reshape({7}); }, {"reshape", "element counts differ"});
  EXPECT_EQ(s.holders(), 1);
}

TEST(Views, AViewCannotBeUnsharedIntoAliasingMemory) {
  auto s = ct::zeros<float>({1, 4}).share();
  auto b = s.expand({8, 4});
  s = ct::Shared<float>();
  EXPECT_EQ(b.holders(), 1);
  expect_user_error([&] { (void)std::move(b).unshare(); },
                    {"unshare of a view of shape [8, 4] with strides [0, 1]", "several indices", "expand"});
  EXPECT_TRUE(b.valid());  // NOLINT(bugprone-use-after-move): a failed unshare loses nothing
  // A permuted view is a bijection: it may become a mutable tensor again.
  auto p = ct::arange<float>(6).reshape({2, 3}).share().permute({1, 0});
  auto t = std::move(p).unshare();
  EXPECT_EQ(t.shape(), (ct::Shape{3, 2}));
  EXPECT_EQ(t.to_host(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
}

TEST(Views, MutableSliceGivesTheParentBack) {
  SCOPED_TRACE(testing::Message() << "seed " << seed());
  const std::int64_t n = 100;
  const auto hz = random_floats(static_cast<std::size_t>(n), seed() + 1);
  const auto hx = random_floats(40, seed() + 2);
  auto whole = ct::from_host<float>(hz, {n});
  auto part = std::move(whole).slice(0, 30, 70);  // 40 elements, the parent travels inside
  EXPECT_FALSE(whole.valid());                    // NOLINT(bugprone-use-after-move)
  EXPECT_TRUE(part.is_slice());
  auto x = ct::from_host<float>(hx, {40}).share();
  auto [zp, x2] = ct::launch(scale1, std::move(part).partition({16}), x).sync();
  auto back = std::move(zp).unpartition().unslice();
  EXPECT_FALSE(back.is_slice());
  ASSERT_EQ(back.shape(), (ct::Shape{n}));
  const auto got = back.to_host();
  for (std::int64_t i = 0; i < n; ++i) {
    const float want = i >= 30 && i < 70 ? hx[static_cast<std::size_t>(i - 30)] * 3.0f : hz[static_cast<std::size_t>(i)];
    ASSERT_EQ(got[static_cast<std::size_t>(i)], want) << i;
  }
  // A slice of a slice gives back the first slice, which gives back the whole; reshapes keep the link.
  auto t = ct::arange<float>(12).reshape({3, 4});
  auto rows = std::move(t).slice(0, 1, 3);
  auto one = std::move(rows).slice(0, 1, 2).reshape({4});
  auto rows_again = std::move(one).unslice();
  EXPECT_EQ(rows_again.shape(), (ct::Shape{2, 4}));
  auto t_again = std::move(rows_again).unslice();
  EXPECT_EQ(t_again.shape(), (ct::Shape{3, 4}));
  EXPECT_EQ(t_again.to_host()[11], 11.0f);
  // Shared and unshared, the slice still knows its parent.
  auto s = std::move(t_again).slice(1, 0, 2).share();
  auto back2 = std::move(s).unshare().unslice();
  EXPECT_EQ(back2.shape(), (ct::Shape{3, 4}));
}

TEST(Views, UnsliceOfATensorThatIsNotASlice) {
  auto t = ct::zeros<std::int32_t>({4});
  expect_user_error([&] { (void)std::move(t).unslice(); }, {"Tensor<i32>::unslice", "[4]", "not a slice"});
  EXPECT_TRUE(t.valid());  // NOLINT(bugprone-use-after-move): nothing was lost
  // A view of a shared handle has no mutable parent: unsharing it gives just the view.
  auto s = ct::zeros<float>({8}).share();
  auto v = s.slice(0, 0, 4);
  s = ct::Shared<float>();
  auto tv = std::move(v).unshare();
  expect_user_error([&] { (void)std::move(tv).unslice(); }, {"Tensor<f32>::unslice", "not a slice"});
}

// Views as kernel inputs: the launch packs each view's own extents and strides, so a transposed
// input and a broadcast row give the same result as their row-major copies.
TEST(Views, LaunchOnPermutedAndBroadcastInputs) {
  SCOPED_TRACE(testing::Message() << "seed " << seed());
  const std::int64_t r = 37, c = 20;  // not tile multiples: padding and masking over strided views
  const auto ha = random_floats(static_cast<std::size_t>(c * r), seed() + 3);  // [c, r], read transposed
  const auto hb = random_floats(static_cast<std::size_t>(c), seed() + 4);      // one row, broadcast
  auto a = ct::from_host<float>(ha, {c, r}).share();
  auto b = ct::from_host<float>(hb, {c}).share();
  auto at_ = a.permute({1, 0});
  auto bb = b.expand({r, c});
  auto [z, a2, b2] = ct::launch(add2, ct::zeros<float>({r, c}).partition({16, 8}), at_, bb).sync();
  const auto got = std::move(z).unpartition().to_host();
  for (std::int64_t i = 0; i < r; ++i)
    for (std::int64_t j = 0; j < c; ++j)
      ASSERT_EQ(at(got, c, i, j), at(ha, r, j, i) + hb[static_cast<std::size_t>(j)]) << i << "," << j;
}

// The facts that specialise a kernel come from the view: a transposed or broadcast last axis is
// not contiguous, a slice that starts 4 bytes in is not 16-byte aligned.
TEST(Views, SpecialisationFactsDescribeTheView) {
  auto m = ct::zeros<float>({32, 32}).share();
  const auto facts = [](const ct::Shared<float>& s) { return ct::detail::tensor_facts(*s.core(ct::unchecked)); };
  EXPECT_TRUE(facts(m).contiguous_last);
  EXPECT_TRUE(facts(m).aligned16);
  EXPECT_FALSE(facts(m.permute({1, 0})).contiguous_last);
  EXPECT_FALSE(facts(ct::zeros<float>({32, 1}).share().expand({32, 32})).contiguous_last);
  EXPECT_TRUE(facts(ct::zeros<float>({1, 32}).share().expand({32, 32})).contiguous_last);
  EXPECT_FALSE(facts(m.slice(1, 1, 17)).aligned16);
  EXPECT_TRUE(facts(m.slice(1, 4, 20)).aligned16);
  EXPECT_EQ(facts(m.slice(1, 4, 20)).extent_div16, 0b11u);
  EXPECT_EQ(facts(m.slice(1, 4, 20)).stride_div16, 0b01u);
}

}  // namespace
