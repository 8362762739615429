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
// The swizzled layout of an [R][C] tile of E-byte elements (16-bit, or fp8 with E = 1;
// ir::shared_offset): column blocks of SW / E elements, each its R rows of SW bytes in atoms of 8
// rows, the 16-byte chunks of a row XORed with its row index in the atom. A's K-major and B's
// N-major or K-major operand layouts of wgmma.h.
template <int R, int C, int SW, int E = 2>
struct Swizzled {
  static_assert(E == 1 || E == 2, "Swizzled: elements of 1 or 2 bytes");
  static_assert(R % 8 == 0 && (C * E == SW || (SW == 128 && (C * E) % 128 == 0)), "Swizzled: the tile does not fit the swizzle");
  static CT_DEV int at(int r, int c) {
    constexpr int BW = SW / E;
    return (int)(swizzle<SW>((unsigned)((c / BW) * R * SW + (r >> 3) * 8 * SW + (r & 7) * SW + E * (c % BW))) / E);
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
// outside the tensor as `pad`. A tile of higher rank has extent 1 along its leading axes (a
// [1, 1, R0, ROW] block of attention's [batch, heads, seq, dim] tensors): their coordinates move
// the base, and a window outside along them is all padding. D: the blocked layout that splits the
// work; VM, FULL, ALIGNED, O32, WHOLE as for load (dist.h: with WHOLE the element-by-element path
// is not compiled). A vector of VM elements stays contiguous under both placements (it never
// crosses a 16-byte chunk of the swizzle). Commits one group.
template <class D, class Sh, int VM, bool FULL, bool ALIGNED, bool O32, class P, class T, bool WHOLE = false>
CT_DEV void load_async(T* s, const TensorDesc& td, const Win<Sh::rank>& wn, T pad, int tp) {
  typedef typename Traits<T>::Mem M;
  constexpr int X = Sh::rank - 2, Y = Sh::rank - 1;  // the tile's rows and columns
  static_assert(Sh::rank >= 2, "load_async: a tile of rank 2 or more");
  static_assert(Sh::numel == Sh::ext(X) * Sh::ext(Y), "load_async: leading axes of extent 1");
  typedef typename Cond<O32, int, long long>::type Off;
  const Window<Sh::rank>& w = wn.w;
  Off lead = 0;
  bool lead_in = true;
#pragma unroll
  for (int d = 0; d < X; ++d) lead_in = lead_in && w.hi[d] > 0;
  if (lead_in) {  // (outside, the base is never read from)
#pragma unroll
    for (int d = 0; d < X; ++d) lead += (Off)w.base[d] * (Off)td.stride[d];
  }
  const M* base = (const M*)td.data + lead;
  M* dst = (M*)s;
  if constexpr (VM > 1 && VM * sizeof(M) >= 4) {
    constexpr int VB = VM * (int)sizeof(M) >= 16 ? 16 : VM * (int)sizeof(M);
    constexpr int C = VM * (int)sizeof(M) / VB;  // chunks per vector
    if ((FULL || wn.full) && (ALIGNED || wn.vec_ok)) {
      const Off toff = (Off)(w.base[X] + Sh::coord(X, tp)) * (Off)td.stride[X] + (Off)(w.base[Y] + Sh::coord(Y, tp));
#pragma unroll
      for (int g = 0; g < D::regs / VM; ++g) {
        const int r = Sh::coord(X, tp) + Sh::coord(X, D::reg(g * VM)), c = Sh::coord(Y, tp) + Sh::coord(Y, D::reg(g * VM));
        const Off off = toff + (Off)Sh::coord(X, D::reg(g * VM)) * (Off)td.stride[X] + (Off)Sh::coord(Y, D::reg(g * VM));
#pragma unroll
        for (int q = 0; q < C; ++q) cp_async<VB>(dst + P::at(r, c + q * (VB / (int)sizeof(M))), base + off + q * (VB / (int)sizeof(M)));
      }
      cp_async_commit();
      return;
    }
    if ((WHOLE && ALIGNED) || ((ALIGNED || wn.vec_ok) && w.lo[Y] % VM == 0 && w.hi[Y] % VM == 0)) {
      // A partial tile whose window along the rows is whole vectors: each vector inside or outside.
#pragma unroll
      for (int g = 0; g < D::regs / VM; ++g) {
        const int r = coord_of<Sh>(X, tp, D::reg(g * VM)), c = coord_of<Sh>(Y, tp, D::reg(g * VM));
        M* d = dst + P::at(r, c);
        if (lead_in && r >= w.lo[X] && r < w.hi[X] && c >= w.lo[Y] && c < w.hi[Y]) {
          const Off off = (Off)(w.base[X] + r) * (Off)td.stride[X] + (Off)(w.base[Y] + c);
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
  if constexpr (!(WHOLE && ALIGNED && VM > 1 && VM * sizeof(M) >= 4)) {
#pragma unroll
    for (int e = 0; e < D::regs; ++e) {
      const int r = coord_of<Sh>(X, tp, D::reg(e)), c = coord_of<Sh>(Y, tp, D::reg(e));
      const bool in = lead_in && r >= w.lo[X] && r < w.hi[X] && c >= w.lo[Y] && c < w.hi[Y];
      dst[P::at(r, c)] = in ? base[(w.base[X] + r) * td.stride[X] + (w.base[Y] + c) * td.stride[Y]] : to_mem<T>(pad);
    }
    cp_async_commit();
  }
}

}  // namespace ct
