// ctile device library: the counter-based random numbers of ct.random (docs/ir.md, "Random
// numbers"). Philox-4x32-10 (Salmon, Moraes, Dror, Shaw: "Parallel random numbers: as easy as
// 1, 2, 3", SC 2011) of the counter {offset lo, offset hi, 0, 0} under the key {seed lo, seed hi},
// and the maps from its words to uniform and normal f32 values.
//
// This one file is the implementation on both sides: NVRTC compiles it into the kernels, and the
// CPU interpreter includes it as plain C++ (src/backend/cpu/ops_random.cpp), so the results are
// bit-identical by construction as long as every float operation rounds the same way. They do:
// only correctly rounded operations are used (+, *, /, sqrt, fma), spelled with the CUDA
// intrinsics that NVRTC never contracts or approximates (__fmul_rn, __fadd_rn, __fmaf_rn,
// __fdiv_rn, __fsqrt_rn: --use_fast_math cannot change them) and, on the host, with plain
// operators in a file compiled without contraction (-ffp-contract=off); no libm function is
// called (logf and cosf differ between glibc and CUDA), log and cos are polynomials here.
#pragma once

#if defined(__CUDACC_RTC__) || defined(__CUDACC__) || defined(CTILE_DEVICE_EMULATION)
#include "ctile/device/config.h"
#define CT_RNG_FN CT_DEV
#else
#define CT_RNG_FN inline  // the CPU interpreter's copy
#endif

namespace ct {
namespace philox {

typedef unsigned int u32_t;
typedef unsigned long long u64_t;

struct Words {
  u32_t w[4];
};

// ---- Philox-4x32-10 --------------------------------------------------------------------------------
CT_RNG_FN Words philox4x32_10(Words c, u32_t k0, u32_t k1) {
  const u32_t M0 = 0xD2511F53u, M1 = 0xCD9E8D57u;  // the multipliers
  const u32_t W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;  // the Weyl key increments
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += W0;
      k1 += W1;
    }
    const u64_t p0 = (u64_t)M0 * c.w[0], p1 = (u64_t)M1 * c.w[2];
    const u32_t hi0 = (u32_t)(p0 >> 32), lo0 = (u32_t)p0, hi1 = (u32_t)(p1 >> 32), lo1 = (u32_t)p1;
    Words n;
    n.w[0] = hi1 ^ c.w[1] ^ k0;
    n.w[1] = lo1;
    n.w[2] = hi0 ^ c.w[3] ^ k1;
    n.w[3] = lo0;
    c = n;
  }
  return c;
}

// The four words of element `offset` of stream `seed`.
CT_RNG_FN Words words(u64_t seed, u64_t offset) {
  Words c;
  c.w[0] = (u32_t)offset;
  c.w[1] = (u32_t)(offset >> 32);
  c.w[2] = 0;
  c.w[3] = 0;
  return philox4x32_10(c, (u32_t)seed, (u32_t)(seed >> 32));
}

// ---- correctly rounded f32 operations ---------------------------------------------------------------
CT_RNG_FN float add(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
CT_RNG_FN float mul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
CT_RNG_FN float fma(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return __builtin_fmaf(a, b, c);
#endif
}
CT_RNG_FN float div(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}
CT_RNG_FN float sqrt(float a) {
#if defined(__CUDA_ARCH__)
  return __fsqrt_rn(a);
#else
  return __builtin_sqrtf(a);
#endif
}
CT_RNG_FN float from_bits(u32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  return __builtin_bit_cast(float, u);
#endif
}
CT_RNG_FN u32_t to_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  return __builtin_bit_cast(u32_t, f);
#endif
}

// ---- uniform: the top 24 bits of a word, k * 2^-24 in [0, 1) (exact) ---------------------------------
CT_RNG_FN float uniform(u32_t w) { return (float)(w >> 8) * 5.9604644775390625e-8f; }

