// ctile device library: ct.mma on the tensor cores (mma.sync m16n8k16, sm_80 and newer).
//
// The operands are staged row-major in shared memory, each row followed by ir::kMmaRowPad (8)
// elements of padding: A [M][K] with row stride LDA = K + 8, B [K][N] with LDB = N + 8. The warps
// of the tile block form a WM x WN grid over the [M, N] accumulator; each warp owns a TM x TN warp
// tile (TM = M / WM, TN = N / WN) made of m16n8 atoms, MA = TM / 16 along m and NA = TN / 8 along n.
// The accumulator registers follow ir::mma_accumulator: register 4 * (na + NA * ma) + j of a thread
// is element j of the m16n8 fragment of atom (ma, na) of its warp:
//   j = 0, 1: row g, columns 2t, 2t + 1;   j = 2, 3: row g + 8, the same columns   (g = lane / 4, t = lane % 4).
// Per K step of 16 a warp loads the A fragments of its MA atoms with ldmatrix.x4 and the B fragments
// of its NA atoms, two at a time, with ldmatrix.x4.trans (B is row-major in shared memory), then
// issues MA * NA mma.sync. The products of 16-bit floats are exact in f32 and the sums are f32, so
// the result is the reference's up to the order of the f32 additions (docs/ir.md, "mma").
//
// The host emulation runs the same instruction sequence with portable ldmatrix and mma.sync that
// exchange registers between lanes by shuffles, so the register plumbing is tested on the CPU.
#pragma once

#include "ctile/device/memory.h"
#include "ctile/device/regs.h"

namespace ct {

// ---- the instructions --------------------------------------------------------------------------------
CT_DEV unsigned smem_addr(const void* p) {
#if defined(__CUDA_ARCH__)
  // The compiler's own conversion (not inline PTX): it follows the shared pointers through the
  // loops' carried values and keeps their arithmetic in 32-bit shared addresses.
  return (unsigned)__cvta_generic_to_shared(p);
#elif defined(CTILE_DEVICE_EMULATION)
  return (unsigned)((const unsigned char*)p - ::ct_emu::dynamic_smem());  // an offset into the emulated segment
#else
  return (unsigned)(unsigned long long)p;
#endif
}

// `p` moved up to the next multiple of A bytes of the shared address space (swizzled tiles; the
// kernel asks for A - 16 more bytes of dynamic shared memory).
template <int A>
CT_DEV unsigned char* align_smem(unsigned char* p) {
  return p + (A - smem_addr(p) % A) % A;
}

// Four 8 x 8 matrices of 16-bit elements: lane l gives `row`, the address of row l % 8 of matrix
// l / 8 (16 bytes, 16-byte aligned); r[q] gets row l / 4, elements 2 (l % 4) and 2 (l % 4) + 1 of
// matrix q (element 2 (l % 4) in the low half).
CT_DEV void ldsm_x4(u32 (&r)[4], const void* row) {
#if defined(__CUDA_ARCH__)
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(row)));
#else
  const int l = (int)(threadIdx.x & 31);
  CT_CHECK_ALIGNED(row, 16);
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    const u32* src = (const u32*)__shfl_sync(0xffffffffu, row, q * 8 + l / 4);
    r[q] = src[l % 4];
  }
#endif
}
// The same, transposed: r[q] gets column l / 4 of rows 2 (l % 4) and 2 (l % 4) + 1 of matrix q.
CT_DEV void ldsm_x4_trans(u32 (&r)[4], const void* row) {
#if defined(__CUDA_ARCH__)
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(row)));
#else
  const int l = (int)(threadIdx.x & 31);
  CT_CHECK_ALIGNED(row, 16);
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    const u16* lo = (const u16*)__shfl_sync(0xffffffffu, row, q * 8 + 2 * (l % 4));
    const u16* hi = (const u16*)__shfl_sync(0xffffffffu, row, q * 8 + 2 * (l % 4) + 1);
    r[q] = (u32)lo[l / 4] | ((u32)hi[l / 4] << 16);
  }
#endif
}

#if !defined(__CUDA_ARCH__)
template <class TA>
CT_DEV float mma_half_lo(u32 w) {
  if constexpr (is_same<TA, bf16>::value) return bf16_bits_to_f32((u16)(w & 0xffffu));
  else return f16_bits_to_f32((u16)(w & 0xffffu));
}
template <class TA>
CT_DEV float mma_half_hi(u32 w) {
  return mma_half_lo<TA>(w >> 16);
}
#endif

