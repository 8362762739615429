#include "stream.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../platform.hpp"
#include "../spin.hpp"
#include "device.hpp"
#include "graph.hpp"
#include "kernel.hpp"

namespace ctile::platform::cuda {
namespace {

void recycle_event(detail::NativeEvent& ne) noexcept {
  try {
    DeviceContext::get(ne.device).release_event(ne.ev.load(std::memory_order_relaxed));
  } catch (...) {  // cannot happen: the context made this event
  }
}

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

// A single-producer, single-consumer FIFO of completer items in linked segments: the producer
// (serialised by its caller) and the completion thread never take a lock for an item, and
// drained segments are handed back to the producer for reuse (up to kSpares of them: the most the
// completion thread has lagged behind, in segments), so a steady stream of launches allocates
// nothing here even while the completion thread runs behind.
class ItemQueue {
 public:
  ItemQueue() : head_(new Segment), tail_(head_) {}
  ~ItemQueue() {
    Item it;
    while (pop(it)) {
    }
    delete head_;
    for (auto& sp : spares_) delete sp.load();
  }
  ItemQueue(const ItemQueue&) = delete;
  ItemQueue& operator=(const ItemQueue&) = delete;

  using Item = Completer::Item;

  // The slot of the next item (constructed in place by the caller), then publish() makes it visible.
  Item& emplace() {
    if (tail_pos_ == Segment::kSize) {
      Segment* s = nullptr;
      for (auto& sp : spares_)
        if ((s = sp.exchange(nullptr, std::memory_order_acquire))) break;
      if (!s) s = new Segment;  // default-initialised: the slots are raw bytes
      s->next.store(nullptr, std::memory_order_relaxed);
      tail_->next.store(s, std::memory_order_release);
      tail_ = s;
      tail_pos_ = 0;
    }
    Item* it = ::new (static_cast<void*>(&tail_->slots[tail_pos_])) Item();
    ++tail_pos_;
    return *it;
  }
  void publish() { pushed_.store(pushed_.load(std::memory_order_relaxed) + 1, std::memory_order_seq_cst); }
  void push(Item&& it) {
    emplace() = std::move(it);
    publish();
  }
  // Consumer only.
  bool pop(Item& out) {
    if (popped_ == pushed_.load(std::memory_order_acquire)) return false;
    if (head_pos_ == Segment::kSize) {
      Segment* next = head_->next.load(std::memory_order_acquire);
      Segment* old = head_;
      head_ = next;
      head_pos_ = 0;
      bool kept = false;
      for (auto& sp : spares_) {
        Segment* expected = nullptr;
        if ((kept = sp.compare_exchange_strong(expected, old, std::memory_order_release))) break;
      }
      if (!kept) delete old;
    }
    Item* slot = reinterpret_cast<Item*>(&head_->slots[head_pos_]);
    out = std::move(*slot);
    slot->~Item();
    ++head_pos_;
    ++popped_;
    return true;
  }
  // Items pushed so far (any thread).
  std::uint64_t pushed() const { return pushed_.load(std::memory_order_seq_cst); }

