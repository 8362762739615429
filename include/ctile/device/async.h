// ctile device library: tiles copied asynchronously from global into shared memory (cp.async,
// sm_80 and newer), for the operands of tensor-core mmas that live in shared memory (a shared
// layout, given by a placement P: RowPad, row-major with PAD elements after every row of ROW
// elements, for mma.sync; Swizzled for wgmma; docs/compiler.md, "Tensor cores"). The threads split
// the tile as the blocked layout D says, each copying its own vectors (16 bytes where the facts or the window allow); a vector outside the tensor is written with the
// padding value, and views the vectors cannot read are copied element by element, both with plain
// shared stores. A copy is one commit group per thread: cp_async_wait<N> returns when at most N of
// this thread's groups are still pending, and the tile block synchronises after it before anyone
// reads the tile (the mma does both). The host emulation holds each copy back until the wait that
// lets it land.
#pragma once

#include "ctile/device/dist.h"
#include "ctile/device/mma.h"
#include "ctile/device/wgmma.h"

namespace ct {

// Placements: the element offset of (r, c) in a tile in shared memory.
template <int ROW, int PAD>
struct RowPad {
  static CT_DEV int at(int r, int c) { return r * (ROW + PAD) + c; }
};
// The swizzled layout of an [R][C] tile of 16-bit elements (ir::shared_offset): column blocks of
// SW / 2 elements, each its R rows of SW bytes in atoms of 8 rows, the 16-byte chunks of a row
// XORed with its row index in the atom. A's K-major and B's N-major operand layouts of wgmma.h.
template <int R, int C, int SW>
struct Swizzled {
  static_assert(R % 8 == 0 && (C * 2 == SW || (SW == 128 && C % 64 == 0)), "Swizzled: the tile does not fit the swizzle");
  static CT_DEV int at(int r, int c) {
    constexpr int BW = SW / 2;
    return (int)(swizzle<SW>((unsigned)((c / BW) * R * SW + (r >> 3) * 8 * SW + (r & 7) * SW + 2 * (c % BW))) / 2);
  }
};

template <int B>
CT_DEV void cp_async(void* dst, const void* src) {
  static_assert(B == 4 || B == 8 || B == 16, "cp.async moves 4, 8 or 16 bytes");
  CT_CHECK_ALIGNED(dst, B);
  CT_CHECK_ALIGNED(src, B);
#if defined(__CUDA_ARCH__)
  if constexpr (B == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_addr(dst)), "l"(src) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(smem_addr(dst)), "l"(src), "n"(B) : "memory");
#elif defined(CTILE_DEVICE_EMULATION)
  ::ct_emu::cp_async(dst, src, B);  // lands at the wait that lets it (tests/unit/cuda_codegen/emu)
#else
  *(Chunk<B>*)dst = *(const Chunk<B>*)src;
#endif
}
CT_DEV void cp_async_commit() {
#if defined(__CUDA_ARCH__)
  asm volatile("cp.async.commit_group;" ::: "memory");
#elif defined(CTILE_DEVICE_EMULATION)
  ::ct_emu::cp_async_commit();
#endif
}
template <int N>
CT_DEV void cp_async_wait() {
#if defined(__CUDA_ARCH__)
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
#elif defined(CTILE_DEVICE_EMULATION)
  ::ct_emu::cp_async_wait(N);
#endif
}

// Copies the [R0][ROW] tile of the window `wn` into s (element (r, c) at s + P::at(r, c)), elements
// outside the tensor as `pad`. D: the blocked layout that splits the work; VM, FULL, ALIGNED, O32
// as for load (dist.h). A vector of VM elements stays contiguous under both placements (it never
// crosses a 16-byte chunk of the swizzle). Commits one group.
template <class D, class Sh, int VM, bool FULL, bool ALIGNED, bool O32, class P, class T>
CT_DEV void load_async(T* s, const TensorDesc& td, const Win<Sh::rank>& wn, T pad, int tp) {
  typedef typename Traits<T>::Mem M;
  static_assert(Sh::rank == 2, "load_async: a tile of rank 2");
  const M* base = (const M*)td.data;
  M* dst = (M*)s;
  const Window<2>& w = wn.w;
  typedef typename Cond<O32, int, long long>::type Off;
  if constexpr (VM > 1 && VM * sizeof(M) >= 4) {
    constexpr int VB = VM * (int)sizeof(M) >= 16 ? 16 : VM * (int)sizeof(M);
    constexpr int C = VM * (int)sizeof(M) / VB;  // chunks per vector
    if ((FULL || wn.full) && (ALIGNED || wn.vec_ok)) {
      const Off toff = (Off)(w.base[0] + Sh::coord(0, tp)) * (Off)td.stride[0] + (Off)(w.base[1] + Sh::coord(1, tp));
#pragma unroll
      for (int g = 0; g < D::regs / VM; ++g) {
        const int r = Sh::coord(0, tp) + Sh::coord(0, D::reg(g * VM)), c = Sh::coord(1, tp) + Sh::coord(1, D::reg(g * VM));
        const Off off = toff + (Off)Sh::coord(0, D::reg(g * VM)) * (Off)td.stride[0] + (Off)Sh::coord(1, D::reg(g * VM));
#pragma unroll
        for (int q = 0; q < C; ++q) cp_async<VB>(dst + P::at(r, c + q * (VB / (int)sizeof(M))), base + off + q * (VB / (int)sizeof(M)));
      }
      cp_async_commit();
      return;
    }
    if ((ALIGNED || wn.vec_ok) && w.lo[1] % VM == 0 && w.hi[1] % VM == 0) {
      // A partial tile whose window along the rows is whole vectors: each vector inside or outside.
#pragma unroll
      for (int g = 0; g < D::regs / VM; ++g) {
        const int r = coord_of<Sh>(0, tp, D::reg(g * VM)), c = coord_of<Sh>(1, tp, D::reg(g * VM));
        M* d = dst + P::at(r, c);
        if (r >= w.lo[0] && r < w.hi[0] && c >= w.lo[1] && c < w.hi[1]) {
          const Off off = (Off)(w.base[0] + r) * (Off)td.stride[0] + (Off)(w.base[1] + c);
#pragma unroll
          for (int q = 0; q < C; ++q) cp_async<VB>(d + q * (VB / (int)sizeof(M)), base + off + q * (VB / (int)sizeof(M)));
        } else {
#pragma unroll
          for (int j = 0; j < VM; ++j) d[j] = to_mem<T>(pad);
        }
      }
      cp_async_commit();
      return;
    }
  }
  // Strided or misaligned views, element by element (plain loads and shared stores).
#pragma unroll
  for (int e = 0; e < D::regs; ++e) {
    const int r = coord_of<Sh>(0, tp, D::reg(e)), c = coord_of<Sh>(1, tp, D::reg(e));
    const bool in = r >= w.lo[0] && r < w.hi[0] && c >= w.lo[1] && c < w.hi[1];
    dst[P::at(r, c)] = in ? base[(w.base[0] + r) * td.stride[0] + (w.base[1] + c) * td.stride[1]] : to_mem<T>(pad);
  }
  cp_async_commit();
}

}  // namespace ct
