// StreamTimer (include/ctile/runtime/timer.hpp): marks as stream tasks; CUDA events with timing on
// CUDA streams, the host clock on CPU streams.
#include "ctile/runtime/timer.hpp"

#include <chrono>

#include "ctile/core/error.hpp"
#include "device.hpp"
#include "stream.hpp"
#include "driver.hpp"

namespace ctile {
namespace {

namespace cu = platform::cuda;

// One mark: a timing CUevent (GPU) or a host time (CPU), filled in when the stream reaches it.
struct Mark {
  cu::CUevent ev = nullptr;
  int device = -1;
  std::chrono::steady_clock::time_point host;
  Event done;
  bool set = false;

  void release() noexcept {
    if (!ev) return;
    try {
      cu::ScopedContext scope(cu::DeviceContext::get(device).ctx());
      if (const cu::CUresult r = cu::drv().cuEventDestroy_v2(ev); r != 0) cu::report_error(r, "cuEventDestroy_v2", "destroying a timer event");
    } catch (...) {
    }
    ev = nullptr;
  }
  // Back to "not placed", after a placed mark's task has run (it writes the mark).
  void reset() {
    if (set) done.wait();
    release();
    set = false;
  }
};

}  // namespace

// Not thread-safe, like the StreamTimer that owns it (the mark tasks touch only their own mark).
struct StreamTimer::State {
  Mark marks[2];
  // The mark tasks hold the state, so it goes away only after they have run (possibly on a
  // stream's thread: nothing here may wait for the stream).
  ~State() {
    for (Mark& m : marks) m.release();
  }
};

namespace {

void place(Stream s, const std::shared_ptr<StreamTimer::State>& st, int which) {
  st->marks[which].reset();
  st->marks[which].set = true;
  st->marks[which].done = s.enqueue([st, which] {
    Mark& m = st->marks[which];
    if (const cu::CurrentStream* cur = cu::current_stream()) {
      cu::CUevent ev = nullptr;
      CTILE_CU(cuEventCreate, (&ev, 0u), "creating a timer event on cuda:", cur->device);
      m.ev = ev;
      m.device = cur->device;
      CTILE_CU(cuEventRecord, (ev, cur->stream), "recording a timer event on cuda:", cur->device);
    } else {
      m.host = std::chrono::steady_clock::now();
    }
  });
}

}  // namespace

StreamTimer::StreamTimer(Stream s) : stream_(std::move(s)), st_(std::make_shared<State>()) {
  if (!stream_.valid()) throw UserError("StreamTimer: the stream handle is empty");
}
StreamTimer::~StreamTimer() = default;
StreamTimer::StreamTimer(StreamTimer&&) noexcept = default;
StreamTimer& StreamTimer::operator=(StreamTimer&&) noexcept = default;

void StreamTimer::start() {
  if (!st_) throw UserError("StreamTimer: used after a move");
  st_->marks[1].reset();  // a restart forgets the old stop mark
  place(stream_, st_, 0);
}

void StreamTimer::stop() {
  if (!st_) throw UserError("StreamTimer: used after a move");
  if (!st_->marks[0].set) throw UserError("StreamTimer::stop() without start()");
  place(stream_, st_, 1);
}

double StreamTimer::elapsed_ms() const {
  if (!st_) throw UserError("StreamTimer: used after a move");
  const Mark& a = st_->marks[0];
  const Mark& b = st_->marks[1];
  if (!a.set || !b.set) throw UserError("StreamTimer::elapsed_ms() needs start() and then stop()");
  a.done.wait();
  b.done.wait();
  for (const Mark* m : {&a, &b})
    if (auto e = m->done.error()) std::rethrow_exception(e);
  if (a.ev && b.ev) {
    cu::ScopedContext scope(cu::DeviceContext::get(b.device).ctx());
    CTILE_CU(cuEventSynchronize, (b.ev), "waiting for a timer event on cuda:", b.device);
    if (!cu::drv().cuEventElapsedTime)
      throw UserError("StreamTimer: this CUDA driver has no cuEventElapsedTime");
    float ms = 0;
    CTILE_CU(cuEventElapsedTime, (&ms, a.ev, b.ev), "reading a timer on cuda:", b.device);
    return ms;
  }
  if (!a.ev && !b.ev) return std::chrono::duration<double, std::milli>(b.host - a.host).count();
  throw UserError("StreamTimer: the start and stop marks were taken on different kinds of device");
}

}  // namespace ctile
