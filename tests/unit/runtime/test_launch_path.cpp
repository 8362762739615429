// The launch path on the CPU backend: a follow-up launch (Future::then) runs after the previous
// step, also on another stream and with no tensor in common, and is skipped with the previous
// step's error when that failed; long mixed chains give the serial result; the block pool of event
// and future states reuses blocks, also across threads (that a warm launch allocates nothing is
// tests/unit/cuda_runtime/test_launch_alloc.cpp); a view's specialisation facts are computed once
// and agree with a fresh computation; the per-thread record cache in front of the kernel cache
// (more specialisations than it has entries, hit counting, a launch after a miss on another thread)
// and the thread's last launch of each kernel (the same views again skip the checks, nothing else).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include <ctile/ctile.hpp>

#include "test_helpers.hpp"

namespace ct = ctile;
using ct::test::expect_user_error;
using namespace std::chrono_literals;

namespace {

void times_k(ct::Mut<std::int32_t, 1> z, ct::Ref<std::int32_t, 1> x, ct::Const<std::int32_t> k) {
  z.store(ct::load_like(x, z) * k.value());
}
void acc(ct::Mut<std::int32_t, 1> z, ct::Ref<std::int32_t, 1> x) { z.store(z.load() + ct::load_like(x, z)); }
void scale(ct::Mut<std::int32_t, 1> z, ct::Scalar<std::int32_t> a) { z.store(z.load() * a); }
void copy_times(ct::Mut<float, 1> z, ct::Ref<float, 1> x, ct::Const<int> k) {
  z.store(ct::load_like(x, z) * static_cast<float>(k.value()));
}

// A Const value no earlier run of a test in this process used: its specialisations are new (the
// kernel cache lives as long as the process, also under --gtest_repeat).
std::int32_t fresh_const() {
  static std::atomic<std::int32_t> next{1000};
  return next.fetch_add(1000);
}

using PI = ct::Partition<std::int32_t>;
using SI = ct::Shared<std::int32_t>;

unsigned seed() {
  static const unsigned s = std::random_device{}();
  return s;
}

std::vector<std::int32_t> random_ints(std::size_t n, unsigned sd) {
  std::mt19937 g(sd);
  std::uniform_int_distribution<int> d(-3, 3);
  std::vector<std::int32_t> v(n);
  for (auto& x : v) x = d(g);
  return v;
}

SI shared_of(const std::vector<std::int32_t>& v) {
  return ct::from_host<std::int32_t>(std::span<const std::int32_t>(v), {static_cast<std::int64_t>(v.size())}, ct::cpu()).share();
}

// A stream held up by a host callback until open() (or the gate's end).
struct Gate {
  std::atomic<bool> released{false};
  ct::Event held;
  explicit Gate(ct::Stream s) {
    held = s.host([this] {
      while (!released.load()) std::this_thread::sleep_for(1ms);
    });
  }
  void open() { released = true; }
  ~Gate() {
    open();
    held.wait();
  }
};

// ---- ordering after the previous step ---------------------------------------------------------

TEST(LaunchPath, AFollowUpOnAnotherStreamWaitsForThePreviousStep) {
  const std::int64_t n = 256;
  auto s1 = ct::Stream::create(ct::cpu()), s2 = ct::Stream::create(ct::cpu());
  auto x = ct::arange<std::int32_t>(n, ct::cpu()).share();
  // The follow-up writes memory of its own (borrowed, so the host sees it without a read that
  // would wait) and shares no tensor with the first step: only "after the previous step" orders it.
  std::vector<std::int32_t> mem(static_cast<std::size_t>(n), -1);
  auto w = ct::Tensor<std::int32_t>::borrow(ct::unchecked, mem.data(), {n});
  Gate gate(s1);
  auto f = ct::launch(acc, ct::zeros<std::int32_t>({n}, ct::cpu()).partition({64}), x)
               .async_on(s1)
               .then_on(s2, [&](std::tuple<PI, SI>&& t) { return ct::launch(acc, std::move(w).partition({64}), std::get<1>(t)); });
  // The control: the same launch not chained after the step (on a third stream: s2 runs in order)
  // does complete meanwhile, so the checks below would see a follow-up that did not wait.
  std::vector<std::int32_t> mem2(static_cast<std::size_t>(n), -1);
  auto unchained = ct::launch(acc, ct::Tensor<std::int32_t>::borrow(ct::unchecked, mem2.data(), {n}).partition({64}), x)
                       .async_on(ct::Stream::create(ct::cpu()));
  for (int i = 0; i < 5000 && !unchained.ready(); ++i) std::this_thread::sleep_for(1ms);
  std::this_thread::sleep_for(20ms);  // time for a follow-up that did not wait to run
  EXPECT_TRUE(unchained.ready());
  EXPECT_EQ(mem2[5], 4);
  EXPECT_FALSE(f.ready()) << "the follow-up on s2 completed while the first step was held up on s1";
  EXPECT_EQ(mem[5], -1) << "the follow-up ran before the previous step";
  gate.open();
  auto [w2, x2] = std::move(f).get();
  for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(mem[static_cast<std::size_t>(i)], i - 1) << i;
}

TEST(LaunchPath, AFollowUpOfAFailedStepIsSkippedWithItsError) {
  const std::int64_t n = 64;
  auto s = ct::Stream::create(ct::cpu());
  auto x = ct::ones<std::int32_t>({n}, ct::cpu()).share();
  std::vector<std::int32_t> mem(static_cast<std::size_t>(n), 7);
  // A previous step that fails after the follow-up was submitted.
  ct::Event pending = ct::Event::create();
  ct::Future<int> prev(std::make_shared<ct::FutureState<int>>(ct::FutureState<int>{pending, 1, s}));
  auto f = std::move(prev).then([&](int) {
    return ct::launch(acc, ct::Tensor<std::int32_t>::borrow(ct::unchecked, mem.data(), {n}).partition({n}), x);
  });
  EXPECT_FALSE(f.ready());
  pending.complete(std::make_exception_ptr(ct::UserError("the previous step failed on purpose")));
  expect_user_error([&] { (void)std::move(f).get(); }, {"the previous step failed on purpose"});
  EXPECT_EQ(mem, std::vector<std::int32_t>(static_cast<std::size_t>(n), 7)) << "the skipped launch wrote";
  // A previous step that had failed already when the follow-up was chained.
  ct::Event failed = ct::Event::create();
  failed.complete(std::make_exception_ptr(ct::UserError("failed before the chain")));
  ct::Future<int> prev2(std::make_shared<ct::FutureState<int>>(ct::FutureState<int>{failed, 1, s}));
  auto g = std::move(prev2).then([&](int) {
    return ct::launch(acc, ct::Tensor<std::int32_t>::borrow(ct::unchecked, mem.data(), {n}).partition({n}), x);
  });
  expect_user_error([&] { (void)std::move(g).get(); }, {"failed before the chain"});
  EXPECT_EQ(mem[0], 7);
  // The stream and the shared input are fine afterwards.
  auto [z, x2] = ct::launch(acc, ct::Tensor<std::int32_t>::borrow(ct::unchecked, mem.data(), {n}).partition({n}), x).sync_on(s);
  EXPECT_EQ(mem[3], 8);
  EXPECT_EQ(x2.holders(), 2);  // x and x2: the skipped launches' copies are gone
}

TEST(LaunchPath, AnInvalidFollowUpThrowsWhenChainedAndLeavesTheStreamUsable) {
  auto s = ct::Stream::create(ct::cpu());
  auto x = ct::ones<std::int32_t>({64}, ct::cpu()).share();
  auto f = ct::launch(acc, ct::zeros<std::int32_t>({64}, ct::cpu()).partition({32}), x).async_on(s);
  // The follow-up's arguments do not fit the kernel: a UserError naming the argument, at then().
  expect_user_error(
      [&] {
        (void)std::move(f).then([&](std::tuple<PI, SI>&& t) {
          return ct::launch(acc, std::move(std::get<0>(t)), ct::ones<std::int32_t>({8, 8}, ct::cpu()).share());
        });
      },
      {"launch of kernel", "argument 1", "rank-1 tensor, got rank 2"});
  auto [z, x2] = ct::launch(acc, ct::zeros<std::int32_t>({64}, ct::cpu()).partition({32}), x).sync_on(s);
  EXPECT_EQ(std::move(z).unpartition().to_host()[9], 1);
}

TEST(LaunchPath, LongChainsAcrossStreamsGiveTheSerialResult) {
  // z <- z + x, then z <- a z with random a, then z + x again, ..., each step on a random one of
  // three streams: every step is ordered after the one before, whatever stream it runs on.
  const std::size_t n = 300;
  const auto hx = random_ints(n, seed());
  std::mt19937 g(seed() + 1);
  std::uniform_int_distribution<int> pick(0, 2), coef(1, 2);
  std::vector<ct::Stream> streams = {ct::Stream::create(ct::cpu()), ct::Stream::create(ct::cpu()), ct::Stream::create(ct::cpu())};
  const SI x = shared_of(hx);
  std::vector<std::int64_t> want(n, 0);
  auto f = ct::launch(acc, ct::zeros<std::int32_t>({static_cast<std::int64_t>(n)}, ct::cpu()).partition({64}), x).async_on(streams[0]);
  for (std::size_t i = 0; i < n; ++i) want[i] += hx[i];
  for (int step = 0; step < 40; ++step) {
    const int a = (step % 3 == 0) ? -1 : coef(g);  // |z| stays far below 2^31 over 40 steps
    auto scaled = std::move(f).then_on(streams[static_cast<std::size_t>(pick(g))], [a](std::tuple<PI, SI>&& t) {
      return ct::launch(scale, std::move(std::get<0>(t)), a);
    });
    f = std::move(scaled).then_on(streams[static_cast<std::size_t>(pick(g))],
                                  [&x](std::tuple<PI, std::int32_t>&& t) { return ct::launch(acc, std::move(std::get<0>(t)), x); });
    for (std::size_t i = 0; i < n; ++i) want[i] = want[i] * a + hx[i];
  }
  auto [z, x2] = std::move(f).get();
  const auto out = std::move(z).unpartition().to_host();
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], static_cast<std::int32_t>(want[i])) << i;
}

