// CUDA streams and the completion of their events. Private to the library; docs/cuda_runtime.md
// describes the design.
//
// A CUDA stream runs each command on the thread that submits it: a kernel, a copy or a graph run is
// queued on the CUstream, a host callback with cuLaunchHostFunc, an Inline task (Stream::enqueue)
// runs right there with the stream as this thread's current CUDA stream. Then it records a CUevent
// and hands {CUevent, ctile Event, what the command kept alive, error} to the stream's Completer: a
// host thread that waits for the CUevents in order, then releases what the command kept alive (the
// memory of the tensors it used is freed only now, on a normal thread, never in a driver callback)
// and completes the ctile Event.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "../command.hpp"
#include "../native_event.hpp"
#include "ctile/runtime/small_vec.hpp"
#include "ctile/runtime/event.hpp"
#include "ctile/runtime/stream.hpp"
#include "driver.hpp"

namespace ctile::platform::cuda {

// A unique id for a stream that records native events (never reused, unlike CUstream values).
std::uint64_t new_stream_id();

// A new ctile Event of work on the stream `stream_id` of `device`, with a CUevent from the device's
// pool in its native marker (`ne`), not recorded yet. The caller makes the device's context current.
class DeviceContext;
Event new_native_event(DeviceContext& dc, std::uint64_t stream_id, detail::NativeEvent*& ne);

// The CUevent of a native event, recorded now on its command's stream if it is lazy and has none
// yet (NativeEvent, "Lazy"): the record covers the command, which was queued before its event was
// handed out. Throws CudaError when the record fails.
CUevent materialize(const detail::NativeEvent& ne);
inline CUevent ev_of(const detail::NativeEvent& ne) {
  if (CUevent e = ne.ev.load(std::memory_order_acquire)) return e;
  return materialize(ne);
}

// What a host callback (Command::Kind::Host, or the host nodes of a graph) runs, and the first error
// it left. The callback runs on a driver thread; the completer takes the error once the stream's
// event after it has completed.
struct HostCall {
  StreamTask fn;  // empty for a graph's shared error slot
  std::mutex mu;
  std::exception_ptr error;
  void fail(std::exception_ptr e) {
    std::lock_guard lk(mu);
    if (!error) error = std::move(e);
  }
  std::exception_ptr take() {
    std::lock_guard lk(mu);
    return std::exchange(error, nullptr);
  }
};

// Waits for the native events of a stream in order and completes the matching ctile Events.
class Completer {
 public:
  struct Item {
    Event done;                                   // completed by the completer; its native marker (if any) is waited for
    detail::KeepAlive keep;                       // released after the GPU work, before `done` completes
    StreamTask task;                              // likewise (an Inline task and its captures)
    std::shared_ptr<HostCall> host;               // a host callback: its error becomes the event's
    detail::SmallVec<Event, 2> after;             // events the GPU work was ordered after (their errors propagate)
    std::exception_ptr err;                       // the error known at submit time
  };

  Completer(int device, CUcontext ctx);
  // Completes every item already pushed, then joins the thread (or, when the last reference goes
  // away on the completer's own thread, lets it finish alone).
  ~Completer();
  Completer(const Completer&) = delete;
  Completer& operator=(const Completer&) = delete;

  // Queues `item`; returns its ticket (tickets increase by one per push). One producer at a time:
  // callers serialise their pushes (a stream's mutex, the device's memory/copy mutex).
  std::uint64_t push(Item item);
  // The same without moving an item: fill the slot next_item() returns, then publish() it (one
  // producer, as for push).
  Item& next_item();
  std::uint64_t publish();
  // The ticket of the last push (0 before the first); the caller serialises it with its pushes.
  std::uint64_t last_ticket() const;
  // Blocks until every item up to `ticket` has been completed.
  void wait_for(std::uint64_t ticket) const;
  // True when every item pushed so far has been completed (the caller serialises it with its
  // pushes: then it stays true until the next one).
  bool drained() const;
  // True on the completer's own thread.
  bool on_thread() const;
  // On the completer's own thread, before its owner lets it finish alone: `fn` runs on the thread
  // once everything queued has been completed.
  void on_drained(std::function<void()> fn);

  struct State;

 private:
  std::uint64_t after_push();
  static void run(const std::shared_ptr<State>& st);
  std::shared_ptr<State> st_;
  std::thread thread_;
};

// Set while an Inline task runs on a CUDA stream, on the thread that runs it.
struct CurrentStream {
  CUstream stream = nullptr;
  int device = 0;
  std::uint64_t id = 0;
  const void* owner = nullptr;  // the StreamImpl
};
// This thread's current CUDA stream, or null outside Inline tasks of CUDA streams.
const CurrentStream* current_stream();

// A new CUDA stream (non-blocking with respect to the legacy default stream) on cuda:device.
std::shared_ptr<StreamImpl> make_stream(int device);
// A ctile stream over `s`, a CUstream of cuda:device's primary context that someone else created
// (null: the legacy default stream). ctile never destroys it; `keep_alive` is released with the
// last handle, after every command submitted to it has completed.
std::shared_ptr<StreamImpl> make_foreign_stream(int device, CUstream s, std::shared_ptr<const void> keep_alive);

}  // namespace ctile::platform::cuda