 private:
  struct Segment {
    static constexpr std::size_t kSize = 64;
    struct alignas(Item) Slot {
      unsigned char bytes[sizeof(Item)];
    };
    Slot slots[kSize];
    std::atomic<Segment*> next{nullptr};
  };
  Segment* head_;            // consumer
  std::size_t head_pos_ = 0;  // consumer
  std::uint64_t popped_ = 0;  // consumer
  Segment* tail_;             // producer
  std::size_t tail_pos_ = 0;  // producer
  std::atomic<std::uint64_t> pushed_{0};
  static constexpr std::size_t kSpares = 16;
  std::array<std::atomic<Segment*>, kSpares> spares_{};  // drained segments for the producer
};

}  // namespace

std::uint64_t new_stream_id() { return new_stream_order(); }

Event new_native_event(DeviceContext& dc, std::uint64_t stream_id, detail::NativeEvent*& ne) {
  CUevent ev = dc.acquire_event();
  Event e = Event::create_native(stream_id, ne);
  ne->device = dc.index();
  ne->stream_id = stream_id;
  ne->ev.store(ev, std::memory_order_relaxed);
  ne->recycle = &recycle_event;
  return e;
}

namespace {

// The CUDA streams whose commands' events are lazy, by stream id, and the lock under which a lazy
// event gets its record (materialize, cover_batch): it is set once.
struct LazyStreams {
  std::mutex mu;
  std::unordered_map<std::uint64_t, CUstream> streams;
};
LazyStreams& lazy_streams() {
  static auto* l = new LazyStreams();  // never destroyed: completion threads may outlive statics
  return *l;
}

void register_lazy(std::uint64_t id, CUstream s) {
  LazyStreams& l = lazy_streams();
  std::lock_guard lk(l.mu);
  l.streams[id] = s;
}
void unregister_lazy(std::uint64_t id) noexcept {
  LazyStreams& l = lazy_streams();
  std::lock_guard lk(l.mu);
  l.streams.erase(id);
}

// Gives every item of items[0, n) without a record the record of `newest`, one of them, which has
// one: it was recorded after all of them on the same stream. (The completion thread, once it
// waited for it: the items complete under it.)
void cover_batch(Completer::Item* items, std::size_t n, const detail::NativeEvent& newest) {
  bool need = false;
  std::size_t at = n;
  for (std::size_t k = 0; k < n; ++k) {
    const detail::NativeEvent* ne = items[k].done.native_ptr();
    if (ne == &newest) at = k;
    else if (ne && !ne->ev.load(std::memory_order_acquire)) need = true;
  }
  if (!need || at == n) return;
  const CUevent ev = newest.ev.load(std::memory_order_acquire);
  std::shared_ptr<const detail::NativeEvent> owner = newest.cover ? newest.cover : items[at].done.native();
  LazyStreams& l = lazy_streams();
  std::lock_guard lk(l.mu);
  for (std::size_t k = 0; k < n; ++k) {
    const detail::NativeEvent* ne = items[k].done.native_ptr();
    if (!ne || ne->ev.load(std::memory_order_relaxed)) continue;
    ne->cover = owner;
    ne->ev.store(ev, std::memory_order_release);
  }
}

Event new_lazy_event(DeviceContext& dc, std::uint64_t stream_id, detail::NativeEvent*& ne) {
  Event e = Event::create_native(stream_id, ne);
  ne->device = dc.index();
  ne->stream_id = stream_id;
  ne->recycle = &recycle_event;
  return e;
}

}  // namespace

CUevent materialize(const detail::NativeEvent& ne) {
  LazyStreams& l = lazy_streams();
  std::lock_guard lk(l.mu);
  if (CUevent e = ne.ev.load(std::memory_order_acquire)) return e;
  // Until its command completes (and gets the record that covers it) the stream is registered: its
  // destruction first lets the completion thread complete everything.
  const auto it = l.streams.find(ne.stream_id);
  if (it == l.streams.end())
    throw InternalError(detail::cat("a lazy event of stream ", ne.stream_id, " on cuda:", ne.device,
                                    " has no record and its stream is gone"));
  DeviceContext& dc = DeviceContext::get(ne.device);
  ScopedContext scope(dc.ctx());
  CUevent ev = dc.acquire_event();
  if (const CUresult r = drv_unchecked().cuEventRecord(ev, it->second); r != 0) {
    dc.release_event(ev);
    throw_cuda_error(r, "cuEventRecord", detail::cat("recording the completion of a command on a stream of cuda:", ne.device));
  }
  ne.ev.store(ev, std::memory_order_release);
  return ev;
}

const CurrentStream* current_stream() { return tls_current; }

// ---- Completer --------------------------------------------------------------------------------

namespace {

// How the completion thread waits for a command's CUevent (CTILE_COMPLETER_WAIT, read once):
// "sync" (the default) calls cuEventSynchronize, which waits inside the driver; "poll" asks with
// cuEventQuery, pausing between questions (1 us, doubling up to 32 us), so that the thread spends
// the wait outside the driver. Which costs the launching threads less depends on the driver's
// locking; bench/launch_overhead.cpp and scripts/gpu_launch_check.sh measure both.
bool poll_events() {
  static const bool poll = [] {
    const char* v = std::getenv("CTILE_COMPLETER_WAIT");
    return v && std::strcmp(v, "poll") == 0;
  }();
  return poll;
}

CUresult wait_native(const Driver& d, CUevent ev) {
  if (!poll_events()) return d.cuEventSynchronize(ev);
  auto pause = std::chrono::microseconds(1);
  for (;;) {
    const CUresult r = d.cuEventQuery(ev);
    if (r != abi::CUDA_ERROR_NOT_READY) return r;
    const auto until = std::chrono::steady_clock::now() + pause;
    while (std::chrono::steady_clock::now() < until) detail::cpu_relax();
    if (pause < std::chrono::microseconds(32)) pause *= 2;
  }
}

}  // namespace

struct Completer::State {
  int device = 0;
  CUcontext ctx = nullptr;
  ItemQueue q;
  std::atomic<std::uint64_t> completed{0};
  std::atomic<bool> closing{false};
  // Sleeping: with nothing queued the thread waits on `cv` once it found nothing for a while
  // (spin.hpp) and sets `idle`, which a push sees and wakes it. Both sides use sequentially
  // consistent accesses to `idle` and the queue count, so a push cannot slip between the thread's
  // last look and its sleep. Between its paced looks (no host thread waits) it sleeps on `cv` with
  // `sleeping` set and a deadline; pushes do not wake it then, waiters do (kick()).
  std::atomic<bool> idle{false};
  std::atomic<bool> sleeping{false};
  std::mutex mu;
  std::condition_variable cv;
  // wait_for(): waiters sleep on done_cv; the thread notifies only when someone waits.
  std::atomic<int> waiters{0};
  mutable std::mutex done_mu;
  mutable std::condition_variable done_cv;
  std::thread::id thread_id;
  // Run by the thread once it has drained after its owner let it finish alone (on_drained).
  std::function<void()> on_drained;

