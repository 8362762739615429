// NativeEvent: the device-side marker of the work an Event stands for (see Event::native). A
// platform with device-side ordering (CUDA) has one for each command, so that other streams wait
// for it on the device instead of on the host. Private to the library.
//
// Lazy (CUDA streams' commands, docs/cuda_runtime.md "Lazy completion events"): `ev` stays null
// until something needs a recorded event: the stream's completion thread (one record covers a
// batch of commands, since a stream runs its work in order), another stream's dependency or a
// free of memory the work used (they record one on the command's stream then: it covers the
// command). A command the completion thread completes under another's record shares that record
// through `cover`. `ev` is set once, under a lock; readers take it with an acquire load.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>

struct CUevent_st;  // cuda.h's opaque event type

namespace ctile::detail {

struct NativeEvent {
  // The recorded event: its own (recycled with it) or `cover`'s; null until recorded (lazy).
  mutable std::atomic<::CUevent_st*> ev{nullptr};
  // The event whose record `ev` is (kept alive so that the record is not reused), or null.
  mutable std::shared_ptr<const NativeEvent> cover;
  int device = 0;
  std::uint64_t stream_id = 0;  // the stream (StreamImpl::order, or a device's memory/copy stream) that recorded it
  // The error the work already had when it was submitted (a task that threw, a failed dependency),
  // set before the event is shared: a dependent command is then skipped at once, as on a CPU stream.
  // Errors found later on the device reach dependents through their events instead.
  std::exception_ptr enqueue_error;
  // The event of a stream-ordered allocation: a stream that uses the memory first waits for it on the
  // device even once it is done (a host wait does not order the allocation for the driver).
  bool order_always = false;
  // Gives `ev` back to its platform's pool when the last handle goes away.
  void (*recycle)(NativeEvent&) noexcept = nullptr;

  NativeEvent() = default;
  NativeEvent(const NativeEvent&) = delete;
  NativeEvent& operator=(const NativeEvent&) = delete;
  ~NativeEvent() {
    if (!cover && recycle && ev.load(std::memory_order_relaxed)) recycle(*this);
  }
};

}  // namespace ctile::detail