// d += a * b for one m16n8k16 atom: a is the A fragment (a[0]: row g, k 2t..2t+1; a[1]: row g + 8;
// a[2]: row g, k 2t + 8..; a[3]: row g + 8, k 2t + 8..), b the B fragment (b[0]: k 2t..2t+1 of
// column g; b[1]: k 2t + 8..), d the accumulator fragment (see the top of this file).
template <class TA>
CT_DEV void mma_16816(float (&d)[4], const u32 (&a)[4], const u32 (&b)[2]) {
#if defined(__CUDA_ARCH__)
  if constexpr (is_same<TA, bf16>::value)
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
  const int l = (int)(threadIdx.x & 31), g = l / 4, t = l % 4;
  float ar[2][16], bc[2][16];  // rows g, g + 8 of A; columns 2t, 2t + 1 of B
  for (int s = 0; s < 4; ++s) {
    const int src = g * 4 + s;
    const u32 w[4] = {__shfl_sync(0xffffffffu, a[0], src), __shfl_sync(0xffffffffu, a[1], src),
                      __shfl_sync(0xffffffffu, a[2], src), __shfl_sync(0xffffffffu, a[3], src)};
    for (int h = 0; h < 2; ++h) {
      ar[h][2 * s] = mma_half_lo<TA>(w[h]);
      ar[h][2 * s + 1] = mma_half_hi<TA>(w[h]);
      ar[h][2 * s + 8] = mma_half_lo<TA>(w[2 + h]);
      ar[h][2 * s + 9] = mma_half_hi<TA>(w[2 + h]);
    }
    for (int c = 0; c < 2; ++c) {
      const int bsrc = (2 * t + c) * 4 + s;
      const u32 b0 = __shfl_sync(0xffffffffu, b[0], bsrc), b1 = __shfl_sync(0xffffffffu, b[1], bsrc);
      bc[c][2 * s] = mma_half_lo<TA>(b0);
      bc[c][2 * s + 1] = mma_half_hi<TA>(b0);
      bc[c][2 * s + 8] = mma_half_lo<TA>(b1);
      bc[c][2 * s + 9] = mma_half_hi<TA>(b1);
    }
  }
  for (int j = 0; j < 4; ++j) {
    float s = d[j];
    for (int k = 0; k < 16; ++k) s = fmaf(ar[j / 2][k], bc[j % 2][k], s);
    d[j] = s;
  }
#endif
}

// ---- staging ------------------------------------------------------------------------------------------
// Writes a distributed tile of ROW-element rows into shared memory with PAD elements after every
// row, a vector of D::vec elements at a time (16-bit elements: D::vec / 2 words).
template <class D, int ROW, int PAD, class T>
CT_DEV void stage_rows(T* s, const Regs<T, D::regs>& x, int tp, bool owner) {
  if (!owner) return;
  constexpr int V = D::vec < ROW ? D::vec : ROW;
  constexpr bool words = sizeof(T) == 2 && V % 2 == 0 && D::regs % 2 == 0;
#pragma unroll
  for (int g = 0; g < D::regs / V; ++g) {
    const int e = tp + D::reg(g * V);
    T* dst = s + e + (e / ROW) * PAD;
    if constexpr (words && V == 8) {
      CT_CHECK_ALIGNED(dst, 16);
      const u32* w = &x.w[g * 4];
      *(Chunk<16>*)dst = Chunk<16>{w[0], w[1], w[2], w[3]};
    } else if constexpr (words && V == 4) {
      CT_CHECK_ALIGNED(dst, 8);
      *(Chunk<8>*)dst = Chunk<8>{x.w[g * 2], x.w[g * 2 + 1]};
    } else {
#pragma unroll
      for (int j = 0; j < V; ++j) dst[j] = x.get(g * V + j);
    }
  }
}

// ---- the product ----------------------------------------------------------------------------------------
// out = acc + a @ b with a [M][K] at sa (row stride K + PAD), b [K][N] at sb (row stride N + PAD),
// the accumulator in the fragment layout D over WM x WN warps (see the top of this file).
template <class D, int M, int N, int K, int WM, int WN, int PAD, class TA, class TC>
CT_DEV void mma_tc(Regs<TC, D::regs>& out, const Regs<TC, D::regs>& acc, const TA* sa, const TA* sb, int lane, int warp) {
  constexpr int TM = M / WM, TN = N / WN, MA = TM / 16, NA = TN / 8, LDA = K + PAD, LDB = N + PAD;
  static_assert(M % (16 * WM) == 0 && N % (16 * WN) == 0 && K % 16 == 0 && NA % 2 == 0, "mma_tc: tile shape");
  static_assert(D::regs == 4 * MA * NA, "mma_tc: the accumulator layout does not match the warp tiles");
  const int wn = warp % WN, wm = warp / WN;
  float d[MA * NA][4];
#pragma unroll
  for (int a = 0; a < MA * NA; ++a)
#pragma unroll
    for (int j = 0; j < 4; ++j) d[a][j] = (float)up(acc.get(4 * a + j));
  // The row (of A) and the k row (of B) this lane addresses for ldmatrix: matrix q = lane / 8.
  const int q = lane >> 3, r8 = lane & 7;
  const TA* pa = sa + (wm * TM + (q & 1) * 8 + r8) * LDA + (q >> 1) * 8;
  const TA* pb = sb + ((q & 1) * 8 + r8) * LDB + wn * TN + (q >> 1) * 8;
#pragma unroll 2
  for (int k0 = 0; k0 < K; k0 += 16) {
    u32 fa[MA][4], fb[NA][2];
#pragma unroll
    for (int i = 0; i < MA; ++i) ldsm_x4(fa[i], pa + i * 16 * LDA + k0);
#pragma unroll
    for (int j = 0; j < NA; j += 2) {
      u32 t[4];
      ldsm_x4_trans(t, pb + k0 * LDB + j * 8);
      fb[j][0] = t[0];
      fb[j][1] = t[1];
      fb[j + 1][0] = t[2];
      fb[j + 1][1] = t[3];
    }
#pragma unroll
    for (int i = 0; i < MA; ++i)
#pragma unroll
      for (int j = 0; j < NA; ++j) mma_16816<TA>(d[j + NA * i], fa[i], fb[j]);
  }
#pragma unroll
  for (int a = 0; a < MA * NA; ++a)
#pragma unroll
    for (int j = 0; j < 4; ++j) out.set(4 * a + j, down<TC>(d[a][j]));
}

}  // namespace ct
