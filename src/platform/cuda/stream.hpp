// CUDA streams and the completion of their events. Private to the library; docs/cuda_runtime.md
// describes the design.
//
// A CUDA stream runs each task on the thread that enqueues it, with the stream set as this thread's
// current CUDA stream (the task is a backend's run: it only enqueues GPU work). Then it records a
// CUevent and hands {CUevent, ctile Event, the task with its captures, error} to the stream's
// Completer: a host thread that waits for the CUevents in order, then destroys the task (releasing
// what it kept alive: the memory of the tensors it used is freed only now, on a normal thread, never
// in a driver callback) and completes the ctile Event.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "ctile/runtime/event.hpp"
#include "ctile/runtime/stream.hpp"
#include "driver.hpp"

namespace ctile::detail {

// A CUevent recorded after some GPU work (see Event::native). The CUevent goes back to its device's
// pool when the last handle is dropped; nothing may wait for it after that.
struct NativeEvent {
  platform::cuda::CUevent ev = nullptr;
  int device = 0;
  std::uint64_t stream_id = 0;  // the ctile CUDA stream (or device memory stream) that recorded it
  // The error the work already had when it was enqueued (a task that threw, a failed dependency),
  // set before the event is shared: a dependent task is then skipped at once, as on a CPU stream.
  // Errors found later on the GPU reach dependents through their events instead.
  std::exception_ptr enqueue_error;
  NativeEvent() = default;
  NativeEvent(const NativeEvent&) = delete;
  NativeEvent& operator=(const NativeEvent&) = delete;
  ~NativeEvent();
};

}  // namespace ctile::detail

namespace ctile::platform::cuda {

// A unique id for a stream that records native events (never reused, unlike CUstream values).
std::uint64_t new_stream_id();

// A fresh NativeEvent of `device` (from the device's pool), not recorded yet. The caller makes the
// device's context current.
std::shared_ptr<detail::NativeEvent> acquire_event(int device, std::uint64_t stream_id);

// Waits for the native events of a stream in order and completes the matching ctile Events.
class Completer {
 public:
  struct Item {
    std::shared_ptr<detail::NativeEvent> native;  // null: nothing to wait for on the GPU
    Event done;                                   // completed by the completer
    StreamTask keep;                              // destroyed after the GPU work, before `done` completes
    std::vector<Event> after;                     // events the GPU work was ordered after (their errors propagate)
    std::exception_ptr err;                       // the error known at enqueue time
  };

  Completer(int device, CUcontext ctx);
  // Completes every item already pushed, then joins the thread (or, when the last reference goes
  // away on the completer's own thread, lets it finish alone).
  ~Completer();
  Completer(const Completer&) = delete;
  Completer& operator=(const Completer&) = delete;

  // Queues `item`; returns its ticket (tickets increase by one per push).
  std::uint64_t push(Item item);
  // The ticket of the last push (0 before the first).
  std::uint64_t last_ticket() const;
  // Blocks until every item up to `ticket` has been completed.
  void wait_for(std::uint64_t ticket) const;
  // True on the completer's own thread.
  bool on_thread() const;

 private:
  struct State;
  static void run(const std::shared_ptr<State>& st);
  std::shared_ptr<State> st_;
  std::thread thread_;
};

// Set while a task runs on a CUDA stream, on the thread that runs it.
struct CurrentStream {
  CUstream stream = nullptr;
  int device = 0;
  std::uint64_t id = 0;
  const void* owner = nullptr;  // the StreamImpl
};
// This thread's current CUDA stream, or null outside CUDA stream tasks.
const CurrentStream* current_stream();

// A new CUDA stream (non-blocking with respect to the legacy default stream) on cuda:device.
std::shared_ptr<StreamImpl> make_stream(int device);

}  // namespace ctile::platform::cuda