  // Wakes the thread from a paced sleep (a host thread waits now).
  void kick() {
    if (!sleeping.load(std::memory_order_seq_cst)) return;
    { std::lock_guard lk(mu); }
    cv.notify_all();
  }
  static void kick_of(void* self) { static_cast<State*>(self)->kick(); }
};

Completer::Completer(int device, CUcontext ctx) : st_(std::make_shared<State>()) {
  st_->device = device;
  st_->ctx = ctx;
  thread_ = std::thread([st = st_] { run(st); });
  st_->thread_id = thread_.get_id();
  detail::add_sleeper(st_.get(), &State::kick_of);
}

Completer::~Completer() {
  detail::remove_sleeper(st_.get());
  st_->closing.store(true, std::memory_order_seq_cst);
  {
    std::lock_guard lk(st_->mu);
  }
  st_->cv.notify_all();
  if (std::this_thread::get_id() == thread_.get_id())
    thread_.detach();  // the last owner went away inside one of our callbacks: the thread drains and exits alone
  else
    thread_.join();
}

std::uint64_t Completer::push(Item item) {
  st_->q.push(std::move(item));
  return after_push();
}

Completer::Item& Completer::next_item() { return st_->q.emplace(); }

std::uint64_t Completer::publish() {
  st_->q.publish();
  return after_push();
}

std::uint64_t Completer::after_push() {
  const std::uint64_t ticket = st_->q.pushed();
  // While the thread is busy with earlier items, or between its paced looks, it finds this one
  // without a wake-up (a futex call saved on every launch of a busy stream).
  if (st_->idle.load(std::memory_order_seq_cst)) {
    { std::lock_guard lk(st_->mu); }
    st_->cv.notify_one();
  }
  return ticket;
}

std::uint64_t Completer::last_ticket() const { return st_->q.pushed(); }

void Completer::wait_for(std::uint64_t ticket) const {
  if (st_->completed.load(std::memory_order_acquire) >= ticket) return;
  st_->waiters.fetch_add(1, std::memory_order_seq_cst);
  st_->kick();
  {
    std::unique_lock lk(st_->done_mu);
    st_->done_cv.wait(lk, [&] { return st_->completed.load(std::memory_order_seq_cst) >= ticket; });
  }
  st_->waiters.fetch_sub(1, std::memory_order_relaxed);
}

void Completer::on_drained(std::function<void()> fn) { st_->on_drained = std::move(fn); }

bool Completer::drained() const { return st_->completed.load(std::memory_order_acquire) == st_->q.pushed(); }

bool Completer::on_thread() const { return std::this_thread::get_id() == st_->thread_id; }

namespace {

// At most this many items complete after one wait, so that what a batch keeps alive stays bounded
// (CTILE_COMPLETER_BATCH, read once, 1 to 256; default 32; 1 waits for every item on its own).
std::size_t max_batch() {
  static const std::size_t n = [] {
    if (const char* v = std::getenv("CTILE_COMPLETER_BATCH"); v && *v) {
      char* end = nullptr;
      const long k = std::strtol(v, &end, 10);
      if (*end == '\0' && k >= 1) return static_cast<std::size_t>(k < 256 ? k : 256);
    }
    return std::size_t{32};
  }();
  return n;
}

std::chrono::nanoseconds env_us(const char* name, long dflt, long most) {
  long us = dflt;
  if (const char* v = std::getenv(name); v && *v) {
    char* end = nullptr;
    const long k = std::strtol(v, &end, 10);
    if (*end == '\0' && k >= 0) us = k < most ? k : most;
  }
  return std::chrono::nanoseconds(std::chrono::microseconds(us));
}

// How long the completion thread holds back finished work to complete it in batches while no host
// thread waits, when it is not paced (CTILE_COMPLETER_PACE_US=0; CTILE_COMPLETER_BATCH_US, read
// once; 0: never): 20 us where threads poll (spin.hpp), 0 where they sleep at once (fewer than 4
// processors: the polling would take the processor from the launching thread).
std::chrono::nanoseconds batch_linger() {
  static const std::chrono::nanoseconds linger =
      env_us("CTILE_COMPLETER_BATCH_US", detail::spin_budget().count() > 0 ? 20 : 0, 10000);
  return linger;
}

// The pace of the completion thread while no host thread waits (CTILE_COMPLETER_PACE_US, read once;
// 0, the default: no pacing, every batch is waited for inside the driver as it comes): it asks the
// driver which of its items the GPU has finished (cuEventQuery, at most two questions a look) this
// often, doubling the interval after a look that completed nothing (up to 4 times), and completes
// them once a batch or everything it holds is done. Off by default: on an H100 host (session 25,
// docs/perf/launch_overhead.md) pacing at 50 us measured the same launch costs as waiting inside
// the driver, within the rounds' spread, and it makes completion trail the GPU.
std::chrono::nanoseconds completer_pace() {
  static const std::chrono::nanoseconds pace = env_us("CTILE_COMPLETER_PACE_US", 0, 100000);
  return pace;
}

// Most items the thread holds before it waits for the oldest batch inside the driver anyway (what
// they keep alive, tensors included, stays bounded when the GPU falls behind).
constexpr std::size_t kMaxHeld = 512;

}  // namespace

void Completer::run(const std::shared_ptr<State>& st) {
  const Driver& d = drv_unchecked();
  // This thread only ever works for one device: make its context current for good.
  const CUresult ctx_r = d.cuCtxSetCurrent(st->ctx);
  if (ctx_r != 0) report_error(ctx_r, "cuCtxSetCurrent", detail::cat("starting the completion thread of cuda:", st->device));
  t_current_context = st->ctx;
  using clock = std::chrono::steady_clock;
  std::uint64_t ticket = 0;  // of the last item completed (== items taken while `held` is empty)
  bool after_item = false;
  const std::size_t batch_max = max_batch();
  const std::chrono::nanoseconds pace = completer_pace();
  std::chrono::nanoseconds tick = pace;
  clock::time_point waiter_seen{};  // when a host thread last waited
  // Items taken from the queue and not completed yet: held[head, held.size()).
  std::vector<Item> held;
  std::size_t head = 0;
  held.reserve(kMaxHeld);
  auto count = [&] { return held.size() - head; };
  auto take = [&] {
    for (Item it; count() < kMaxHeld && st->q.pop(it);) held.push_back(std::move(it));
  };
  auto nobody_waits = [&] {
    const bool none = detail::host_waiters().load(std::memory_order_seq_cst) == 0 && st->waiters.load(std::memory_order_seq_cst) == 0 &&
                      !st->closing.load(std::memory_order_seq_cst);
    if (!none) waiter_seen = clock::now();
    return none;
  };
  auto wait_error = [&](CUresult r) {
    try {
      throw_cuda_error(r, "cuEventSynchronize",
                       detail::cat("waiting for the GPU work of a stream command on cuda:", st->device,
                                   " (an earlier kernel or copy on this device failed)"));
    } catch (...) {
      return std::current_exception();
    }
  };
  // The newest native event among held[head, head + n) (null: none; such items were never
  // recorded, their stream was synchronised instead).
  auto newest_native = [&](std::size_t n) -> const detail::NativeEvent* {
    for (std::size_t i = head + n; i-- > head;)
      if (const detail::NativeEvent* ne = held[i].done.native_ptr()) return ne;
    return nullptr;
  };
  // The event of `ne`, recorded now if it has none yet (lazy), or null and the error in `failed`.
  auto record_of = [&](const detail::NativeEvent& ne, std::exception_ptr& failed) -> CUevent {
    try {
      return ev_of(ne);
    } catch (...) {
      failed = std::current_exception();
      return nullptr;
    }
  };
  // Completes held[head, head + n) after one wait for the newest of their native events: every
  // item of a completer was recorded on one CUstream, in order, so once it is done the GPU has
  // finished every item before it. After a failure each native event is waited for again, so that
  // errors stay with their items.
  auto complete_first = [&](std::size_t n) {
    bool batch_done = true;
    std::exception_ptr batch_err;  // the newest item's event could not be recorded
    const detail::NativeEvent* newest = newest_native(n);
    if (newest) {
      const CUevent ev = record_of(*newest, batch_err);
      batch_done = ev && wait_native(d, ev) == 0;
      // The items without a record of their own complete under the newest one's: it covers them,
      // and later frees and cross-stream waits use it (cover_batch).
      if (ev) cover_batch(held.data() + head, n, *newest);
    }
    for (std::size_t k = 0; k < n; ++k) {
      Item& x = held[head + k];
      ++ticket;
      std::exception_ptr err = x.err;
      if (const detail::NativeEvent* ne = x.done.native_ptr(); ne && !batch_done) {
        if (const CUevent ev = ne->ev.load(std::memory_order_acquire)) {
          if (const CUresult r = wait_native(d, ev); r != 0 && !err) err = wait_error(r);
        } else if (!err) {
          err = batch_err;
        }
      }
      if (x.host)
        if (std::exception_ptr h = x.host->take(); h && !err) err = std::move(h);
      // The GPU is done with everything the command used: release it (this may free device memory).
      x.keep.clear();
      x.task.reset();
      x.host.reset();
      // The GPU work was ordered after these on the device; take over their errors.
      for (const Event& e : x.after) {
        e.wait();
        if (!err) err = e.error();
      }
      x.after.clear();
      Event done = std::move(x.done);
      done.complete(err);
      st->completed.store(ticket, std::memory_order_seq_cst);
      if (st->waiters.load(std::memory_order_seq_cst) != 0) {
        { std::lock_guard lk(st->done_mu); }
        st->done_cv.notify_all();
      }
    }
    head += n;
    if (head == held.size()) {
      held.clear();
      head = 0;
    } else if (head >= kMaxHeld / 2) {
      held.erase(held.begin(), held.begin() + static_cast<std::ptrdiff_t>(head));
      head = 0;
    }
  };
  // Paced: how many of the held items the GPU has finished, asked without waiting: all of them
  // (the newest is done), the first batch (its last is done), or none. An error answer counts as
  // done: complete_first's wait then reports it.
  auto finished = [&]() -> std::size_t {
    auto done = [&](std::size_t n) {
      const detail::NativeEvent* ne = newest_native(n);
      if (!ne) return true;
      std::exception_ptr failed;
      const CUevent ev = record_of(*ne, failed);
      return !ev || d.cuEventQuery(ev) != abi::CUDA_ERROR_NOT_READY;
    };
    if (done(count())) return count();
    if (count() > batch_max && done(batch_max)) return batch_max;
    return 0;
  };
  // Paced: until the next look, a host thread waits, or the completer closes. Right after a host
  // thread waited, poll first (the next launch is likely waited for too, and a sleeper is woken
  // through the kernel).
  auto sleep_tick = [&] {
    const auto now = clock::now();
    const auto until = now + tick;
    if (now - waiter_seen < detail::spin_budget() &&
        detail::spin_until([&] { return !nobody_waits() || clock::now() >= until; }))
      return;
    st->sleeping.store(true, std::memory_order_seq_cst);
    detail::note_sleep(true);
    {
      std::unique_lock lk(st->mu);
      st->cv.wait_until(lk, until, [&] { return !nobody_waits(); });
    }
    detail::note_sleep(false);
    st->sleeping.store(false, std::memory_order_relaxed);
  };
  for (;;) {
    take();
    if (count() == 0) {
      // Poll for the next item for a short while before sleeping (spin.hpp): a push to a sleeping
      // completer costs the pushing thread a futex wake, on every launch of a stream whose GPU work
      // finishes before the host submits the next one (short kernels).
      if (after_item) (void)detail::spin_until([&] { return st->q.pushed() != ticket || st->closing.load(); });
      take();
      if (count() == 0) {
        std::unique_lock lk(st->mu);
        st->idle.store(true, std::memory_order_seq_cst);
        st->cv.wait(lk, [&] { return st->q.pushed() != ticket || st->closing.load(std::memory_order_seq_cst); });
        st->idle.store(false, std::memory_order_relaxed);
        lk.unlock();
        take();
        if (count() == 0) {
          if (st->closing.load()) {  // closing and drained
            if (st->on_drained) st->on_drained();
            return;
          }
          continue;
        }
      }
    }
    after_item = true;
    if (pace.count() > 0 && nobody_waits() && count() < kMaxHeld) {
      // Paced: complete what the GPU has finished once a batch or everything held is done;
      // otherwise look again later. Right after a host thread waited, the next item is likely
      // waited for too: poll for its waiter before asking the driver (sleep_tick).
      if (const std::size_t n = clock::now() - waiter_seen < detail::spin_budget() ? 0 : finished(); n > 0) {
        complete_first(n);
        tick = pace;
      } else {
        sleep_tick();
        if (tick < 4 * pace) tick *= 2;
      }
      continue;
    }
    // Not paced (a host thread waits, the completer closes, pacing is off or too much is held):
    // wait for the work inside the driver, a batch at a time.
    tick = pace;
    // Unpaced and nobody waits: let a batch gather for a moment (the launching thread keeps
    // submitting meanwhile): its items then cost one driver call together instead of one each.
    if (const auto linger = batch_linger(); pace.count() == 0 && linger.count() > 0 && count() < batch_max && nobody_waits()) {
      const auto until = clock::now() + linger;
      for (unsigned i = 1; st->q.pushed() - ticket < batch_max && nobody_waits(); ++i) {
        if (i % 32 == 0 && clock::now() >= until) break;
        detail::cpu_relax();
      }
      take();
    }
    complete_first(count() < batch_max ? count() : batch_max);
  }
}

// ---- CudaStream -------------------------------------------------------------------------------

namespace {

void host_trampoline(void* p) {
  auto* h = static_cast<HostCall*>(p);
  try {
    h->fn();
  } catch (...) {
    h->fail(std::current_exception());
  }
}

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
    register_lazy(id_, s_);
  }

