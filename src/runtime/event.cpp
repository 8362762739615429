#include "ctile/runtime/event.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <thread>
#include <utility>

#include "../platform/native_event.hpp"
#include "../platform/spin.hpp"
#include "capture.hpp"
#include "ctile/core/error.hpp"
#include "ctile/runtime/pool.hpp"

namespace ctile {
namespace detail {

struct EventState;

// The shared part of Event::when_all: counts the inputs still pending and keeps the first error in
// input order. The result's state lives in the same allocation (the result Event aliases it), and
// each input holds the Join through its callback, so a when_all costs one allocation.
struct Join;

// A completion callback: an on_complete function, or the arrival of a when_all input (no
// std::function, so no allocation of its own).
struct Callback {
  std::function<void(std::exception_ptr)> fn;
  std::shared_ptr<Join> join;
  std::size_t index = 0;
  void operator()(const std::exception_ptr& err);
};

// `done` (EventHead) is set (release) under `mu` after `error` is written; neither changes
// afterwards, so done() and error() read them without the lock (they are on every launch's path:
// dependency pruning). Callbacks wait in `first` and then `more` (most events get at most one: no
// vector allocation). A native marker made with the event lives in `own_native`.
struct EventState : EventHead {
  mutable std::mutex mu;
  mutable std::condition_variable cv;
  bool has_first = false;
  std::exception_ptr error;  // written once, before `done`
  Callback first;
  std::vector<Callback> more;
  NativeEvent own_native;
  bool is_done() const { return done.load(std::memory_order_acquire); }
};

EventState& st(const std::shared_ptr<EventHead>& h) { return static_cast<EventState&>(*h); }

struct Join {
  std::mutex mu;
  std::size_t left = 0;
  std::size_t failed = std::numeric_limits<std::size_t>::max();  // input position of `error`
  std::exception_ptr error;
  EventState result;
};

namespace {

// Adds `cb` to a pending state (returns true), or returns false when the state is done already.
bool add_callback(EventState& s, Callback&& cb) {
  std::lock_guard lk(s.mu);
  if (s.done.load(std::memory_order_relaxed)) return false;
  if (!s.has_first) {
    s.first = std::move(cb);
    s.has_first = true;
  } else {
    s.more.push_back(std::move(cb));
  }
  return true;
}

// Event::complete on a state the caller keeps alive.
void complete_state(EventState& s, const std::exception_ptr& err) {
  Callback first;
  bool has_first = false;
  std::vector<Callback> more;
  {
    std::lock_guard lk(s.mu);
    if (s.done.load(std::memory_order_relaxed)) throw UserError("Event::complete called twice on the same event");
    s.error = err;
    s.done.store(true, std::memory_order_release);
    has_first = std::exchange(s.has_first, false);
    if (has_first) first = std::move(s.first);
    more.swap(s.more);
  }
  s.cv.notify_all();
  if (has_first) first(err);
  for (auto& cb : more) cb(err);
}

}  // namespace

void Callback::operator()(const std::exception_ptr& err) {
  if (!join) {
    fn(err);
    return;
  }
  Join& j = *join;  // kept alive by `join` (this callback) until the end of the call
  {
    std::lock_guard lk(j.mu);
    if (err && index < j.failed) {
      j.failed = index;
      j.error = err;
    }
    if (--j.left != 0) return;
  }
  complete_state(j.result, j.error);
}

}  // namespace detail

Event Event::create() { return Event(detail::make_pooled<detail::EventState>()); }

Event Event::create_ordered(std::uint64_t order) {
  auto s = detail::make_pooled<detail::EventState>();
  s->order = order;
  return Event(std::move(s));
}

Event Event::create_native(std::uint64_t order, detail::NativeEvent*& native) {
  auto s = detail::make_pooled<detail::EventState>();
  s->order = order;
  s->native = &s->own_native;
  native = s->native;
  return Event(std::move(s));
}

Event Event::ready() { return Event(); }

Event Event::create_captured() {
  auto s = detail::make_pooled<detail::EventState>();
  s->captured = true;
  return Event(std::move(s));
}

void Event::complete(std::exception_ptr err) {
  if (!state_) throw UserError("Event::complete on an event that is already done (a ready or default-constructed Event)");
  detail::complete_state(detail::st(state_), err);  // `this` keeps the state alive
}

void Event::wait() const {
  if (!state_) return;
  detail::EventState& s = detail::st(state_);
  if (s.captured && !s.is_done()) return;  // a graph node: it never runs here (the caller checks done())
  if (s.is_done()) return;
  const detail::HostWaitScope waiting;  // completion threads complete at once while someone waits
  // Poll for a short while first (spin.hpp: a sleeping waiter is woken through the kernel).
  if (detail::spin_until([&] { return s.is_done(); })) return;
  std::unique_lock lk(s.mu);
  s.cv.wait(lk, [&] { return s.is_done(); });
}

std::exception_ptr Event::error() const {
  if (!state_ || !state_->done.load(std::memory_order_acquire)) return nullptr;
  return detail::st(state_).error;
}

void Event::on_complete(std::function<void(std::exception_ptr)> cb) const {
  if (state_) {
    detail::Callback c;
    c.fn = std::move(cb);
    if (detail::add_callback(detail::st(state_), std::move(c))) return;
    c.fn(detail::st(state_).error);  // done already (add_callback left `c` alone)
    return;
  }
  cb(nullptr);
}

Event Event::join_of(Event* events, std::size_t count) {
  // Drop events that already succeeded (compacting in place); the rest report into a Join. The Join
  // holds no Event, so a never-completed input keeps nothing alive but its own callback's reference.
  std::size_t n = 0;
  for (std::size_t i = 0; i < count; ++i) {
    Event& e = events[i];
    if (e.done() && !e.error()) continue;
    if (n != i) events[n] = std::move(e);
    ++n;
  }
  if (n == 0) return ready();
  if (n == 1) return std::move(events[0]);
  auto join = detail::make_pooled<detail::Join>();
  join->left = n;
  for (std::size_t i = 0; i < n; ++i) join->result.captured |= events[i].state_->captured;
  Event result(std::shared_ptr<detail::EventHead>(join, &join->result));
  if (join->result.captured) detail::note_captured_join(result, events, n);  // the capture maps it to its nodes
  for (std::size_t i = 0; i < n; ++i) {
    detail::Callback c;
    c.join = join;
    c.index = i;
    detail::EventState& s = detail::st(events[i].state_);
    if (detail::add_callback(s, std::move(c))) continue;
    c(s.error);  // completed meanwhile (add_callback left `c` alone): arrive now
  }
  return result;
}

Event Event::when_all(std::vector<Event> events) { return join_of(events.data(), events.size()); }

Event Event::when_all(Event a, Event b) {
  Event two[2] = {std::move(a), std::move(b)};
  return join_of(two, 2);
}

}  // namespace ctile
