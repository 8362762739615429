// Bounded polling before sleeping, for the waits on a launch's path (private to the library).
//
// A thread that sleeps on a condition variable is woken through the kernel: the waking thread pays
// a futex call and the sleeper a context switch plus the scheduler's wake-up latency (several
// microseconds on an idle core, far more on a busy machine). Two such hand-offs sit on the path of
// every short launch: the stream's completion thread, woken by each enqueue, and a host thread
// waiting for the launch's event. Both first poll for a short while (spin_budget()) and sleep only
// if nothing happened by then, so back-to-back launches and short waits cost no kernel round trip.
//
// The budget is CTILE_SPIN_US microseconds when set (0 turns polling off), otherwise 50 us when the
// process may run on at least 4 processors (its affinity mask) and 0 (sleep at once) below that,
// where a polling thread would take the processor from the thread it waits for.
#pragma once

#include <atomic>
#include <chrono>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace ctile::detail {

// The polling budget (read once per process).
std::chrono::nanoseconds spin_budget();

// Host threads blocked in Event::wait right now (any event). A CUDA stream's completion thread
// paces its questions to the driver (or, unpaced, holds finished work back for a batch) only while
// this is 0, so that a waiting thread is never kept waiting for a look or a batch.
std::atomic<int>& host_waiters();
// Threads that sleep between paced looks at finished work (a CUDA stream's completion thread while
// no host thread waits: it asks the driver at its own pace instead of waiting inside it) register a
// waker here. A host thread that starts to wait (HostWaitScope) wakes the sleeping ones, so that
// they serve it at once rather than at their next look. `wake(key)` must be cheap when the
// thread it wakes is not asleep, and must not call back into the registry.
void add_sleeper(void* key, void (*wake)(void*));
void remove_sleeper(void* key);  // after it returns, `wake(key)` is never called again
// Threads between note_sleep(true) and note_sleep(false) (the registry's fast path: with none, a
// waiter takes no lock).
void note_sleep(bool asleep);
// Wakes every registered sleeper (called by HostWaitScope after it counted the waiter).
void wake_sleepers();

// Counts the calling thread in host_waiters() for its lifetime, and wakes the sleepers.
class HostWaitScope {
 public:
  HostWaitScope() {
    host_waiters().fetch_add(1, std::memory_order_seq_cst);
    wake_sleepers();
  }
  ~HostWaitScope() { host_waiters().fetch_sub(1, std::memory_order_relaxed); }
  HostWaitScope(const HostWaitScope&) = delete;
  HostWaitScope& operator=(const HostWaitScope&) = delete;
};

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Polls `ready()` until it is true (returns true) or the budget is spent (returns false).
template <class Ready>
bool spin_until(Ready&& ready) {
  if (ready()) return true;
  const std::chrono::nanoseconds budget = spin_budget();
  if (budget.count() <= 0) return false;
  const auto until = std::chrono::steady_clock::now() + budget;
  for (unsigned i = 1;; ++i) {
    if (ready()) return true;
    if (i % 32 == 0) {
      if (std::chrono::steady_clock::now() >= until) return ready();
      // Let a runnable thread have this processor (on a busy machine it may be the one we wait for).
      std::this_thread::yield();
    } else {
      cpu_relax();
    }
  }
}

}  // namespace ctile::detail
