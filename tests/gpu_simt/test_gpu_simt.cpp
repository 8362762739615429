// The SIMT GPU suite (label gpu, built with -DCTILE_GPU_TESTS=ON; no GoogleTest, so it builds on a
// bare GPU machine). Every SIMT example kernel and the deterministic kernels of the unit tests run
// on the CPU backend and on the GPU with the same fresh random inputs (the seed is printed;
// CTILE_GPU_SEED=<n> repeats a run), outputs compared element by element: exactly where the
// result is deterministic, within a tolerance for float atomics. Also: contracts against the real
// device's limits, raw CUDA kernels, SIMT and tile kernels chained across GPU streams,
// race-checked launches of GPU tensors. Exit 0 when all pass, 1 otherwise, 77 (skipped) without a
// usable GPU. `test_gpu_simt NAME...` runs the tests whose names contain one of the arguments.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "../../examples/simt_kernels.hpp"
#include "../unit/simt/interop.hpp"
#include "../unit/simt/kernels.hpp"

namespace {

namespace ct = ctile;
namespace cs = ctile::simt;
using namespace simt_examples;
using namespace simt_test;

const ct::Device kGpu{ct::DeviceKind::Cuda, 0};
const ct::Device kCpu = ct::cpu();

struct Test {
  const char* name;
  void (*fn)();
};
std::vector<Test>& registry() {
  static std::vector<Test> t;
  return t;
}
struct Reg {
  Reg(const char* n, void (*f)()) { registry().push_back({n, f}); }
};
#define SIMT_GPU_TEST(name)                 \
  static void name();                       \
  static const Reg reg_##name(#name, &name); \
  static void name()

int g_failures = 0;
std::uint64_t g_seed = 0;
#define CHECK(cond, ...)                                                            \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      ++g_failures;                                                                 \
      std::printf("  FAILED %s:%d: %s ", __FILE__, __LINE__, #cond);               \
      std::printf(__VA_ARGS__);                                                     \
      std::printf("\n");                                                            \
    }                                                                               \
  } while (0)

std::uint64_t seed(std::uint64_t salt) { return g_seed * 0x9E3779B97F4A7C15ull + salt; }

template <class T>
void expect_equal(const std::vector<T>& gpu, const std::vector<T>& cpu, const char* what) {
  CHECK(gpu.size() == cpu.size(), "%s: %zu vs %zu elements", what, gpu.size(), cpu.size());
  std::size_t bad = 0;
  for (std::size_t i = 0; i < gpu.size() && i < cpu.size(); ++i)
    if (!(gpu[i] == cpu[i]) && bad++ < 5)
      std::printf("  %s: element %zu: GPU %.9g, CPU %.9g\n", what, i, static_cast<double>(gpu[i]), static_cast<double>(cpu[i]));
  CHECK(bad == 0, "%s: %zu of %zu elements differ", what, bad, gpu.size());
}

template <class T>
void expect_close(const std::vector<T>& gpu, const std::vector<T>& cpu, double rtol, const char* what) {
  CHECK(gpu.size() == cpu.size(), "%s: sizes differ", what);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < gpu.size() && i < cpu.size(); ++i) {
    const double g = gpu[i], c = cpu[i];
    if (!(std::abs(g - c) <= rtol * std::max(1.0, std::abs(c))) && bad++ < 5)
      std::printf("  %s: element %zu: GPU %.9g, CPU %.9g\n", what, i, g, c);
  }
  CHECK(bad == 0, "%s: %zu elements differ beyond rtol %g", what, bad, rtol);
}

template <class F>
std::string user_error(F&& f) {
  try {
    f();
  } catch (const ct::UserError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("NOT A UserError: ") + e.what();
  }
  return "nothing thrown";
}

// ---- the examples, CPU vs GPU ----

SIMT_GPU_TEST(example_simt_vector_add) {
  const std::int64_t n = (std::int64_t{1} << 22) + 3;
  auto run = [&](ct::Device d) {
    auto a = ct::rand<float>({n}, seed(1), d).share();
    auto b = ct::rand<float>({n}, seed(2), d).share();
    auto out = ct::full<float>({n}, NAN, d);  // poisoned: every element must be written
    return std::get<0>(cs::prepare(simt_vector_add, cs::cover(n), std::move(out), a, b).sync()).to_host();
  };
  expect_equal(run(kGpu), run(kCpu), "simt_vector_add");
}