// ---- pooled states ------------------------------------------------------------------------------

TEST(LaunchPath, PoolBlocksAreReusedOnTheirThreadAndComeBackFromOthers) {
  // Same thread: a freed block is the next one handed out (no trip to the heap).
  void* a = ct::detail::pool_allocate(100);
  ct::detail::pool_free(a, 100);
  void* b = ct::detail::pool_allocate(100);
  EXPECT_EQ(a, b);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b) % 64, 0u);
  ct::detail::pool_free(b, 100);
  // Other size classes do not share blocks; sizes above the largest class still work.
  void* small = ct::detail::pool_allocate(64);
  void* big = ct::detail::pool_allocate(4096);
  EXPECT_NE(small, a);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(big) % 64, 0u);
  ct::detail::pool_free(big, 4096);
  ct::detail::pool_free(small, 64);
  // Blocks freed by another thread (as the completion thread frees event states) come back to
  // this one through the shared list, in batches.
  constexpr int n = 1000;
  std::vector<void*> mine(n);
  for (auto& p : mine) p = ct::detail::pool_allocate(200);
  std::thread([&] {
    for (void* p : mine) ct::detail::pool_free(p, 200);
  }).join();  // the exiting thread hands its blocks back
  const std::set<void*> before(mine.begin(), mine.end());
  int reused = 0;
  std::vector<void*> again(n);
  for (auto& p : again) {
    p = ct::detail::pool_allocate(200);
    reused += before.count(p) ? 1 : 0;
  }
  for (void* p : again) ct::detail::pool_free(p, 200);
  EXPECT_GE(reused, n - 128) << "blocks freed on another thread did not come back";
}

