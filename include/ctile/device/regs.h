// ctile device library: where a tile value lives in a thread (registers) and which threads run a
// tile block (a team). The generated code describes each distributed layout (ir/layout.hpp) as a
// struct with
//   regs, vec                   registers per thread; leading registers that hold consecutive elements
//   copy_lanes, copy_warps      lane / warp bits that select copies (not other elements)
//   thread(lane, warp)          the element bits a thread contributes (its "thread part" tp)
//   reg(r)                      the element bits register r contributes (a compile-time constant)
// so register r of a thread holds element tp + reg(r) (the bits are disjoint).
#pragma once

#include "ctile/device/arch.h"
#include "ctile/device/types.h"

namespace ct {

template <class T>
union Bits16 {
  T t;
  u16 u;
};

// A thread's registers of one tile value. 16-bit elements are packed two per 32-bit register
// (element 2k in the low half), so a bf16 tile takes half the registers of its f32 version.
template <class T, int R, bool PACKED = (sizeof(T) == 2 && R % 2 == 0)>
struct Regs {
  T v[R];
  CT_DEV T get(int r) const { return v[r]; }
  CT_DEV void set(int r, T x) { v[r] = x; }
  CT_DEV void set2(int p, T lo, T hi) {
    v[2 * p] = lo;
    v[2 * p + 1] = hi;
  }
};
template <class T, int R>
struct Regs<T, R, true> {
  u32 w[R / 2];
  CT_DEV T get(int r) const {
    Bits16<T> b;
    b.u = (u16)((r & 1) ? (w[r >> 1] >> 16) : (w[r >> 1] & 0xffffu));
    return b.t;
  }
  CT_DEV void set2(int p, T lo, T hi) {
    Bits16<T> a, b;
    a.t = lo;
    b.t = hi;
    w[p] = (u32)a.u | ((u32)b.u << 16);
  }
  // One half at a time (the other half is kept): only for ops that write single elements.
  CT_DEV void set(int r, T x) {
    Bits16<T> b;
    b.t = x;
    const u32 keep = (r & 1) ? 0x0000ffffu : 0xffff0000u;
    w[r >> 1] = (w[r >> 1] & keep) | ((r & 1) ? ((u32)b.u << 16) : (u32)b.u);
  }
};

// acc-split's second accumulator (zero at the start) and the sum of the two after the loop.
template <class T, int R>
CT_DEV void regs_zero(Regs<T, R>& a) {
#pragma unroll
  for (int r = 0; r < R; ++r) a.set(r, T(0));
}
template <class T, int R>
CT_DEV void regs_add(Regs<T, R>& a, const Regs<T, R>& b) {
#pragma unroll
  for (int r = 0; r < R; ++r) a.set(r, a.get(r) + b.get(r));
}

// The K split (two consumer warpgroups, alternate K steps): the second warpgroup's accumulator
// through shared memory, register r of thread t at s[r * 128 + t] (consecutive threads on
// consecutive words), added into the first's.
template <int R>
CT_DEV void regs_put_split(const Regs<float, R>& a, float* s, int tid) {
#pragma unroll
  for (int r = 0; r < R; ++r) s[r * 128 + tid] = a.get(r);
#if defined(__CUDA_ARCH__)
  __threadfence_block();  // the stores, before the named barrier's arrival that hands them over
#endif
}
template <int R>
CT_DEV void regs_add_split(Regs<float, R>& a, const float* s, int tid) {
#pragma unroll
  for (int r = 0; r < R; ++r) a.set(r, a.get(r) + s[r * 128 + tid]);
}

// The threads that run one tile block: W warps; B tile blocks share a CTA, each on its own warps.
// sync() is the barrier of this tile block only (a whole-CTA barrier when B == 1, unless the CTA
// also runs a producer warpgroup (P): then named barrier 1 of the W consumer warps).
template <int W, int B, bool P = false>
struct Team {
  static constexpr int warps = W;
  static constexpr int threads = 32 * W;
  int lane, warp, tid, sub;  // lane, warp within the tile block, thread within it, tile block within the CTA
  CT_DEV void sync() const {
    if constexpr (P) bar_sync(1, threads);
    else if constexpr (B == 1) __syncthreads();
    else if constexpr (W == 1) warp_sync();
    else bar_sync(1 + sub, threads);
  }
  CT_DEV bool leader() const { return tid == 0; }
};

// Bit tricks over compile-time masks: the bits of x at the set positions of MASK, packed (pext);
// the low bits of x spread to the set positions of MASK (pdep).
CT_DEV constexpr int pext(int x, int mask) {
  int r = 0, k = 0;
  for (int b = 0; b < 31; ++b)
    if ((mask >> b) & 1) r |= ((x >> b) & 1) << k++;
  return r;
}
CT_DEV constexpr int pdep(int x, int mask) {
  int r = 0, k = 0;
  for (int b = 0; b < 31; ++b)
    if ((mask >> b) & 1) r |= ((x >> k++) & 1) << b;
  return r;
}
// `x` unchanged, but opaque to the compiler: a value computed again from it (the remat pass's
// copies) is not merged with the same computation on `x` itself, so the wide original need not
// stay alive. volatile: two opaque copies of one value are not merged either.
CT_DEV u32 opaque(u32 x) {
  asm volatile("" : "+r"(x));
  return x;
}
CT_DEV int opaque(int x) {
  asm volatile("" : "+r"(x));
  return x;
}
CT_DEV constexpr int popcount(int x) {
  int n = 0;
  for (int b = 0; b < 31; ++b) n += (x >> b) & 1;
  return n;
}

}  // namespace ct

// Loops over a thread's registers of a tile value (always unrolled: registers need constant indices).
#define CT_REGS(R) _Pragma("unroll") for (int r = 0; r < (R); ++r)
#define CT_PAIRS(R) _Pragma("unroll") for (int q = 0; q < (R) / 2; ++q)
