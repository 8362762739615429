#include "stream.hpp"

#include <atomic>
#include <utility>

#include "../spin.hpp"
#include "device.hpp"

namespace ctile::detail {

NativeEvent::~NativeEvent() {
  if (!ev) return;
  try {
    platform::cuda::DeviceContext::get(device).release_event(ev);
  } catch (...) {  // cannot happen: the context made this event
  }
}

}  // namespace ctile::detail

namespace ctile::platform::cuda {
namespace {

thread_local const CurrentStream* tls_current = nullptr;

class CurrentScope {
 public:
  explicit CurrentScope(const CurrentStream* c) : prev_(tls_current) { tls_current = c; }
  ~CurrentScope() { tls_current = prev_; }
  CurrentScope(const CurrentScope&) = delete;
  CurrentScope& operator=(const CurrentScope&) = delete;

 private:
  const CurrentStream* prev_;
};

}  // namespace

std::uint64_t new_stream_id() {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1);
}

std::shared_ptr<detail::NativeEvent> acquire_event(int device, std::uint64_t stream_id) {
  auto ne = std::make_shared<detail::NativeEvent>();
  ne->device = device;
  ne->stream_id = stream_id;
  ne->ev = DeviceContext::get(device).acquire_event();
  return ne;
}

const CurrentStream* current_stream() { return tls_current; }

// ---- Completer --------------------------------------------------------------------------------

struct Completer::State {
  int device = 0;
  CUcontext ctx = nullptr;
  mutable std::mutex mu;
  std::condition_variable cv;                 // items or closing
  mutable std::condition_variable done_cv;    // completed advanced
  std::deque<std::pair<std::uint64_t, Item>> items;
  std::uint64_t pushed = 0;
  std::uint64_t completed = 0;
  bool closing = false;
  bool idle = false;  // the thread waits on `cv` (a push must wake it; otherwise it will look anyway)
  std::thread::id thread_id;
  // Copies of `pushed` and `closing` for polling without the lock (written under it).
  std::atomic<std::uint64_t> pushed_hint{0};
  std::atomic<bool> closing_hint{false};
};

Completer::Completer(int device, CUcontext ctx) : st_(std::make_shared<State>()) {
  st_->device = device;
  st_->ctx = ctx;
  thread_ = std::thread([st = st_] { run(st); });
  std::lock_guard lk(st_->mu);
  st_->thread_id = thread_.get_id();
}

Completer::~Completer() {
  {
    std::lock_guard lk(st_->mu);
    st_->closing = true;
    st_->closing_hint.store(true, std::memory_order_release);
  }
  st_->cv.notify_all();
  if (std::this_thread::get_id() == thread_.get_id())
    thread_.detach();  // the last owner went away inside one of our callbacks: the thread drains and exits alone
  else
    thread_.join();
}

std::uint64_t Completer::push(Item item) {
  std::uint64_t ticket = 0;
  bool wake = false;
  {
    std::lock_guard lk(st_->mu);
    ticket = ++st_->pushed;
    st_->items.emplace_back(ticket, std::move(item));
    st_->pushed_hint.store(ticket, std::memory_order_release);
    wake = st_->idle;
  }
  // While the thread is busy with earlier items it finds this one without a wake-up (a futex call
  // saved on every launch of a busy stream).
  if (wake) st_->cv.notify_one();
  return ticket;
}

std::uint64_t Completer::last_ticket() const {
  std::lock_guard lk(st_->mu);
  return st_->pushed;
}

void Completer::wait_for(std::uint64_t ticket) const {
  std::unique_lock lk(st_->mu);
  st_->done_cv.wait(lk, [&] { return st_->completed >= ticket; });
}

bool Completer::on_thread() const { return std::this_thread::get_id() == thread_.get_id(); }

void Completer::run(const std::shared_ptr<State>& st) {
  const Driver& d = drv_unchecked();
  // This thread only ever works for one device: make its context current for good.
  const CUresult ctx_r = d.cuCtxPushCurrent_v2(st->ctx);
  if (ctx_r != 0) report_error(ctx_r, "cuCtxPushCurrent_v2", detail::cat("starting the completion thread of cuda:", st->device));
  std::uint64_t ticket = 0;  // of the last item taken
  for (;;) {
    // After an item, poll for the next one for a short while before sleeping (runtime/spin.hpp): a
    // push to a sleeping completer costs the pushing thread a futex wake, on every launch of a
    // stream whose GPU work finishes before the host enqueues the next launch (short kernels).
    if (ticket != 0)
      (void)detail::spin_until([&] {
        return st->pushed_hint.load(std::memory_order_acquire) != ticket ||
               st->closing_hint.load(std::memory_order_acquire);
      });
    Item it;
    {
      std::unique_lock lk(st->mu);
      st->idle = true;
      st->cv.wait(lk, [&] { return st->closing || !st->items.empty(); });
      st->idle = false;
      if (st->items.empty()) return;  // closing and drained
      ticket = st->items.front().first;
      it = std::move(st->items.front().second);
      st->items.pop_front();
    }
    std::exception_ptr err = it.err;
    if (it.native) {
      const CUresult r = d.cuEventSynchronize(it.native->ev);
      if (r != 0 && !err) {
        try {
          throw_cuda_error(r, "cuEventSynchronize",
                           detail::cat("waiting for the GPU work of a stream task on cuda:", st->device,
                                       " (an earlier kernel or copy on this device failed)"));
        } catch (...) {
          err = std::current_exception();
        }
      }
    }
    // The GPU is done with everything the task used: release it (this may free device memory).
    it.keep.reset();
    // The GPU work was ordered after these on the device; take over their errors.
    for (const Event& e : it.after) {
      e.wait();
      if (!err) err = e.error();
    }
    it.after.clear();
    it.native.reset();
    Event done = std::move(it.done);
    done.complete(err);
    {
      std::lock_guard lk(st->mu);
      st->completed = ticket;
    }
    st->done_cv.notify_all();
  }
}

