// StreamTimer on CPU streams: the marks are taken when the stream's worker reaches them, so the
// elapsed time covers the work between them and not the host's enqueue calls.
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "ctile/ctile.hpp"
#include "ctile/runtime/timer.hpp"

namespace {
namespace ct = ctile;
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
  EXPECT_THROW((void)t.elapsed_ms(), ct::UserError);
  EXPECT_THROW(t.stop(), ct::UserError);
  t.start();
  EXPECT_THROW((void)t.elapsed_ms(), ct::UserError);  // no stop mark yet
  EXPECT_THROW(ct::StreamTimer{ct::Stream{}}, ct::UserError);
}

TEST(StreamTimer, AFailedStreamTaskBeforeTheStopMarkIsReported) {
  ct::Stream s = cpu_stream();
  ct::StreamTimer t(s);
  t.start();
  ct::Event bad = s.enqueue([] { throw ct::UserError("boom"); });
  t.stop();
  bad.wait();
  // The stop mark still runs (stream tasks do not depend on each other's errors unless told to).
  EXPECT_NO_THROW((void)t.elapsed_ms());
}

}  // namespace
