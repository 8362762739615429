// The wgmma probe (issue 8): does the hardware read the shared-memory layouts and descriptors of
// include/ctile/device/wgmma.h as the header (and its host emulation) says? One warpgroup computes
// D[64][N] = A[64][64] * B[64][N] in bf16 (A K-major with the 128-byte swizzle, B N-major) in four
// k16 steps, for N = 64, 128, 256, against a float64 reference on random inputs; then the same with
// B K-major (passed transposed, held like A).
//   emulation: g++ -std=c++20 -I include -include tests/unit/cuda_codegen/emu/ct_emu.h tests/gpu_wgmma/probe.cpp
//   GPU:       nvcc -cubin -arch=sm_90a -std=c++17 -I include tests/gpu_wgmma/probe_kernel.cu -o probe.cubin
//              g++ -std=c++17 -DPROBE_GPU -I/usr/local/cuda/include tests/gpu_wgmma/probe.cpp -lcuda && ./a.out probe.cubin
// (scripts/gpu_wgmma_probe.sh does both). Prints one line per N; exits non-zero on a mismatch.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#if defined(PROBE_GPU)
#include <cuda.h>
struct Bf16 {
  unsigned short bits;
};
static const char* g_cubin = nullptr;
#else
#include "probe_kernel.cuh"
using Bf16 = ct::bf16;
#endif

constexpr int kM = 64, kK = 64;

static unsigned short bf16_bits(float f) {  // round to nearest even
  unsigned u;
  std::memcpy(&u, &f, 4);
  return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
static float bf16_float(unsigned short b) {
  const unsigned u = (unsigned)b << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

#if defined(PROBE_GPU)
#define CK(x)                                                          \
  do {                                                                 \
    CUresult r_ = (x);                                                 \
    if (r_ != CUDA_SUCCESS) {                                          \
      const char* s_ = nullptr;                                        \
      cuGetErrorString(r_, &s_);                                       \
      std::printf("%s failed: %s\n", #x, s_ ? s_ : "?");               \
      return false;                                                    \
    }                                                                  \
  } while (0)
#endif

// KMAJ: B is passed transposed ([N][K]) to the probe*k kernels (a K-major B operand).
template <int N, int KMAJ>
bool run(std::mt19937& g) {
  std::normal_distribution<float> nd;
  std::vector<Bf16> a(kM * kK), b(kK * N), bt(kK * N);
  for (auto& x : a) x.bits = bf16_bits(nd(g));
  for (auto& x : b) x.bits = bf16_bits(nd(g));
  for (int k = 0; k < kK; ++k)
    for (int n = 0; n < N; ++n) bt[n * kK + k] = b[k * N + n];
  const std::vector<Bf16>& bin = KMAJ ? bt : b;
  std::vector<float> d(kM * N, NAN);
  const size_t smem = 1024 + (size_t)(kM * kK + kK * N) * 2;
#if defined(PROBE_GPU)
  static CUcontext ctx = nullptr;
  static CUmodule mod = nullptr;
  if (!ctx) {
    CK(cuInit(0));
    CUdevice dev;
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CK(cuModuleLoad(&mod, g_cubin));
  }
  CUfunction f;
  const std::string name = "probe" + std::to_string(N) + (KMAJ ? "k" : "");
  CK(cuModuleGetFunction(&f, mod, name.c_str()));
  CK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem));
  CUdeviceptr da, db, dd;
  CK(cuMemAlloc(&da, a.size() * 2));
  CK(cuMemAlloc(&db, b.size() * 2));
  CK(cuMemAlloc(&dd, d.size() * 4));
  CK(cuMemcpyHtoD(da, a.data(), a.size() * 2));
  CK(cuMemcpyHtoD(db, bin.data(), bin.size() * 2));
  void* args[] = {&da, &db, &dd};
  CK(cuLaunchKernel(f, 1, 1, 1, 128, 1, 1, (unsigned)smem, nullptr, args, nullptr));
  CK(cuCtxSynchronize());
  CK(cuMemcpyDtoH(d.data(), dd, d.size() * 4));
  cuMemFree(da), cuMemFree(db), cuMemFree(dd);
#else
  auto kernel = KMAJ ? (N == 64 ? probe64k : N == 128 ? probe128k : probe256k) : (N == 64 ? probe64 : N == 128 ? probe128 : probe256);
  ct_emu::launch(128, 1, smem, [&] { kernel(a.data(), bin.data(), d.data()); });
#endif
  double worst = 0;
  int bad = 0, first = -1;
  for (int m = 0; m < kM; ++m)
    for (int n = 0; n < N; ++n) {
      double ref = 0, mag = 0;
      for (int k = 0; k < kK; ++k) {
        const double p = (double)bf16_float(a[m * kK + k].bits) * bf16_float(b[k * N + n].bits);
        ref += p;
        mag += std::fabs(p);
      }
      const double err = std::fabs(d[m * N + n] - ref), tol = 1e-5 * mag + 1e-6;
      worst = std::max(worst, err / (mag + 1e-30));
      if (!(err <= tol)) {
        if (first < 0) first = m * N + n;
        ++bad;
      }
    }
  std::printf("N=%-3d B %s %s: %d of %d elements off (worst relative error %.2e)", N, KMAJ ? "K-major" : "N-major",
              bad ? "MISMATCH" : "ok", bad, kM * N, worst);
  if (first >= 0) std::printf(", first at row %d col %d (got %g)", first / N, first % N, d[first]);
  std::printf("\n");
  return bad == 0;
}

int main(int argc, char** argv) {
#if defined(PROBE_GPU)
  if (argc < 2) {
    std::printf("usage: %s probe.cubin\n", argv[0]);
    return 2;
  }
  g_cubin = argv[1];
#else
  (void)argc, (void)argv;
#endif
  std::mt19937 g(42);
  bool ok = run<64, 0>(g);
  ok = run<128, 0>(g) && ok;
  ok = run<256, 0>(g) && ok;
  ok = run<64, 1>(g) && ok;
  ok = run<128, 1>(g) && ok;
  ok = run<256, 1>(g) && ok;
  return ok ? 0 : 1;
}
