// The five SIMT benchmark kernels of examples/simt_kernels.hpp written as raw CUDA C++, as one
// would by hand: the same algorithms, block shapes, launch bounds and index widths, with
// __restrict__ pointers and explicit bounds checks. ctile compiles them with the same NVRTC
// (launch_raw); the benchmark checks that each gives the SIMT kernel's result, then times both.
#pragma once

namespace simt_bench {

inline constexpr const char* kRawVectorAdd = R"(
extern "C" __global__ void __launch_bounds__(256)
raw_vector_add(float* __restrict__ out, const float* __restrict__ a, const float* __restrict__ b, long n) {
  const long i = blockIdx.x * 256L + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i];
}
)";

// simt_vector_add4's algorithm: four elements per thread, one 16-byte load per input and one store
// when all four are inside and every pointer is 16-byte aligned, else element by element.
inline constexpr const char* kRawVectorAdd4 = R"(
extern "C" __global__ void __launch_bounds__(256)
raw_vector_add4(float* __restrict__ out, const float* __restrict__ a, const float* __restrict__ b, long n) {
  const long q = blockIdx.x * 256L + threadIdx.x, i = 4 * q;
  const bool vec = (((unsigned long)out | (unsigned long)a | (unsigned long)b) % 16) == 0;
  if (vec && i + 4 <= n) {
    const float4 x = __ldg(reinterpret_cast<const float4*>(a) + q), y = __ldg(reinterpret_cast<const float4*>(b) + q);
    reinterpret_cast<float4*>(out)[q] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
  } else {
    for (long k = i; k < i + 4 && k < n; ++k) out[k] = a[k] + b[k];
  }
}
)";

inline constexpr const char* kRawSum = R"(
extern "C" __global__ void __launch_bounds__(256) raw_sum(float* __restrict__ out, const float* __restrict__ x, long n) {
  __shared__ float partials[8];
  const long first = blockIdx.x * 256L + threadIdx.x, step = (long)gridDim.x * 256;
  const bool aligned = ((unsigned long)x % 16) == 0;
  const long nv = aligned ? n / 4 : 0;
  const float4* x4 = reinterpret_cast<const float4*>(x);
  const float4 zero = make_float4(0.f, 0.f, 0.f, 0.f);
  float a0 = 0.f, a1 = 0.f, a2 = 0.f, a3 = 0.f;
  for (long q = first; q < nv; q += 4 * step) {
    const float4 v0 = q < nv ? __ldg(x4 + q) : zero;
    const float4 v1 = q + step < nv ? __ldg(x4 + q + step) : zero;
    const float4 v2 = q + 2 * step < nv ? __ldg(x4 + q + 2 * step) : zero;
    const float4 v3 = q + 3 * step < nv ? __ldg(x4 + q + 3 * step) : zero;
    a0 += (v0.x + v0.y) + (v0.z + v0.w);
    a1 += (v1.x + v1.y) + (v1.z + v1.w);
    a2 += (v2.x + v2.y) + (v2.z + v2.w);
    a3 += (v3.x + v3.y) + (v3.z + v3.w);
  }
  float acc = (a0 + a1) + (a2 + a3);
  for (long i = nv * 4 + first; i < n; i += step) acc += x[i];
  for (int m = 16; m > 0; m /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, m);
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) partials[warp] = acc;
  __syncthreads();
  if (warp == 0) {
    float v = lane < 8 ? partials[lane] : 0.f;
    for (int m = 16; m > 0; m /= 2) v += __shfl_xor_sync(0xffffffffu, v, m);
    if (lane == 0) atomicAdd(out, v);
  }
}
)";

inline constexpr const char* kRawHistogram = R"(
extern "C" __global__ void __launch_bounds__(256)
raw_histogram(unsigned* __restrict__ bins, const unsigned char* __restrict__ data, long n) {
  __shared__ unsigned local[256];
  for (unsigned b = threadIdx.x; b < 256; b += 256) local[b] = 0;
  __syncthreads();
  const long step = (long)gridDim.x * 256;
  for (long i = blockIdx.x * 256L + threadIdx.x; i < n; i += step) atomicAdd_block(&local[data[i]], 1u);
  __syncthreads();
  for (unsigned b = threadIdx.x; b < 256; b += 256) {
    const unsigned c = local[b];
    if (c != 0) atomicAdd(&bins[b], c);
  }
}
)";

inline constexpr const char* kRawStencil = R"(
extern "C" __global__ void __launch_bounds__(256)
raw_stencil(float* __restrict__ out, const float* __restrict__ in, long rows, long cols) {
  const long c = blockIdx.x * 32L + threadIdx.x, r = blockIdx.y * 8L + threadIdx.y;
  if (r >= rows || c >= cols) return;
  const long i = r * cols + c;
  float v = in[i];
  if (r > 0 && c > 0 && r + 1 < rows && c + 1 < cols)
    v = 0.25f * ((in[i - cols] + in[i + cols]) + (in[i - 1] + in[i + 1]));
  out[i] = v;
}
)";

inline constexpr const char* kRawTranspose = R"(
extern "C" __global__ void __launch_bounds__(256)
raw_transpose(float* __restrict__ out, const float* __restrict__ in, long rows, long cols) {
  __shared__ float tile[32 * 33];
  const long row0 = blockIdx.y * 32L, col0 = blockIdx.x * 32L;
  for (unsigned r = threadIdx.y; r < 32; r += 8) {
    const long gr = row0 + r, gc = col0 + threadIdx.x;
    tile[r * 33 + threadIdx.x] = (gr < rows && gc < cols) ? in[gr * cols + gc] : 0.f;
  }
  __syncthreads();
  // out is cols x rows; this block writes its tile at (col0, row0).
  for (unsigned r = threadIdx.y; r < 32; r += 8) {
    const long orow = col0 + r, ocol = row0 + threadIdx.x;
    if (orow < cols && ocol < rows) out[orow * rows + ocol] = tile[threadIdx.x * 33 + r];
  }
}
)";

}  // namespace simt_bench
