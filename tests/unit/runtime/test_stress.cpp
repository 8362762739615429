// Bounded multi-thread stress of the launch path on the CPU backend: several host threads launch
// at once into their own streams and into one shared stream, chain launches across streams
// without waiting (then_on: ordered by the storages' events), read one shared input from several
// streams at a time, and race each other to the first compile of the same specialisations (the
// kernel cache's single flight). Every result is checked exactly against a host reference.
//
// Time-bounded: CTILE_STRESS_SECONDS (default 2) of launching per run; every thread must finish
// at least a few rounds. scripts/sanitize.sh runs it under ASan+UBSan and under TSan.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <ctile/ctile.hpp>

namespace ct = ctile;

namespace {

void axpb(ct::Mut<float, 1> z, ct::Ref<float, 1> x, ct::Scalar<float> a, ct::Scalar<float> b) {
  z.store(ct::load_like(x, z) * a + b);
}
void add(ct::Mut<float, 1> z, ct::Ref<float, 1> x, ct::Ref<float, 1> y) {
  z.store(ct::load_like(x, z) + ct::load_like(y, z));
}

double stress_seconds() {
  if (const char* s = std::getenv("CTILE_STRESS_SECONDS"); s && *s) return std::atof(s);
  return 2.0;
}

struct Round {
  std::int64_t n;
  std::int64_t tile;
  float a, b;
  std::vector<float> x;
};

Round make_round(std::mt19937& rng) {
  Round r;
  r.tile = std::int64_t{16} << (rng() % 3);  // 16, 32, 64: three specialisations every thread races for
  r.n = 1 + static_cast<std::int64_t>(rng() % 700);
  r.a = static_cast<float>(static_cast<int>(rng() % 7) - 3);
  r.b = static_cast<float>(static_cast<int>(rng() % 11) - 5);
  r.x.resize(static_cast<std::size_t>(r.n));
  for (float& v : r.x) v = static_cast<float>(static_cast<int>(rng() % 1000) - 500);  // small integers: exact in f32
  return r;
}

// One thread's work until the deadline; returns the number of rounds, or throws.
int run_worker(int id, const ct::Stream& own, const ct::Stream& shared, std::chrono::steady_clock::time_point deadline,
               std::string& failure) {
  std::mt19937 rng(static_cast<std::uint32_t>(1000 + id));
  int rounds = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    const Round r = make_round(rng);
    const bool flip = (rounds + id) % 2 == 1;
    const ct::Stream& s1 = flip ? shared : own;
    const ct::Stream& s2 = flip ? own : shared;
    auto x = ct::from_host<float>(std::span<const float>(r.x), {r.n}).share();
    // z = a x + b on s1, then w = z + x on s2, chained without waiting.
    auto chained = ct::launch(axpb, ct::zeros<float>({r.n}).partition({r.tile}), x, r.a, r.b)
                       .async_on(s1)
                       .then_on(s2, [x, tile = r.tile](auto&& p) {
                         auto z = std::move(std::get<0>(p)).unpartition().share();
                         const std::int64_t n = z.shape()[0];
                         return ct::launch(add, ct::zeros<float>({n}).partition({tile}), std::move(z), x);
                       });
    // Meanwhile another reader of x, on s2: v = b x + a.
    auto other = ct::launch(axpb, ct::zeros<float>({r.n}).partition({r.tile}), x, r.b, r.a).async_on(s2);
    auto [w, z, x2] = std::move(chained).get();
    auto [v, x3, b3, a3] = std::move(other).get();
    const auto wh = std::move(w).unpartition().to_host();
    const auto zh = z.to_host();
    const auto vh = std::move(v).unpartition().to_host();
    for (std::int64_t i = 0; i < r.n; ++i) {
      const float xi = r.x[static_cast<std::size_t>(i)];
      const float zi = xi * r.a + r.b;
      if (zh[static_cast<std::size_t>(i)] != zi || wh[static_cast<std::size_t>(i)] != zi + xi ||
          vh[static_cast<std::size_t>(i)] != xi * r.b + r.a) {
        failure = "thread " + std::to_string(id) + ", round " + std::to_string(rounds) + ", element " +
                  std::to_string(i) + " of " + std::to_string(r.n) + ": wrong result";
        return rounds;
      }
    }
    ++rounds;
  }
  return rounds;
}

TEST(Stress, ThreadsLaunchIntoOwnAndSharedStreams) {
  constexpr int kThreads = 4;
  const double seconds = stress_seconds();
  ASSERT_GT(seconds, 0.0);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                             std::chrono::duration<double>(seconds));
  const ct::Stream shared = ct::Stream::create();
  std::vector<ct::Stream> own;
  for (int i = 0; i < kThreads; ++i) own.push_back(ct::Stream::create());
  std::vector<std::string> failures(kThreads), errors(kThreads);
  std::vector<int> rounds(kThreads, 0);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      try {
        rounds[static_cast<std::size_t>(i)] =
            run_worker(i, own[static_cast<std::size_t>(i)], shared, deadline, failures[static_cast<std::size_t>(i)]);
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(i)] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  int total = 0;
  for (int i = 0; i < kThreads; ++i) {
    const auto k = static_cast<std::size_t>(i);
    EXPECT_EQ(errors[k], "") << "thread " << i;
    EXPECT_EQ(failures[k], "") << "thread " << i;
    EXPECT_GE(rounds[k], 3) << "thread " << i << " finished too few rounds to stress anything";
    total += rounds[k];
  }
  std::printf("[ stress ] %d threads, %.1f s: %d rounds of 3 launches each\n", kThreads, seconds, total);
}

}  // namespace
