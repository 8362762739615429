// Futures: get, errors, then-chains over lazy operations, join, dependency tracking via storages.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <latch>
#include <memory>
#include <thread>

#include "ctile/runtime/creation.hpp"
#include "ctile/runtime/future.hpp"
#include "ctile/runtime/shared.hpp"
#include "test_helpers.hpp"

namespace ct = ctile;
using ct::test::expect_user_error;
using namespace std::chrono_literals;

namespace {

// A tiny lazy operation shaped like a launch: adds `v` to every element of `t` on a stream,
// following the storage dependency rules, and hands `t` back through its future.
struct AddScalar {
  ct::Tensor<float> t;
  float v = 1.0f;
  std::latch* gate = nullptr;  // if set, the task waits for it first
  bool fail = false;

  ct::Future<ct::Tensor<float>> async_on(ct::Stream s) && {
    auto core = t.core(ct::unchecked);
    auto deps = core->storage->deps_for_write();
    ct::Event e = s.enqueue(
        [core, v = v, gate = gate, fail = fail] {
          if (gate) gate->wait();
          if (fail) throw ct::UserError("AddScalar failed on purpose");
          auto* p = reinterpret_cast<float*>(core->data());
          for (std::int64_t i = 0; i < core->numel(); ++i) p[i] += v;
        },
        std::move(deps));
    core->storage->record_write(e);
    auto st = std::make_shared<ct::FutureState<ct::Tensor<float>>>();
    st->done = e;
    st->payload.emplace(std::move(t));
    st->stream = s;
    return ct::Future<ct::Tensor<float>>(std::move(st));
  }
};

// Reads a shared tensor on a stream (records the read), returning the handle.
struct ReadShared {
  ct::Shared<float> s;
  std::latch* gate = nullptr;
  std::shared_ptr<float> sum = std::make_shared<float>(0.0f);

