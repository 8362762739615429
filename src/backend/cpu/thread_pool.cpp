#include "thread_pool.hpp"

#include <algorithm>

namespace ctile::backend::cpu {

ThreadPool& ThreadPool::instance() {
  static ThreadPool pool;
  return pool;
}

ThreadPool::ThreadPool() {
  const unsigned n = std::max(1u, std::thread::hardware_concurrency());
  threads_.reserve(n);
  for (unsigned i = 0; i < n; ++i) threads_.emplace_back([this] { worker(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lk(m_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void ThreadPool::worker() {
  std::unique_lock lk(m_);
  for (;;) {
    work_cv_.wait(lk, [&] { return stop_ || !jobs_.empty(); });
    if (stop_) return;
    Job* j = jobs_.front();
    if (--j->wanted <= 0) jobs_.pop_front();  // enough helpers: nobody else picks it up
    ++j->active;
    lk.unlock();
    (*j->body)();
    lk.lock();
    if (--j->active == 0) done_cv_.notify_all();
    // body returned: no work items are left, so later workers need not join.
    if (auto it = std::find(jobs_.begin(), jobs_.end(), j); it != jobs_.end()) jobs_.erase(it);
  }
}

void ThreadPool::run(const std::function<void()>& body, std::int64_t helpers) {
  helpers = std::min<std::int64_t>(helpers, static_cast<std::int64_t>(threads_.size()));
  if (helpers <= 0) {
    body();
    return;
  }
  Job j;
  j.body = &body;
  j.wanted = helpers;
  {
    std::lock_guard lk(m_);
    jobs_.push_back(&j);
  }
  if (helpers >= static_cast<std::int64_t>(threads_.size())) work_cv_.notify_all();
  else for (std::int64_t i = 0; i < helpers; ++i) work_cv_.notify_one();
  body();
  std::unique_lock lk(m_);
  if (auto it = std::find(jobs_.begin(), jobs_.end(), &j); it != jobs_.end()) jobs_.erase(it);
  done_cv_.wait(lk, [&] { return j.active == 0; });
}

}  // namespace ctile::backend::cpu