SIMT_GPU_TEST(example_simt_vector_add4) {
  // 16-byte vectors: aligned views whose size is not a multiple of 4, and unaligned views (element
  // by element), against the CPU backend.
  const std::int64_t n = (std::int64_t{1} << 22) + 3;
  for (const std::int64_t start : {std::int64_t{0}, std::int64_t{1}}) {
    auto run = [&](ct::Device d) {
      auto a = ct::rand<float>({n + 1}, seed(3), d).share().slice(0, start, start + n);
      auto b = ct::rand<float>({n + 1}, seed(4), d).share().slice(0, start, start + n);
      auto out = ct::full<float>({n + 1}, NAN, d).slice(0, start, start + n);  // poisoned
      return std::get<0>(cs::prepare(simt_vector_add4, cs::cover((n + 3) / 4), std::move(out), a, b).sync()).to_host();
    };
    expect_equal(run(kGpu), run(kCpu), start == 0 ? "simt_vector_add4" : "simt_vector_add4, unaligned views");
  }
}

SIMT_GPU_TEST(example_simt_sum) {
  for (std::int64_t n : {std::int64_t{1} << 23, (std::int64_t{1} << 20) + 5, std::int64_t{1000}}) {
    auto run = [&](ct::Device d) {
      auto x = ct::rand<float>({n}, seed(3), -1.0, 1.0, d).share();
      const std::int64_t blocks = std::min<std::int64_t>(1024, (n / 4 + 255) / 256 + 1);
      return std::get<0>(cs::prepare(simt_sum, cs::grid(blocks), ct::zeros<float>({1}, d), x).sync()).to_host();
    };
    const auto xs = ct::rand<float>({n}, seed(3), -1.0, 1.0, kCpu).to_host();
    double ref = 0;
    for (float v : xs) ref += v;
    const double g = run(kGpu)[0], c = run(kCpu)[0];
    const double scale = std::max(1.0, std::sqrt(static_cast<double>(n)));
    CHECK(std::abs(g - ref) <= 1e-5 * scale, "n=%lld: GPU sum %.9g, float64 %.9g", static_cast<long long>(n), g, ref);
    CHECK(std::abs(c - ref) <= 1e-5 * scale, "n=%lld: CPU sum %.9g, float64 %.9g", static_cast<long long>(n), c, ref);
  }
}

SIMT_GPU_TEST(example_simt_histogram) {
  const std::int64_t n = 20'000'017;
  auto run = [&](ct::Device d) {
    auto data = ct::rand<std::uint8_t>({n}, seed(4), 0, 256, d).share();
    return std::get<0>(cs::prepare(simt_histogram, cs::grid(264), ct::zeros<std::uint32_t>({256}, d), data).sync()).to_host();
  };
  const auto g = run(kGpu);
  expect_equal(g, run(kCpu), "simt_histogram");
  std::uint64_t total = 0;
  for (auto v : g) total += v;
  CHECK(total == static_cast<std::uint64_t>(n), "the bins add up to %llu, not %lld", static_cast<unsigned long long>(total),
        static_cast<long long>(n));
}

SIMT_GPU_TEST(example_simt_stencil) {
  const std::int64_t rows = 701, cols = 1103;
  auto run = [&](ct::Device d) {
    ct::Tensor<float> g = ct::rand<float>({rows, cols}, seed(5), d);
    for (int s = 0; s < 3; ++s) {
      auto in = std::move(g).share();
      g = std::get<0>(cs::prepare(simt_stencil, cs::cover_2d(rows, cols), ct::full<float>({rows, cols}, NAN, d), in).sync());
    }
    return g.to_host();
  };
  expect_close(run(kGpu), run(kCpu), 1e-6, "simt_stencil");
}

