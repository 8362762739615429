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
void stats_beside_rows(ct::Mut<float, 1> s, ct::Mut<float, 2> y, ct::Ref<float, 2> x) {
  s.store(1.0f);
  y.store(ct::load_like(x, y));
}
void fixed_tile(ct::Mut<float, 1, 64> z) { z.store(0.0f); }
void atomic_only(ct::Atomic<float, 1> acc, ct::Ref<float, 1> x) { acc.add({0}, ct::sum(x.tiles({16}).load({ct::block_id(0)}), 0)); }
void scalar_i8(ct::Mut<std::int8_t, 1> z, ct::Scalar<std::int8_t> v) { z.store(v); }
int g_bad_tile_line = 0;
void bad_tile(ct::Mut<float, 2> z, ct::Ref<float, 2> x) {
  (void)x;
  g_bad_tile_line = __LINE__ + 1;
  z.store(ct::Tile<float>::zeros({12, 16}));
}
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

TEST(LaunchErrors, LowerRankOutputBesideATiledAxis) {
  // [rows] beside [rows, cols] in tiles of 8 x 16: grid [4] against [4, 4], whose second axis is
  // not 1, so four blocks would share each piece of `mean`.
  auto x = ct::rand<float>({32, 64}, 3).share();
  const std::string msg = EXPECT_USER_ERROR(
      (void)ct::launch(stats_beside_rows, ct::zeros<float>({32}).partition({8}),
                       ct::zeros<float>({32, 64}).partition({8, 16}), x)
          .sync(),
      "a grid of lower rank may stand for one whose further axes have extent 1");
  EXPECT_NE(msg.find("[4, 4]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("argument 1"), std::string::npos) << msg;
}

TEST(LaunchErrors, GridsOfTwoOutputsDisagree) {
  EXPECT_USER_ERROR((void)ct::launch(two_outputs, ct::zeros<float>({64}).partition({16}),
                                     ct::zeros<float>({64}).partition({32}))
                        .sync(),
                    "the grids of the Mut arguments must be equal");
}

TEST(LaunchErrors, DeclaredTileShapeDiffers) {
  EXPECT_USER_ERROR((void)ct::launch(fixed_tile, ct::zeros<float>({256}).partition({32})).sync(), "tile shape [64]");
}

TEST(LaunchErrors, EmptyGrid) {
  auto x = ct::rand<float>({0}, 1).share();
  EXPECT_USER_ERROR((void)ct::launch(add1, ct::zeros<float>({0}).partition({16}), x).sync(),
                    "the grid [0] is empty");
}

TEST(LaunchErrors, NoOutputAndNoGrid) {
  auto x = ct::rand<float>({64}, 1).share();
  EXPECT_USER_ERROR((void)ct::launch(atomic_only, ct::zeros<float>({1}), x).sync(), ".grid(");
}

TEST(LaunchErrors, ExplicitGridDisagreesWithThePartition) {
  auto x = ct::rand<float>({64}, 1).share();
  EXPECT_USER_ERROR((void)ct::launch(add1, ct::zeros<float>({64}).partition({16}), x).grid({3}).sync(),
                    "the explicit grid [3] differs from the grid [4]");
}

TEST(LaunchErrors, GridOverflow) {
  auto x = ct::rand<float>({64}, 1).share();
  EXPECT_USER_ERROR(
      (void)ct::launch(atomic_only, ct::zeros<float>({1}), x).grid({INT64_MAX / 2, 4}).sync(),
      "overflows 64-bit block ids");
}

TEST(LaunchErrors, MovedFromPartition) {
  auto x = ct::rand<float>({64}, 1).share();
  auto p = ct::zeros<float>({64}).partition({16});
  auto stolen = std::move(p);
  (void)stolen;
  // NOLINTNEXTLINE(bugprone-use-after-move): the misuse under test
  EXPECT_USER_ERROR((void)ct::launch(add1, std::move(p), x).sync(), "the Partition was moved from");
}

TEST(LaunchErrors, MovedFromSharedHandle) {
  auto x = ct::rand<float>({64}, 1).share();
  auto y = std::move(x);
  (void)y;
  // NOLINTNEXTLINE(bugprone-use-after-move): the misuse under test
  EXPECT_USER_ERROR((void)ct::launch(add1, ct::zeros<float>({64}).partition({16}), x).sync(),
                    "the Shared handle is empty (moved from)");
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
  EXPECT_USER_ERROR((void)ct::launch(add1, std::move(out).partition({32}), in).grid({2}).sync(),
                    "its memory overlaps argument 1");
}

TEST(LaunchErrors, TraceErrorsSurfaceAtTheFirstLaunch) {
  // The kernel is traced at its first launch; its mistake (a [12, 16] tile: 12 is not a power of
  // two) comes out of sync() as a UserError at the kernel's line, and nothing runs.
  auto x = ct::rand<float>({64, 64}, 1).share();
  const auto before = ct::detail::kernel_cache_stats(bad_tile);
  const std::string msg = EXPECT_USER_ERROR(
      (void)ct::launch(bad_tile, ct::zeros<float>({64, 64}).partition({16, 16}), x).sync(), "power of two");
  const std::string here = "test_launch_errors.cpp:" + std::to_string(g_bad_tile_line) + ":";
  EXPECT_NE(msg.find(here), std::string::npos) << "expected " << here << " in: " << msg;
  // A failed trace is not cached: the next launch traces again and fails the same way.
  EXPECT_USER_ERROR((void)ct::launch(bad_tile, ct::zeros<float>({64, 64}).partition({16, 16}), x).sync(), here);
  EXPECT_EQ(ct::detail::kernel_cache_stats(bad_tile).compiles, before.compiles + 2);
  // partition() itself checks its tile shape before anything is launched.
  EXPECT_USER_ERROR((void)ct::zeros<float>({64, 64}).partition({3, 16}), "tile extent 3 at axis 0 is not a power of two");
}

TEST(LaunchErrors, RaceCheckerReportsOverlappingUncheckedStores) {
  // Both blocks store to elements 0..3: a RaceError (not merely a UserError) naming the kernel.
  std::vector<std::int64_t> idx = {0, 1, 2, 3, 0, 1, 2, 3};
  auto ix = ct::from_host<std::int64_t>(std::span<const std::int64_t>(idx), {8}).share();
  const std::string msg = EXPECT_ERROR_OF_TYPE(
      (void)ct::launch(scatter_k, ct::unchecked_mut(ct::unchecked, ct::zeros<float>({8})), ix).grid({2}).race_check().sync(),
      ctile::RaceError, "race in kernel 'scatter_k'");
  EXPECT_NE(msg.find("was stored by tile block"), std::string::npos) << msg;
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
  EXPECT_USER_ERROR((void)std::move(x).unshare(), "1 other holder (copies or views of this shared handle) still exist");
  EXPECT_TRUE(x.valid());  // nothing lost: the handle is intact
}

TEST(LaunchErrors, MutatingASharedTensorWithAnInFlightReader) {
  // A launch that reads `x` is in flight (its stream is blocked). While its future holds a copy
  // of the handle, that copy is the reason unshare refuses; once the future is dropped (the work
  // still in flight), the pending read alone must make it refuse.
  auto s = ct::Stream::create();
  std::atomic<bool> release{false};
  auto gate = s.enqueue([&] {
    while (!release.load()) std::this_thread::yield();
  });
  auto x = ct::rand<float>({64}, 1).share();
  auto fut = ct::launch(add1, ct::zeros<float>({64}).partition({16}), x).async_on(s);
  auto mine = std::move(x);
  EXPECT_USER_ERROR((void)std::move(mine).unshare(), "1 other holder (copies or views of this shared handle) still exist");
  { auto dropped = std::move(fut); }  // the future and its copy of the handle are gone; the read is not
  EXPECT_EQ(mine.holders(), 1);
  EXPECT_USER_ERROR((void)std::move(mine).unshare(), "a launch still reads it (in flight); wait for that launch first");
  EXPECT_TRUE(mine.valid());  // the refused unshare lost nothing
  release = true;
  gate.wait();
  s.synchronize();
  auto t = std::move(mine).unshare();  // the read has finished: now it may
  EXPECT_EQ(t.numel(), 64);
}

TEST(LaunchErrors, UnshareForALibraryPayloadKeepsTheReadForLaterWriters) {
  // unshare(unchecked) (what a library operation uses on a handle of its future's payload) turns
  // the only handle of a tensor a held-up launch still reads into a mutable one; a launch that
  // then writes it, on another stream, runs only after that read.
  auto s = ct::Stream::create(), s2 = ct::Stream::create();
  std::atomic<bool> release{false};
  auto gate = s.enqueue([&] {
    while (!release.load()) std::this_thread::yield();
  });
  auto st = ct::launch(add1, ct::zeros<float>({64}).partition({16}), ct::full<float>({64}, 1.0f).share()).async_on(s).into_state();
  auto z_ready = [](const auto& state) { return state->done.done(); };
  auto z = std::move(std::get<0>(*st->payload));
  auto x = std::move(std::get<1>(*st->payload));
  EXPECT_USER_ERROR((void)std::move(x).unshare(), "a launch still reads it (in flight)");
  auto t = std::move(x).unshare(ct::unchecked);
  auto w = ct::launch(add1, std::move(t).partition({16}), ct::full<float>({64}, 5.0f).share()).async_on(s2);  // t = 6
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(w.ready());  // behind the held-up read
  EXPECT_FALSE(z_ready(st));
  release = true;
  gate.wait();
  auto [t2, five] = std::move(w).get();
  for (float v : std::move(z).unpartition().to_host()) EXPECT_EQ(v, 2.0f);  // read x = 1, before the write
  for (float v : std::move(t2).unpartition().to_host()) EXPECT_EQ(v, 6.0f);
}
