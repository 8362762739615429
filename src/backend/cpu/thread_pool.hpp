// A process-wide pool of worker threads for running tile blocks. Private to backend/cpu.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ctile::backend::cpu {

class ThreadPool {
 public:
  // hardware_concurrency() workers, created on first use.
  static ThreadPool& instance();
  ~ThreadPool();

  // Runs `body` on the calling thread and on up to `helpers` idle workers at once. `body` must pull
  // its work items itself (e.g. from an atomic counter), return when none are left, and not throw.
  // Returns when every thread that entered `body` has left it. Several threads may call run at once.
  void run(const std::function<void()>& body, std::int64_t helpers);

  int workers() const { return static_cast<int>(threads_.size()); }

 private:
  ThreadPool();
  struct Job {
    const std::function<void()>* body = nullptr;
    std::int64_t wanted = 0;  // helpers still welcome
    int active = 0;           // workers inside body
  };
  void worker();

  std::mutex m_;
  std::condition_variable work_cv_, done_cv_;
  std::deque<Job*> jobs_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace ctile::backend::cpu
