// Launch validation: every check runs before anything is enqueued, and each failure names the
// kernel and the argument. Nothing is lost: after a rejected launch, the caller still owns what it
// passed by lvalue, and the data is untouched.
#include <cstring>

#include "error_util.hpp"

namespace ct = ctile;

namespace {

void add1(ct::Mut<float, 1> z, ct::Ref<float, 1> x) { z.store(ct::load_like(x, z) + 1.0f); }
void add2d(ct::Mut<float, 2> z, ct::Ref<float, 2> x) { z.store(ct::load_like(x, z)); }
void two_outputs(ct::Mut<float, 1> a, ct::Mut<float, 1> b) {
  a.store(1.0f);
  b.store(2.0f);
}
void fixed_tile(ct::Mut<float, 1, 64> z) { z.store(0.0f); }
void atomic_only(ct::Atomic<float, 1> acc, ct::Ref<float, 1> x) { acc.add({0}, ct::sum(x.tiles({16}).load({ct::block_id(0)}), 0)); }
void scalar_i8(ct::Mut<std::int8_t, 1> z, ct::Scalar<std::int8_t> v) { z.store(v); }
void scatter_k(ct::UncheckedMut<float, 1> dst, ct::Ref<std::int64_t, 1> idx) {
  auto i = idx.tiles({4}).load({ct::block_id(0)});
  dst.scatter(ct::unchecked, i, ct::Tile<float>::full({4}, 1.0f));
}

}  // namespace