SIMT_GPU_TEST(example_simt_transpose) {
  for (auto [rows, cols] : {std::pair<std::int64_t, std::int64_t>{2049, 1501}, {32, 32}, {1, 77}}) {
    auto run = [&](ct::Device d) {
      auto in = ct::rand<float>({rows, cols}, seed(6), d).share();
      const auto grid = cs::grid((cols + 31) / 32, (rows + 31) / 32);
      return std::get<0>(cs::prepare(simt_transpose, grid, ct::full<float>({cols, rows}, NAN, d), in).sync()).to_host();
    };
    expect_equal(run(kGpu), run(kCpu), "simt_transpose");
  }
}

// ---- the unit tests' kernels, CPU vs GPU: index spaces, warps, atomics, shared memory ----

SIMT_GPU_TEST(index_spaces) {
  auto run = [&](ct::Device d) {
    std::vector<std::int64_t> all;
    auto [a] = cs::prepare(k_index_1d, cs::grid(30, 7, 3), ct::full<std::int64_t>({30 * 7 * 3 * 32 + 9}, -1, d)).sync();
    for (auto v : a.to_host()) all.push_back(v);
    auto [b] = cs::prepare(k_grid_stride, cs::grid(40), ct::zeros<std::int32_t>({100003}, d)).sync();
    for (auto v : b.to_host()) all.push_back(v);
    auto [c] = cs::prepare(k_index_2d, cs::grid(9, 5, 3), ct::zeros<std::int32_t>({130, 75}, d)).sync();
    for (auto v : c.to_host()) all.push_back(v);
    auto [t] = cs::prepare(k_tile, cs::grid(7, 5), ct::zeros<std::int32_t>({77, 53}, d)).sync();
    for (auto v : t.to_host()) all.push_back(v);
    auto [tt] = cs::prepare(k_tile_transposed, cs::grid(7, 5), ct::zeros<std::int32_t>({101, 43}, d)).sync();
    for (auto v : tt.to_host()) all.push_back(v);
    auto [pb, pw] = cs::prepare(k_leaders, cs::grid(50), ct::zeros<std::int64_t>({51}, d), ct::zeros<std::int64_t>({151}, d)).sync();
    for (auto v : pb.to_host()) all.push_back(v);
    for (auto v : pw.to_host()) all.push_back(v);
    return all;
  };
  expect_equal(run(kGpu), run(kCpu), "index spaces");
}

SIMT_GPU_TEST(warp_collectives) {
  const int n = 64 * 100;
  auto run = [&](ct::Device d) {
    auto in = ct::rand<std::int32_t>({n}, seed(7), 0, 1000, d).share();
    auto [o, in2] = cs::prepare(k_warp_ops, cs::cover(n), ct::zeros<std::int32_t>({9 * n}, d), in).sync();
    return o.to_host();
  };
  expect_equal(run(kGpu), run(kCpu), "warp shuffles and votes");
  auto sums = [&](ct::Device d) {
    auto in = ct::rand<double>({5000}, seed(8), d).share();
    return std::get<0>(cs::prepare(k_warp_sum, cs::grid(80), ct::zeros<double>({160}, d), in).sync()).to_host();
  };
  expect_close(sums(kGpu), sums(kCpu), 1e-12, "warp::reduce_sum");
}

SIMT_GPU_TEST(atomics_and_shared_memory) {
  auto run = [&](ct::Device d) {
    auto [a, b, dd, c, missed] =
        cs::prepare(k_atomics, cs::grid(100), ct::zeros<std::int32_t>({8}, d), ct::zeros<std::int64_t>({1}, d),
                    ct::zeros<double>({1}, d), ct::zeros<std::uint32_t>({1}, d), ct::zeros<std::int32_t>({6400}, d))
            .sync();
    std::vector<double> all;
    for (auto v : a.to_host()) all.push_back(v);
    all.push_back(static_cast<double>(b.to_host()[0]));
    all.push_back(dd.to_host()[0]);
    all.push_back(c.to_host()[0]);
    for (auto v : missed.to_host()) all.push_back(v);
    auto [t] = cs::prepare(k_shared_atomics, cs::grid(77), ct::zeros<std::uint32_t>({1}, d)).sync();
    all.push_back(t.to_host()[0]);
    auto in = ct::rand<std::int32_t>({128 * 300}, seed(9), -100, 100, d).share();
    auto [r, in2] = cs::prepare(k_reverse, cs::cover(128 * 300), ct::zeros<std::int32_t>({128 * 300}, d), in).sync();
    for (auto v : r.to_host()) all.push_back(v);
    return all;
  };
  expect_equal(run(kGpu), run(kCpu), "atomics, shared atomics, shared memory");
}