// ---- log and cos on the ranges Box-Muller needs, within a few ulps ----------------------------------
// ln(u) for u in [2^-24, 1]: u = m * 2^e with m in [sqrt(1/2), sqrt(2)), ln(m) = 2 atanh(s),
// s = (m - 1) / (m + 1), |s| < 0.172: the odd series to s^11 is below an ulp.
CT_RNG_FN float log_unit(float u) {
  const u32_t b = to_bits(u);
  int e = (int)((b >> 23) & 0xffu) - 127;
  float m = from_bits((b & 0x007fffffu) | 0x3f800000u);  // [1, 2)
  if (m > 1.41421356f) {
    m = mul(m, 0.5f);  // exact
    e += 1;
  }
  const float f = add(m, -1.0f);  // exact (Sterbenz)
  const float s = div(f, add(f, 2.0f));
  const float z = mul(s, s);
  float p = fma(z, 0.0909090936f, 0.111111112f);  // 1/11, 1/9
  p = fma(z, p, 0.142857149f);                     // 1/7
  p = fma(z, p, 0.200000003f);                     // 1/5
  p = fma(z, p, 0.333333343f);                     // 1/3
  const float t = mul(s, 2.0f);                     // exact
  const float lnm = fma(mul(t, z), p, t);           // 2s + 2s z p(z)
  // e * ln 2 in two parts (the high part has 16 significant bits: e * hi is exact for |e| <= 127).
  return fma((float)e, 0.693145751953125f, fma((float)e, 1.42860676e-6f, lnm));
}

// cos(2 pi k 2^-24) for k in [0, 2^24): the quadrant and the eighth from k's bits exactly, then a
// polynomial of sin or cos on [0, pi/4] (Taylor to x^10 / x^9: below an ulp there).
CT_RNG_FN float cos_sin_poly(float x, bool want_sin) {
  const float x2 = mul(x, x);
  if (want_sin) {
    float p = fma(x2, 2.75573192e-6f, -1.98412698e-4f);  // 1/9!, -1/7!
    p = fma(x2, p, 8.33333377e-3f);                        // 1/5!
    p = fma(x2, p, -0.166666672f);                         // -1/3!
    return fma(mul(x, x2), p, x);
  }
  float p = fma(x2, -2.75573188e-7f, 2.48015876e-5f);  // -1/10!, 1/8!
  p = fma(x2, p, -1.38888892e-3f);                       // -1/6!
  p = fma(x2, p, 4.16666679e-2f);                        // 1/4!
  p = fma(x2, p, -0.5f);
  return fma(x2, p, 1.0f);
}
CT_RNG_FN float cos_turns(u32_t k) {
  const u32_t q = (k >> 22) & 3u;      // quadrant
  u32_t r = k & 0x3fffffu;             // the angle within it, in units of 2^-24 turns
  const bool upper = r >= 0x200000u;   // past an eighth: use the complement, swapping sin and cos
  if (upper) r = 0x400000u - r;
  const float x = mul((float)r * 5.9604644775390625e-8f, 6.28318548f);  // 2 pi r, in [0, pi/4]
  const float c = cos_sin_poly(x, upper), s = cos_sin_poly(x, !upper);  // cos and sin of the angle in the quadrant
  switch (q) {
    case 0: return c;
    case 1: return -s;
    case 2: return -c;
    default: return s;
  }
}

// ---- normal: Box-Muller of words 0 and 1 -------------------------------------------------------------
// sqrt(-2 ln u1) cos(2 pi u2), u1 = (w0 >> 8 + 1) 2^-24 in (0, 1] (never 0: no infinity), u2 from
// w1's top 24 bits. |z| < 5.8 (the largest radius, u1 = 2^-24).
CT_RNG_FN float normal(u32_t w0, u32_t w1) {
  const float u1 = (float)((w0 >> 8) + 1u) * 5.9604644775390625e-8f;
  const float r = sqrt(mul(log_unit(u1), -2.0f));
  return mul(r, cos_turns(w1 >> 8));
}

// The three results of ct.random for one element (seed and offset as the IR's i64 values).
CT_RNG_FN u32_t bits_at(long long seed, long long offset) { return words((u64_t)seed, (u64_t)offset).w[0]; }
CT_RNG_FN float uniform_at(long long seed, long long offset) { return uniform(words((u64_t)seed, (u64_t)offset).w[0]); }
CT_RNG_FN float normal_at(long long seed, long long offset) {
  const Words w = words((u64_t)seed, (u64_t)offset);
  return normal(w.w[0], w.w[1]);
}

}  // namespace philox
}  // namespace ct

#undef CT_RNG_FN
