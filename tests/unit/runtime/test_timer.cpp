// StreamTimer on CPU streams: the marks are taken when the stream's worker reaches them, so the
// elapsed time covers the work between them and not the host's enqueue calls.
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "ctile/ctile.hpp"
#include "ctile/runtime/timer.hpp"
#include "test_helpers.hpp"

namespace {
namespace ct = ctile;
using ct::test::expect_user_error;
using namespace std::chrono_literals;

ct::Stream cpu_stream() { return ct::Stream::create(ct::cpu()); }

TEST(StreamTimer, MeasuresTheWorkBetweenItsMarks) {
  ct::Stream s = cpu_stream();
  ct::StreamTimer t(s);
  t.start();
  (void)s.enqueue([] { std::this_thread::sleep_for(30ms); });
  t.stop();
  const double ms = t.elapsed_ms();
  EXPECT_GE(ms, 29.0);
  EXPECT_LT(ms, 2000.0);
}

TEST(StreamTimer, WorkBeforeTheStartMarkIsNotCounted) {
  ct::Stream s = cpu_stream();
  (void)s.enqueue([] { std::this_thread::sleep_for(60ms); });
  ct::StreamTimer t(s);
  t.start();  // reached only after the sleep above
  (void)s.enqueue([] { std::this_thread::sleep_for(5ms); });
  t.stop();
  const double ms = t.elapsed_ms();
  EXPECT_GE(ms, 4.5);
  EXPECT_LT(ms, 55.0);
}

TEST(StreamTimer, RestartsAndTimesALaunch) {
  ct::Stream s = cpu_stream();
  ct::StreamTimer t(s);
  for (int round = 0; round < 2; ++round) {
    t.start();
    (void)s.enqueue([] { std::this_thread::sleep_for(10ms); });
    t.stop();
    EXPECT_GE(t.elapsed_ms(), 9.5) << round;
  }
}

TEST(StreamTimer, MisuseIsAUserError) {
  ct::Stream s = cpu_stream();
  ct::StreamTimer t(s);
  expect_user_error([&] { (void)t.elapsed_ms(); }, {"StreamTimer::elapsed_ms() needs start() and then stop()"});
  expect_user_error([&] { t.stop(); }, {"StreamTimer::stop() without start()"});
  t.start();
  // No stop mark yet.
  expect_user_error([&] { (void)t.elapsed_ms(); }, {"StreamTimer::elapsed_ms() needs start() and then stop()"});
  expect_user_error([] { ct::StreamTimer{ct::Stream{}}; }, {"StreamTimer: the stream handle is empty"});
  ct::StreamTimer moved = std::move(t);
  // NOLINTNEXTLINE(bugprone-use-after-move): the misuse under test
  expect_user_error([&] { t.start(); }, {"StreamTimer: used after a move"});
  (void)moved;
}

TEST(StreamTimer, AFailedStreamTaskBeforeTheStopMarkDoesNotFailTheTimer) {
  // Stream tasks do not depend on each other's errors unless told to: the stop mark still runs,
  // the timer measures, and the failure stays with the failed task's own event.
  ct::Stream s = cpu_stream();
  ct::StreamTimer t(s);
  t.start();
  ct::Event bad = s.enqueue([] { throw ct::UserError("boom"); });
  t.stop();
  bad.wait();
  const double ms = t.elapsed_ms();
  EXPECT_GE(ms, 0.0);
  EXPECT_LT(ms, 2000.0);
  ASSERT_TRUE(bad.error() != nullptr);
  expect_user_error([&] { std::rethrow_exception(bad.error()); }, {"boom"});
}

}  // namespace
