// ctile device library: tiles copied into shared memory by the Tensor Memory Accelerator (sm_90),
// for the wgmma operand rings that smem-alloc gives TMA copies (option tma; docs/compiler.md,
// "TMA copies"). One thread of the tile block copies a whole tile through a tensor map that the
// host encoded at launch (cuTensorMapEncodeTiled, boxes of SW bytes per row: the Swizzled
// placement's column blocks), and the copy counts its bytes on the mbarrier of its ring slot;
// every thread of the tile block waits on that barrier before the mma reads the slot. Elements
// outside the tensor are zeros (the padding TMA loads may have). Each thread tracks the phase of
// every barrier of a ring (TmaRing): a wait flips the slot's phase, so each copy must be waited
// for exactly once by every thread, which smem-alloc guarantees (one mma per tile, a drain after
// the loop for the copies issued ahead past its end). The host emulation
// (tests/unit/cuda_codegen/emu) lands a copy only when a wait completes its barrier's phase and
// scribbles over the slot when the copy is issued, so a missing wait or a slot overwritten while
// a product still reads it gives wrong results there.
#pragma once

#include "ctile/device/async.h"

namespace ct {

// A CUtensorMap: 128 opaque bytes, 64-byte aligned (the kernel's parameter block holds them).
struct __align__(64) TensorMap {
  unsigned long long w[16];
};

CT_DEV void mbar_init(u64* bar, unsigned count) {
#if defined(__CUDA_ARCH__)
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count) : "memory");
#elif defined(CTILE_DEVICE_EMULATION)
  ::ct_emu::mbar_init(bar, count);
#endif
}
// After the barriers' initialisation, before the tile block's barrier that publishes them: makes
// them visible to the TMA unit.
CT_DEV void mbar_init_fence() {
#if defined(__CUDA_ARCH__)
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}
// This thread's arrival, announcing `bytes` that copies will complete on the barrier.
CT_DEV void mbar_arrive_expect_tx(u64* bar, unsigned bytes) {
#if defined(__CUDA_ARCH__)
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
#elif defined(CTILE_DEVICE_EMULATION)
  ::ct_emu::mbar_arrive_expect_tx(bar, bytes);
#endif
}
// True once the phase of parity `parity` has completed.
CT_DEV bool mbar_try_wait(u64* bar, unsigned parity) {
#if defined(__CUDA_ARCH__)
  unsigned ok;
  asm volatile(
      "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
      : "=r"(ok)
      : "r"(smem_addr(bar)), "r"(parity)
      : "memory");
  return ok != 0;
#elif defined(CTILE_DEVICE_EMULATION)
  return ::ct_emu::mbar_try_wait(bar, parity);
#else
  return true;
#endif
}
// Waits until the phase of parity `parity` has completed.
CT_DEV void mbar_wait(u64* bar, unsigned parity) {
  while (!mbar_try_wait(bar, parity)) {
  }
}
// This thread's arrival, with no bytes (a consumer handing a slot back to the producer).
CT_DEV void mbar_arrive(u64* bar) {
#if defined(__CUDA_ARCH__)
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
#elif defined(CTILE_DEVICE_EMULATION)
  ::ct_emu::mbar_arrive(bar);
#endif
}
// One box of the map at (column c0, row c1) into dst, completing its bytes on bar.
CT_DEV void tma_load_2d(void* dst, const TensorMap* map, int c0, int c1, u64* bar);
// The same for a map of rank 2 + L: lc[0 .. L - 1] the leading coordinates, innermost first.
template <int L>
CT_DEV void tma_load_nd(void* dst, const TensorMap* map, int c0, int c1, const int (&lc)[L], u64* bar) {
  static_assert(L >= 1 && L <= 3, "tma_load_nd: maps of rank 3 to 5");
#if defined(__CUDA_ARCH__)
  if constexpr (L == 1)
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(
            smem_addr(dst)),
        "l"(map), "r"(c0), "r"(c1), "r"(lc[0]), "r"(smem_addr(bar))
        : "memory");
  else if constexpr (L == 2)
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6];" ::"r"(
            smem_addr(dst)),
        "l"(map), "r"(c0), "r"(c1), "r"(lc[0]), "r"(lc[1]), "r"(smem_addr(bar))
        : "memory");
  else
    asm volatile(
        "cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5, %6}], [%7];" ::"r"(
            smem_addr(dst)),
        "l"(map), "r"(c0), "r"(c1), "r"(lc[0]), "r"(lc[1]), "r"(lc[2]), "r"(smem_addr(bar))
        : "memory");