// ---- specialisation facts and the record cache ------------------------------------------------

TEST(LaunchPath, AViewsCachedFactsAgreeWithAFreshComputation) {
  // Random views (offsets, extents, strides, ranks 1..3): the facts a launch reads from a view's
  // cache equal those computed from its data pointer, shape and strides. A fact added to
  // ir::TensorFacts but not to the cache shows here.
  std::mt19937 g(seed() + 7);
  std::uniform_int_distribution<int> ext(1, 40), off(0, 5), rk(1, 3);
  for (int i = 0; i < 200; ++i) {
    const int rank = rk(g);
    ct::Shape shape(static_cast<std::size_t>(rank));
    for (auto& e : shape) e = ext(g) + off(g);
    auto t = ct::zeros<float>(shape, ct::cpu());
    const int d = rank - 1;
    const std::int64_t lo = std::min<std::int64_t>(off(g), shape[static_cast<std::size_t>(d)] - 1);
    auto v = std::move(t).slice(d, lo, shape[static_cast<std::size_t>(d)]);
    const auto core = v.core(ct::unchecked);
    const bool aligned = reinterpret_cast<std::uintptr_t>(core->data()) % 16 == 0;
    const ct::ir::TensorFacts fresh = ct::detail::tensor_facts(aligned, core->shape, core->strides);
    EXPECT_EQ(ct::detail::tensor_facts(*core), fresh) << "view " << ct::shape_str(core->shape) << " (first use)";
    EXPECT_EQ(ct::detail::tensor_facts(*core), fresh) << "view " << ct::shape_str(core->shape) << " (cached)";
  }
}