  // Over a foreign stream (Stream::wrap_cuda): the same, but the CUstream is never destroyed.
  CudaStream(int device, CUstream foreign, std::shared_ptr<const void> keep_alive)
      : dc_(DeviceContext::get(device)), id_(new_stream_id()), s_(foreign), owned_(false), keep_alive_(std::move(keep_alive)) {
    ScopedContext scope(dc_.ctx());
    completer_ = std::make_unique<Completer>(device, dc_.ctx());
    current_.stream = s_;
    current_.device = device;
    current_.id = id_;
    current_.owner = this;
    register_lazy(id_, s_);
  }

  ~CudaStream() override {
    // Every command has been queued already (submit queues it); let the completer finish their
    // events (recording what is lazy on this stream), then the stream goes. When the last handle
    // is dropped by the completer itself, it finishes alone after we are gone, and the stream goes
    // after that (on_drained).
    auto retire = [id = id_, s = s_, owned = owned_, keep = std::move(keep_alive_), ctx = dc_.ctx(), dev = dc_.index()]() mutable {
      unregister_lazy(id);
      if (owned) {
        try {
          ScopedContext scope(ctx);
          (void)CTILE_CU_REPORT(cuStreamDestroy_v2, (s), "destroying a stream on cuda:", dev);
        } catch (...) {
        }
      }
      keep.reset();  // a foreign stream stays; what keeps it alive goes after the completer has finished
    };
    if (completer_->on_thread()) {
      completer_->on_drained(std::move(retire));
      completer_.reset();
      return;
    }
    completer_.reset();
    retire();
  }
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;

