// Graphs, bound kernels and many host threads on a real GPU (issue 9): a replayed CUDA graph gives
// the results of the same operations launched eagerly on the GPU and of a host reference, also
// after new scalars, new inputs copied in and swapped tensors; a bound kernel gives launch()'s
// results; many host threads launching into their own and shared streams get the right results
// and compile each new specialisation once. Inputs are small random integers in float, so every
// result is exact and compared exactly.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <latch>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "harness.hpp"

namespace ct = ctile;
using gpu_test::gpu;
using gpu_test::seed;

namespace {

void acc(ct::Mut<float, 1> z, ct::Ref<float, 1> x) { z.store(z.load() + ct::load_like(x, z)); }
void axpy(ct::Mut<float, 1> y, ct::Scalar<float> a, ct::Ref<float, 1> x) { y.store(a * ct::load_like(x, y) + y.load()); }
void add2(ct::Mut<float, 1> z, ct::Ref<float, 1> x, ct::Ref<float, 1> y) { z.store(ct::load_like(x, z) + ct::load_like(y, z)); }
void times_k(ct::Mut<float, 1> z, ct::Ref<float, 1> x, ct::Const<int> k) {
  z.store(ct::load_like(x, z) * static_cast<float>(k.value()));
}

using P = ct::Partition<float>;
using S = ct::Shared<float>;

std::vector<float> random_floats(std::size_t n, std::uint64_t salt) {
  std::mt19937_64 g(seed(salt));
  std::uniform_int_distribution<int> d(-8, 8);
  std::vector<float> v(n);
  for (auto& x : v) x = static_cast<float>(d(g));
  return v;
}

S on_gpu(const std::vector<float>& v) {
  return ct::from_host<float>(std::span<const float>(v), {static_cast<std::int64_t>(v.size())}, gpu()).share();
}

// The chain both ways: z = x (k times accumulated), then y = a x + y for each a.
template <class F>
auto chain(F start, const std::vector<float>& as) {
  auto f = std::move(start).then([](std::tuple<P, S>&& t) { return ct::launch(acc, std::move(std::get<0>(t)), std::get<1>(t)); });
  for (float a : as)
    f = std::move(f).then([a](std::tuple<P, S>&& t) {
      return ct::launch(axpy, std::move(std::get<0>(t)), a, std::get<1>(t));
    }).then([](std::tuple<P, float, S>&& t) { return ct::launch(acc, std::move(std::get<0>(t)), std::get<2>(t)); });
  return f;
}

}  // namespace

GPU_TEST(runtime_graph_chain_equals_eager) {
  const std::int64_t n = 100'000;  // several tile blocks per kernel
  const auto hx = random_floats(static_cast<std::size_t>(n), 1);
  const std::vector<float> as = {2.0f, -1.0f, 3.0f, 0.5f, -2.0f};
  auto s = ct::Stream::create(gpu());
  // Eager, on the GPU.
  auto xe = on_gpu(hx);
  auto fe = chain(ct::launch(acc, ct::zeros<float>({n}, gpu()).partition({1024}), xe).async_on(s), as);
  auto [ze, xe2] = std::move(fe).get();
  const auto eager = std::move(ze).unpartition().to_host();
  // The host reference.
  std::vector<float> want(hx.size());
  for (std::size_t i = 0; i < hx.size(); ++i) {
    float z = 2 * hx[i];
    for (float a : as) z = z + a * hx[i] + hx[i];
    want[i] = z;
  }
  CHECK_EQUAL(eager, want, "eager chain against the host");
  // Captured once, replayed three times: each replay adds the chain's increment again.
  auto xg = on_gpu(hx);
  auto zg = ct::zeros<float>({n}, gpu()).partition({1024});
  auto g = ct::capture(gpu(), [&](ct::Capture& cap) { return chain(ct::launch(acc, std::move(zg), xg).async_on(cap.stream()), as); });
  CHECK(g.kernel_nodes() == 2 + 2 * as.size()) << g.kernel_nodes();
  CHECK(g.device() == gpu());
  g = std::move(g).sync_on(s);
  CHECK_EQUAL(g.read<0>(), eager, "one replay against the eager chain");
  for (int r = 0; r < 2; ++r) g = std::move(g).replay(s).get();
  std::vector<float> thrice(want.size());
  for (std::size_t i = 0; i < want.size(); ++i) thrice[i] = 3 * want[i];
  CHECK_EQUAL(g.read<0>(), thrice, "three replays");
}

