// Many host threads on the CPU backend (label stress): launches into their own streams and into
// shared ones, reads of one shared tensor from every thread, bound kernels and graph replays per
// thread, and first launches of new specialisations from many threads at once (the kernel cache
// compiles each once: single flight). Each test runs for CTILE_STRESS_SECONDS (default 1) and checks
// every result against a host reference. Meant for ThreadSanitizer too (scripts/tsan_stress.sh).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <latch>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <ctile/ctile.hpp>

namespace ct = ctile;

namespace {

void acc(ct::Mut<std::int32_t, 1> z, ct::Ref<std::int32_t, 1> x) { z.store(z.load() + ct::load_like(x, z)); }
void times_k(ct::Mut<std::int32_t, 1> z, ct::Ref<std::int32_t, 1> x, ct::Const<std::int32_t> k) {
  z.store(ct::load_like(x, z) * k.value());
}
void axpy(ct::Mut<std::int32_t, 1> y, ct::Scalar<std::int32_t> a, ct::Ref<std::int32_t, 1> x) {
  y.store(a * ct::load_like(x, y) + y.load());
}

using P = ct::Partition<std::int32_t>;
using S = ct::Shared<std::int32_t>;
using Clock = std::chrono::steady_clock;

double stress_seconds() {
  const char* v = std::getenv("CTILE_STRESS_SECONDS");
  const double s = v && *v ? std::atof(v) : 1.0;
  return s > 0 ? s : 1.0;
}
Clock::time_point deadline() {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(stress_seconds()));
}
int threads() {
  const unsigned hw = std::thread::hardware_concurrency();
  return static_cast<int>(std::max(4u, std::min(8u, hw * 2)));
}

constexpr std::int64_t kN = 192;  // three tiles of 64: every launch runs several blocks

S input(unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_int_distribution<int> d(-5, 5);
  std::vector<std::int32_t> h(kN);
  for (auto& v : h) v = d(g);
  return ct::from_host<std::int32_t>(std::span<const std::int32_t>(h), {kN}, ct::cpu()).share();
}

// Runs body(thread index) on threads() threads started together; collects failures as strings
// (gtest assertions are not made off the main thread).
template <class F>
std::vector<std::string> run_threads(F body) {
  const int n = threads();
  std::latch start(n);
  std::vector<std::string> errors(static_cast<std::size_t>(n));
  std::vector<std::thread> ts;
  for (int t = 0; t < n; ++t)
    ts.emplace_back([&, t] {
      start.arrive_and_wait();
      try {
        body(t, errors[static_cast<std::size_t>(t)]);
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(t)] = std::string("exception: ") + e.what();
      }
    });
  for (auto& t : ts) t.join();
  std::vector<std::string> bad;
  for (int t = 0; t < n; ++t)
    if (!errors[static_cast<std::size_t>(t)].empty()) bad.push_back("thread " + std::to_string(t) + ": " + errors[static_cast<std::size_t>(t)]);
  return bad;
}

// z after `steps` acc launches from zero, checked against steps * x.
void check(std::string& err, const std::vector<std::int32_t>& z, const std::vector<std::int32_t>& x, std::int64_t steps, const char* what) {
  for (std::size_t i = 0; i < z.size(); ++i)
    if (z[i] != static_cast<std::int32_t>(steps * x[i])) {
      if (err.empty())
        err = std::string(what) + ": element " + std::to_string(i) + " is " + std::to_string(z[i]) + ", want " +
              std::to_string(steps * x[i]);
      return;
    }
}

TEST(LaunchStress, TheChecksSeeAWrongResult) {
  std::string err;
  check(err, {2, 4, 7}, {1, 2, 3}, 2, "self-test");  // 7 != 2 * 3
  EXPECT_EQ(err, "self-test: element 2 is 7, want 6");
  const auto bad = run_threads([](int t, std::string& e) {
    if (t == 1) throw std::runtime_error("thrown on purpose");
  });
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0], "thread 1: exception: thrown on purpose");
}