  ct::Future<ct::Shared<float>> async_on(ct::Stream st) && {
    auto core = s.core(ct::unchecked);
    auto deps = core->storage->deps_for_read();
    ct::Event e = st.enqueue(
        [core, gate = gate, sum = sum] {
          if (gate) gate->wait();
          const auto* p = reinterpret_cast<const float*>(core->data());
          for (std::int64_t i = 0; i < core->numel(); ++i) *sum += p[i];
        },
        std::move(deps));
    core->storage->record_read(e);
    auto fs = std::make_shared<ct::FutureState<ct::Shared<float>>>();
    fs->done = e;
    fs->payload.emplace(std::move(s));
    fs->stream = st;
    return ct::Future<ct::Shared<float>>(std::move(fs));
  }
};

static_assert(ct::LazyOperation<AddScalar>);
static_assert(ct::LazyOperation<ReadShared>);
static_assert(!ct::LazyOperation<int>);
static_assert(!ct::LazyOperation<ct::Tensor<float>>);

TEST(Future, GetReturnsThePayload) {
  auto f = AddScalar{ct::zeros<float>({4}), 2.0f}.async_on(ct::Stream::create());
  EXPECT_TRUE(f.valid());
  auto t = std::move(f).get();
  EXPECT_FALSE(f.valid());  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(t.to_host(), (std::vector<float>{2, 2, 2, 2}));
}

TEST(Future, GetRethrowsTheTaskError) {
  auto f = AddScalar{ct::zeros<float>({4}), 1.0f, nullptr, true}.async_on(ct::Stream::create());
  expect_user_error([&] { (void)std::move(f).get(); }, {"AddScalar failed on purpose"});
}

TEST(Future, ThenChainsWithoutWaiting) {
  auto s = ct::Stream::create();
  std::latch gate(1);
  auto f = AddScalar{ct::zeros<float>({3}), 1.0f, &gate}.async_on(s);
  // The first step is blocked, yet the chain is built at once on this thread.
  auto g = std::move(f)
               .then([](ct::Tensor<float> t) { return AddScalar{std::move(t), 10.0f}; })
               .then([](ct::Tensor<float> t) { return AddScalar{std::move(t), 100.0f}; });
  EXPECT_FALSE(g.ready());
  EXPECT_TRUE(g.stream() == s);
  gate.count_down();
  auto t = std::move(g).get();
  EXPECT_EQ(t.to_host(), (std::vector<float>{111, 111, 111}));
}

TEST(Future, ErrorsPropagateThroughThen) {
  auto s = ct::Stream::create();
  auto f = AddScalar{ct::zeros<float>({2}), 1.0f, nullptr, true}.async_on(s);
  auto g = std::move(f).then([](ct::Tensor<float> t) { return AddScalar{std::move(t), 5.0f}; });
  expect_user_error([&] { (void)std::move(g).get(); }, {"AddScalar failed on purpose"});
}

TEST(Future, JoinCombinesPayloads) {
  auto s1 = ct::Stream::create(), s2 = ct::Stream::create();
  std::latch gate(1);
  auto a = AddScalar{ct::zeros<float>({2}), 1.0f, &gate}.async_on(s1);
  auto b = AddScalar{ct::zeros<float>({3}), 2.0f}.async_on(s2);
  auto j = ct::join(std::move(a), std::move(b));
  EXPECT_FALSE(j.ready());
  gate.count_down();
  auto [x, y] = std::move(j).get();
  EXPECT_EQ(x.to_host(), (std::vector<float>{1, 1}));
  EXPECT_EQ(y.to_host(), (std::vector<float>{2, 2, 2}));
}

TEST(Future, JoinCarriesAnError) {
  auto s = ct::Stream::create();
  auto a = AddScalar{ct::zeros<float>({2}), 1.0f}.async_on(s);
  auto b = AddScalar{ct::zeros<float>({2}), 1.0f, nullptr, true}.async_on(s);
  expect_user_error([&] { (void)ct::join(std::move(a), std::move(b)).get(); }, {"AddScalar failed on purpose"});
}

TEST(Future, DroppedWithoutGetDoesNotBlock) {
  auto s = ct::Stream::create();
  std::latch gate(1);
  ct::Event e;
  {
    auto f = AddScalar{ct::zeros<float>({2}), 1.0f, &gate}.async_on(s);
    e = f.event();
  }  // dropped while the task waits: no blocking here
  EXPECT_FALSE(e.done());
  gate.count_down();
  e.wait();
  EXPECT_EQ(e.error(), nullptr);
}

TEST(Future, StorageEventsOrderWorkAcrossStreams) {
  // A write on s1 (blocked), then a write on s2 over the same tensor: s2 waits for s1's write.
  auto s1 = ct::Stream::create(), s2 = ct::Stream::create();
  std::latch gate(1);
  auto t = std::move(ct::zeros<float>({4})).reshape({2, 2});
  auto f1 = AddScalar{std::move(t), 1.0f, &gate}.async_on(s1);
  auto t1 = std::move(*std::move(f1).into_state()->payload);  // take the handle without waiting
  auto f2 = AddScalar{std::move(t1), 2.0f}.async_on(s2);
  std::this_thread::sleep_for(5ms);
  EXPECT_FALSE(f2.ready());
  gate.count_down();
  EXPECT_EQ(std::move(f2).get().to_host(), (std::vector<float>{3, 3, 3, 3}));
}

TEST(Future, ReadsAreTrackedUntilTheyComplete) {
  auto s = ct::Stream::create();
  std::latch gate(1);
  auto sh = ct::arange<float>(4).share();
  auto r = ReadShared{sh, &gate};
  auto sum = r.sum;
  auto f = std::move(r).async_on(s);
  EXPECT_TRUE(sh.core(ct::unchecked)->storage->has_pending_reads());
  gate.count_down();
  auto back = std::move(f).get();
  EXPECT_FALSE(sh.core(ct::unchecked)->storage->has_pending_reads());
  EXPECT_EQ(*sum, 6.0f);
  back = ct::Shared<float>();
  auto t = std::move(sh).unshare();  // the last holder, no reads in flight
  // A write after the read waits for it: deps_for_write has no pending read now.
  EXPECT_TRUE(t.core(ct::unchecked)->storage->deps_for_write().empty());
}

}  // namespace