  Device device() const override { return Device{DeviceKind::Cuda, dc_.index()}; }
  std::uint64_t order() const override { return id_; }

  Event submit(detail::Command&& cmd, std::span<Event> wait_for) override {
    if (const CurrentStream* c = current_stream(); c && c->owner == this)
      throw UserError(detail::cat("Stream submission on ", device().str(),
                                  " from inside a task of the same stream (a CUDA stream task may only enqueue GPU work)"));
    std::unique_lock lk(mu_);  // commands of one stream are queued one at a time, in submit order
    // A command its submitter waits for at once (a launch's sync()) is finished here, on this
    // thread, when the completion thread has nothing pending (so completions stay in stream order):
    // its event is waited for and completed by the submitter, with no hand-over to the completion
    // thread and back.
    using K = detail::Command::Kind;
    const bool finish_here =
        cmd.wait && (cmd.kind == K::Kernel || cmd.kind == K::Copy || cmd.kind == K::Graph) && completer_->drained();
    std::exception_ptr err;
    // Filled in place in the completer's queue, published at the end (nothing below throws); a
    // command finished here keeps its item on the stack.
    std::optional<Completer::Item> local;
    Completer::Item& item = finish_here ? local.emplace() : completer_->next_item();
    Event done;
    try {
      ScopedContext scope(dc_.ctx());
      // Dependencies: GPU work of another stream is waited for on the device; host-side work on the host.
      for (Event& e : wait_for) {
        detail::NativeEvent* ne = e.native_ptr();  // the event keeps it alive
        if (e.done() && !(ne && ne->order_always)) {
          if (!err) err = e.error();
          continue;
        }
        if (ne) {
          if (ne->enqueue_error) {
            if (!err) err = ne->enqueue_error;
            continue;
          }
          if (ne->stream_id != id_)
            CTILE_CU(cuStreamWaitEvent, (s_, ev_of(*ne), abi::CU_EVENT_WAIT_DEFAULT),
                     "ordering work on a stream of ", device().str(), " after work of another stream");
          if (!e.done()) item.after.push_back(std::move(e));
        } else {
          e.wait();
          if (!err) err = e.error();
        }
      }
      if (!err) {
        try {
          run(cmd, item);
        } catch (...) {
          err = std::current_exception();
        }
      }
      detail::NativeEvent* ne = nullptr;
      if (finish_here) {
        // Recorded at once: this thread waits for it now. (It stays native: a later free of the
        // memory on another stream waits for it on the device.)
        done = new_native_event(dc_, id_, ne);
        if (const CUresult r = drv_unchecked().cuEventRecord(ne->ev.load(std::memory_order_relaxed), s_); r != 0)
          throw_cuda_error(r, "cuEventRecord", detail::cat("recording the completion of a command on a stream of ", device().str()));
      } else {
        // Lazy: recorded when something needs it (the completion thread, once a batch; another
        // stream's dependency; a free), on this stream, after this command.
        done = new_lazy_event(dc_, id_, ne);
      }
      ne->enqueue_error = err;
    } catch (...) {
      // Without a recorded event the GPU work cannot be tracked: wait for the whole stream before
      // anything the command kept alive may be released.
      if (!err) err = std::current_exception();
      done = Event::create_ordered(id_);  // nothing recorded: completes after the stream is drained
      try {
        ScopedContext scope(dc_.ctx());
        (void)CTILE_CU_REPORT(cuStreamSynchronize, (s_), "synchronising a stream of ", device().str(), " after an error");
      } catch (...) {
      }
    }
    if (finish_here) {
      inline_pending_.fetch_add(1, std::memory_order_seq_cst);
      lk.unlock();
      finish(cmd, item, done, err);
      return done;
    }
    item.done = done;
    item.keep = std::move(cmd.keep);
    if (cmd.fn) item.task = std::move(cmd.fn);
    item.err = err;
    completer_->publish();
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
    // A command another thread finishes in its own submit (Command::wait) is done on the GPU by
    // now; its event completes within moments.
    while (inline_pending_.load(std::memory_order_seq_cst) != 0) std::this_thread::yield();
  }

