// The CUDA runtime layer on a real GPU: backend selection, copies (pinned staging, peer), the
// stream-ordered allocator, streams and events, ownership moving between streams (ordered by the
// storages' events on the device), and memory that must not be reused while a kernel still uses it.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "harness.hpp"

namespace ct = ctile;
using gpu_test::gpu;
using gpu_test::seed;

namespace {

// Every element becomes `iters` after a serial loop of `iters` additions: slow on purpose, so that
// work ordered after it would see wrong values if the ordering were missing.
void slow_fill(ct::Mut<float, 1> z, ct::Scalar<std::int64_t> iters) {
  const auto [b] = z.tile_shape();
  auto acc = ct::Tile<float>::zeros({b});
  for (auto i : ct::range(iters)) {
    (void)i;
    acc = acc + 1.0f;
  }
  z.store(acc);
}

void times2(ct::Mut<float, 1> z, ct::Ref<float, 1> x) { z.store(ct::load_like(x, z) * 2.0f); }
void add_scalar(ct::Mut<float, 1> z, ct::Scalar<float> v) { z.store(z.load() + v); }

// Milliseconds of GPU time per block; CTILE_GPU_SLOW_ITERS lowers it (under compute-sanitizer).
const std::int64_t kSlowIters = [] {
  const char* v = std::getenv("CTILE_GPU_SLOW_ITERS");
  return v && *v ? std::max<std::int64_t>(std::atoll(v), 20) : std::int64_t{200'000};
}();

}  // namespace

GPU_TEST(runtime_backend_selection) {
  const char* old = std::getenv("CTILE_BACKEND");
  const std::string saved = old ? old : "";
  ::unsetenv("CTILE_BACKEND");
  CHECK(ct::default_device() == gpu()) << ct::default_device().str();
  ::setenv("CTILE_BACKEND", "cpu", 1);
  CHECK(ct::default_device() == ct::cpu());
  ::setenv("CTILE_BACKEND", "cuda", 1);
  CHECK(ct::default_device() == gpu());
  if (old)
    ::setenv("CTILE_BACKEND", saved.c_str(), 1);
  else
    ::unsetenv("CTILE_BACKEND");
  CHECK(ct::backend_name(gpu()) == "cuda");
  CHECK(ct::cuda_device_count() >= 1);
  std::printf("    %s\n", ct::describe(gpu()).c_str());
  // With CTILE_BACKEND unset, a launch without a device runs on the GPU.
  ::unsetenv("CTILE_BACKEND");
  const std::uint64_t before = ct::cuda_launch_count(0);
  auto x = ct::arange<float>(1000).share();
  auto [z, x2] = ct::launch(times2, ct::zeros<float>({1000}).partition({256}), x).sync();
  CHECK(ct::cuda_launch_count(0) == before + 1) << "the default device's launch did not reach cuLaunchKernel";
  std::vector<float> want(1000);
  for (int i = 0; i < 1000; ++i) want[std::size_t(i)] = 2.0f * static_cast<float>(i);
  CHECK(std::move(z).unpartition().to_host() == want);
  if (old) ::setenv("CTILE_BACKEND", saved.c_str(), 1);
}

GPU_TEST(runtime_zeros_and_creation_match_the_cpu) {
  CHECK_EQUAL(ct::zeros<float>({12345}, gpu()).to_host(), std::vector<float>(12345, 0.0f), "zeros");
  CHECK_EQUAL(ct::randn<float>({4097}, seed(1), 0.0, 1.0, gpu()).to_host(),
              ct::randn<float>({4097}, seed(1), 0.0, 1.0, ct::cpu()).to_host(), "randn");
  CHECK_EQUAL(ct::arange<std::int64_t>(1000, gpu()).to_host(), ct::arange<std::int64_t>(1000, ct::cpu()).to_host(),
              "arange");
  CHECK_EQUAL(ct::rand<ct::bf16>({777}, seed(2), gpu()).to_host(), ct::rand<ct::bf16>({777}, seed(2), ct::cpu()).to_host(),
              "rand bf16");
  // What was created on the GPU is what a GPU kernel reads.
  auto on = [&](ct::Device d) {
    auto x = ct::randn<float>({4097}, seed(1), 0.0, 1.0, d).share();
    auto [z, x2] = ct::launch(times2, ct::zeros<float>({4097}, d).partition({512}), x).sync();
    return std::move(z).unpartition().to_host();
  };
  CHECK_EQUAL(on(gpu()), on(ct::cpu()), "times2 of randn");
}

GPU_TEST(runtime_large_copies_through_pinned_staging) {
  const std::int64_t n = (std::int64_t{96} << 20) / 4 + 5;  // 96 MiB of floats, not a multiple of the chunk
  auto x = ct::rand<float>({n}, seed(3), ct::cpu());
  const auto hx = x.to_host();
  auto g = std::move(x).to(gpu());
  auto back = g.to_host();
  CHECK(back == hx) << "host -> GPU -> host changed the data";
  auto s = std::move(g).share();
  auto copy = s.to(gpu());  // device to device
  CHECK(copy.to_host() == hx) << "GPU -> GPU copy changed the data";
  // A kernel reads the copied data (every element, through the device's own view of it).
  auto [twice, s2] = ct::launch(times2, ct::zeros<float>({n}, gpu()).partition({1024}), s).sync();
  std::vector<float> want(hx.size());
  for (std::size_t i = 0; i < hx.size(); ++i) want[i] = 2.0f * hx[i];
  CHECK(std::move(twice).unpartition().to_host() == want) << "a kernel saw other data than was copied";
  if (ct::cuda_device_count() >= 2) {
    auto peer = s.to(ct::Device{ct::DeviceKind::Cuda, 1});
    CHECK(peer.to_host() == hx) << "GPU 0 -> GPU 1 copy changed the data";
  }
}

GPU_TEST(runtime_allocation_churn) {
  // Many short-lived tensors: the stream-ordered pool reuses memory freed after its last use.
  std::int64_t total = 0;
  for (int i = 0; i < 2000; ++i) {
    auto t = ct::zeros<std::uint8_t>({(i * 7919) % 100'000 + 1}, gpu());
    total += t.numel();
  }
  auto last = ct::full<float>({1000}, 7.0f, gpu());
  auto [bumped, v] = ct::launch(add_scalar, std::move(last).partition({256}), 1.0f).sync();
  CHECK(std::move(bumped).unpartition().to_host() == std::vector<float>(1000, 8.0f));
  CHECK(total > 0);
}

GPU_TEST(runtime_launches_in_order_on_one_stream) {
  auto s = ct::Stream::create(gpu());
  auto f = ct::launch(add_scalar, ct::zeros<float>({4096}, gpu()).partition({1024}), 1.0f).async_on(s);
  for (int i = 0; i < 499; ++i)
    f = std::move(f).then([](auto&& r) { return ct::launch(add_scalar, std::move(std::get<0>(r)), 1.0f); });
  auto [z, v] = std::move(f).get();
  CHECK(std::move(z).unpartition().to_host() == std::vector<float>(4096, 500.0f));
}

GPU_TEST(runtime_ownership_moves_between_streams_in_order) {
  // A slow writer on stream A; its output moves to a reader on stream B without waiting on the
  // host. B must be ordered after A on the device (cuStreamWaitEvent), or it reads zeros.
  auto a = ct::Stream::create(gpu());
  auto b = ct::Stream::create(gpu());
  const std::int64_t n = 1 << 16;
  const auto t0 = std::chrono::steady_clock::now();
  auto fut = ct::launch(slow_fill, ct::zeros<float>({n}, gpu()).partition({256}), kSlowIters)
                 .async_on(a)
                 .then_on(b, [&](auto&& r) {
                   auto x = std::move(std::get<0>(r)).unpartition().share();
                   return ct::launch(times2, ct::zeros<float>({n}, gpu()).partition({1024}), std::move(x));
                 });
  const double enqueue_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  auto [out, x] = std::move(fut).get();
  CHECK(std::move(out).unpartition().to_host() == std::vector<float>(n, 2.0f * kSlowIters))
      << "the reader on stream B did not see the writer on stream A";
  std::printf("    enqueueing both launches took %.2f ms (no host wait expected)\n", enqueue_ms);
}

GPU_TEST(runtime_memory_is_not_reused_while_a_kernel_uses_it) {
  // The future (and with it the tensor) is dropped while the slow kernel still writes it. Its
  // memory must not be handed to the next allocation before the kernel finishes, or the kernel
  // would overwrite the new tensor.
  auto a = ct::Stream::create(gpu());
  const std::int64_t n = 1 << 20;
  for (int round = 0; round < 3; ++round) {
    {
      auto fut = ct::launch(slow_fill, ct::zeros<float>({n}, gpu()).partition({1024}), kSlowIters / 4).async_on(a);
      (void)fut;  // dropped: nothing waits for it
    }
    auto fresh = ct::full<float>({n}, 7.0f, gpu());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    a.synchronize();
    const auto h = fresh.to_host();
    std::int64_t bad = 0;
    for (float v : h) bad += v != 7.0f;
    CHECK(bad == 0) << bad << " elements of a new tensor were overwritten by a kernel on freed memory";
  }
}

GPU_TEST(runtime_join_and_cross_stream_reads) {
  auto s1 = ct::Stream::create(gpu());
  auto s2 = ct::Stream::create(gpu());
  auto x = ct::randn<float>({10'000}, seed(4), 0.0, 1.0, gpu()).share();
  auto f1 = ct::launch(times2, ct::zeros<float>({10'000}, gpu()).partition({512}), x).async_on(s1);
  auto f2 = ct::launch(times2, ct::zeros<float>({10'000}, gpu()).partition({512}), x).async_on(s2);
  auto [r1, r2] = ct::join(std::move(f1), std::move(f2)).get();
  const auto h1 = std::move(std::get<0>(r1)).unpartition().to_host();
  const auto h2 = std::move(std::get<0>(r2)).unpartition().to_host();
  const auto hx = x.to_host();
  std::vector<float> want(hx.size());
  for (std::size_t i = 0; i < hx.size(); ++i) want[i] = hx[i] * 2.0f;
  CHECK(h1 == want);
  CHECK(h2 == want);
}

GPU_TEST(runtime_streams_synchronize_and_events) {
  auto s = ct::Stream::create(gpu());
  std::vector<ct::Event> evs;
  std::vector<ct::Future<std::tuple<ct::Partition<float>, std::int64_t>>> futs;
  for (int i = 0; i < 8; ++i)
    futs.push_back(ct::launch(slow_fill, ct::zeros<float>({4096}, gpu()).partition({256}), kSlowIters / 20).async_on(s));
  s.synchronize();
  for (auto& f : futs) CHECK(f.ready()) << "synchronize() returned before an earlier launch completed";
  // A CPU stream can wait for GPU work, and a GPU stream for CPU work.
  auto cpu = ct::Stream::create(ct::cpu());
  auto g = ct::launch(slow_fill, ct::zeros<float>({4096}, gpu()).partition({256}), kSlowIters / 20).async_on(s);
  bool seen_done = false;
  cpu.enqueue([&, e = g.event()] { seen_done = e.done(); }, {g.event()}).wait();
  CHECK(seen_done);
  (void)std::move(g).get();
}

GPU_TEST(runtime_errors_name_the_problem) {
  // A kernel launched with arguments on the CPU but a GPU stream: refused before anything runs.
  auto x = ct::zeros<float>({10}, ct::cpu()).share();
  bool caught = false;
  try {
    (void)ct::launch(times2, ct::zeros<float>({10}, ct::cpu()).partition({16}), x).sync_on(ct::default_stream(gpu()));
  } catch (const ct::UserError& e) {
    caught = std::string(e.what()).find("cuda:0") != std::string::npos;
  }
  CHECK(caught);
  caught = false;
  try {
    (void)ct::Stream::create(ct::Device{ct::DeviceKind::Cuda, ct::cuda_device_count()});
  } catch (const ct::UserError& e) {
    caught = std::string(e.what()).find("does not exist") != std::string::npos;
  }
  CHECK(caught);
  // The refused launches left the GPU usable.
  auto [z, v] = ct::launch(add_scalar, ct::zeros<float>({64}, gpu()).partition({64}), 3.0f).sync();
  CHECK(std::move(z).unpartition().to_host() == std::vector<float>(64, 3.0f));
}
