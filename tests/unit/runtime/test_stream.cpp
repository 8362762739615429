// Events and streams: order, asynchrony, cross-stream waits, errors, capture release.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <latch>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "ctile/runtime/stream.hpp"

namespace ct = ctile;
using namespace std::chrono_literals;

namespace {

std::string error_message(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  }
  return "";
}

TEST(Event, CreateCompleteWait) {
  auto e = ct::Event::create();
  EXPECT_FALSE(e.done());
  auto copy = e;  // a shared handle
  std::thread t([copy]() mutable { copy.complete(); });
  e.wait();
  t.join();
  EXPECT_TRUE(e.done());
  EXPECT_EQ(e.error(), nullptr);
  EXPECT_TRUE(ct::Event::ready().done());
  EXPECT_TRUE(ct::Event().done());
}

TEST(Event, WhenAllCarriesTheFirstError) {
  auto a = ct::Event::create(), b = ct::Event::create(), c = ct::Event::create();
  auto all = ct::Event::when_all({a, b, c});
  EXPECT_FALSE(all.done());
  c.complete(std::make_exception_ptr(std::runtime_error("c failed")));
  a.complete();
  EXPECT_FALSE(all.done());
  b.complete(std::make_exception_ptr(std::runtime_error("b failed")));
  EXPECT_TRUE(all.done());
  EXPECT_EQ(error_message(all.error()), "b failed");  // first in list order
  EXPECT_TRUE(ct::Event::when_all({}).done());
  EXPECT_TRUE(ct::Event::when_all({ct::Event::ready(), a}).done());
}

TEST(Event, OnCompleteRunsOnce) {
  auto e = ct::Event::create();
  int calls = 0;
  e.on_complete([&](std::exception_ptr) { ++calls; });
  EXPECT_EQ(calls, 0);
  e.complete();
  EXPECT_EQ(calls, 1);
  e.on_complete([&](std::exception_ptr) { ++calls; });  // already done: runs now
  EXPECT_EQ(calls, 2);
}

TEST(Stream, RunsTasksInOrder) {
  auto s = ct::Stream::create();
  EXPECT_EQ(s.device(), ct::cpu());
  std::vector<int> out;
  for (int i = 0; i < 1000; ++i) (void)s.enqueue([&out, i] { out.push_back(i); });
  s.synchronize();
  ASSERT_EQ(out.size(), 1000u);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(out[static_cast<std::size_t>(i)], i);
}

TEST(Stream, RunsAsynchronously) {
  auto s = ct::Stream::create();
  std::latch gate(1);
  std::atomic<bool> ran{false};
  auto e = s.enqueue([&] {
    gate.wait();
    ran = true;
  });
  // The caller is not blocked by the task, which is waiting for us.
  std::this_thread::sleep_for(10ms);
  EXPECT_FALSE(e.done());
  EXPECT_FALSE(ran);
  gate.count_down();
  e.wait();
  EXPECT_TRUE(ran);
}

TEST(Stream, CrossStreamWaitFor) {
  auto s1 = ct::Stream::create(), s2 = ct::Stream::create();
  std::latch gate(1);
  int x = 0;
  auto e1 = s1.enqueue([&] {
    gate.wait();
    std::this_thread::sleep_for(5ms);
    x = 1;
  });
  int seen = -1;
  auto e2 = s2.enqueue([&] { seen = x; }, {e1});
  std::this_thread::sleep_for(5ms);
  EXPECT_FALSE(e2.done());
  gate.count_down();
  e2.wait();
  EXPECT_EQ(seen, 1);
}

TEST(Stream, ErrorsGoIntoEventsAndSkipDependents) {
  auto s1 = ct::Stream::create(), s2 = ct::Stream::create();
  auto bad = s1.enqueue([] { throw std::runtime_error("task failed"); });
  bool ran = false;
  auto dep = s2.enqueue([&] { ran = true; }, {ct::Event::ready(), bad});
  dep.wait();
  EXPECT_FALSE(ran);
  EXPECT_EQ(error_message(bad.error()), "task failed");
  EXPECT_EQ(error_message(dep.error()), "task failed");
  // The stream keeps going after a failed task.
  auto ok = s1.enqueue([] {});
  ok.wait();
  EXPECT_EQ(ok.error(), nullptr);
}

TEST(Stream, TaskCapturesAreReleasedBeforeTheEventCompletes) {
  auto s = ct::Stream::create();
  for (int i = 0; i < 200; ++i) {
    auto p = std::make_shared<int>(i);
    auto e = s.enqueue([p] { (void)*p; });
    e.wait();
    EXPECT_EQ(p.use_count(), 1) << "iteration " << i;
  }
  // also when the task throws or is skipped
  auto p = std::make_shared<int>(0);
  auto e = s.enqueue([p] { throw std::runtime_error("x"); });
  e.wait();
  EXPECT_EQ(p.use_count(), 1);
  auto e2 = s.enqueue([p] {}, {e});
  e2.wait();
  EXPECT_EQ(p.use_count(), 1);
}

TEST(Stream, MoveOnlyTasks) {
  auto s = ct::Stream::create();
  auto box = std::make_unique<int>(41);
  int out = 0;
  s.enqueue([b = std::move(box), &out] { out = *b + 1; }).wait();
  EXPECT_EQ(out, 42);
}

TEST(Stream, DroppingTheLastHandleDrainsTheQueue) {
  std::atomic<int> count{0};
  {
    auto s = ct::Stream::create();
    for (int i = 0; i < 50; ++i)
      (void)s.enqueue([&] {
        std::this_thread::sleep_for(100us);
        ++count;
      });
  }
  EXPECT_EQ(count.load(), 50);
}

TEST(Stream, LastHandleDroppedByItsOwnTask) {
  auto s = std::make_unique<ct::Stream>(ct::Stream::create());
  std::latch gate(1);
  auto e = s->enqueue([copy = *s, &gate] { gate.wait(); });
  s.reset();         // the task's copy is now the last handle
  gate.count_down();
  e.wait();          // the worker destroyed its own stream and finished alone
  SUCCEED();
}

TEST(Stream, DefaultStreamIsOnePerDevice) {
  auto a = ct::default_stream(), b = ct::default_stream(ct::cpu());
  EXPECT_TRUE(a == b);
  EXPECT_FALSE(a == ct::Stream::create());
  int x = 0;
  a.enqueue([&] { x = 3; }).wait();
  EXPECT_EQ(x, 3);
}

}  // namespace