 private:
  // Finishes a command that submit ran with Command::wait, on the submitting thread, outside the
  // stream's lock: waits for its event `done` (or, when none was recorded, for the stream), takes
  // over the errors the completion thread would have (the device's, a graph's host nodes', those of
  // the events the work was ordered after), releases what the command kept alive and completes
  // `done`.
  void finish(detail::Command& cmd, Completer::Item& item, Event& done, std::exception_ptr err) {
    struct Leave {
      std::atomic<int>& n;
      ~Leave() { n.fetch_sub(1, std::memory_order_seq_cst); }
    } leave{inline_pending_};
    const detail::NativeEvent* ne = done.native_ptr();
    CUresult r = 0;
    try {
      ScopedContext scope(dc_.ctx());
      r = ne ? wait_native(drv_unchecked(), ne->ev.load(std::memory_order_relaxed)) : drv_unchecked().cuStreamSynchronize(s_);
    } catch (...) {
      if (!err) err = std::current_exception();
    }
    if (r != 0 && !err) {
      try {
        throw_cuda_error(r, ne ? "cuEventSynchronize" : "cuStreamSynchronize",
                         detail::cat("waiting for the GPU work of a stream command on ", device().str(),
                                     " (an earlier kernel or copy on this device failed)"));
      } catch (...) {
        err = std::current_exception();
      }
    }
    if (item.host)
      if (std::exception_ptr h = item.host->take(); h && !err) err = std::move(h);
    for (const Event& e : item.after) {
      e.wait();
      if (!err) err = e.error();
    }
    // The GPU is done with everything the command used: release it before its event completes.
    cmd.keep.clear();
    cmd.fn = {};
    item.host.reset();
    item.after.clear();
    done.complete(err);
  }