TEST(LaunchPath, ViewsWithOtherFactsAreOtherSpecialisations) {
  auto s = ct::Stream::create(ct::cpu());
  const int k = fresh_const();
  const auto before = ct::detail::kernel_cache_stats(copy_times);
  auto run = [&](ct::Shared<float> x, std::int64_t n) {
    auto [z, x2, c] = ct::launch(copy_times, ct::zeros<float>({n}, ct::cpu()).partition({16}), std::move(x), k).sync_on(s);
    return std::move(z).unpartition().to_host();
  };
  (void)run(ct::arange<float>(64, ct::cpu()).share(), 64);
  (void)run(ct::arange<float>(128, ct::cpu()).share(), 128);  // other extents, the same facts: a hit
  auto mid = ct::detail::kernel_cache_stats(copy_times);
  EXPECT_EQ(mid.specialisations - before.specialisations, 1u);
  // A view one element in: not 16-byte aligned, so another specialisation, with the right data.
  auto shifted = ct::arange<float>(65, ct::cpu()).slice(0, 1, 65).share();
  const auto out = run(std::move(shifted), 64);
  EXPECT_EQ(out[0], 1.0f * static_cast<float>(k));
  EXPECT_EQ(out[63], 64.0f * static_cast<float>(k));
  const auto after = ct::detail::kernel_cache_stats(copy_times);
  EXPECT_EQ(after.specialisations - mid.specialisations, 1u);
}

TEST(LaunchPath, ManySpecialisationsShareThePerThreadCache) {
  // 100 Const values: 100 specialisations, more than the 64 entries of a thread's record cache, so
  // entries are evicted and found again through the kernel cache.
  auto x = ct::arange<std::int32_t>(64, ct::cpu()).share();
  auto s = ct::Stream::create(ct::cpu());
  const auto before = ct::detail::kernel_cache_stats(times_k);
  const std::int32_t base = fresh_const();
  for (int round = 0; round < 3; ++round)
    for (std::int32_t k = base; k < base + 100; ++k) {
      auto [z, x2, c] = ct::launch(times_k, ct::zeros<std::int32_t>({64}, ct::cpu()).partition({32}), x, k).sync_on(s);
      const auto h = std::move(z).unpartition().to_host();
      ASSERT_EQ(h[7], 7 * k) << "k = " << k << ", round " << round;
    }
  const auto after = ct::detail::kernel_cache_stats(times_k);
  EXPECT_EQ(after.specialisations - before.specialisations, 100u);
  EXPECT_EQ(after.compiles - before.compiles, 100u);  // each traced and compiled once
  EXPECT_EQ(after.hits - before.hits, 200u);          // the other two rounds found them
}

