#include "ctile/runtime/stream.hpp"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "../platform/cuda/stream.hpp"
#include "ctile/core/error.hpp"
#include "../platform/spin.hpp"

namespace ctile {
namespace {

struct Item {
  StreamTask task;
  std::vector<Event> wait_for;
  Event done;
};

// State shared by a CPU stream and its worker thread; the worker keeps it alive on its own, so a
// stream whose last handle is dropped by one of its own tasks can let the worker finish alone.
struct CpuQueue {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Item> items;
  bool closing = false;
  bool idle = false;  // the worker sleeps on `cv`: an enqueue must wake it (otherwise it will look anyway)
  // Copies of items.size() and `closing` for polling without the lock (written under it).
  std::atomic<std::size_t> queued{0};
  std::atomic<bool> closing_hint{false};
};

void run_worker(const std::shared_ptr<CpuQueue>& q) {
  bool after_item = false;
  for (;;) {
    // After a task, poll for the next one for a short while before sleeping (spin.hpp): an enqueue
    // to a sleeping worker costs the enqueuing thread a futex wake.
    if (after_item)
      (void)detail::spin_until([&] {
        return q->queued.load(std::memory_order_acquire) != 0 || q->closing_hint.load(std::memory_order_acquire);
      });
    Item it;
    {
      std::unique_lock lk(q->mu);
      q->idle = true;
      q->cv.wait(lk, [&] { return q->closing || !q->items.empty(); });
      q->idle = false;
      if (q->items.empty()) return;  // closing and drained
      it = std::move(q->items.front());
      q->items.pop_front();
      q->queued.store(q->items.size(), std::memory_order_release);
    }
    after_item = true;
    std::exception_ptr err;
    for (const Event& e : it.wait_for) {  // wait for all, even after a failure: order is kept
      e.wait();
      if (!err) err = e.error();
    }
    it.wait_for.clear();
    if (!err) {
      try {
        it.task();
      } catch (...) {
        err = std::current_exception();
      }
    }
    it.task.reset();  // captures die before the event says "done": use counts are exact then
    Event done = std::move(it.done);
    done.complete(err);
  }
}

class CpuStream final : public StreamImpl {
 public:
  explicit CpuStream(Device d) : device_(d), q_(std::make_shared<CpuQueue>()) {
    worker_ = std::thread([q = q_] { run_worker(q); });
    worker_id_ = worker_.get_id();
  }
  ~CpuStream() override {
    {
      std::lock_guard lk(q_->mu);
      q_->closing = true;
      q_->closing_hint.store(true, std::memory_order_release);
    }
    q_->cv.notify_all();
    if (std::this_thread::get_id() == worker_id_)
      worker_.detach();  // the last handle died inside one of our own tasks: the worker drains and exits alone
    else
      worker_.join();
  }
  CpuStream(const CpuStream&) = delete;
  CpuStream& operator=(const CpuStream&) = delete;

  Device device() const override { return device_; }

  Event enqueue(StreamTask task, std::vector<Event> wait_for) override {
    Event done = Event::create();
    bool wake = false;
    {
      std::lock_guard lk(q_->mu);
      q_->items.push_back(Item{std::move(task), std::move(wait_for), done});
      q_->queued.store(q_->items.size(), std::memory_order_release);
      wake = q_->idle;
    }
    if (wake) q_->cv.notify_one();  // a busy worker finds the item without a futex call
    return done;
  }

  void synchronize() override {
    if (std::this_thread::get_id() == worker_id_)
      throw UserError("Stream::synchronize called from a task running on the same stream (it would wait for itself)");
    enqueue(StreamTask([] {}), {}).wait();
  }

 private:
  Device device_;
  std::shared_ptr<CpuQueue> q_;
  std::thread worker_;
  std::thread::id worker_id_;
};

void check_handle(const std::shared_ptr<StreamImpl>& impl) {
  if (!impl) throw UserError("use of an empty Stream handle (default-constructed or moved-from)");
}

}  // namespace

Stream Stream::create(Device d) {
  if (d.kind == DeviceKind::Cuda) return Stream(platform::cuda::make_stream(d.index));
  if (d.index != 0) throw UserError(detail::cat("Stream::create(", d.str(), "): the CPU device has index 0 only"));
  return Stream(std::make_shared<CpuStream>(d));
}

Device Stream::device() const {
  check_handle(impl_);
  return impl_->device();
}

Event Stream::enqueue(StreamTask task, std::vector<Event> wait_for) {
  check_handle(impl_);
  return impl_->enqueue(std::move(task), std::move(wait_for));
}

void Stream::synchronize() {
  check_handle(impl_);
  impl_->synchronize();
}

const std::shared_ptr<StreamImpl>& Stream::impl() const {
  check_handle(impl_);
  return impl_;
}

Stream default_stream(Device d) {
  static std::mutex mu;
  static std::map<std::pair<int, int>, Stream> streams;
  std::lock_guard lk(mu);
  auto key = std::make_pair(static_cast<int>(d.kind), d.index);
  auto it = streams.find(key);
  if (it == streams.end()) it = streams.emplace(key, Stream::create(d)).first;
  return it->second;
}

}  // namespace ctile