GPU_TEST(runtime_graph_inputs_change_between_replays) {
  const std::int64_t n = 8192;
  const auto ha = random_floats(static_cast<std::size_t>(n), 2), hb = random_floats(static_cast<std::size_t>(n), 3);
  auto s = ct::Stream::create(gpu());
  // Per replay: t0 = a + b (the capture's stream), t1 = c a + t1 (a forked stream, in parallel),
  // out = t0 + t1 (the join), out = out + in. Between replays: new data copied into `in`, a new
  // scalar c, and once another tensor swapped in for `out`.
  auto a = on_gpu(ha), b = on_gpu(hb);
  auto in = ct::zeros<float>({n}, gpu()).share();
  auto t0 = ct::zeros<float>({n}, gpu()), t1 = ct::zeros<float>({n}, gpu()), out = ct::zeros<float>({n}, gpu());
  auto g = ct::capture(gpu(), [&](ct::Capture& cap) {
    auto f0 = ct::launch(add2, std::move(t0).partition({256}), a, b).async_on(cap.stream());
    auto f1 = ct::launch(axpy, std::move(t1).partition({256}), 0.0f, a).async_on(cap.fork());
    return ct::join(std::move(f0), std::move(f1))
        .then([&](auto&& t) {
          auto s0 = std::move(std::get<0>(std::get<0>(t))).unpartition().share();
          auto s1 = std::move(std::get<0>(std::get<1>(t))).unpartition().share();
          return ct::launch(add2, std::move(out).partition({256}), s0, s1);
        })
        .then([&](std::tuple<P, S, S>&& t) { return ct::launch(acc, std::move(std::get<0>(t)), std::move(in)); });
  });
  CHECK(g.kernel_nodes() == 4u) << g.kernel_nodes();
  std::vector<float> ht1(ha.size(), 0.0f), want(ha.size());
  std::vector<float> last;
  for (int step = 0; step < 5; ++step) {
    const auto hin = random_floats(static_cast<std::size_t>(n), 10 + static_cast<std::uint64_t>(step));
    const float c = static_cast<float>(step) - 2.0f;
    g.copy_in<1>(std::span<const float>(hin));
    g.set_scalar(1, 1, c);  // the second kernel node in capture order: axpy
    if (step == 3) {
      P old = g.swap<0>(ct::full<float>({n}, 1000.0f, gpu()).partition({256}));
      CHECK_EQUAL(std::move(old).unpartition().to_host(), last, "the swapped-out output keeps the last replay's result");
    }
    g = std::move(g).replay(s).get();
    for (std::size_t i = 0; i < ha.size(); ++i) {
      ht1[i] += c * ha[i];
      want[i] = ha[i] + hb[i] + ht1[i] + hin[i];
    }
    CHECK_EQUAL(g.read<0>(), want, "replay " + std::to_string(step));
    CHECK_EQUAL(g.read<1>(), hin, "the copied-in input, replay " + std::to_string(step));
    last = want;
  }
  auto [o, i2] = std::move(g).unwrap();
  CHECK_EQUAL(std::move(o).unpartition().to_host(), want, "the output handed back by unwrap");
}

GPU_TEST(runtime_bound_kernel_equals_launch) {
  const std::int64_t n = 50'000;
  const auto hx = random_floats(static_cast<std::size_t>(n), 4), hy = random_floats(static_cast<std::size_t>(n), 5);
  auto s = ct::Stream::create(gpu());
  auto k = ct::bind_on(s, axpy, ct::spec::partition<float>({n}, {1024}), 0.0f, ct::spec::shared<float>({n}));
  auto x = on_gpu(hx);
  auto y = ct::from_host<float>(std::span<const float>(hy), {n}, gpu()).partition({1024});
  auto y2 = ct::from_host<float>(std::span<const float>(hy), {n}, gpu()).partition({1024});
  // 20 chained bound calls against 20 chained launches.
  auto fb = k(s, std::move(y), 1.5f, x);
  auto fl = ct::launch(axpy, std::move(y2), 1.5f, x).async_on(s);
  for (int i = 1; i < 20; ++i) {
    const float a = static_cast<float>(i % 5) - 2.0f;
    fb = std::move(fb).then([&k, a](std::tuple<P, float, S>&& t) { return k.launch(std::move(std::get<0>(t)), a, std::get<2>(t)); });
    fl = std::move(fl).then([a](std::tuple<P, float, S>&& t) { return ct::launch(axpy, std::move(std::get<0>(t)), a, std::get<2>(t)); });
  }
  auto [yb, ab, xb] = std::move(fb).get();
  auto [yl, al, xl] = std::move(fl).get();
  const auto bound = std::move(yb).unpartition().to_host();
  CHECK_EQUAL(bound, std::move(yl).unpartition().to_host(), "bound calls against launches");
  std::vector<float> want(hy);
  for (std::size_t i = 0; i < want.size(); ++i) {
    want[i] += 1.5f * hx[i];
    for (int j = 1; j < 20; ++j) want[i] += (static_cast<float>(j % 5) - 2.0f) * hx[i];
  }
  CHECK_EQUAL(bound, want, "bound calls against the host");
}

