// StreamTimer: how long work takes on a stream, as the device sees it. Marks are enqueued on the
// stream like any other work; on a GPU each mark records a CUDA event with timing enabled, on a CPU
// stream it reads the host clock when the stream's worker reaches it. The host's own enqueue cost
// is not in the number (use a host clock around the calls for that).
//
//   ctile::StreamTimer t(stream);
//   t.start();
//   ... launches .async_on(stream) ...
//   t.stop();
//   double ms = t.elapsed_ms();   // waits for the stop mark
#pragma once

#include <memory>

#include "ctile/runtime/stream.hpp"

namespace ctile {

class StreamTimer {
 public:
  explicit StreamTimer(Stream s);
  ~StreamTimer();
  StreamTimer(StreamTimer&&) noexcept;
  StreamTimer& operator=(StreamTimer&&) noexcept;
  StreamTimer(const StreamTimer&) = delete;
  StreamTimer& operator=(const StreamTimer&) = delete;

  // A mark after everything enqueued on the stream so far (start() again restarts the timer).
  void start();
  void stop();
  // Milliseconds between the start and stop marks; waits for the stop mark. UserError when start()
  // or stop() was not called (in that order) or when a mark failed.
  [[nodiscard]] double elapsed_ms() const;

  struct State;

 private:
  Stream stream_;
  std::shared_ptr<State> st_;
};

}  // namespace ctile