  void run(detail::Command& cmd, Completer::Item& item) {
    using K = detail::Command::Kind;
    switch (cmd.kind) {
      case K::Kernel: {
        const auto& k = static_cast<const CudaKernel&>(*cmd.kernel);
        if (k.device_index() != dc_.index())
          throw InternalError(detail::cat("cuda stream: kernel '", cmd.name, "' loaded on cuda:", k.device_index(),
                                          " launched on a stream of cuda:", dc_.index()));
        void* params[] = {const_cast<std::byte*>(cmd.params)};
        LaunchShape sh = cmd.shape;
        if (!sh.given()) {  // a tile kernel: a 1-D grid of its blocks for the tile blocks
          sh.grid[0] = static_cast<unsigned>(k.blocks_for(cmd.tile_blocks));
          sh.block[0] = k.threads();
          sh.smem = k.smem();
        }
        auto launch = [&] {
          return drv_unchecked().cuLaunchKernel(k.fn(), sh.grid[0], sh.grid[1], sh.grid[2], sh.block[0], sh.block[1],
                                                sh.block[2], sh.smem, s_, params, nullptr);
        };
        CUresult r = launch();
        if (r == abi::CUDA_ERROR_INVALID_CONTEXT) {
          // The thread's current context changed behind ctile's back: make ours current and retry.
          forget_current_context();
          ScopedContext again(dc_.ctx());
          r = launch();
        }
        if (r != 0)
          throw_cuda_error(r, "cuLaunchKernel",
                           detail::cat("launching kernel '", cmd.name, "' on cuda:", dc_.index(), " (grid ", sh.grid[0], "x",
                                       sh.grid[1], "x", sh.grid[2], ", block ", sh.block[0], "x", sh.block[1], "x",
                                       sh.block[2], ", ", sh.smem, " bytes of dynamic shared memory)"));
        count_kernel_launches(dc_.index(), 1);
        return;
      }
      case K::Copy:
        if (cmd.bytes > 0)
          CTILE_CU(cuMemcpyDtoDAsync_v2,
                   (static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(cmd.dst)),
                    static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(cmd.src)), static_cast<std::size_t>(cmd.bytes), s_),
                   "copying ", cmd.bytes, " bytes within cuda:", dc_.index());
        return;
      case K::Graph: {
        auto* g = dynamic_cast<CudaGraphExec*>(cmd.graph);
        CTILE_CHECK(g != nullptr && g->device_index() == dc_.index(), "cuda stream: a graph of another device or platform");
        g->launch(s_);
        item.host = g->host_errors();
        return;
      }
      case K::Host: {
        if (!drv_unchecked().cuLaunchHostFunc)
          throw UserError("host callbacks on CUDA streams need cuLaunchHostFunc, which this CUDA driver lacks");
        auto call = std::make_shared<HostCall>();
        call->fn = std::move(cmd.fn);
        CTILE_CU(cuLaunchHostFunc, (s_, &host_trampoline, call.get()), "queueing a host callback on ", device().str());
        item.host = std::move(call);  // kept until the stream's event after it completes
        return;
      }
      case K::Inline: {
        CurrentScope cur(&current_);
        cmd.fn();
        return;
      }
      case K::Marker:
        return;
    }
  }

  DeviceContext& dc_;
  std::uint64_t id_;
  CUstream s_ = nullptr;
  bool owned_ = true;                       // false: a foreign CUstream (never destroyed here)
  std::shared_ptr<const void> keep_alive_;  // what keeps a foreign stream alive
  CurrentStream current_;
  std::mutex mu_;
  std::atomic<int> inline_pending_{0};  // commands being finished in their submit (synchronize waits for them)
  std::unique_ptr<Completer> completer_;
};

}  // namespace

std::shared_ptr<StreamImpl> make_stream(int device) { return std::make_shared<CudaStream>(device); }
std::shared_ptr<StreamImpl> make_foreign_stream(int device, CUstream s, std::shared_ptr<const void> keep_alive) {
  return std::make_shared<CudaStream>(device, s, std::move(keep_alive));
}

}  // namespace ctile::platform::cuda
