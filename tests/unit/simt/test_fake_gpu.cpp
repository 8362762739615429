// SIMT and raw launches through the GPU path on the fake CUDA driver of tests/unit/cuda_runtime
// (simt.fake_gpu runs this with CTILE_LIBCUDA pointing at it): device limits, branding, the real
// NVRTC + nvJitLink compile, module load, launch parameters and shared-memory opt-in, and
// race-checked launches, which run on the CPU backend over copies of the device memory, so their
// results are real. (The fake driver does not run kernels.)
#include <dlfcn.h>

#include <array>
#include <cstdlib>
#include <stdexcept>

#include "../../../examples/simt_kernels.hpp"
#include "helpers.hpp"
#include "kernels.hpp"

namespace simt_test {
namespace {

const ct::Device gpu{ct::DeviceKind::Cuda, 0};

CTILE_SIMT_KERNEL(k_big_smem, (DisjointSpan<float> out), Contract().block(64).dynamic_shared(64 * 1024), (), {
  auto s = dynamic_shared<float>(ctile::unchecked);
  s[thread_in_block() * 256] = 1.0f;
  sync_threads();
  out.get_mut(index_1d()).set(s[thread_in_block() * 256]);
})

int host_only(int x) { return x + 1; }
CTILE_SIMT_KERNEL(k_host_code, (DisjointSpan<i32> out), Contract().block(32), (), { out.get_mut(index_1d()).set(host_only(1)); })

TEST(SimtFakeGpu, TheDeviceIsAGpu) {
  ASSERT_TRUE(ct::cuda_available()) << ct::cuda_unavailable_reason();
  const cs::DeviceLimits l = cs::limits_of(gpu);
  EXPECT_EQ(l.compute_capability, 90);
  EXPECT_EQ(l.max_threads_per_block, 1024);
  EXPECT_EQ(l.max_shared_per_block_optin, 227 * 1024);
  EXPECT_EQ(l.max_block, (cs::Dims{1024, 1024, 64}));
  EXPECT_NE(l.device.find("cuda:0 (Fake GPU 0, sm_90)"), std::string::npos) << l.device;
}

TEST(SimtFakeGpu, RaceCheckedLaunchesComputeOnTheCpuOverDeviceCopies) {
  const std::int64_t n = 1000;
  auto a = ct::arange<float>(n, gpu).share();
  auto b = ct::full<float>({n}, 0.5f, gpu).share();
  auto [out, a2, b2] =
      cs::prepare(simt_examples::simt_vector_add, cs::cover(n), ct::zeros<float>({n}, gpu), a, b).race_check().sync();
  EXPECT_EQ(out.device(), gpu);
  const auto v = out.to_host();
  for (int i = 0; i < n; ++i) ASSERT_EQ(v[i], i + 0.5f) << i;
  // Races are found there too.
  EXPECT_USER_ERROR(cs::prepare(k_race_ww, cs::grid(1), ct::zeros<std::int32_t>({64}, gpu)).race_check().sync(),
                    "data race in SIMT kernel 'k_race_ww'");
}

TEST(SimtFakeGpu, LaunchesCompileLoadAndEnqueue) {
  const std::int64_t n = 1 << 16;
  auto x = ct::ones<float>({n}, gpu).share();
  // Compiled by NVRTC and nvJitLink for sm_90a, loaded and launched (a 1-D and a 2-D grid, shared
  // memory above 48 KiB through the opt-in attribute).
  auto [s, x2] = cs::prepare(simt_examples::simt_sum, cs::grid(64), ct::zeros<float>({1}, gpu), x).sync();
  auto m = ct::ones<float>({100, 70}, gpu).share();
  auto [t, m2] = cs::prepare(simt_examples::simt_transpose, cs::grid(3, 4), ct::zeros<float>({70, 100}, gpu), m).sync();
  auto [big] = cs::prepare(k_big_smem, cs::grid(2), ct::zeros<float>({128}, gpu)).sync();
  // A second launch of each finds its module loaded.
  auto [s2, x3] = cs::prepare(simt_examples::simt_sum, cs::grid(64), std::move(s), x2).sync();
  SUCCEED();
}

TEST(SimtFakeGpu, AKernelThatDoesNotCompileForTheGpuFailsAtAsyncOn) {
  auto p = cs::prepare(k_host_code, cs::cover(32), ct::zeros<std::int32_t>({32}, gpu));
  EXPECT_USER_ERROR((void)std::move(p).async_on(ct::default_stream(gpu)), "does not compile for the GPU (sm_90a)");
  // On the CPU the same kernel runs.
  auto [o] = cs::prepare(k_host_code, cs::cover(32), ct::zeros<std::int32_t>({32}, ct::cpu())).sync();
  EXPECT_EQ(o.to_host()[0], 2);
}

TEST(SimtFakeGpu, APreparedLaunchIsBrandedWithItsDevice) {
  auto p = cs::prepare(simt_examples::simt_vector_add, cs::cover(10), ct::zeros<float>({10}, gpu),
                       ct::ones<float>({10}, gpu).share(), ct::ones<float>({10}, gpu).share());
  EXPECT_EQ(p.device(), gpu);
  EXPECT_USER_ERROR((void)std::move(p).async_on(ct::default_stream(ct::cpu())),
                    "it was prepared (checked) for cuda:0 but the stream runs on cpu:0; prepare it for that device");
}

TEST(SimtFakeGpu, ArgumentsOnTwoDevices) {
  EXPECT_USER_ERROR((void)cs::prepare(simt_examples::simt_vector_add, cs::cover(10), ct::zeros<float>({10}, gpu),
                                      ct::ones<float>({10}, ct::cpu()).share(), ct::ones<float>({10}, gpu).share()),
                    "argument 1 (Span<f32> a): the tensor lives on cpu:0 but earlier arguments live on cuda:0");
}

// The launch shape of the fake driver's latest kernel launch or graph kernel node: grid x, y, z,
// block x, y, z, dynamic shared memory.
std::array<unsigned, 7> last_kernel_shape() {
  void* h = ::dlopen(std::getenv("CTILE_LIBCUDA"), RTLD_NOW | RTLD_NOLOAD);
  void* f = h ? ::dlsym(h, "fake_cuda_last_kernel_shape") : nullptr;
  if (!f) throw std::runtime_error("the fake driver's fake_cuda_last_kernel_shape is missing");
  std::array<unsigned, 7> out{};
  reinterpret_cast<void (*)(unsigned*)>(f)(out.data());
  return out;
}

TEST(SimtFakeGpu, GraphsCaptureSimtLaunchesAsKernelNodes) {
  // Eager: one cuLaunchKernel with the 2-D grid and block and the dynamic shared memory.
  auto m = ct::ones<float>({100, 70}, gpu).share();
  auto [t, m2] = cs::prepare(simt_examples::simt_transpose, cs::grid(3, 4), ct::zeros<float>({70, 100}, gpu), m).sync();
  const std::array<unsigned, 7> shape{3, 4, 1, 32, 8, 1, 32 * 33 * 4};
  EXPECT_EQ(last_kernel_shape(), shape);
  // Captured: a kernel node of the same shape, replayed; Uniforms and tensors update the node.
  auto g = ct::capture(gpu, [&](ct::Capture& cap) {
    return cs::prepare(simt_examples::simt_transpose, cs::grid(3, 4), std::move(t), m).async_on(cap.stream());
  });
  EXPECT_EQ(last_kernel_shape(), shape);
  EXPECT_EQ(g.kernel_nodes(), 1u);
  EXPECT_EQ(g.kernel_name(0), "simt_transpose");
  g = std::move(g).replay(ct::default_stream(gpu)).get();
  ct::Tensor<float> old = g.swap<0>(ct::zeros<float>({70, 100}, gpu));
  g = std::move(g).replay(ct::default_stream(gpu)).get();
  // A race-checked launch on a GPU runs on the CPU over copies: not a node a graph can hold.
  EXPECT_USER_ERROR((void)ct::capture(gpu,
                                      [&](ct::Capture& cap) {
                                        return cs::prepare(simt_examples::simt_transpose, cs::grid(3, 4), std::move(old), m)
                                            .race_check()
                                            .async_on(cap.stream());
                                      }),
                    "a race-checked launch on a GPU runs on the CPU backend over copies of its arguments and cannot be "
                    "captured into a graph");
}

TEST(SimtFakeGpu, RawKernelsLaunchOnGpus) {
  const auto k = cs::RawKernel::from_source(ct::unchecked, R"(
    extern "C" __global__ void scale(float* y, const float* x, float a, long n) {
      long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
      if (i < n) y[i] = a * x[i];
    })", "scale");
  auto x = ct::ones<float>({1000}, gpu).share();
  auto [y, x2, a, n] =
      cs::launch_raw(ct::unchecked, k, cs::grid(4), cs::Dims{256}, 0, ct::zeros<float>({1000}, gpu), x, 2.0f, 1000L).sync();
  EXPECT_EQ(y.device(), gpu);
  // Its parameters are not a ctile parameter block: a graph cannot hold it.
  EXPECT_USER_ERROR((void)ct::capture(gpu,
                                      [&](ct::Capture& cap) {
                                        return cs::launch_raw(ct::unchecked, k, cs::grid(4), cs::Dims{256}, 0, std::move(y),
                                                              x, 2.0f, 1000L)
                                            .async_on(cap.stream());
                                      }),
                    "launch_raw of raw CUDA kernel 'scale': a raw kernel cannot be captured into a graph");
  // The launch shape is checked against the device.
  EXPECT_USER_ERROR((void)cs::launch_raw(ct::unchecked, k, cs::grid(4), cs::Dims{2048}, 0, ct::zeros<float>({1000}, gpu),
                                         x, 2.0f, 1000L),
                    "launch_raw of raw CUDA kernel 'scale': the contract's block 2048x1x1 has 2048 threads along x");
  // A raw kernel that does not compile is NVRTC's error with the log.
  const auto bad = cs::RawKernel::from_source(ct::unchecked, "extern \"C\" __global__ void broken() { undeclared = 1; }",
                                              "broken");
  EXPECT_USER_ERROR((void)cs::launch_raw(ct::unchecked, bad, cs::grid(1), cs::Dims{32}, 0, ct::zeros<float>({1}, gpu)).sync(),
                    "raw CUDA kernel 'broken' does not compile (sm_90a): NVRTC failed");
  EXPECT_USER_ERROR((void)cs::launch_raw(ct::unchecked, bad, cs::grid(1), cs::Dims{32}, 0, ct::zeros<float>({1}, gpu)).sync(),
                    "undeclared");
}

}  // namespace
}  // namespace simt_test
