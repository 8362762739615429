// NativeEvent: the device-side marker of the work an Event stands for (see Event::native). A
// platform with device-side ordering (CUDA) records one after each command, so that other streams
// wait for it on the device instead of on the host. Private to the library.
#pragma once

#include <cstdint>
#include <exception>

struct CUevent_st;  // cuda.h's opaque event type

namespace ctile::detail {

struct NativeEvent {
  ::CUevent_st* ev = nullptr;  // the recorded event
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
    if (ev && recycle) recycle(*this);
  }
};

}  // namespace ctile::detail