SIMT_GPU_TEST(spans_and_uniforms) {
  auto run = [&](ct::Device d) {
    auto x = ct::rand<float>({1234}, seed(10), d).share();
    auto [o, around, x2, a, k] = cs::prepare(k_uniform_and_fallbacks, cs::cover(1234), ct::zeros<double>({1234}, d),
                                             ct::zeros<float>({1234}, d), x, 0.75, -3)
                                     .sync();
    std::vector<double> all;
    for (auto v : o.to_host()) all.push_back(v);
    for (auto v : around.to_host()) all.push_back(v);
    auto [v4, x3] = cs::prepare(k_vec4, cs::cover(320), ct::zeros<float>({320}, d), x2).sync();
    for (auto v : v4.to_host()) all.push_back(v);
    auto [m, shifted] = cs::prepare(k_vec4, cs::cover(10), ct::zeros<float>({10}, d), x3.slice(0, 1, 41)).sync();
    for (auto v : m.to_host()) all.push_back(v);
    auto wide = ct::rand<float>({67, 90}, seed(11), d).share();
    auto [p, w2] = cs::prepare(k_plus_one_2d, cs::cover_2d(67, 41), ct::zeros<float>({67, 41}, d), wide.slice(1, 7, 48)).sync();
    for (auto v : p.to_host()) all.push_back(v);
    return all;
  };
  expect_equal(run(kGpu), run(kCpu), "spans, Uniforms, vector loads, strided 2-D input");
}

// ---- contracts against the real device ----

CTILE_SIMT_KERNEL(k_too_big, (DisjointSpan<float> out), Contract().block(1024, 2), (), { out.get_mut(index_1d()).set(1.0f); })
CTILE_SIMT_KERNEL(k_too_much_smem, (DisjointSpan<float> out), Contract().block(32).dynamic_shared(300 * 1024), (), {
  out.get_mut(index_1d()).set(1.0f);
})
CTILE_SIMT_KERNEL(k_future_gpu, (DisjointSpan<float> out), Contract().block(32).min_compute_capability(12, 9), (), {
  out.get_mut(index_1d()).set(1.0f);
})
CTILE_SIMT_KERNEL(k_big_smem_gpu, (DisjointSpan<float> out, Span<float> in), Contract().block(256).dynamic_shared(96 * 1024),
                  (out.size() == in.size()), {
  auto s = dynamic_shared<float>(ctile::unchecked);
  const u32 t = thread_in_block();
  for (u32 k = 0; k < 96; ++k) s[k * 256 + t] = in.get_or(index_1d().get(), 0.0f) + (float)k;
  sync_threads();
  float acc = 0.0f;
  for (u32 k = 0; k < 96; ++k) acc += s[k * 256 + (t + 1) % 256];
  out.get_mut(index_1d()).set(acc);
})

SIMT_GPU_TEST(contracts_against_the_device) {
  const cs::DeviceLimits l = cs::limits_of(kGpu);
  std::printf("  limits of %s: cc %d, %lld threads/block, %lld B opt-in shared memory\n", l.device.c_str(),
              l.compute_capability, static_cast<long long>(l.max_threads_per_block),
              static_cast<long long>(l.max_shared_per_block_optin));
  CHECK(l.compute_capability >= 80, "cc %d", l.compute_capability);
  std::string m = user_error([&] { (void)cs::prepare(k_too_big, cs::grid(1), ct::zeros<float>({8}, kGpu)); });
  CHECK(m.find("has 2048 threads; cuda:0") != std::string::npos, "%s", m.c_str());
  m = user_error([&] { (void)cs::prepare(k_too_much_smem, cs::grid(1), ct::zeros<float>({8}, kGpu)); });
  CHECK(m.find("asks for 307200 bytes of dynamic shared memory per block; cuda:0") != std::string::npos, "%s", m.c_str());
  m = user_error([&] { (void)cs::prepare(k_future_gpu, cs::grid(1), ct::zeros<float>({8}, kGpu)); });
  CHECK(m.find("needs compute capability 12.9 or newer; cuda:0") != std::string::npos, "%s", m.c_str());
  // Above 48 KiB of dynamic shared memory (the opt-in path), CPU vs GPU.
  auto run = [&](ct::Device d) {
    auto in = ct::rand<float>({256 * 40}, seed(12), d).share();
    return std::get<0>(cs::prepare(k_big_smem_gpu, cs::cover(256 * 40), ct::zeros<float>({256 * 40}, d), in).sync()).to_host();
  };
  expect_close(run(kGpu), run(kCpu), 1e-6, "96 KiB of dynamic shared memory");
}