#elif defined(CTILE_DEVICE_EMULATION)
  ::ct_emu::tma_load_nd(dst, map, c0, c1, lc, bar);
#endif
}
CT_DEV void tma_load_2d(void* dst, const TensorMap* map, int c0, int c1, u64* bar) {
#if defined(__CUDA_ARCH__)
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
          smem_addr(dst)),
      "l"(map), "r"(c0), "r"(c1), "r"(smem_addr(bar))
      : "memory");
#elif defined(CTILE_DEVICE_EMULATION)
  ::ct_emu::tma_load_2d(dst, map, c0, c1, bar);
#endif
}

// The phases of the S barriers of one ring as this thread has seen them (bit s: the parity of the
// next phase of slot s to wait for), and the slots with a copy not yet waited for. In a
// warp-specialised kernel (a producer warpgroup issues the copies) a consumer also hands every
// slot back once the products that read it are done: one arrival per consumer warp on the slot's
// `empty` barrier (`arrive`: this thread is its warp's lane 0). `reading` holds the slots of the
// product issued last, `retiring` those of the product before it (still in flight until the
// next wgmma.wait_group 1).
template <int S>
struct TmaRing {
  static_assert(S > 0 && S <= 32, "TmaRing: 1 to 32 slots");
  unsigned phase = 0, pending = 0, reading = 0, retiring = 0;
  CT_DEV void issued(int slot) { pending |= 1u << slot; }
  CT_DEV void wait(u64* bars, int slot) {
    const unsigned parity = (phase >> slot) & 1u;
    while (!mbar_try_wait(bars + slot, parity)) {
    }
    phase ^= 1u << slot;
    pending &= ~(1u << slot);
  }
  // The K split: the other consumer warpgroup waits for `slot`'s copy (this iteration is its); this
  // one keeps its view of the slot's phase in step.
  CT_DEV void skip(int slot) {
    phase ^= 1u << slot;
    pending &= ~(1u << slot);
  }
  // Waits for every copy issued and not yet waited for (those issued ahead past a loop's end).
  CT_DEV void drain(u64* bars) {
#pragma unroll
    for (int s = 0; s < S; ++s)
      if ((pending >> s) & 1u) wait(bars, s);
  }
  // ---- consumers of a warp-specialised kernel ----
  // Every lane of the warp calls it (the slots are the same in all): the warp's lanes have all
  // seen the slots' copies land before its lane 0 hands them back.
  CT_DEV static void release(u64* empty, unsigned slots, bool arrive) {
    if (slots == 0) return;
    warp_sync();
    if (!arrive) return;
    // Usually one slot (a K loop's copy of one step): one arrival, no walk over the ring.
    for (unsigned m = slots; m != 0; m &= m - 1) mbar_arrive(empty + lowest_bit(m));
  }
  // A product reading `slot` was issued.
  CT_DEV void read(int slot) { reading |= 1u << slot; }
  // After wgmma.wait_group 1: the products before the last one are done, their slots go back.
  CT_DEV void retire(u64* empty, bool arrive) {
    release(empty, retiring, arrive);
    retiring = reading;
    reading = 0;
  }
  // After wgmma.wait_group 0 (or a product waited for at once): every slot read goes back.
  CT_DEV void retire_all(u64* empty, bool arrive) {
    release(empty, retiring | reading, arrive);
    retiring = reading = 0;
  }
  // drain(), handing the drained slots back (nothing reads them).
  CT_DEV void drain_release(u64* bars, u64* empty, bool arrive) {
    const unsigned drained = pending;
    drain(bars);
    release(empty, drained, arrive);
  }
};

