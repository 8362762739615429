// Typed stream commands on CPU streams: host callbacks, event markers and waits, device copies
// (ctile::copy), and their order with launches.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include <ctile/ctile.hpp>

#include "test_helpers.hpp"

namespace ct = ctile;
using ct::test::expect_user_error;
using namespace std::chrono_literals;

namespace {

void add_one(ct::Mut<float, 1> z, ct::Ref<float, 1> x) { z.store(ct::load_like(x, z) + 1.0f); }

std::string message_of(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  }
  return "";
}

TEST(StreamCommands, HostCallbacksRunInStreamOrder) {
  auto s = ct::Stream::create(ct::cpu());
  std::vector<int> order;
  std::atomic<bool> release{false};
  auto slow = s.host([&] {
    while (!release.load()) std::this_thread::sleep_for(1ms);
    order.push_back(1);
  });
  auto next = s.host([&] { order.push_back(2); });
  EXPECT_FALSE(next.done());  // behind the slow one
  release = true;
  next.wait();
  EXPECT_TRUE(slow.done());
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  EXPECT_FALSE(s.capturing());
}

TEST(StreamCommands, HostCallbackErrorsGoIntoTheirEventsAndSkipDependents) {
  auto s = ct::Stream::create(ct::cpu());
  auto bad = s.host([] { throw std::runtime_error("host callback failed"); });
  bool ran = false;
  auto dep = s.host([&] { ran = true; }, {bad});
  dep.wait();
  EXPECT_FALSE(ran);
  EXPECT_EQ(message_of(dep.error()), "host callback failed");
  // The stream goes on.
  auto ok = s.host([&] { ran = true; });
  ok.wait();
  EXPECT_TRUE(ran);
  EXPECT_EQ(ok.error(), nullptr);
  expect_user_error([&] { (void)s.host(ct::StreamTask()); }, {"empty task"});
}

TEST(StreamCommands, RecordMarksAndWaits) {
  auto a = ct::Stream::create(ct::cpu());
  auto b = ct::Stream::create(ct::cpu());
  std::atomic<int> step{0};
  (void)a.host([&] {
    std::this_thread::sleep_for(20ms);
    step = 1;
  });
  auto mark = a.record();  // done once everything before it on `a` is
  EXPECT_FALSE(mark.done());
  // b waits for the mark, then for its own work in order.
  auto waited = b.record({mark});
  int seen = -1;
  auto after = b.host([&] { seen = step.load(); });
  after.wait();
  EXPECT_TRUE(waited.done());
  EXPECT_EQ(seen, 1);
  // A failed event a marker waits for fails the marker.
  auto failed = ct::Event::create();
  failed.complete(std::make_exception_ptr(std::runtime_error("upstream")));
  auto m2 = b.record({failed});
  m2.wait();
  EXPECT_EQ(message_of(m2.error()), "upstream");
}

TEST(StreamCommands, CopiesAreOrderedWithLaunches) {
  const std::int64_t n = 1000;
  auto x = ct::arange<float>(n, ct::cpu()).share();
  auto s = ct::Stream::create(ct::cpu());
  // y = x + 1 (a launch), then copy y into dst: the copy waits for the launch.
  auto f = ct::launch(add_one, ct::zeros<float>({n}, ct::cpu()).partition({128}), x).async_on(s);
  auto [y, x2] = std::move(f).get();
  auto ys = std::move(y).unpartition().share();
  auto [dst, src] = ct::copy(ct::zeros<float>({n}, ct::cpu()), ys).sync_on(s);
  const auto h = dst.to_host();
  for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(h[static_cast<std::size_t>(i)], static_cast<float>(i) + 1.0f) << i;
  // Into a partition, from a tensor moved in; on the default stream.
  auto [p, t] = ct::copy(ct::zeros<float>({n}, ct::cpu()).partition({64}), std::move(dst)).sync();
  EXPECT_EQ(std::move(p).unpartition().to_host(), h);
  EXPECT_EQ(t.to_host(), h);
}

TEST(StreamCommands, CopyMisuse) {
  auto s = ct::Stream::create(ct::cpu());
  auto x = ct::ones<float>({64}, ct::cpu()).share();
  expect_user_error([&] { (void)ct::copy(ct::zeros<float>({32}, ct::cpu()), x).sync_on(s); },
                    {"ctile::copy into a tensor of shape [32]", "the source has shape [64]", "shapes must be equal"});
  auto m = ct::zeros<float>({8, 16}, ct::cpu());
  auto col = std::move(m).slice(1, 0, 8);  // 8 x 8, strides {16, 1}: not contiguous
  expect_user_error([&] { (void)ct::copy(std::move(col), ct::ones<float>({8, 8}, ct::cpu()).share()).sync_on(s); },
                    {"both tensors must be contiguous"});
  ct::Tensor<float> gone = ct::zeros<float>({64}, ct::cpu());
  auto moved = std::move(gone);
  expect_user_error([&] { (void)ct::copy(std::move(gone), x).sync_on(s); }, {"destination was moved from"});
  // Aliasing through borrowed memory is caught before anything runs.
  std::vector<float> mem(96, 0.0f);
  auto a = ct::Tensor<float>::borrow(ct::unchecked, mem.data(), {64});
  auto b = ct::Tensor<float>::borrow(ct::unchecked, mem.data() + 32, {64}).share();
  expect_user_error([&] { (void)ct::copy(std::move(a), b).sync_on(s); }, {"the source and the destination overlap"});
}

}  // namespace