// ---- raw CUDA kernels, interop, race-checked GPU launches ----

SIMT_GPU_TEST(raw_kernel) {
  const auto k = cs::RawKernel::from_source(ct::unchecked, R"(
    extern "C" __global__ void axpy(float* y, const float* x, float a, long n) {
      long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
      if (i < n) y[i] = a * x[i] + y[i];
    })", "axpy");
  const long n = 100003;
  auto x = ct::rand<float>({n}, seed(13), kGpu).share();
  auto y0 = ct::rand<float>({n}, seed(14), kGpu);
  auto [y, x2, a, nn] = cs::launch_raw(ct::unchecked, k, cs::grid((n + 255) / 256), cs::Dims{256}, 0, std::move(y0), x, 3.0f, n).sync();
  const auto got = y.to_host(), xs = x2.to_host(), ys = ct::rand<float>({n}, seed(14), kCpu).to_host();
  std::vector<float> want(static_cast<std::size_t>(n));
  for (long i = 0; i < n; ++i) want[i] = std::fma(3.0f, xs[i], ys[i]);  // nvcc contracts a * x + y
  expect_close(got, want, 1e-6, "raw axpy");
}

SIMT_GPU_TEST(tile_and_simt_across_streams) {
  // tile (stream 1) -> SIMT, slow (stream 2) -> tile (stream 1): each step waits for the one before
  // through the tensors' events, on the device.
  const int n = 1 << 20;
  auto run = [&](ct::Device d) {
    auto x = ct::rand<float>({n}, seed(15), d).share();
    ct::Stream s1 = ct::Stream::create(d), s2 = ct::Stream::create(d);
    auto f = ct::launch(tile_double, ct::zeros<float>({n}, d).partition({1024}), x)
                 .async_on(s1)
                 .then_on(s2,
                          [&](auto&& r) {
                            auto& [zp, x2] = r;
                            // 64 blocks of 32 threads, grid-stride over n, each spinning first.
                            return cs::prepare(k_slow_scale, cs::grid(64), ct::zeros<float>({n}, d),
                                               std::move(zp).unpartition().share(), std::int64_t{5000}, 1.5f);
                          })
                 .then_on(s1, [&](auto&& r) {
                   auto& [w, z, spins, scale] = r;
                   return ct::launch(tile_double, ct::zeros<float>({n}, d).partition({1024}), std::move(w).share());
                 });
    auto [u, w] = std::move(f).get();
    return std::move(u).unpartition().to_host();
  };
  expect_equal(run(kGpu), run(kCpu), "tile -> SIMT -> tile");
}