// The producer's side of a ring: before a copy into slot s it waits until the consumers have
// handed the slot back (the `empty` barrier's phase of the slot's previous copy). Bit s of `phase`
// is the parity to wait for; a fresh barrier counts its (odd) previous phase as complete, so each
// slot's first copy does not wait.
template <int S>
struct TmaProducer {
  static_assert(S > 0 && S <= 32, "TmaProducer: 1 to 32 slots");
  unsigned phase = ~0u;
  CT_DEV void acquire(u64* empty, int slot) {
    mbar_wait(empty + slot, (phase >> slot) & 1u);
    phase ^= 1u << slot;
  }
};

// A TMA coordinate: tile origins far outside the tensor stay far outside (ParamLayout's tensor
// maps cover extents up to 2^30).
CT_DEV int tma_coord(long long idx, int tile) {
  const long long lim = 1LL << 30;
  const long long i = idx > lim ? lim : idx < -lim ? -lim : idx;
  const long long c = i * tile;
  return (int)(c > lim ? lim : c < -lim ? -lim : c);
}

// Copies the [R][C] tile at tile index (i0, i1) of the tensor of `td` into s, placed as
// Swizzled<R, C, SW> (one box of R rows of SW bytes per column block), through `map`, counting
// its bytes on `bar`. Called by one thread. A tensor without elements has no map: that thread
// writes the zeros itself.
template <int R, int C, int SW, class T>
CT_DEV void tma_load(T* s, const TensorMap* map, const TensorDesc& td, long long i0, long long i1, u64* bar) {
  constexpr int BW = SW / (int)sizeof(T);
  static_assert(C % BW == 0 && R <= 256 && BW <= 256, "tma_load: the tile is not whole boxes");
  if (td.shape[0] <= 0 || td.shape[1] <= 0) {
    typedef typename Traits<T>::Mem M;
    for (int e = 0; e < R * C; ++e) ((M*)s)[e] = M{};
    wgmma_smem_fence();  // these stores, visible to the products that read the slot
    mbar_arrive_expect_tx(bar, 0);
    return;
  }
  mbar_arrive_expect_tx(bar, (unsigned)(R * C * (int)sizeof(T)));
  const int r0 = tma_coord(i0, R), c0 = tma_coord(i1, C);
#pragma unroll
  for (int b = 0; b < C / BW; ++b) tma_load_2d((unsigned char*)s + b * R * SW, map, c0 + b * BW, r0, bar);
}
// The same for a tile of a tensor of rank 2 + L whose leading extents are 1 (a [1, 1, R, C] block
// of a [B, H, S, D] tensor): `lead` holds its leading tile indices (outermost first), which are
// element coordinates.
template <int R, int C, int SW, int L, class T>
CT_DEV void tma_load(T* s, const TensorMap* map, const TensorDesc& td, const Idx<L>& lead, long long i0, long long i1,
                     u64* bar) {
  constexpr int BW = SW / (int)sizeof(T);
  static_assert(C % BW == 0 && R <= 256 && BW <= 256, "tma_load: the tile is not whole boxes");
  bool empty = false;
#pragma unroll
  for (int d = 0; d < L + 2; ++d) empty = empty || td.shape[d] <= 0;
  if (empty) {
    typedef typename Traits<T>::Mem M;
    for (int e = 0; e < R * C; ++e) ((M*)s)[e] = M{};
    wgmma_smem_fence();
    mbar_arrive_expect_tx(bar, 0);
    return;
  }
  mbar_arrive_expect_tx(bar, (unsigned)(R * C * (int)sizeof(T)));
  const int r0 = tma_coord(i0, R), c0 = tma_coord(i1, C);
  int lc[L];
#pragma unroll
  for (int i = 0; i < L; ++i) lc[i] = tma_coord(lead.v[L - 1 - i], 1);
#pragma unroll
  for (int b = 0; b < C / BW; ++b) tma_load_nd<L>((unsigned char*)s + b * R * SW, map, c0 + b * BW, r0, lc, bar);
}

}  // namespace ct
