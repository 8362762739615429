#include "harness.hpp"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <random>
#include <utility>

namespace gpu_test {
namespace {

struct Registry {
  std::vector<std::pair<std::string, TestFn>> tests;
};
Registry& registry() {
  static Registry r;
  return r;
}

int g_failures = 0;
std::uint64_t g_seed = 0;

std::uint64_t mix(std::uint64_t x) {  // splitmix64
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

Registrar::Registrar(const char* name, TestFn fn) { registry().tests.emplace_back(name, fn); }

FailureMessage::FailureMessage(const char* file, int line, const char* expr, bool fatal)
    : file_(file), line_(line), expr_(expr), fatal_(fatal) {}

FailureMessage::~FailureMessage() noexcept(false) {
  ++g_failures;
  const std::string msg = os_.str();
  std::printf("    %s:%d: FAILED: %s%s%s\n", file_, line_, expr_, msg.empty() ? "" : ": ", msg.c_str());
  std::fflush(stdout);
  if (fatal_ && std::uncaught_exceptions() == 0) throw AbortTest{};
}

std::uint64_t seed(std::uint64_t salt) { return mix(g_seed ^ mix(salt)); }

ct::Device gpu() { return ct::Device{ct::DeviceKind::Cuda, 0}; }

int failures() { return g_failures; }

}  // namespace gpu_test

int main(int argc, char** argv) {
  using namespace gpu_test;
  std::vector<std::string> filters(argv + 1, argv + argc);
  if (!filters.empty() && filters[0] == "--list") {
    for (const auto& [name, fn] : registry().tests) std::printf("%s\n", name.c_str());
    return 0;
  }
  if (!ct::cuda_available()) {
    std::printf("SKIPPED: no usable GPU: %s\n", ct::cuda_unavailable_reason().c_str());
    return 77;
  }
  if (!filters.empty() && filters[0] == "--probe") {  // is the GPU usable? (scripts/gpu_run.sh)
    std::printf("%s\n", ct::describe(gpu()).c_str());
    return 0;
  }
  if (const char* s = std::getenv("CTILE_GPU_SEED"); s && *s)
    g_seed = std::strtoull(s, nullptr, 0);
  else
    g_seed = (static_cast<std::uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  std::printf("ctile GPU suite on %s\nseed %llu (rerun with CTILE_GPU_SEED=%llu)\n", ct::describe(gpu()).c_str(),
              static_cast<unsigned long long>(g_seed), static_cast<unsigned long long>(g_seed));
  int run = 0, failed = 0;
  std::vector<std::string> failed_names;
  const auto t_all = std::chrono::steady_clock::now();
  for (const auto& [name, fn] : registry().tests) {
    bool selected = filters.empty();
    for (const auto& f : filters) selected = selected || name.find(f) != std::string::npos;
    if (!selected) continue;
    ++run;
    std::printf("[ RUN  ] %s\n", name.c_str());
    std::fflush(stdout);
    const int before = g_failures;
    const auto t0 = std::chrono::steady_clock::now();
    try {
      fn();
    } catch (const AbortTest&) {
    } catch (const std::exception& e) {
      ++g_failures;
      std::printf("    exception: %s\n", e.what());
    } catch (...) {
      ++g_failures;
      std::printf("    unknown exception\n");
    }
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const bool ok = g_failures == before;
    if (!ok) {
      ++failed;
      failed_names.push_back(name);
    }
    std::printf("[ %s ] %s (%.1f ms)\n", ok ? "PASS" : "FAIL", name.c_str(), ms);
    std::fflush(stdout);
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_all).count();
  std::printf("\n%d of %d GPU tests passed in %.1f s (seed %llu)\n", run - failed, run, s,
              static_cast<unsigned long long>(g_seed));
  for (const auto& n : failed_names) std::printf("FAILED: %s\n", n.c_str());
  if (run == 0) {
    std::printf("no test matched the filters\n");
    return 1;
  }
  return failed == 0 ? 0 : 1;
}