TEST(LaunchStress, ThreadsLaunchIntoOwnAndSharedStreamsReadingOneTensor) {
  const S x = input(1);
  const auto hx = x.to_host();
  std::vector<ct::Stream> shared = {ct::Stream::create(ct::cpu()), ct::Stream::create(ct::cpu())};
  const auto end = deadline();
  std::atomic<long> launches{0};
  const auto bad = run_threads([&](int t, std::string& err) {
    auto own = ct::Stream::create(ct::cpu());
    std::mt19937 g(static_cast<unsigned>(t));
    while (Clock::now() < end && err.empty()) {
      // A chain of 1..20 launches, each step on this thread's stream or a shared one.
      const int steps = std::uniform_int_distribution<int>(1, 20)(g);
      auto pick = [&]() -> const ct::Stream& { return g() % 3 == 0 ? own : shared[g() % 2]; };
      auto f = ct::launch(acc, ct::zeros<std::int32_t>({kN}, ct::cpu()).partition({64}), x).async_on(pick());
      for (int i = 1; i < steps; ++i)
        f = std::move(f).then_on(pick(), [](std::tuple<P, S>&& h) { return ct::launch(acc, std::move(std::get<0>(h)), std::get<1>(h)); });
      auto [z, x2] = std::move(f).get();
      check(err, std::move(z).unpartition().to_host(), hx, steps, "chain");
      launches += steps;
    }
  });
  EXPECT_TRUE(bad.empty()) << bad.front();
  EXPECT_GT(launches.load(), threads());
  EXPECT_EQ(x.holders(), 1);  // every launch's copy of the handle is gone
}

TEST(LaunchStress, FirstLaunchesFromManyThreadsCompileOnce) {
  // Round after round, every thread launches the same new specialisation (a Const value no one
  // used yet) at once: one compile per value, and every thread gets the right result.
  const S x = input(2);
  const auto hx = x.to_host();
  const auto end = deadline();
  int rounds = 0;
  static std::int32_t next_k = 1000;  // values no earlier run in this process used (--gtest_repeat)
  for (std::int32_t k = next_k; Clock::now() < end || rounds < 3; ++k, ++rounds, next_k = k + 1) {
    const auto before = ct::detail::kernel_cache_stats(times_k);
    const auto bad = run_threads([&](int, std::string& err) {
      auto [z, x2, c] = ct::launch(times_k, ct::zeros<std::int32_t>({kN}, ct::cpu()).partition({64}), x, k).sync();
      check(err, std::move(z).unpartition().to_host(), hx, k, "times_k");
    });
    ASSERT_TRUE(bad.empty()) << bad.front();
    const auto after = ct::detail::kernel_cache_stats(times_k);
    ASSERT_EQ(after.compiles - before.compiles, 1u) << "k = " << k << ": " << after.compiles - before.compiles << " compiles";
    ASSERT_EQ(after.specialisations - before.specialisations, 1u);
    ASSERT_EQ(after.hits - before.hits, static_cast<std::uint64_t>(threads() - 1)) << "k = " << k;
  }
}

TEST(LaunchStress, BoundKernelsAndGraphReplaysPerThread) {
  const S x = input(3);
  const auto hx = x.to_host();
  const auto end = deadline();
  const auto bad = run_threads([&](int t, std::string& err) {
    auto s = ct::Stream::create(ct::cpu());
    auto k = ct::bind_on(s, axpy, ct::spec::partition<std::int32_t>({kN}, {64}), 0, ct::spec::shared<std::int32_t>({kN}));
    // y = a x + y with a = t + 1, through the bound kernel; the same through a captured graph.
    auto y = ct::zeros<std::int32_t>({kN}, ct::cpu()).partition({64});
    auto gy = ct::zeros<std::int32_t>({kN}, ct::cpu()).partition({64});
    auto g = ct::capture(ct::cpu(), [&](ct::Capture& cap) { return ct::launch(axpy, std::move(gy), t + 1, x).async_on(cap.stream()); });
    std::int64_t calls = 0;
    while (Clock::now() < end && err.empty()) {
      auto [y2, a, x2] = k(s, std::move(y), t + 1, x).get();
      y = std::move(y2);
      g = std::move(g).replay(s).get();
      ++calls;
    }
    const auto hy = std::move(y).unpartition().to_host();
    const auto hg = g.read<0>();
    std::vector<std::int32_t> want(hx.size());
    for (std::size_t i = 0; i < hx.size(); ++i) want[i] = static_cast<std::int32_t>(calls * (t + 1) * hx[i]);
    if (hy != want) err = "bound kernel results differ from the reference after " + std::to_string(calls) + " calls";
    else if (hg != want) err = "graph replay results differ from the reference after " + std::to_string(calls) + " replays";
  });
  EXPECT_TRUE(bad.empty()) << bad.front();
  EXPECT_EQ(x.holders(), 1);  // the graphs and bound calls gave their handles back
}

}  // namespace