TEST(LaunchErrors, RankOfAPartitionDiffersFromTheParameter) {
  auto x = ct::rand<float>({4, 16}, 1).share();
  const std::string msg = EXPECT_USER_ERROR(
      (void)ct::launch(add1, ct::zeros<float>({4, 16}).partition({1, 16}), x).sync(), "rank-1");
  EXPECT_NE(msg.find("add1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("argument 0"), std::string::npos) << msg;
}

TEST(LaunchErrors, RankOfASharedInputDiffersFromTheParameter) {
  auto x = ct::rand<float>({4, 16}, 1).share();
  const std::string msg = EXPECT_USER_ERROR((void)ct::launch(add1, ct::zeros<float>({64}).partition({16}), x).sync(),
                                            "argument 1");
  EXPECT_NE(msg.find("rank 2"), std::string::npos) << msg;
}

TEST(LaunchErrors, GridsOfTwoOutputsDisagree) {
  EXPECT_USER_ERROR((void)ct::launch(two_outputs, ct::zeros<float>({64}).partition({16}),
                                     ct::zeros<float>({64}).partition({32}))
                        .sync(),
                    "same grid");
}

TEST(LaunchErrors, DeclaredTileShapeDiffers) {
  EXPECT_USER_ERROR((void)ct::launch(fixed_tile, ct::zeros<float>({256}).partition({32})).sync(), "tile shape [64]");
}

TEST(LaunchErrors, EmptyGrid) {
  auto x = ct::rand<float>({0}, 1).share();
  EXPECT_USER_ERROR((void)ct::launch(add1, ct::zeros<float>({0}).partition({16}), x).sync(), "is empty");
}

TEST(LaunchErrors, NoOutputAndNoGrid) {
  auto x = ct::rand<float>({64}, 1).share();
  EXPECT_USER_ERROR((void)ct::launch(atomic_only, ct::zeros<float>({1}), x).sync(), ".grid(");
}

TEST(LaunchErrors, ExplicitGridDisagreesWithThePartition) {
  auto x = ct::rand<float>({64}, 1).share();
  EXPECT_USER_ERROR((void)ct::launch(add1, ct::zeros<float>({64}).partition({16}), x).grid({3}).sync(), "differs");
}

TEST(LaunchErrors, GridOverflow) {
  auto x = ct::rand<float>({64}, 1).share();
  EXPECT_USER_ERROR(
      (void)ct::launch(atomic_only, ct::zeros<float>({1}), x).grid({INT64_MAX / 2, 4}).sync(), "overflows");
}

TEST(LaunchErrors, MovedFromPartition) {
  auto x = ct::rand<float>({64}, 1).share();
  auto p = ct::zeros<float>({64}).partition({16});
  auto stolen = std::move(p);
  (void)stolen;
  // NOLINTNEXTLINE(bugprone-use-after-move): the misuse under test
  EXPECT_USER_ERROR((void)ct::launch(add1, std::move(p), x).sync(), "moved from");
}

TEST(LaunchErrors, MovedFromSharedHandle) {
  auto x = ct::rand<float>({64}, 1).share();
  auto y = std::move(x);
  (void)y;
  // NOLINTNEXTLINE(bugprone-use-after-move): the misuse under test
  EXPECT_USER_ERROR((void)ct::launch(add1, ct::zeros<float>({64}).partition({16}), x).sync(), "moved from");
}

TEST(LaunchErrors, ScalarOutOfRange) {
  EXPECT_USER_ERROR((void)ct::launch(scalar_i8, ct::zeros<std::int8_t>({16}).partition({16}), 300).sync(),
                    "does not fit in i8");
}

TEST(LaunchErrors, WrittenArgumentAliasesAnInput) {
  std::vector<float> buf(64, 1.0f);
  auto out = ct::Tensor<float>::borrow(ct::unchecked, buf.data(), {64});
  auto in = ct::Tensor<float>::borrow(ct::unchecked, buf.data() + 16, {32}).share();
  auto x2 = ct::rand<float>({64}, 1).share();
  (void)x2;
  EXPECT_USER_ERROR((void)ct::launch(add1, std::move(out).partition({32}), in).grid({2}).sync(), "overlaps");
}

TEST(LaunchErrors, TraceErrorsSurfaceAtTheFirstLaunch) {
  auto x = ct::rand<float>({64, 64}, 1).share();
  // add2d loads a [16, 16] tile of x for a [16, 16] piece: fine. A [3, 16] tile is rejected by partition().
  EXPECT_USER_ERROR((void)ct::zeros<float>({64, 64}).partition({3, 16}), "power of two");
}

TEST(LaunchErrors, RaceCheckerReportsOverlappingUncheckedStores) {
  // Both blocks store to elements 0..3.
  std::vector<std::int64_t> idx = {0, 1, 2, 3, 0, 1, 2, 3};
  auto ix = ct::from_host<std::int64_t>(std::span<const std::int64_t>(idx), {8}).share();
  const std::string msg = EXPECT_USER_ERROR(
      (void)ct::launch(scatter_k, ct::unchecked_mut(ct::unchecked, ct::zeros<float>({8})), ix).grid({2}).race_check().sync(),
      "race");
  EXPECT_NE(msg.find("scatter_k"), std::string::npos) << msg;
}

TEST(LaunchErrors, RaceCheckerIsSilentForDisjointStores) {
  std::vector<std::int64_t> idx = {0, 1, 2, 3, 4, 5, 6, 7};
  auto ix = ct::from_host<std::int64_t>(std::span<const std::int64_t>(idx), {8}).share();
  auto [dst, i2] =
      ct::launch(scatter_k, ct::unchecked_mut(ct::unchecked, ct::zeros<float>({8})), ix).grid({2}).race_check().sync();
  for (float v : std::move(dst).into_tensor().to_host()) EXPECT_EQ(v, 1.0f);
}

TEST(LaunchErrors, UnshareWhileAnotherHolderExists) {
  auto x = ct::rand<float>({64}, 1).share();
  auto other = x;
  EXPECT_USER_ERROR((void)std::move(x).unshare(), "holder");
  EXPECT_TRUE(x.valid());  // nothing lost: the handle is intact
}

TEST(LaunchErrors, MutatingASharedTensorWithAnInFlightReader) {
  // A launch that reads `x` is in flight (its stream is blocked); unshare must refuse.
  auto s = ct::Stream::create();
  std::atomic<bool> release{false};
  auto gate = s.enqueue([&] {
    while (!release.load()) std::this_thread::yield();
  });
  auto x = ct::rand<float>({64}, 1).share();
  auto fut = ct::launch(add1, ct::zeros<float>({64}).partition({16}), x).async_on(s);
  auto mine = std::move(x);
  EXPECT_USER_ERROR((void)std::move(mine).unshare(), "");
  release = true;
  auto [z, x_back] = std::move(fut).get();
  gate.wait();
  (void)z;
  (void)x_back;
}