TEST(LaunchPath, TheSameViewsAgainSkipTheChecksButNotWhatTheyDecide) {
  // A launch of the same kernel with the same views as this thread's previous one takes the
  // remembered record and grid (no validation, no key); a Const value, the options or a view that
  // differs is a launch like any other, with its own specialisation and checks.
  auto x = ct::arange<std::int32_t>(64, ct::cpu()).share();
  auto s = ct::Stream::create(ct::cpu());
  auto z = ct::zeros<std::int32_t>({64}, ct::cpu()).partition({32});
  const std::int32_t k1 = fresh_const(), k2 = k1 + 1;
  const auto s0 = ct::detail::kernel_cache_stats(times_k);
  for (int i = 0; i < 3; ++i) {
    auto [z2, x2, c] = ct::launch(times_k, std::move(z), x, k1).sync_on(s);
    z = std::move(z2);
  }
  const auto s1 = ct::detail::kernel_cache_stats(times_k);
  EXPECT_EQ(s1.specialisations, s0.specialisations + 1);
  EXPECT_EQ(s1.hits, s0.hits + 2);  // the remembered launch counts as a hit
  {
    auto [z2, x2, c] = ct::launch(times_k, std::move(z), x, k2).sync_on(s);  // another Const, the same views
    z = std::move(z2);
  }
  const auto s2 = ct::detail::kernel_cache_stats(times_k);
  EXPECT_EQ(s2.specialisations, s1.specialisations + 1) << "a Const of another value is another specialisation";
  {
    auto [z2, x2, c] = ct::launch(times_k, std::move(z), x, k2).options(ct::KernelOptions{.warps = 2}).sync_on(s);
    z = std::move(z2);
  }
  {
    auto [z2, x2, c] = ct::launch(times_k, std::move(z), x, k2).options(ct::KernelOptions{.warps = 4}).sync_on(s);
    z = std::move(z2);
  }
  const auto s3 = ct::detail::kernel_cache_stats(times_k);
  EXPECT_EQ(s3.specialisations, s2.specialisations + 2) << "other options are another specialisation";
  {
    auto [z2, x2, c] = ct::launch(times_k, std::move(z), x, k2).sync_on(s);  // back to the defaults: found
    z = std::move(z2);
  }
  EXPECT_EQ(ct::detail::kernel_cache_stats(times_k).specialisations, s3.specialisations);
  auto h = std::move(z).unpartition();
  EXPECT_EQ(h.to_host()[7], 7 * k2);
  // A view with other tiles: the grid is taken again (two tile blocks of 32 -> four of 16).
  auto z16 = std::move(h).partition({16});
  auto [z3, x3, c3] = ct::launch(times_k, std::move(z16), x, k2).sync_on(s);
  const auto r = std::move(z3).unpartition().to_host();
  EXPECT_EQ(r[63], 63 * k2);
  // The same views as a remembered launch, but one of them moved away: refused, not remembered.
  auto w = ct::zeros<std::int32_t>({64}, ct::cpu()).partition({64});
  std::tie(w, x) = ct::launch(acc, std::move(w), x).sync_on(s);
  std::tie(w, x) = ct::launch(acc, std::move(w), x).sync_on(s);
  auto kept = std::move(w);
  expect_user_error([&] { (void)ct::launch(acc, std::move(w), x).sync_on(s); }, {"moved-from"});
  EXPECT_EQ(std::move(kept).unpartition().to_host()[5], 10);
}

TEST(LaunchPath, HitsAreCountedOnEveryPath) {
  auto x = ct::arange<std::int32_t>(64, ct::cpu()).share();
  auto s = ct::Stream::create(ct::cpu());
  auto z = ct::zeros<std::int32_t>({64}, ct::cpu()).partition({64});
  std::tie(z, x) = ct::launch(acc, std::move(z), x).sync_on(s);  // compiled (or found) here
  const auto a = ct::detail::kernel_cache_stats(acc);
  for (int i = 0; i < 25; ++i) std::tie(z, x) = ct::launch(acc, std::move(z), x).sync_on(s);  // the thread's record cache
  // Another thread: its own record cache misses once and finds the specialisation in the kernel cache.
  std::thread t([&] {
    auto [z2, x2] = ct::launch(acc, ct::zeros<std::int32_t>({64}, ct::cpu()).partition({64}), x).sync();
    EXPECT_EQ(std::move(z2).unpartition().to_host()[3], 3);
  });
  t.join();
  const auto b = ct::detail::kernel_cache_stats(acc);
  EXPECT_EQ(b.compiles, a.compiles);
  EXPECT_EQ(b.hits, a.hits + 26);
  EXPECT_EQ(std::move(z).unpartition().to_host()[3], 3 * 26);
}

}  // namespace
