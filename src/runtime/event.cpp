#include "ctile/runtime/event.hpp"

#include <condition_variable>
#include <cstddef>
#include <mutex>

#include "ctile/core/error.hpp"

namespace ctile {
namespace detail {

struct EventState {
  mutable std::mutex mu;
  mutable std::condition_variable cv;
  bool done = false;
  std::exception_ptr error;
  std::vector<std::function<void(std::exception_ptr)>> callbacks;
  std::shared_ptr<NativeEvent> native;  // set at creation, never changed
};

}  // namespace detail

Event Event::create() { return Event(std::make_shared<detail::EventState>()); }

Event Event::create(std::shared_ptr<detail::NativeEvent> native) {
  auto s = std::make_shared<detail::EventState>();
  s->native = std::move(native);
  return Event(std::move(s));
}

Event Event::ready() { return Event(); }

std::shared_ptr<detail::NativeEvent> Event::native() const { return state_ ? state_->native : nullptr; }

void Event::complete(std::exception_ptr err) {
  if (!state_) throw UserError("Event::complete on an event that is already done (a ready or default-constructed Event)");
  std::vector<std::function<void(std::exception_ptr)>> cbs;
  {
    std::lock_guard lk(state_->mu);
    if (state_->done) throw UserError("Event::complete called twice on the same event");
    state_->done = true;
    state_->error = err;
    cbs.swap(state_->callbacks);
  }
  state_->cv.notify_all();
  for (auto& cb : cbs) cb(err);
}

void Event::wait() const {
  if (!state_) return;
  std::unique_lock lk(state_->mu);
  state_->cv.wait(lk, [&] { return state_->done; });
}

bool Event::done() const {
  if (!state_) return true;
  std::lock_guard lk(state_->mu);
  return state_->done;
}

std::exception_ptr Event::error() const {
  if (!state_) return nullptr;
  std::lock_guard lk(state_->mu);
  return state_->error;
}

void Event::on_complete(std::function<void(std::exception_ptr)> cb) const {
  if (state_) {
    std::unique_lock lk(state_->mu);
    if (!state_->done) {
      state_->callbacks.push_back(std::move(cb));
      return;
    }
    std::exception_ptr err = state_->error;
    lk.unlock();
    cb(err);
    return;
  }
  cb(nullptr);
}

Event Event::when_all(std::vector<Event> events) {
  // Drop events that already succeeded; the rest report into a shared counter. The counter holds
  // no Event, so a never-completed input leaks nothing but its own callback.
  std::vector<Event> pending;
  for (auto& e : events) {
    if (e.done() && !e.error()) continue;
    pending.push_back(std::move(e));
  }
  if (pending.empty()) return ready();
  if (pending.size() == 1) return std::move(pending.front());
  struct Join {
    std::mutex mu;
    std::size_t left;
    std::vector<std::exception_ptr> errors;  // by position in `pending`
    Event result = Event::create();
  };
  auto join = std::make_shared<Join>();
  join->left = pending.size();
  join->errors.resize(pending.size());
  Event result = join->result;
  for (std::size_t i = 0; i < pending.size(); ++i) {
    pending[i].on_complete([join, i](std::exception_ptr err) {
      std::exception_ptr first;
      {
        std::lock_guard lk(join->mu);
        join->errors[i] = err;
        if (--join->left != 0) return;
        for (auto& e : join->errors)
          if (e) { first = e; break; }
      }
      Event r = std::move(join->result);  // break the Join -> Event link before completing
      r.complete(first);
    });
  }
  return result;
}

}  // namespace ctile
