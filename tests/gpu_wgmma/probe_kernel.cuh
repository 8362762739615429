// The wgmma probe's kernels (device code only): compiled by nvcc -cubin for sm_90a on a GPU
// machine, or included by probe.cpp under the host emulation (see probe.cpp).
#pragma once
#include "ctile/device/tile.h"
#include "ctile/device/wgmma.h"

constexpr int M = 64, K = 64;

// KMAJ: B arrives transposed ([N][K], K-major, as attention's K^T does) and is held so (the
// operand layout of A: rows of K, 128-byte swizzle), read with imm-trans-b 0.
template <int N, int KMAJ>
__device__ __forceinline__ void probe_body(const ct::bf16* A, const ct::bf16* B, float* D) {
  CT_DYNAMIC_SMEM(sm);
  // 1024-byte aligned tiles (the swizzle pattern repeats every 1024 bytes of address).
  unsigned char* base = sm + ((1024 - ct::smem_addr(sm) % 1024) % 1024);
  unsigned char* sa = base;              // 64 rows of 128 bytes
  unsigned char* sb = base + M * K * 2;  // 64 k-rows of N columns
  const int t = (int)threadIdx.x;
  for (int e = t; e < M * K; e += 128) *(ct::bf16*)(sa + ct::a_offset<128>(e / K, e % K)) = A[e];
  for (int e = t; e < K * N; e += 128) {
    if (KMAJ) *(ct::bf16*)(sb + ct::a_offset<128>(e / K, e % K)) = B[e];  // B[n][k]
    else *(ct::bf16*)(sb + ct::b_offset_nmajor<K>(e / N, e % N)) = B[e];
  }
  __syncthreads();
  ct::wgmma_smem_fence();
  float d[N / 2];
  for (int i = 0; i < N / 2; ++i) d[i] = 0.0f;
  const unsigned a0 = ct::smem_addr(sa), b0 = ct::smem_addr(sb);
  ct::wgmma_fence();
  for (int ks = 0; ks < K / 16; ++ks) {
    const unsigned long long da = ct::wgmma_desc<128>(a0 + 32 * ks, 16, 1024);
    const unsigned long long db = KMAJ ? ct::wgmma_desc<128>(b0 + 32 * ks, 16, 1024) : ct::wgmma_desc<128>(b0 + 2048 * ks, 128 * K, 1024);
#if defined(__CUDA_ARCH__)
    ct::wgmma_step<ct::bf16, ct::bf16, N, KMAJ ? 0 : 1>(d, da, db, 1);
#else
    ct::wgmma_emulated<ct::bf16, ct::bf16, N, 128, KMAJ ? 0 : 1>(d, da, db, 1, t, (const unsigned char*)sm);
#endif
  }
  ct::wgmma_commit();
  ct::wgmma_wait<0>();
  const int w = t / 32, l = t % 32;
  for (int j = 0; j < N / 8; ++j)
    for (int i = 0; i < 4; ++i) {
      const int row = 16 * w + l / 4 + (i >= 2 ? 8 : 0), col = 8 * j + 2 * (l % 4) + (i % 2);
      D[row * N + col] = d[4 * j + i];
    }
}

extern "C" __global__ void __launch_bounds__(128) probe64(const ct::bf16* A, const ct::bf16* B, float* D) { probe_body<64, 0>(A, B, D); }
extern "C" __global__ void __launch_bounds__(128) probe128(const ct::bf16* A, const ct::bf16* B, float* D) { probe_body<128, 0>(A, B, D); }
extern "C" __global__ void __launch_bounds__(128) probe256(const ct::bf16* A, const ct::bf16* B, float* D) { probe_body<256, 0>(A, B, D); }
extern "C" __global__ void __launch_bounds__(128) probe64k(const ct::bf16* A, const ct::bf16* B, float* D) { probe_body<64, 1>(A, B, D); }
extern "C" __global__ void __launch_bounds__(128) probe128k(const ct::bf16* A, const ct::bf16* B, float* D) { probe_body<128, 1>(A, B, D); }
extern "C" __global__ void __launch_bounds__(128) probe256k(const ct::bf16* A, const ct::bf16* B, float* D) { probe_body<256, 1>(A, B, D); }
