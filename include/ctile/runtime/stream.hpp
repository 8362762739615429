// Stream: a copyable handle to an in-order executor of typed commands (kernel launches, copies,
// host callbacks, event markers). Commands run one after another, asynchronously to the caller;
// each gets an Event that completes once its work has finished (and after everything it kept alive
// has been released, so that reference counts are exact at that point). A CPU stream runs its
// commands on its own worker thread. A CUDA stream queues kernels, copies and graph runs on a
// CUstream and returns once they are queued (after any host-side events in wait_for are done); the
// event completes when the GPU work has finished (docs/cuda_runtime.md). A capturing stream (inside
// ctile::capture) records commands into a graph instead of running them (docs/host_api.md).
#pragma once

#include <concepts>
#include <cstdint>
#include <memory>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "ctile/core/unchecked.hpp"
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

namespace detail {
struct Command;  // src/platform/command.hpp
class CaptureState;  // src/runtime/capture.hpp
}  // namespace detail

// What a stream implementation provides. Implementations are thread-safe.
class StreamImpl {
 public:
  virtual ~StreamImpl() = default;
  [[nodiscard]] virtual Device device() const = 0;
  // Runs `cmd` after every command submitted before it and after every event in `wait_for` (the
  // events may be moved from). If one of those carries an error, the command is skipped and the
  // returned event carries that error (the first in `wait_for` order); an exception while running it
  // goes into the returned event. Returns without waiting for the work.
  [[nodiscard]] virtual Event submit(detail::Command&& cmd, std::span<Event> wait_for) = 0;
  // See Stream::synchronize.
  virtual void synchronize() = 0;
  // This stream's order: its events carry it (Event::order) and complete in submit order; GPU
  // streams' native markers carry it too (0: no order, e.g. a capturing stream).
  [[nodiscard]] virtual std::uint64_t order() const { return 0; }
  // The graph capture this stream records into; null for a stream that runs its work.
  [[nodiscard]] virtual detail::CaptureState* capture() { return nullptr; }
};

class Stream {
 public:
  // An empty handle; every member but valid() throws UserError on it.
  Stream() = default;
  explicit Stream(std::shared_ptr<StreamImpl> impl) : impl_(std::move(impl)) {}

  // A new stream on `d`. A CPU stream has its own worker thread, joined when the last handle goes
  // away after it has run every command already submitted; a CUDA stream is a non-blocking
  // CUstream whose events complete on a completion thread, drained the same way.
  [[nodiscard]] static Stream create(Device d = default_device());
  // A ctile stream over a CUstream someone else made (a framework's stream, e.g. torch's
  // at::cuda::getCurrentCUDAStream().stream(); nullptr is the legacy default stream) on cuda:device,
  // in the device's primary context (the one the CUDA runtime and torch use). ctile's work on it is
  // ordered with the owner's work on it, both ways. ctile never destroys it; it holds `keep_alive`
  // until the last handle and every command submitted to it are gone. Unchecked: the stream must
  // live at least that long (keep_alive can see to it) and belong to that device.
  [[nodiscard]] static Stream wrap_cuda(unchecked_t, int device, void* cu_stream,
                                        std::shared_ptr<const void> keep_alive = {});

  [[nodiscard]] Device device() const;

  // A host callback: runs `fn` on the host after every command submitted before it and after every
  // event in `wait_for` (CPU: on the worker; CUDA: on a driver thread, in stream order; it must not
  // call CUDA). If one of those failed, `fn` is skipped and the event carries that error; an
  // exception thrown by `fn` goes into the returned event. Returns at once. Can be captured.
  [[nodiscard]] Event host(StreamTask fn, std::vector<Event> wait_for = {});
  // An event marker: done once everything submitted before it (and `wait_for`) is done. Later
  // commands of this stream also run after `wait_for` (an event wait). Can be captured.
  [[nodiscard]] Event record(std::vector<Event> wait_for = {});
  // A task in stream order. On a CPU stream, the same as host(). On a CUDA stream the task runs on
  // the calling thread with the stream as the thread's current CUDA stream, and may only enqueue
  // GPU work; enqueue() returns once that work is queued. Cannot be captured (use host(), or the
  // typed operations: launches, ctile::copy).
  [[nodiscard]] Event enqueue(StreamTask task, std::vector<Event> wait_for = {});
  // Blocks until every command submitted before this call has finished. Errors of those commands
  // stay in their events. Throws UserError when called from a command of this same stream (it
  // would deadlock) or on a capturing stream.
  void synchronize();

  // Whether this stream records into a graph capture (ctile::capture) instead of running work.
  [[nodiscard]] bool capturing() const;

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
