// Event: a copyable, thread-safe handle to a one-shot completion state. A stream completes the
// event of each task it runs; tensors' storages remember the events of the work that reads and
// writes them, and later work waits for those (see docs/host_api.md).
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <vector>

namespace ctile {

namespace detail {
// The GPU-side marker of the work an event stands for (a CUevent recorded on a CUDA stream); defined
// by the platforms (src/platform/native_event.hpp). Other streams of the GPU wait for it on the
// device instead of on the host.
struct NativeEvent;
// The part of an event's state that handles read inline (on every launch's path); the rest is in
// src/runtime/event.cpp. `done` is set (release) once the error is written; nothing here changes
// after creation otherwise.
struct EventHead {
  std::atomic<bool> done{false};
  bool captured = false;          // the event of a graph node (Event::create_captured)
  std::uint64_t order = 0;        // the stream order it completes in (0: none): see Event::order()
  NativeEvent* native = nullptr;  // the device-side marker, if any
};
}

class Event {
 public:
  // A default-constructed Event is already done, without error (same as Event::ready()).
  Event() = default;

  // A new event that is not done yet; someone must complete() it.
  [[nodiscard]] static Event create();
  // A new event that is not done yet, of work that completes in the order of the stream `order`
  // (streams make these: a storage keeps only the latest pending read of each stream).
  [[nodiscard]] static Event create_ordered(std::uint64_t order);
  // The same with room for a device-side marker in the event's own state: the platform fills
  // `*native` before it shares the event (one allocation for both).
  [[nodiscard]] static Event create_native(std::uint64_t order, detail::NativeEvent*& native);
  // An event that is already done, without error.
  [[nodiscard]] static Event ready();
  // Done once every event in `events` is done; carries the error of the first failed event in
  // `events` order (nullptr if none failed). An empty list gives a done event.
  [[nodiscard]] static Event when_all(std::vector<Event> events);
  // The same for two events, without a vector.
  [[nodiscard]] static Event when_all(Event a, Event b);

  // Marks the event done, carrying `err` (nullptr: success), wakes waiters and runs the
  // on_complete callbacks on this thread. Completing an event twice throws UserError.
  void complete(std::exception_ptr err = nullptr);
  // Blocks until done. Does not throw the carried error (see error()). Returns at once for the event
  // of work recorded by a graph capture (it is not done until the capture ends; see captured()).
  void wait() const;
  [[nodiscard]] bool done() const { return !state_ || state_->done.load(std::memory_order_acquire); }
  // The carried error; nullptr while not done or after success.
  [[nodiscard]] std::exception_ptr error() const;
  // Runs `cb(error())` once the event is done: right now on this thread if it already is,
  // otherwise on the thread that completes it. Callbacks must not throw and must be short.
  void on_complete(std::function<void(std::exception_ptr)> cb) const;

  // The GPU-side marker of create_native(), or null (host-side events, done handles).
  [[nodiscard]] std::shared_ptr<detail::NativeEvent> native() const {
    return state_ && state_->native ? std::shared_ptr<detail::NativeEvent>(state_, state_->native) : nullptr;
  }
  // The same without a reference count (valid while this handle is).
  [[nodiscard]] detail::NativeEvent* native_ptr() const { return state_ ? state_->native : nullptr; }
  // The stream order given at creation (0: none).
  [[nodiscard]] std::uint64_t order() const { return state_ ? state_->order : 0; }

  // The event of work recorded by a graph capture (ctile::capture) rather than run: it stands for a
  // graph node, and completes (with an error saying so) only when the capture ends.
  [[nodiscard]] static Event create_captured();
  [[nodiscard]] bool captured() const { return state_ && state_->captured; }

  // Identity of the completion state (null for done handles), for maps keyed by event.
  [[nodiscard]] const void* id() const { return state_.get(); }

  // True if both handles refer to the same completion state.
  friend bool operator==(const Event& a, const Event& b) { return a.state_ == b.state_; }

 private:
  explicit Event(std::shared_ptr<detail::EventHead> s) : state_(std::move(s)) {}
  static Event join_of(Event* events, std::size_t n);
  std::shared_ptr<detail::EventHead> state_;  // null: done, no error (the object is a detail::EventState)
};

}  // namespace ctile
