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

std::uint64_t gpu_launches() {
  std::uint64_t n = 0;
  for (int d = 0; d < ct::cuda_device_count(); ++d) n += ct::cuda_launch_count(d);
  return n;
}

}  // namespace gpu_test

namespace {

// Test selection: with no filter every test but the harness's self-tests; a filter selects the
// tests whose names contain it, "-text" leaves out those containing "text" (after the selection:
// only "-" filters select every test first). selftest_* run only when a filter names them.
bool selected(const std::string& name, const std::vector<std::string>& filters) {
  const bool self = name.rfind("selftest_", 0) == 0;
  bool any_positive = false, in = false;
  for (const auto& f : filters) {
    if (!f.empty() && f[0] == '-') continue;
    any_positive = true;
    in = in || (name.find(f) != std::string::npos && (!self || f.rfind("selftest_", 0) == 0));
  }
  if (!any_positive) in = !self;
  for (const auto& f : filters)
    if (f.size() > 1 && f[0] == '-' && name.find(f.substr(1)) != std::string::npos) in = false;
  return in;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gpu_test;
  std::vector<std::string> filters(argv + 1, argv + argc);
  if (!filters.empty() && filters[0] == "--list") {  // --list [filters]: the names selected
    filters.erase(filters.begin());
    for (const auto& [name, fn] : registry().tests)
      if (filters.empty() || selected(name, filters)) std::printf("%s\n", name.c_str());
    return 0;
  }
  const bool probe = !filters.empty() && filters[0] == "--probe";  // is the GPU usable? (scripts/gpu_run.sh)
  // Refuse to run where passing would prove nothing about the GPU: with the race checker every
  // launch runs on the CPU interpreter, with another backend nothing runs on the GPU at all.
  if (const char* r = std::getenv("CTILE_RACE_CHECK"); r && *r && !probe) {
    std::printf("REFUSED: CTILE_RACE_CHECK=%s is set: every launch would run on the CPU interpreter, not on the "
                "GPU. Unset it to run the GPU suite.\n", r);
    return 1;
  }
  if (const char* b = std::getenv("CTILE_BACKEND"); b && *b && std::strcmp(b, "cuda") != 0 && !probe) {
    std::printf("REFUSED: CTILE_BACKEND=%s: the GPU suite runs on the CUDA backend only (unset it or set it to cuda).\n", b);
    return 1;
  }
  if (!ct::cuda_available()) {
    // Asked for the GPU suite where there is no GPU: a failure, never a pass or a skip.
    std::printf("FAILED: the GPU suite needs a usable GPU: %s\n", ct::cuda_unavailable_reason().c_str());
    return probe ? 77 : 1;
  }
  if (probe) {
    std::printf("%s\n", ct::describe(gpu()).c_str());
    return 0;
  }
  if (ct::backend_name(ct::default_device()) != "cuda") {
    std::printf("REFUSED: the default device is %s, not the GPU.\n", ct::default_device().str().c_str());
    return 1;
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
    // selftest_* prove the harness's own checks (they must fail, see CMakeLists.txt): only when
    // a filter names them.
    if (!selected(name, filters)) continue;
    ++run;
    std::printf("[ RUN  ] %s\n", name.c_str());
    std::fflush(stdout);
    const int before = g_failures;
    const std::uint64_t launches = gpu_launches();
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
    // Proof that the GPU ran: every test launches at least one kernel through the CUDA backend.
    if (gpu_launches() == launches) {
      ++g_failures;
      std::printf("    FAILED: no kernel ran on the GPU in this test (ctile::cuda_launch_count did not grow)\n");
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
