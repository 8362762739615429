// The polling budget of spin.hpp (private to the library).
#include "spin.hpp"

#include <cstdlib>

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

}  // namespace ctile::detail