SIMT_GPU_TEST(graph_of_tile_and_simt_launches) {
  // The graph of a tile and a SIMT kernel (two kernel nodes), replayed with a Uniform changed and
  // the output swapped between replays, on the GPU and on the CPU with the same input.
  const std::int64_t n = (1 << 20) + 3;
  auto run = [&](ct::Device d) {
    auto g = capture_tile_then_simt(d, n, ct::rand<float>({n}, seed(21), d).share(), ct::zeros<float>({n}, d));
    CHECK(g.kernel_nodes() == 2, "%zu kernel nodes", g.kernel_nodes());
    ct::Stream s = ct::Stream::create(d);
    g = std::move(g).replay(s).get();
    std::vector<float> first = g.read<0>();
    g.set_scalar(1, 3, -0.75f);
    ct::Tensor<float> old = g.swap<0>(ct::zeros<float>({n}, d));
    g = std::move(g).replay(s).get();
    std::vector<float> second = g.read<0>();
    CHECK(old.to_host() == first, "the swapped-out output keeps the first replay's result");
    first.insert(first.end(), second.begin(), second.end());
    return first;
  };
  const std::uint64_t before = ct::cuda_launch_count(0);
  const std::vector<float> gpu = run(kGpu);
  CHECK(ct::cuda_launch_count(0) - before >= 4, "the graph's kernels ran on the GPU");
  expect_equal(gpu, run(kCpu), "graph of tile + SIMT kernels");
}

SIMT_GPU_TEST(small_integer_reads) {
  // i8, u8, i16 and u16 elements, every value of each (the GPU's own widening loads).
  expect_equal(run_small_ints(kGpu, 65536), run_small_ints(kCpu, 65536), "8- and 16-bit integer reads");
}

SIMT_GPU_TEST(race_checked_gpu_launches) {
  std::string m = user_error([&] {
    (void)cs::prepare(k_race_ww, cs::grid(1), ct::zeros<std::int32_t>({64}, kGpu)).race_check().sync();
  });
  CHECK(m.find("data race in SIMT kernel 'k_race_ww'") != std::string::npos, "%s", m.c_str());
  auto x = ct::rand<float>({5000}, seed(16), kGpu).share();
  auto [o, x2, s, sc] =
      cs::prepare(k_slow_scale, cs::cover(5000), ct::zeros<float>({5000}, kGpu), x, std::int64_t{0}, 2.0f).race_check().sync();
  const auto got = o.to_host(), xs = x2.to_host();
  std::vector<float> want(xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i) want[i] = xs[i] * 2.0f;
  expect_equal(got, want, "race-checked launch of GPU tensors");
}

SIMT_GPU_TEST(many_launches_in_flight) {
  // 300 dependent SIMT launches on one stream, then the result.
  const int n = 1 << 16;
  ct::Tensor<float> t = ct::zeros<float>({n}, kGpu);
  auto one = ct::ones<float>({n}, kGpu).share();
  ct::Stream s = ct::Stream::create(kGpu);
  for (int i = 0; i < 300; ++i) {
    auto [o, a, b] = cs::prepare(simt_vector_add, cs::cover(n), ct::zeros<float>({n}, kGpu), std::move(t).share(), one)
                         .async_on(s)
                         .get();
    t = std::move(o);
  }
  for (float v : t.to_host()) CHECK(v == 300.0f, "%g", v);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--list") {
    for (const Test& t : registry()) std::printf("%s\n", t.name);
    return 0;
  }
  if (!ct::cuda_available()) {
    std::printf("SKIPPED: no usable GPU (%s)\n", ct::cuda_unavailable_reason().c_str());
    return 77;
  }
  const char* s = std::getenv("CTILE_GPU_SEED");
  g_seed = s && *s ? std::strtoull(s, nullptr, 10) : std::random_device{}();
  std::printf("SIMT GPU suite on %s, seed %llu (CTILE_GPU_SEED)\n", ct::describe(kGpu).c_str(),
              static_cast<unsigned long long>(g_seed));
  int failed = 0, ran = 0;
  for (const Test& t : registry()) {
    bool wanted = argc <= 1;
    for (int i = 1; i < argc; ++i) wanted |= std::string(t.name).find(argv[i]) != std::string::npos;
    if (!wanted) continue;
    const int before = g_failures;
    const auto t0 = std::chrono::steady_clock::now();
    try {
      t.fn();
    } catch (const std::exception& e) {
      ++g_failures;
      std::printf("  FAILED: %s escaped: %s\n", t.name, e.what());
    }
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const bool ok = g_failures == before;
    std::printf("%s %s (%.0f ms)\n", ok ? "PASS" : "FAIL", t.name, ms);
    ++ran;
    failed += !ok;
  }
  std::printf("%d of %d SIMT GPU tests passed\n", ran - failed, ran);
  return failed == 0 ? 0 : 1;
}
