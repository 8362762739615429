// The differential tests on a real GPU: every kernel of cases.hpp generated, compiled by NVRTC for
// the device, launched through the driver API, and compared with the CPU interpreter within the
// bounds of the error-bound table (differential.hpp); the special-value cases with their
// prescribed results; and a deliberately altered kernel that must fail. Built always, registered
// with CTest (label gpu) when CTILE_GPU_TESTS=ON. Without a usable GPU, with CTILE_RACE_CHECK set
// or with CTILE_BACKEND other than cuda every test fails: the GPU suite never passes or skips
// without running on the GPU. Every test checks that kernels were launched (gpu_driver launches()).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>

#include "../../../src/backend/cuda/codegen.hpp"
#include "../../../src/backend/cuda/nvrtc.hpp"
#include "../../../src/backend/cuda/cuda_backend.hpp"
#include "../../../src/platform/kernel.hpp"
#include "cases.hpp"
#include "differential.hpp"
#include "gpu_driver.hpp"
#include "special_values.hpp"

namespace cuda_codegen_test {
namespace {

namespace cu = backend::cuda;

// Why the GPU suite cannot run here ("" when it can).
std::string refusal() {
  if (const char* r = std::getenv("CTILE_RACE_CHECK"); r && *r)
    return std::string("CTILE_RACE_CHECK=") + r + " is set: the GPU suite refuses to run under it (unset it)";
  if (const char* b = std::getenv("CTILE_BACKEND"); b && *b && std::strcmp(b, "cuda") != 0)
    return std::string("CTILE_BACKEND=") + b + ": the GPU suite runs on the GPU only";
  std::string why;
  if (!cuda_gpu::driver(&why)) return "the GPU suite needs a usable GPU: " + why;
  if (!cu::nvrtc()) return "the GPU suite needs NVRTC: " + cu::nvrtc_unavailable_reason();
  return "";
}

// Every test's fixture: a refusal fails the test (a failure, not a skip: CTest would count a
// GoogleTest skip as passed).
template <class Base>
class RequireGpu : public Base {
 protected:
  void SetUp() override {
    const std::string r = refusal();
    if (!r.empty()) FAIL() << "REFUSED: " << r;
  }
};
using GpuTest = RequireGpu<::testing::Test>;

cuda_gpu::Driver* drv() {
  cuda_gpu::Driver* d = cuda_gpu::driver();
  if (!d) throw std::runtime_error("no GPU");  // the fixture has failed the test already
  return d;
}

struct Loaded {
  void* fn;
  int threads;
  std::size_t smem;
  double nvrtc_ms;
};

// Compiles (once per generated source) and loads the kernel on the device.
Loaded load(const cu::GeneratedKernel& g) {
  static std::map<std::string, Loaded> cache;
  if (auto it = cache.find(g.source); it != cache.end()) return it->second;
  const int sm = cuda_gpu::compute_capability(drv());
  const auto bin = cu::nvrtc()->compile(g, sm, cu::Output::Cubin);
  const Loaded l{cuda_gpu::load(drv(), bin.image, g.entry, g.smem_bytes), g.threads, g.smem_bytes, bin.compile_ms};
  cache.emplace(g.source, l);
  return l;
}

// The tensor maps of TMA copies, encoded by the driver as the platform encodes them.
void gpu_map_writer(std::byte* out, const cu::GeneratedKernel::Map& m, const backend::TensorArg& t) {
  const auto slot = cu::tensor_map_slot(m);
  const auto e = platform::tensor_map_encoding(slot, t.data, t.shape.data(), t.strides.data(), static_cast<int>(t.shape.size()));
  if (!e.error.empty()) throw std::runtime_error("tensor map: " + e.error);
  std::memset(out, 0, 128);
  if (e.empty) return;
  const std::string err = cuda_gpu::encode_tensor_map(drv(), out, static_cast<int>(e.data_type), e.rank, t.data, e.dims,
                                                      e.strides_bytes, e.box, static_cast<int>(e.swizzle));
  if (!err.empty()) throw std::runtime_error(err);
}

// Runs `g` (generated from k) on the GPU over device copies of `in`'s buffers (whole buffers, so
// views keep their offsets and strides), then copies them back.
void run_generated(const cu::GeneratedKernel& g, const ir::Kernel& k, const backend::LaunchConfig& cfg, Inputs& in) {
  const Loaded l = load(g);
  std::vector<std::uint64_t> dev(k.params.size(), 0);
  std::vector<ArgValue> dargs = in.args;
  for (std::size_t i = 0; i < k.params.size(); ++i) {
    if (k.params[i].type.kind == ir::TypeKind::Tile) continue;
    Buffer& b = in.bufs[i];
    dev[i] = cuda_gpu::alloc(drv(), b.mem.size());
    cuda_gpu::to_device(drv(), dev[i], b.mem.data(), b.mem.size());
    dargs[i].tensor.data = reinterpret_cast<void*>(dev[i] + b.offset * static_cast<std::size_t>(dtype_size(b.d)));
  }
  auto params = cu::pack_params(k, cfg, dargs, &g, gpu_map_writer);
  std::int64_t blocks = 1;
  for (auto e : cfg.grid) blocks *= e;
  const std::string err = cuda_gpu::launch(drv(), l.fn, blocks, l.threads, l.smem, params.data());
  if (!err.empty()) throw std::runtime_error("kernel " + k.name + " failed on the GPU: " + err);
  for (std::size_t i = 0; i < k.params.size(); ++i) {
    if (!dev[i]) continue;
    cuda_gpu::to_host(drv(), in.bufs[i].mem.data(), dev[i], in.bufs[i].mem.size());
    cuda_gpu::free_mem(drv(), dev[i]);
  }
}

void run_on_gpu(const std::shared_ptr<const ir::Kernel>& k, const backend::LaunchConfig& cfg, Inputs& in) {
  const int sm = cuda_gpu::compute_capability(drv());
  run_generated(cu::generate(*k, cu::CodegenOptions{sm}), *k, cfg, in);
}

class GpuDifferential : public RequireGpu<::testing::TestWithParam<std::size_t>> {};

TEST_P(GpuDifferential, GeneratedCodeMatchesTheInterpreter) {
  const Case& c = all_cases()[GetParam()];
  // A configuration for sm_90 alone (its name ends in _sm90: more shared memory than sm_80 gives a
  // CTA) is skipped, with the reason, on an older GPU.
  if (c.name.ends_with("_sm90") && cuda_gpu::compute_capability(drv()) < 90)
    GTEST_SKIP() << c.name << " is a configuration for sm_90; this GPU is sm_" << cuda_gpu::compute_capability(drv());
  const auto k = c.make();
  const auto before = cuda_gpu::launches(drv());
  const auto t0 = std::chrono::steady_clock::now();
  for (const auto& [seed, fill] : run_inputs())
    for (const std::string& f : check_case(c, k, run_on_gpu, seed, fill)) ADD_FAILURE() << f;
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GT(cuda_gpu::launches(drv()), before) << "no kernel was launched on the GPU";
  const auto g = cu::generate(*k, cu::CodegenOptions{cuda_gpu::compute_capability(drv())});
  std::printf("[ gpu      ] %-36s %4d threads %6zu B smem  nvrtc %7.1f ms  3 runs %.1f ms\n", c.name.c_str(), g.threads,
              g.smem_bytes, load(g).nvrtc_ms, ms);
}

INSTANTIATE_TEST_SUITE_P(AllKernels, GpuDifferential, ::testing::Range<std::size_t>(0, all_cases().size()),
                         [](const ::testing::TestParamInfo<std::size_t>& i) { return all_cases()[i.param].name; });

class GpuSpecialValues : public RequireGpu<::testing::TestWithParam<std::size_t>> {};

TEST_P(GpuSpecialValues, GeneratedCodeGivesThePrescribedResults) {
  const SpecialCase& sc = special_cases()[GetParam()];
  const auto before = cuda_gpu::launches(drv());
  for (const std::string& f : check_special(sc, run_on_gpu)) ADD_FAILURE() << f;
  EXPECT_EQ(cuda_gpu::launches(drv()), before + 1) << "the kernel was not launched on the GPU";
}

INSTANTIATE_TEST_SUITE_P(Ops, GpuSpecialValues, ::testing::Range<std::size_t>(0, special_cases().size()),
                         [](const ::testing::TestParamInfo<std::size_t>& i) { return special_cases()[i.param].name; });

// The comparison on the GPU rejects a wrong kernel: vector_add's add emitted as a subtract.
class GpuDifferentialSelfTest : public GpuTest {};

TEST_F(GpuDifferentialSelfTest, AGeneratedKernelWithOneOpAlteredFails) {
  const Case* c = nullptr;
  for (const Case& x : all_cases())
    if (x.name == "example_vector_add") c = &x;
  ASSERT_NE(c, nullptr);
  const auto k = c->make();
  const auto before = cuda_gpu::launches(drv());
  Runner altered = [](const std::shared_ptr<const ir::Kernel>& kk, const backend::LaunchConfig& cfg, Inputs& in) {
    auto g = cu::generate(*kk, cu::CodegenOptions{cuda_gpu::compute_capability(drv())});
    const auto at = g.source.find("ct::op_add(");
    ASSERT_NE(at, std::string::npos);
    g.source.replace(at, 11, "ct::op_sub(");
    run_generated(g, *kk, cfg, in);
  };
  const auto fails = check_case(*c, k, altered, 8, Fill::Clean);
  EXPECT_FALSE(fails.empty()) << "an altered kernel passed the differential comparison on the GPU";
  EXPECT_GT(cuda_gpu::launches(drv()), before);
}

// Rough throughput of the generated code on large problems (no assertions on speed; the benchmark
// suite measures properly): bytes moved once over time, and TFLOP/s for the matmul.
class GpuThroughput : public GpuTest {};

TEST_F(GpuThroughput, LargeProblems) {
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
      {"matmul_128x128x64", {{4096, 4096}, {4096, 4096}, {4096, 4096}}, {32, 32}, 0, 2.0 * 4096 * 4096 * 4096},
      {"matmul_128x128x64_tma", {{4096, 4096}, {4096, 4096}, {4096, 4096}}, {32, 32}, 0, 2.0 * 4096 * 4096 * 4096},
      {"matmul_128x128x64_tma_ws", {{4096, 4096}, {4096, 4096}, {4096, 4096}}, {32, 32}, 0, 2.0 * 4096 * 4096 * 4096},
  };
  const auto launched = cuda_gpu::launches(drv());
  const int sm = cuda_gpu::compute_capability(drv());
  for (const Problem& pr : problems) {
    const Case* c = nullptr;
    for (const Case& x : all_cases())
      if (x.name == pr.kernel) c = &x;
    ASSERT_NE(c, nullptr) << pr.kernel;
    const auto k = c->make();
    const auto g = cu::generate(*k, cu::CodegenOptions{sm});
    const Loaded l = load(g);
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
      dev.push_back(cuda_gpu::alloc(drv(), bytes));
      std::vector<std::byte> zero(bytes);
      cuda_gpu::to_device(drv(), dev.back(), zero.data(), bytes);
      args[i].tensor.data = reinterpret_cast<void*>(dev.back());
      args[i].tensor.dtype = p.type.dtype;
      args[i].tensor.shape = s;
      args[i].tensor.strides = contiguous_strides(s);
    }
    backend::LaunchConfig cfg;
    cfg.grid = pr.grid;
    auto params = cu::pack_params(*k, cfg, args, &g, gpu_map_writer);
    const std::int64_t blocks = numel(pr.grid);
    for (int w = 0; w < 2; ++w) ASSERT_EQ(cuda_gpu::launch(drv(), l.fn, blocks, l.threads, l.smem, params.data()), "");
    const int reps = 10;
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) ASSERT_EQ(cuda_gpu::launch_async(drv(), l.fn, blocks, l.threads, l.smem, params.data()), "");
    ASSERT_EQ(cuda_gpu::synchronize(drv()), "");
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
    if (pr.flops > 0)
      std::printf("[ perf     ] %-22s %4d thr %6zu B smem  %8.3f ms  %7.1f TFLOP/s  (nvrtc %.0f ms)\n", pr.kernel, l.threads,
                  l.smem, s * 1e3, pr.flops / s * 1e-12, l.nvrtc_ms);
    else
      std::printf("[ perf     ] %-22s %4d thr %6zu B smem  %8.3f ms  %7.2f TB/s     (nvrtc %.0f ms)\n", pr.kernel, l.threads,
                  l.smem, s * 1e3, pr.bytes / s * 1e-12, l.nvrtc_ms);
    for (auto d : dev) cuda_gpu::free_mem(drv(), d);
  }
  EXPECT_EQ(cuda_gpu::launches(drv()), launched + problems.size() * 12);
}

}  // namespace
}  // namespace cuda_codegen_test
