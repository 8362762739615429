// ctile device library, the bottom layer: one function per hardware instruction the generated code
// needs beyond plain C++ (barriers of part of a CTA, packed 16-bit conversions, the approximate
// math unit). Each has a portable path for the host emulation, which computes the exact result
// where the hardware approximates (the documented error bounds cover the difference).
#pragma once

#include "ctile/device/config.h"

namespace ct {

// ---- barriers ----------------------------------------------------------------------------------------
// Barrier `id` (1..15) of the `threads` threads (a multiple of 32) that reach it: a tile block that
// shares its CTA with others synchronises only its own warps. Id 0 is __syncthreads's.
CT_DEV void bar_sync(int id, int threads) {
#if defined(CTILE_DEVICE_EMULATION)
  ::ct_emu::named_barrier(id, threads);
#else
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
#endif
}
// The calling threads count towards barrier `id` of `threads` threads without waiting for it (the
// others' bar_sync completes once `threads` have arrived or synced): one warpgroup hands a turn to
// another (ping-pong).
CT_DEV void bar_arrive(int id, int threads) {
#if defined(CTILE_DEVICE_EMULATION)
  ::ct_emu::named_barrier_arrive(id, threads);
#else
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
#endif
}
// setmaxnreg (sm_90a): the warpgroup's registers per thread become N (a multiple of 8 from 24 to
// 256); a warp-specialised kernel's producer gives registers back, its consumers take them.
template <int N>
CT_DEV void setmaxnreg_dec() {
  static_assert(N % 8 == 0 && N >= 24 && N <= 256, "setmaxnreg: 24..256, a multiple of 8");
#if defined(__CUDA_ARCH__)
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(N));
#endif
}
template <int N>
CT_DEV void setmaxnreg_inc() {
  static_assert(N % 8 == 0 && N >= 24 && N <= 256, "setmaxnreg: 24..256, a multiple of 8");
#if defined(__CUDA_ARCH__)
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(N));
#endif
}
// Programmatic dependent launch (sm_90): a kernel launched before the kernel it depends on has
// finished (a programmatic graph edge or stream launch) waits here until that grid has completed and
// its memory is visible, then lets the kernel after it be launched early in turn. The generated
// kernels call it before their first global memory access; launched without a programmatic
// dependency it returns at once. Neither instruction exists before sm_90 (nor in the emulation).
CT_DEV void grid_dependency_sync() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
// The index of the lowest set bit of a non-zero m.
CT_DEV int lowest_bit(unsigned m) {
#if defined(__CUDA_ARCH__)
  return __ffs((int)m) - 1;
#else
  return __builtin_ctz(m);
#endif
}
CT_DEV void warp_sync() {
#if defined(CTILE_DEVICE_EMULATION)
  ::ct_emu::warp_barrier();
#else
  __syncwarp();
#endif
}

// ---- packed 16-bit conversions (two elements per 32-bit register; lo = element 2k) --------------------
// f32 pairs -> bf16x2 / f16x2 rounded to nearest even; a NaN becomes some NaN (docs/ir.md: NaN
// payloads are unspecified).
CT_DEV u32 pack_bf16x2(float lo, float hi) {
#if defined(__CUDA_ARCH__)
  u32 r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
#else
  auto one = [](float f) -> u32 {
    u32 u = __float_as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fffu;
    u += 0x7fffu + ((u >> 16) & 1u);
    return u >> 16;
  };
  return one(lo) | (one(hi) << 16);
#endif
}
CT_DEV float bf16_lo(u32 w) { return __uint_as_float(w << 16); }
CT_DEV float bf16_hi(u32 w) { return __uint_as_float(w & 0xffff0000u); }

// ---- the approximate math unit (f32; subnormal inputs and results flushed to zero) ---------------------
CT_DEV float ex2_approx(float x) {
#if defined(__CUDA_ARCH__)
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
#else
  return exp2f(x);
#endif
}
CT_DEV float lg2_approx(float x) {
#if defined(__CUDA_ARCH__)
  float r;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
#else
  return log2f(x);
#endif
}
CT_DEV float rcp_approx(float x) {
#if defined(__CUDA_ARCH__)
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
#else
  return 1.0f / x;
#endif
}
CT_DEV float sqrt_approx(float x) {
#if defined(__CUDA_ARCH__)
  float r;
  asm("sqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
#else
  return sqrtf(x);
#endif
}
CT_DEV float rsqrt_approx(float x) {
#if defined(__CUDA_ARCH__)
  float r;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
#else
  return 1.0f / sqrtf(x);
#endif
}
CT_DEV float tanh_approx(float x) {
#if defined(__CUDA_ARCH__)
  float r;
  asm("tanh.approx.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
#else
  return tanhf(x);
#endif
}
// x / y within 2 ulp for |y| in [2^-126, 2^126] (full), or one approximate reciprocal and a
// multiplication (approx).
CT_DEV float div_full(float x, float y) {
#if defined(__CUDA_ARCH__)
  float r;
  asm("div.full.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y));
  return r;
#else
  return x / y;
#endif
}
// x / y correctly rounded, for x and y whose quotient lies far from the ends of the normal range
// (the caller's proof: both normal, |x / y| in [2^-100, 2^100]). The fast path of CUDA's IEEE
// division, the same operations in the same order (an approximate reciprocal, one Newton step, the
// quotient and one correction by the exact residual of an FMA), without the range check that
// branches to the slow path: straight-line code the compiler can interleave across elements.
CT_DEV float div_rn_in_range(float x, float y) {
#if defined(__CUDA_ARCH__)
  const float r0 = rcp_approx(y);
  const float r = __fmaf_rn(r0, __fmaf_rn(-y, r0, 1.0f), r0);
  const float q = __fmaf_rn(x, r, 0.0f);
  return __fmaf_rn(r, __fmaf_rn(-y, q, x), q);
#else
  return x / y;
#endif
}
CT_DEV float div_approx(float x, float y) {
#if defined(__CUDA_ARCH__)
  float r;
  asm("div.approx.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y));
  return r;
#else
  return x / y;
#endif
}
// max/min that return NaN when either operand is NaN.
CT_DEV float fmax_nan(float a, float b) {
#if defined(__CUDA_ARCH__)
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
#else
  return (a != a || b != b) ? __uint_as_float(0x7fffffffu) : fmaxf(a, b);
#endif
}
CT_DEV float fmin_nan(float a, float b) {
#if defined(__CUDA_ARCH__)
  float r;
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
#else
  return (a != a || b != b) ? __uint_as_float(0x7fffffffu) : fminf(a, b);
#endif
}
CT_DEV double fmax_nan(double a, double b) { return (a != a || b != b) ? a + b : fmax(a, b); }
CT_DEV double fmin_nan(double a, double b) { return (a != a || b != b) ? a + b : fmin(a, b); }

}  // namespace ct