// ---- CudaStream -------------------------------------------------------------------------------

namespace {

class CudaStream final : public StreamImpl {
 public:
  explicit CudaStream(int device) : dc_(DeviceContext::get(device)), id_(new_stream_id()) {
    ScopedContext scope(dc_.ctx());
    CTILE_CU(cuStreamCreate, (&s_, abi::CU_STREAM_NON_BLOCKING), "creating a stream on cuda:", device);
    try {
      completer_ = std::make_unique<Completer>(device, dc_.ctx());
    } catch (...) {
      (void)CTILE_CU_REPORT(cuStreamDestroy_v2, (s_), "destroying a stream on cuda:", device);
      throw;
    }
    current_.stream = s_;
    current_.device = device;
    current_.id = id_;
    current_.owner = this;
  }

  ~CudaStream() override {
    // Every task has run already (enqueue runs them); let the completer finish their events, unless
    // the last handle is dropped by the completer itself (then it finishes alone after we are gone).
    completer_.reset();
    try {
      ScopedContext scope(dc_.ctx());
      (void)CTILE_CU_REPORT(cuStreamDestroy_v2, (s_), "destroying a stream on cuda:", dc_.index());
    } catch (...) {
    }
  }
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;

  Device device() const override { return Device{DeviceKind::Cuda, dc_.index()}; }

  Event enqueue(StreamTask task, std::vector<Event> wait_for) override {
    if (const CurrentStream* c = current_stream(); c && c->owner == this)
      throw UserError(detail::cat("Stream::enqueue on ", device().str(),
                                  " from inside a task of the same stream (a CUDA stream task may only enqueue GPU work)"));
    std::lock_guard lk(mu_);  // tasks of one stream run one at a time, in enqueue order
    std::exception_ptr err;
    // The device-waited dependencies are compacted to the front of `wait_for`, which then goes to
    // the completer as the item's `after` list (no allocation per launch).
    std::vector<Event>& after = wait_for;
    std::size_t kept = 0;
    std::shared_ptr<detail::NativeEvent> native;
    try {
      ScopedContext scope(dc_.ctx());
      // Dependencies: GPU work of another stream is waited for on the device; host-side work on the host.
      for (std::size_t i = 0; i < wait_for.size(); ++i) {
        Event& e = wait_for[i];
        if (e.done()) {
          if (!err) err = e.error();
          continue;
        }
        detail::NativeEvent* ne = e.native().get();  // the event keeps it alive
        if (ne) {
          if (ne->enqueue_error) {
            if (!err) err = ne->enqueue_error;
            continue;
          }
          if (ne->stream_id != id_)
            CTILE_CU(cuStreamWaitEvent, (s_, ne->ev, abi::CU_EVENT_WAIT_DEFAULT),
                     "ordering work on a stream of ", device().str(), " after work of another stream");
          if (kept != i) after[kept] = std::move(e);
          ++kept;
        } else {
          e.wait();
          if (!err) err = e.error();
        }
      }
      after.resize(kept);  // drops the others (host events, done ones) before the task runs
      if (!err) {
        CurrentScope cur(&current_);
        try {
          task();
        } catch (...) {
          err = std::current_exception();
        }
      }
      native = acquire_event(dc_.index(), id_);
      CTILE_CU(cuEventRecord, (native->ev, s_), "recording the completion of a task on a stream of ", device().str());
      native->enqueue_error = err;
    } catch (...) {
      // Without a recorded event the GPU work cannot be tracked: wait for the whole stream before
      // anything the task captured may be released.
      if (!err) err = std::current_exception();
      if (after.size() > kept) after.resize(kept);
      native.reset();
      try {
        ScopedContext scope(dc_.ctx());
        (void)CTILE_CU_REPORT(cuStreamSynchronize, (s_), "synchronising a stream of ", device().str(), " after an error");
      } catch (...) {
      }
    }
    Event done = native ? Event::create(native) : Event::create();
    Completer::Item item;
    item.native = std::move(native);
    item.done = done;
    item.keep = std::move(task);
    item.after = std::move(after);
    item.err = err;
    completer_->push(std::move(item));
    return done;
  }

  void synchronize() override {
    if ((current_stream() && current_stream()->owner == this) || completer_->on_thread())
      throw UserError("Stream::synchronize called from a task running on the same stream (it would wait for itself)");
    std::uint64_t ticket = 0;
    {
      std::lock_guard lk(mu_);
      ticket = completer_->last_ticket();
    }
    {
      ScopedContext scope(dc_.ctx());
      // Errors of the work stay in its events (the completer puts them there).
      (void)drv().cuStreamSynchronize(s_);
    }
    completer_->wait_for(ticket);
  }

 private:
  DeviceContext& dc_;
  std::uint64_t id_;
  CUstream s_ = nullptr;
  CurrentStream current_;
  std::mutex mu_;
  std::unique_ptr<Completer> completer_;
};

}  // namespace

std::shared_ptr<StreamImpl> make_stream(int device) { return std::make_shared<CudaStream>(device); }

}  // namespace ctile::platform::cuda