GPU_TEST(runtime_stress_many_host_threads) {
  // 8 host threads for about 2 seconds: chains of launches over their own stream and two shared
  // ones, all reading one shared tensor; then rounds in which every thread launches the same new
  // specialisation at once (compiled once). Every result is checked.
  const std::int64_t n = 4096;
  const auto hx = random_floats(static_cast<std::size_t>(n), 6);
  const S x = on_gpu(hx);
  std::vector<ct::Stream> shared = {ct::Stream::create(gpu()), ct::Stream::create(gpu())};
  constexpr int kThreads = 8;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  std::atomic<long> launches{0}, wrong{0};
  std::vector<std::string> errors(kThreads);
  {
    std::latch start(kThreads);
    std::vector<std::thread> ts;
    for (int t = 0; t < kThreads; ++t)
      ts.emplace_back([&, t] {
        start.arrive_and_wait();
        try {
          auto own = ct::Stream::create(gpu());
          std::mt19937 g(static_cast<unsigned>(seed(100 + static_cast<std::uint64_t>(t))));
          while (std::chrono::steady_clock::now() < end) {
            const int steps = std::uniform_int_distribution<int>(1, 30)(g);
            auto pick = [&]() -> const ct::Stream& { return g() % 3 == 0 ? own : shared[g() % 2]; };
            auto f = ct::launch(acc, ct::zeros<float>({n}, gpu()).partition({1024}), x).async_on(pick());
            for (int i = 1; i < steps; ++i)
              f = std::move(f).then_on(pick(), [](std::tuple<P, S>&& h) { return ct::launch(acc, std::move(std::get<0>(h)), std::get<1>(h)); });
            auto [z, x2] = std::move(f).get();
            const auto hz = std::move(z).unpartition().to_host();
            for (std::size_t i = 0; i < hz.size(); ++i)
              if (hz[i] != static_cast<float>(steps) * hx[i]) {
                ++wrong;
                break;
              }
            launches += steps;
          }
        } catch (const std::exception& e) {
          errors[static_cast<std::size_t>(t)] = e.what();
        }
      });
    for (auto& t : ts) t.join();
  }
  for (int t = 0; t < kThreads; ++t) CHECK(errors[static_cast<std::size_t>(t)].empty()) << "thread " << t << ": " << errors[static_cast<std::size_t>(t)];
  CHECK(wrong.load() == 0) << wrong.load() << " chains gave a wrong result";
  CHECK(launches.load() > kThreads) << launches.load();
  std::printf("    %ld launches from %d threads in 2 s\n", launches.load(), kThreads);
  for (int k = 7; k < 10; ++k) {
    const auto before = ct::detail::kernel_cache_stats(times_k);
    std::atomic<int> bad{0};
    std::latch go(kThreads);
    std::vector<std::thread> ts;
    for (int t = 0; t < kThreads; ++t)
      ts.emplace_back([&] {
        go.arrive_and_wait();
        auto [z, x2, c] = ct::launch(times_k, ct::zeros<float>({n}, gpu()).partition({1024}), x, k).sync();
        const auto hz = std::move(z).unpartition().to_host();
        for (std::size_t i = 0; i < hz.size(); ++i)
          if (hz[i] != static_cast<float>(k) * hx[i]) {
            ++bad;
            break;
          }
      });
    for (auto& t : ts) t.join();
    const auto after = ct::detail::kernel_cache_stats(times_k);
    CHECK(bad.load() == 0) << "k = " << k;
    CHECK(after.compiles - before.compiles == 1) << "k = " << k << ": " << after.compiles - before.compiles << " compiles";
  }
  CHECK(x.holders() == 1) << x.holders();
}
