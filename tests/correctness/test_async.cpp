// Asynchronous execution with ownership: futures own the arguments while the work is in flight,
// chains continue on the same stream without waiting, and dependencies between streams are
// ordered by the storages' events.
#include <atomic>
#include <thread>

#include <gtest/gtest.h>

#include <ctile/ctile.hpp>

#include "test_kernels.hpp"

namespace ct = ctile;
using namespace test_kernels;  // NOLINT(google-build-using-namespace): the shared test kernels

namespace {

// Blocks a stream until released, so tests can observe work that is still in flight.
struct Gate {
  std::atomic<bool> open{false};
  ct::Event block(ct::Stream& s) {
    return s.enqueue([this] {
      while (!open.load()) std::this_thread::yield();
    });
  }
};

}  // namespace

TEST(Async, LaunchReturnsBeforeTheWorkRuns) {
  auto s = ct::Stream::create();
  Gate gate;
  auto g = gate.block(s);
  auto fut = ct::launch(add_scalar, ct::zeros<float>({256}).partition({64}), 1.5f).async_on(s);
  EXPECT_FALSE(fut.ready());  // the stream is blocked: nothing ran, yet the caller got control back
  gate.open = true;
  auto [z, v] = std::move(fut).get();
  for (float x : std::move(z).unpartition().to_host()) EXPECT_EQ(x, 1.5f);
  g.wait();
}

TEST(Async, ThenChainsOnTheSameStreamWithoutWaiting) {
  auto s = ct::Stream::create();
  Gate gate;
  auto g = gate.block(s);
  auto fut = ct::launch(add_scalar, ct::zeros<float>({256}).partition({64}), 1.0f)
                 .async_on(s)
                 .then([](auto&& r) { return ct::launch(add_scalar, std::move(std::get<0>(r)), 2.0f); })
                 .then([](auto&& r) { return ct::launch(add_scalar, std::move(std::get<0>(r)), 4.0f); });
  EXPECT_FALSE(fut.ready());
  gate.open = true;
  auto [z, v] = std::move(fut).get();
  for (float x : std::move(z).unpartition().to_host()) EXPECT_EQ(x, 7.0f);
  g.wait();
}

TEST(Async, JoinTwoStreams) {
  auto s1 = ct::Stream::create();
  auto s2 = ct::Stream::create();
  auto x = ct::arange<float>(300).share();
  auto f1 = ct::launch(times2, ct::zeros<float>({300}).partition({128}), x).async_on(s1);
  auto f2 = ct::launch(add_scalar, ct::ones<float>({300}).partition({128}), 3.0f).async_on(s2);
  auto [r1, r2] = ct::join(std::move(f1), std::move(f2)).get();
  const auto a = std::move(std::get<0>(r1)).unpartition().to_host();
  const auto b = std::move(std::get<0>(r2)).unpartition().to_host();
  for (int i = 0; i < 300; ++i) {
    EXPECT_EQ(a[std::size_t(i)], 2.0f * float(i));
    EXPECT_EQ(b[std::size_t(i)], 4.0f);
  }
}

TEST(Async, SharedInputStaysAliveWhileInFlight) {
  auto s = ct::Stream::create();
  Gate gate;
  auto g = gate.block(s);
  std::optional<ct::Future<std::tuple<ct::Partition<float>, ct::Shared<float>>>> fut;
  {
    auto x = ct::full<float>({512}, 3.0f).share();
    fut.emplace(ct::launch(times2, ct::zeros<float>({512}).partition({256}), x).async_on(s));
  }  // the caller's handle is gone; the launch keeps the tensor alive
  gate.open = true;
  auto [z, x] = std::move(*fut).get();
  for (float v : std::move(z).unpartition().to_host()) EXPECT_EQ(v, 6.0f);
  EXPECT_EQ(x.holders(), 1);  // the in-flight reference was released before completion
  g.wait();
}

TEST(Async, ManyLaunchesOnTheDefaultStreamStayInOrder) {
  auto p = ct::zeros<float>({1000}).partition({128});
  for (int i = 0; i < 20; ++i) {
    auto [q, v] = ct::launch(add_scalar, std::move(p), 1.0f).sync();
    p = std::move(q);
  }
  for (float v : std::move(p).unpartition().to_host()) EXPECT_EQ(v, 20.0f);
}

TEST(Async, ErrorsPropagateThroughTheFuture) {
  auto idx = ct::full<std::int64_t>({8}, 0).share();
  auto k = +[](ct::UncheckedMut<float, 1> d, ct::Ref<std::int64_t, 1> i) {
    d.scatter(ct::unchecked, i.tiles({4}).load({ct::block_id(0)}), ct::Tile<float>::full({4}, 1.0f));
  };
  auto fut = ct::launch(k, ct::unchecked_mut(ct::unchecked, ct::zeros<float>({8})), idx).grid({2}).race_check().async_on(ct::default_stream());
  EXPECT_THROW((void)std::move(fut).get(), ct::RaceError);
}

TEST(Async, OwnershipMovesAcrossStreamsInOrder) {
  // Stream A is blocked; its launch writes p. The follow-up on stream B takes p at once but must
  // still run after A's write: the storage's events order it, not the user.
  auto a = ct::Stream::create();
  auto b = ct::Stream::create();
  Gate gate;
  auto g = gate.block(a);
  auto fut = ct::launch(fill, ct::zeros<float>({512}).partition({128}), 10.0f)
                 .async_on(a)
                 .then_on(b, [](auto&& r) { return ct::launch(add_scalar, std::move(std::get<0>(r)), 1.0f); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(fut.ready());  // B waits for A
  gate.open = true;
  auto [z, v] = std::move(fut).get();
  for (float x : std::move(z).unpartition().to_host()) EXPECT_EQ(x, 11.0f);
  g.wait();
}

TEST(Async, ReadersOnOneStreamWaitForTheWriterOnAnother) {
  auto a = ct::Stream::create();
  auto b = ct::Stream::create();
  Gate gate;
  auto g = gate.block(a);
  // Produce x on A (blocked), share it without waiting, read it on B.
  auto fut = ct::launch(add_scalar, ct::zeros<float>({256}).partition({64}), 5.0f)
                 .async_on(a)
                 .then_on(b, [](auto&& r) {
                   auto x = std::move(std::get<0>(r)).unpartition().share();
                   return ct::launch(times2, ct::zeros<float>({256}).partition({64}), std::move(x));
                 });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // B would have run by now, were it not ordered
  gate.open = true;
  auto [z, x] = std::move(fut).get();
  for (float v : std::move(z).unpartition().to_host()) EXPECT_EQ(v, 10.0f);
  g.wait();
}
