// The differential tests on a real GPU: every kernel of cases.hpp generated, compiled by NVRTC for
// the device, launched through the driver API, and compared with the CPU interpreter. Skips when
// there is no GPU (built with CTILE_GPU_TESTS=ON; label gpu).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "../../../src/backend/cuda/codegen.hpp"
#include "../../../src/backend/cuda/nvrtc.hpp"
#include "cases.hpp"
#include "differential.hpp"
#include "gpu_driver.hpp"

namespace cuda_codegen_test {
namespace {

namespace cu = backend::cuda;

class GpuDifferential : public ::testing::TestWithParam<std::size_t> {};

TEST_P(GpuDifferential, GeneratedCodeMatchesTheInterpreter) {
  std::string why;
  cuda_gpu::Driver* drv = cuda_gpu::driver(&why);
  if (!drv) GTEST_SKIP() << "no GPU: " << why;
  cu::Nvrtc* rtc = cu::nvrtc();
  ASSERT_NE(rtc, nullptr) << cu::nvrtc_unavailable_reason();
  const Case& c = all_cases()[GetParam()];
  const auto k = c.make();
  const int sm = cuda_gpu::compute_capability(drv);
  const auto g = cu::generate(*k, cu::CodegenOptions{sm});
  const auto bin = rtc->compile(g, sm, cu::Output::Cubin);
  void* fn = cuda_gpu::load(drv, bin.image, g.entry, g.smem_bytes);
  const Policy pol = policy(c.name);
  for (unsigned seed : {1u, 2u, 3u}) {
    Inputs cpu = make_inputs(*k, pol.one_block, seed);
    Inputs gpu = make_inputs(*k, pol.one_block, seed);
    backend::LaunchConfig cfg;
    cfg.grid = cpu.grid;
    cfg.kernel_name = c.name;
    auto cb = backend::cpu_backend();
    cb->run(*cb->compile(k), cfg, cpu.args);
    // device copies of every tensor (whole buffers, so views keep their offsets and strides)
    std::vector<std::uint64_t> dev(k->params.size(), 0);
    std::vector<ArgValue> dargs = gpu.args;
    for (std::size_t i = 0; i < k->params.size(); ++i) {
      if (k->params[i].type.kind == ir::TypeKind::Tile) continue;
      Buffer& b = gpu.bufs[i];
      dev[i] = cuda_gpu::alloc(drv, b.mem.size());
      cuda_gpu::to_device(drv, dev[i], b.mem.data(), b.mem.size());
      dargs[i].tensor.data = reinterpret_cast<void*>(dev[i] + b.offset * static_cast<std::size_t>(dtype_size(b.d)));
    }
    auto params = cu::pack_params(*k, cfg, dargs);
    std::int64_t blocks = 1;
    for (auto e : cfg.grid) blocks *= e;
    const auto t0 = std::chrono::steady_clock::now();
    const std::string err = cuda_gpu::launch(drv, fn, blocks, g.threads, g.smem_bytes, params.data());
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_EQ(err, "") << c.name << " failed on the GPU";
    for (std::size_t i = 0; i < k->params.size(); ++i) {
      if (!dev[i]) continue;
      cuda_gpu::to_host(drv, gpu.bufs[i].mem.data(), dev[i], gpu.bufs[i].mem.size());
      cuda_gpu::free_mem(drv, dev[i]);
    }
    if (seed == 1)
      std::printf("[ gpu      ] %-36s %4d threads %6zu B smem  nvrtc %7.1f ms  launch+sync %.3f ms\n", c.name.c_str(),
                  g.threads, g.smem_bytes, bin.compile_ms, ms);
    if (pol.racy) continue;
    for (std::size_t i = 0; i < k->params.size(); ++i) {
      const ir::Param& p = k->params[i];
      if (p.type.kind == ir::TypeKind::Tile || p.type.access == ir::Access::Read) continue;
      const std::string e = compare(cpu.bufs[i], gpu.bufs[i], pol.scale, pol.min_tol);
      EXPECT_EQ(e, "") << c.name << ", parameter '" << p.name << "' (" << type_str(p.type) << "), seed " << seed;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllKernels, GpuDifferential, ::testing::Range<std::size_t>(0, all_cases().size()),
                         [](const ::testing::TestParamInfo<std::size_t>& i) { return all_cases()[i.param].name; });

// Rough throughput of the generated code on large problems (no assertions; the benchmark suite
// measures properly): bytes moved once over time, and TFLOP/s for the matmul.
TEST(GpuThroughput, LargeProblems) {
  std::string why;
  cuda_gpu::Driver* drv = cuda_gpu::driver(&why);
  if (!drv) GTEST_SKIP() << "no GPU: " << why;
  cu::Nvrtc* rtc = cu::nvrtc();
  ASSERT_NE(rtc, nullptr) << cu::nvrtc_unavailable_reason();
  struct Problem {
    const char* kernel;
    std::vector<Shape> shapes;  // per param (scalars: {})
    Shape grid;
    double bytes, flops;
  };
  const std::int64_t M = 8192, N = 4096, V = 64 << 20;
  const std::vector<Problem> problems = {
      {"example_vector_add", {{V}, {V}, {V}}, {V / 1024}, 12.0 * V, 0},
      {"example_saxpy", {{2 * V}, {}, {2 * V}}, {2 * V / 2048}, 6.0 * V * 2, 0},
      {"example_softmax", {{16384, 1024}, {16384, 1024}}, {16384, 1}, 8.0 * 16384 * 1024, 0},
      {"softmax_bf16_16k", {{4096, 16384}, {4096, 16384}}, {4096, 1}, 4.0 * 4096 * 16384, 0},
      {"example_rms_norm", {{M, N}, {M, N}, {N}, {}}, {M, 1}, 4.0 * M * N, 0},
      {"layer_norm_bf16_4k", {{M, N}, {M, N}, {N}, {N}, {}}, {M, 1}, 4.0 * M * N, 0},
      {"example_matmul", {{2048, 2048}, {2048, 2048}, {2048, 2048}}, {32, 32}, 0, 2.0 * 2048 * 2048 * 2048},
      {"matmul_128x128x32", {{2048, 2048}, {2048, 2048}, {2048, 2048}}, {16, 16}, 0, 2.0 * 2048 * 2048 * 2048},
  };
  const int sm = cuda_gpu::compute_capability(drv);
  for (const Problem& pr : problems) {
    const Case* c = nullptr;
    for (const Case& x : all_cases())
      if (x.name == pr.kernel) c = &x;
    ASSERT_NE(c, nullptr) << pr.kernel;
    const auto k = c->make();
    const auto g = cu::generate(*k, cu::CodegenOptions{sm});
    const auto bin = rtc->compile(g, sm, cu::Output::Cubin);
    void* fn = cuda_gpu::load(drv, bin.image, g.entry, g.smem_bytes);
    std::vector<ArgValue> args(k->params.size());
    std::vector<std::uint64_t> dev;
    for (std::size_t i = 0; i < k->params.size(); ++i) {
      const ir::Param& p = k->params[i];
      if (p.type.kind == ir::TypeKind::Tile) {
        args[i].scalar = is_float(p.type.dtype) ? ir::Scalar::of_float(1e-5) : ir::Scalar::of_int(1);
        continue;
      }
      const Shape& s = pr.shapes[i];
      const std::size_t bytes = static_cast<std::size_t>(numel(s)) * static_cast<std::size_t>(dtype_size(p.type.dtype));
      dev.push_back(cuda_gpu::alloc(drv, bytes));
      std::vector<std::byte> zero(bytes);
      cuda_gpu::to_device(drv, dev.back(), zero.data(), bytes);
      args[i].tensor.data = reinterpret_cast<void*>(dev.back());
      args[i].tensor.dtype = p.type.dtype;
      args[i].tensor.shape = s;
      args[i].tensor.strides = contiguous_strides(s);
    }
    backend::LaunchConfig cfg;
    cfg.grid = pr.grid;
    auto params = cu::pack_params(*k, cfg, args);
    const std::int64_t blocks = numel(pr.grid);
    for (int w = 0; w < 2; ++w) ASSERT_EQ(cuda_gpu::launch(drv, fn, blocks, g.threads, g.smem_bytes, params.data()), "");
    const int reps = 10;
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) ASSERT_EQ(cuda_gpu::launch_async(drv, fn, blocks, g.threads, g.smem_bytes, params.data()), "");
    ASSERT_EQ(cuda_gpu::synchronize(drv), "");
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
    if (pr.flops > 0)
      std::printf("[ perf     ] %-22s %4d thr %6zu B smem  %8.3f ms  %7.1f TFLOP/s  (nvrtc %.0f ms)\n", pr.kernel, g.threads,
                  g.smem_bytes, s * 1e3, pr.flops / s * 1e-12, bin.compile_ms);
    else
      std::printf("[ perf     ] %-22s %4d thr %6zu B smem  %8.3f ms  %7.2f TB/s     (nvrtc %.0f ms)\n", pr.kernel, g.threads,
                  g.smem_bytes, s * 1e3, pr.bytes / s * 1e-12, bin.compile_ms);
    for (auto d : dev) cuda_gpu::free_mem(drv, d);
  }
}

}  // namespace
}  // namespace cuda_codegen_test
