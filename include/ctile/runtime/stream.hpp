// Stream: a copyable handle to an in-order executor. Tasks run one after another, asynchronously
// to the caller; each task gets an Event that completes once the task has finished (and after
// everything it captured has been destroyed, so that reference counts are exact at that point).
// The CPU stream runs tasks on its own worker thread. A CUDA stream runs each task on the thread
// that enqueues it, with the stream as that thread's current CUDA stream: its tasks may only enqueue
// GPU work (launches, copies), and enqueue() returns once that work is queued on the GPU (after any
// host-side events in wait_for are done); the event completes when the GPU work has finished
// (docs/cuda_runtime.md).
#pragma once

#include <concepts>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "ctile/runtime/device.hpp"
#include "ctile/runtime/event.hpp"

namespace ctile {

// A move-only `void()` callable (std::function needs copyable captures; a task may own tensors).
// Implicitly constructible from any such callable, std::function included.
class StreamTask {
 public:
  StreamTask() = default;
  template <class F>
    requires(!std::same_as<std::remove_cvref_t<F>, StreamTask> && std::invocable<std::decay_t<F>&>)
  StreamTask(F&& f)  // NOLINT(google-explicit-constructor): a lambda is a task
      : impl_(std::make_unique<Model<std::decay_t<F>>>(std::forward<F>(f))) {}
  StreamTask(StreamTask&&) noexcept = default;
  StreamTask& operator=(StreamTask&&) noexcept = default;

  void operator()() { impl_->call(); }
  [[nodiscard]] explicit operator bool() const { return impl_ != nullptr; }
  // Destroys the callable and everything it captured.
  void reset() { impl_.reset(); }

 private:
  struct Concept {
    virtual ~Concept() = default;
    virtual void call() = 0;
  };
  template <class F>
  struct Model final : Concept {
    template <class G>
    explicit Model(G&& g) : f(std::forward<G>(g)) {}
    void call() override { f(); }
    F f;
  };
  std::unique_ptr<Concept> impl_;
};

// What a stream implementation provides. Implementations are thread-safe.
class StreamImpl {
 public:
  virtual ~StreamImpl() = default;
  [[nodiscard]] virtual Device device() const = 0;
  // See Stream::enqueue.
  [[nodiscard]] virtual Event enqueue(StreamTask task, std::vector<Event> wait_for) = 0;
  // See Stream::synchronize.
  virtual void synchronize() = 0;
};

class Stream {
 public:
  // An empty handle; every member but valid() throws UserError on it.
  Stream() = default;
  explicit Stream(std::shared_ptr<StreamImpl> impl) : impl_(std::move(impl)) {}

  // A new stream on `d`. A CPU stream has its own worker thread, joined when the last handle goes
  // away after it has run every task already enqueued; a CUDA stream is a non-blocking CUstream
  // whose events complete on a completion thread, drained the same way.
  [[nodiscard]] static Stream create(Device d = default_device());

  [[nodiscard]] Device device() const;
  // Runs `task` after every task enqueued before it on this stream and after every event in
  // `wait_for`. If one of those carries an error, `task` is skipped and the returned event carries
  // that error (the first in `wait_for` order); an exception thrown by `task` goes into the
  // returned event. Returns at once.
  [[nodiscard]] Event enqueue(StreamTask task, std::vector<Event> wait_for = {});
  // Blocks until every task enqueued before this call has finished. Errors of those tasks stay in
  // their events. Throws UserError when called from a task of this same stream (it would deadlock).
  void synchronize();

  [[nodiscard]] bool valid() const { return impl_ != nullptr; }
  [[nodiscard]] const std::shared_ptr<StreamImpl>& impl() const;
  friend bool operator==(const Stream& a, const Stream& b) { return a.impl_ == b.impl_; }

 private:
  std::shared_ptr<StreamImpl> impl_;
};

// The process-wide default stream of `d` (one per device, created on first use, drained at exit).
// Tasks left on it at exit run during static destruction, so they must own what they use.
[[nodiscard]] Stream default_stream(Device d = default_device());

}  // namespace ctile
