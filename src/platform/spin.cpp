// The polling budget of spin.hpp (private to the library).
#include "spin.hpp"

#include <cstdlib>
#include <mutex>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <sched.h>
#endif

namespace ctile::detail {

namespace {

// Processors this process may run on (its affinity mask: a container limited to 2 CPUs of a large
// machine counts 2).
unsigned usable_cpus() {
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return static_cast<unsigned>(CPU_COUNT(&set));
#endif
  return std::thread::hardware_concurrency();
}

}  // namespace

std::chrono::nanoseconds spin_budget() {
  static const std::chrono::nanoseconds budget = [] {
    using std::chrono::microseconds;
    if (const char* v = std::getenv("CTILE_SPIN_US"); v && *v) {
      char* end = nullptr;
      const long us = std::strtol(v, &end, 10);
      if (*end == '\0' && us >= 0) return std::chrono::nanoseconds(microseconds(us < 100000 ? us : 100000));
    }
    return std::chrono::nanoseconds(usable_cpus() >= 4 ? microseconds(50) : microseconds(0));
  }();
  return budget;
}

std::atomic<int>& host_waiters() {
  static std::atomic<int> n{0};
  return n;
}

namespace {

struct Sleepers {
  std::mutex mu;
  std::vector<std::pair<void*, void (*)(void*)>> list;
  std::atomic<int> asleep{0};
};

Sleepers& sleepers() {
  static Sleepers* s = new Sleepers;  // never destroyed: completion threads may outlive static destruction
  return *s;
}

}  // namespace

void add_sleeper(void* key, void (*wake)(void*)) {
  Sleepers& s = sleepers();
  std::lock_guard lk(s.mu);
  s.list.emplace_back(key, wake);
}

void remove_sleeper(void* key) {
  Sleepers& s = sleepers();
  std::lock_guard lk(s.mu);
  std::erase_if(s.list, [&](const auto& e) { return e.first == key; });
}

void note_sleep(bool asleep) { sleepers().asleep.fetch_add(asleep ? 1 : -1, std::memory_order_seq_cst); }

void wake_sleepers() {
  Sleepers& s = sleepers();
  if (s.asleep.load(std::memory_order_seq_cst) == 0) return;
  std::lock_guard lk(s.mu);
  for (const auto& [key, wake] : s.list) wake(key);
}

}  // namespace ctile::detail
