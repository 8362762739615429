// ctile device library: Hopper's warpgroup matrix multiply (wgmma.mma_async, sm_90a) over operands
// in swizzled shared memory: ct.mma on sm_90 when layout-assignment gives its operands the
// swizzled layout (mma_wg below; tests/gpu_wgmma/probe checks the layouts and descriptors on the
// hardware).
//
// Shared-memory layouts (PTX ISA "Shared Memory Matrix Layout": swizzle atoms of 8 rows of SW
// bytes, the 16-byte chunk index of an address XORed with its 128-byte row index modulo SW / 16):
//   A [64 * G][K] K-major, K * 2 == SW bytes per row (one atom wide: K = 16, 32 or 64 of a 16-bit
//     type): element (m, k) at (m / 8) * 8 SW + (m % 8) * SW + 2 k, swizzled; the descriptor's SBO
//     is 8 SW (the next 8 rows), LBO unused; each k16 step moves the start address 32 bytes.
//   B [K][N] N-major (row-major [K, N] as a matmul's B arrives), 128-byte swizzle: atoms of 64
//     columns x 8 rows; element (k, n) at (n / 64) * LBO + (k / 8) * 1024 + (k % 8) * 128 + 2 (n % 64),
//     swizzled, with LBO = 128 K (an atom column holds all K rows); SBO = 1024 (the next 8 rows of
//     K), each k16 step moves the start address 2048 bytes; the instruction's imm-trans-b is 1.
//   Every atom starts at a multiple of 8 SW bytes (the descriptors' base offset is 0).
//   8-bit operands (fp8, m64nNk32): A and B both K-major ([M][K] and a transposed [N][K]), the same
//   byte arithmetic with 1-byte elements: rows of K bytes (32, 64 or a multiple of 128), each k32
//   step 32 bytes on. The instruction has no transpose for them (no N-major B).
// The accumulator of m64nNk16 for the 128 threads of a warpgroup is the mma.sync fragment per
// 16-row warp slice: warp w of the warpgroup holds rows 16 w .. 16 w + 15, register 4 j + i of lane
// l is row 16 w + l / 4 (+ 8 for i >= 2), column 8 j + 2 (l % 4) + (i % 2). That is
// ir::mma_accumulator over a warps x 1 grid, so the code generator can keep its fragment layout.
//
// The host emulation computes each thread's fragment from shared memory through the same
// descriptors (decoded as above), so a producer and a descriptor that disagree fail on the CPU;
// whether the hardware reads them so is what the GPU probe checks.
#pragma once

#include "ctile/device/mma.h"

namespace ct {

// The swizzled byte offset of logical byte offset `o` (from a base aligned to 8 SW bytes).
template <int SW>
CT_DEV unsigned swizzle(unsigned o) {
  static_assert(SW == 32 || SW == 64 || SW == 128, "wgmma: swizzles of 32, 64 or 128 bytes");
  constexpr unsigned mask = SW / 16 - 1;
  return o ^ (((o >> 7) & mask) << 4);
}
// Byte offsets of the layouts above (before adding the tile's base).
template <int SW>
CT_DEV unsigned a_offset(int m, int k) {
  return swizzle<SW>((unsigned)((m >> 3) * 8 * SW + (m & 7) * SW + 2 * k));
}
template <int K>
CT_DEV unsigned b_offset_nmajor(int k, int n) {
  return swizzle<128>((unsigned)((n >> 6) * 128 * K + (k >> 3) * 1024 + (k & 7) * 128 + 2 * (n & 63)));
}

// A matrix descriptor: start address, leading and stride byte offsets (all >> 4), the swizzle
// mode in bits 62-63 (1: 128 bytes, 2: 64, 3: 32).
template <int SW>
CT_DEV unsigned long long wgmma_desc(unsigned smem_address, unsigned lbo, unsigned sbo) {
  constexpr unsigned long long mode = SW == 128 ? 1 : SW == 64 ? 2 : 3;
  return (unsigned long long)((smem_address & 0x3ffffu) >> 4) | ((unsigned long long)((lbo >> 4) & 0x3fffu) << 16) |
         ((unsigned long long)((sbo >> 4) & 0x3fffu) << 32) | (mode << 62);
}

// The descriptor of `bytes` (a multiple of 16) past d's start: one 32-bit add. A shared address
// stays below 2^18, so its field (bits 0-13: the address / 16) never carries into the next; the
// instruction steps of a product add constants to one descriptor computed per tile.
CT_DEV unsigned long long wgmma_desc_add(unsigned long long d, unsigned bytes) {
  return (d & 0xffffffff00000000ull) | (unsigned long long)((unsigned)d + (bytes >> 4));
}

// Shared memory written by the threads (st.shared, cp.async) is visible to wgmma, which reads
// through the async proxy, after this fence (and the barrier that orders the writers).
CT_DEV void wgmma_smem_fence() {
#if defined(__CUDA_ARCH__)
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}
CT_DEV void wgmma_fence() {
#if defined(__CUDA_ARCH__)
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#endif
}
CT_DEV void wgmma_commit() {
#if defined(__CUDA_ARCH__)
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
#elif defined(CTILE_DEVICE_EMULATION)
  ::ct_emu::wgmma_commit();
#endif
}
template <int N>
CT_DEV void wgmma_wait() {
#if defined(__CUDA_ARCH__)
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
#elif defined(CTILE_DEVICE_EMULATION)
  ::ct_emu::wgmma_wait(N);
#endif
}

}  // namespace ct

#include "ctile/device/wgmma_ops.h"

namespace ct {

// The fp8 instructions of (A, B) element types (e4m3 or e5m2 each).
template <class T, class U, int N>
CT_DEV void wgmma_k32_fp8(float (&d)[N / 2], unsigned long long da, unsigned long long db, int scale_d) {
#if defined(__CUDA_ARCH__)
  constexpr bool a4 = is_same<T, f8e4m3>::value, b4 = is_same<U, f8e4m3>::value;
  if constexpr (N == 64) {
    if constexpr (a4 && b4) wgmma_m64n64k32_e4m3_e4m3(d, da, db, scale_d);
    else if constexpr (a4) wgmma_m64n64k32_e4m3_e5m2(d, da, db, scale_d);
    else if constexpr (b4) wgmma_m64n64k32_e5m2_e4m3(d, da, db, scale_d);
    else wgmma_m64n64k32_e5m2_e5m2(d, da, db, scale_d);
  } else if constexpr (N == 128) {
    if constexpr (a4 && b4) wgmma_m64n128k32_e4m3_e4m3(d, da, db, scale_d);
    else if constexpr (a4) wgmma_m64n128k32_e4m3_e5m2(d, da, db, scale_d);
    else if constexpr (b4) wgmma_m64n128k32_e5m2_e4m3(d, da, db, scale_d);
    else wgmma_m64n128k32_e5m2_e5m2(d, da, db, scale_d);
  } else {
    if constexpr (a4 && b4) wgmma_m64n256k32_e4m3_e4m3(d, da, db, scale_d);
    else if constexpr (a4) wgmma_m64n256k32_e4m3_e5m2(d, da, db, scale_d);
    else if constexpr (b4) wgmma_m64n256k32_e5m2_e4m3(d, da, db, scale_d);
    else wgmma_m64n256k32_e5m2_e5m2(d, da, db, scale_d);
  }
#else
  (void)d, (void)da, (void)db, (void)scale_d;
#endif
}

// D += A * B for one instruction step (32 bytes of K: k16 of a 16-bit T, k32 of fp8) of a 64 x N
// product of A elements T and B elements U (the generated instructions). 8-bit operands are both
// K-major (TRANS_B = 0: the instruction has no transpose for them).
template <class T, class U, int N, int TRANS_B>
CT_DEV void wgmma_step(float (&d)[N / 2], unsigned long long da, unsigned long long db, int scale_d) {
#if defined(__CUDA_ARCH__)
  static_assert(N == 64 || N == 128 || N == 256, "wgmma: N of 64, 128 or 256");
  static_assert(sizeof(T) == sizeof(U) && (sizeof(T) == 2 || TRANS_B == 0), "wgmma: operand types");
  if constexpr (sizeof(T) == 1) {
    wgmma_k32_fp8<T, U, N>(d, da, db, scale_d);
  } else if constexpr (is_same<T, bf16>::value) {
    if constexpr (N == 64) wgmma_m64n64k16_bf16<TRANS_B>(d, da, db, scale_d);
    else if constexpr (N == 128) wgmma_m64n128k16_bf16<TRANS_B>(d, da, db, scale_d);
    else wgmma_m64n256k16_bf16<TRANS_B>(d, da, db, scale_d);
  } else {
    if constexpr (N == 64) wgmma_m64n64k16_f16<TRANS_B>(d, da, db, scale_d);
    else if constexpr (N == 128) wgmma_m64n128k16_f16<TRANS_B>(d, da, db, scale_d);
    else wgmma_m64n256k16_f16<TRANS_B>(d, da, db, scale_d);
  }
#else
  (void)d, (void)da, (void)db, (void)scale_d;
#endif
}

// The same with A in registers (A's fragment of this k16 step: 4 packed pairs per thread).
template <class T, int N, int TRANS_B>
CT_DEV void wgmma_k16_rs(float (&d)[N / 2], const unsigned (&a)[4], unsigned long long db, int scale_d) {
#if defined(__CUDA_ARCH__)
  static_assert(N == 64 || N == 128 || N == 256, "wgmma: N of 64, 128 or 256");
  if constexpr (is_same<T, bf16>::value) {
    if constexpr (N == 64) wgmma_m64n64k16_bf16_rs<TRANS_B>(d, a, db, scale_d);
    else if constexpr (N == 128) wgmma_m64n128k16_bf16_rs<TRANS_B>(d, a, db, scale_d);
    else wgmma_m64n256k16_bf16_rs<TRANS_B>(d, a, db, scale_d);
  } else {
    if constexpr (N == 64) wgmma_m64n64k16_f16_rs<TRANS_B>(d, a, db, scale_d);
    else if constexpr (N == 128) wgmma_m64n128k16_f16_rs<TRANS_B>(d, a, db, scale_d);
    else wgmma_m64n256k16_f16_rs<TRANS_B>(d, a, db, scale_d);
  }
#else
  (void)d, (void)a, (void)db, (void)scale_d;
#endif
}

// The descriptor of B for instruction step ks (32 bytes of K) and N chunk c (NI columns) of a [K][N]
// product: N-major (TB = 1, Swizzled<K, N, 128>, 16-bit) or held transposed, [N][K] K-major with
// swizzle SW (TB = 0; the step's 32 bytes of each row lie in column block 32 ks / SW): the
// descriptor of step 0, chunk 0 (wgmma_b_desc0) plus wgmma_b_off(c, ks) bytes (wgmma_desc_add).
template <int K, int N, int NI, int SW, int TB>
CT_DEV constexpr unsigned wgmma_b_off(int c, int ks) {
  return TB ? (unsigned)(c * (NI / 64) * K * 128 + ks * 2048) : (unsigned)(c * NI * SW + (32 * ks / SW) * N * SW + (32 * ks) % SW);
}
template <int K, int SW, int TB>
CT_DEV unsigned long long wgmma_b_desc0(unsigned b0) {
  return TB ? wgmma_desc<128>(b0, 128 * K, 1024) : wgmma_desc<SW>(b0, 16, 8 * SW);
}

#if !defined(__CUDA_ARCH__)
// The shared-memory offset of B's element (k, col) through its descriptor's fields (the layouts of
// wgmma_b_desc0 and wgmma_b_off, decoded as the hardware decodes them).
template <int SW, int TRANS_B, int E = 2>
CT_DEV unsigned wgmma_b_offset(unsigned b_start, unsigned b_lbo, unsigned b_sbo, int k, int col) {
  if constexpr (TRANS_B)
    return swizzle<128>(b_start + (unsigned)((col >> 6) * b_lbo + (k >> 3) * b_sbo + (k & 7) * 128 + 2 * (col & 63)));
  else
    return swizzle<SW>(b_start + (unsigned)((col >> 3) * b_sbo + (col & 7) * SW + E * k));
}

// The emulation: thread `t` (0..127) of the warpgroup, its fragment of D += A (64 x KS at da) *
// B (KS x N at db), KS = 32 / sizeof(T) (one instruction's 32 bytes of K), A's elements T, B's U.
// The descriptors' start fields hold offsets into the emulated shared memory (smem_addr there),
// which starts at offset 0 like an aligned segment, so the swizzle applies to the offset of each
// element's address as on the hardware.
template <class T, class U, int N, int SW, int TRANS_B>
CT_DEV void wgmma_emulated(float (&d)[N / 2], unsigned long long da, unsigned long long db, int scale_d, int t,
                           const unsigned char* smem) {
  constexpr int E = (int)sizeof(T), KS = 32 / E;
  auto field = [](unsigned long long desc, int lo) { return (unsigned)((desc >> lo) & 0x3fffu) << 4; };
  const unsigned a_start = field(da, 0), a_sbo = field(da, 32);
  const unsigned b_start = field(db, 0), b_lbo = field(db, 16), b_sbo = field(db, 32);
  const int w = t / 32, l = t % 32;
  for (int j = 0; j < N / 8; ++j)
    for (int i = 0; i < 4; ++i) {
      const int row = 16 * w + l / 4 + (i >= 2 ? 8 : 0), col = 8 * j + 2 * (l % 4) + (i % 2);
      float s = scale_d ? d[4 * j + i] : 0.0f;
      for (int k = 0; k < KS; ++k) {
        const unsigned ao = swizzle<SW>(a_start + (unsigned)((row >> 3) * a_sbo + (row & 7) * SW + E * k));
        const unsigned bo = wgmma_b_offset<SW, TRANS_B, E>(b_start, b_lbo, b_sbo, k, col);
        s = fmaf(up(*(const T*)(smem + ao)), up(*(const U*)(smem + bo)), s);
      }
      d[4 * j + i] = s;
    }
}
// The emulation with A in registers: `rows` holds the two rows of this k16 step of A (as floats)
// that thread t's fragment of D needs (rows 16 w + l / 4 and 8 below), gathered from its
// warpgroup's registers when the product was issued.
template <class T, int N, int SWB, int TRANS_B>
CT_DEV void wgmma_emulated_rs(float (&d)[N / 2], const float (&rows)[2][16], unsigned long long db, int scale_d, int t,
                              const unsigned char* smem) {
  auto field = [](unsigned long long desc, int lo) { return (unsigned)((desc >> lo) & 0x3fffu) << 4; };
  const unsigned b_start = field(db, 0), b_lbo = field(db, 16), b_sbo = field(db, 32);
  const int l = t % 32;
  for (int j = 0; j < N / 8; ++j)
    for (int i = 0; i < 4; ++i) {
      const int col = 8 * j + 2 * (l % 4) + (i % 2);
      float s = scale_d ? d[4 * j + i] : 0.0f;
      for (int k = 0; k < 16; ++k) {
        const unsigned bo = wgmma_b_offset<SWB, TRANS_B>(b_start, b_lbo, b_sbo, k, col);
        s = fmaf(rows[i >= 2 ? 1 : 0][k], up(*(const T*)(smem + bo)), s);
      }
      d[4 * j + i] = s;
    }
}
#endif

// The products of acc += a @ b on the warpgroup instructions, for the W warps (W / 4 warpgroups) of
// a tile block: a [M][K] at sa in Swizzled<M, K, SWA> (async.h); b [K][N] at sb in Swizzled<K, N,
// 128> (TB = 1, N-major, 16-bit only) or held transposed, [N][K] in Swizzled<N, K, SWA> (TB = 0,
// K-major: a transposed tile, as attention's K^T arrives); the accumulator in
// ir::wgmma_accumulator (f32), updated in place. A's elements TA, B's TE: both bf16 or f16, or both
// fp8 (e4m3 / e5m2, mixed allowed; then TB = 0). Warpgroup g computes the 64-row blocks g, g + G,
// ... (G = W / 4), each as K / KS steps (KS = 32 / sizeof(TA): 32 bytes of K per instruction,
// m64nNIk16 or m64nNIk32) per NI-column chunk of N (NI = 256, 128 or 64), committed as one group
// and left in flight: acc's registers belong to the tensor cores until a wgmma_wait lets the group
// finish, and the operands' slots must not be overwritten before then. The caller has waited for
// the operands' copies, fenced them for the async proxy and synchronised the tile block. `tid`:
// the thread's index in the tile block.
template <class D, int M, int N, int K, int W, int SWA, int TB, class TA, class TE>
CT_DEV void mma_wg_issue(Regs<float, D::regs>& acc, const TA* sa, const TE* sb, int tid) {
  constexpr int G = W / 4, MB = M / (64 * G), NA = N / 8, KS = 32 / (int)sizeof(TA);
  constexpr int NI = N % 256 == 0 ? 256 : N % 128 == 0 ? 128 : 64, NC = N / NI;
  static_assert(W % 4 == 0 && M % (64 * G) == 0 && N % 64 == 0 && K % KS == 0, "mma_wg: tile shape");
  static_assert(sizeof(TA) == sizeof(TE) && (sizeof(TA) == 2 || TB == 0), "mma_wg: 8-bit operands are both K-major");
  static_assert(D::regs == 4 * NA * MB, "mma_wg: the accumulator layout does not match the warpgroups");
  const int g = tid >> 7;
  float* d = acc.v;
  const unsigned a0 = smem_addr(sa);
  const unsigned long long db0 = wgmma_b_desc0<K, SWA, TB>(smem_addr(sb));
  wgmma_fence();
#pragma unroll
  for (int mb = 0; mb < MB; ++mb) {
    const unsigned long long dam = wgmma_desc<SWA>(a0 + (unsigned)(64 * (g + G * mb) * SWA), 16, 8 * SWA);
#pragma unroll
    for (int ks = 0; ks < K / KS; ++ks) {
      const unsigned long long da = wgmma_desc_add(dam, (unsigned)((32 * ks / SWA) * M * SWA + (32 * ks) % SWA));
#pragma unroll
      for (int c = 0; c < NC; ++c) {
        const unsigned long long db = wgmma_desc_add(db0, wgmma_b_off<K, N, NI, SWA, TB>(c, ks));
        float(&dc)[NI / 2] = *reinterpret_cast<float(*)[NI / 2]>(&d[4 * (c * (NI / 8) + NA * mb)]);
#if defined(__CUDA_ARCH__)
        wgmma_step<TA, TE, NI, TB>(dc, da, db, 1);
#elif defined(CTILE_DEVICE_EMULATION)
        const int t = tid & 127;
        unsigned char* const sm = ::ct_emu::dynamic_smem();
        ::ct_emu::wgmma_defer([&dc, da, db, t, sm] { wgmma_emulated<TA, TE, NI, SWA, TB>(dc, da, db, 1, t, sm); });
#else
        (void)dc, (void)da, (void)db;
#endif
      }
    }
  }
  wgmma_commit();
}

// out = acc + a @ b, done when it returns (mma_wg_issue on a copy of acc, then wgmma.wait_group 0):
// the operands' slots may be overwritten after the next barrier.
template <class D, int M, int N, int K, int W, int SWA, int TB, class TA, class TE>
CT_DEV void mma_wg(Regs<float, D::regs>& out, const Regs<float, D::regs>& acc, const TA* sa, const TE* sb, int tid) {
  out = acc;
  mma_wg_issue<D, M, N, K, W, SWA, TB, TA, TE>(out, sa, sb, tid);
  wgmma_wait<0>();
}

// acc += a @ b with A in registers (register-A wgmma): a [M][K] is a register tile in
// ir::wgmma_accumulator(M, K, W), the layout of a wgmma's own accumulator, so a product's result
// converted to 16 bits (attention's P) feeds the next product with no data movement: for 64-row
// block mb and k16 step ks, packed registers 2 (KA mb) + 4 ks .. + 3 of each thread are the
// instruction's four A registers (the m16n8k16 A fragment of the warp's 16-row slice). b as in
// mma_wg_issue, with its own swizzle SWB when held transposed (TB = 0). A's registers must not
// change until a wgmma_wait lets the group finish.
template <class D, int M, int N, int K, int W, int SWB, int TB, class TA, class DA>
CT_DEV void mma_wg_issue_rs(Regs<float, D::regs>& acc, const Regs<TA, DA::regs>& a, const TA* sb, int tid) {
  constexpr int G = W / 4, MB = M / (64 * G), NA = N / 8, KA = K / 8;
  constexpr int NI = N % 256 == 0 ? 256 : N % 128 == 0 ? 128 : 64, NC = N / NI;
  static_assert(W % 4 == 0 && M % (64 * G) == 0 && N % 64 == 0 && K % 16 == 0, "mma_wg_rs: tile shape");
  static_assert(D::regs == 4 * NA * MB, "mma_wg_rs: the accumulator layout does not match the warpgroups");
  static_assert(DA::regs == 4 * KA * MB && sizeof(TA) == 2 && DA::regs % 2 == 0, "mma_wg_rs: A is not in the fragment layout");
  float* d = acc.v;
  const unsigned long long db0 = wgmma_b_desc0<K, SWB, TB>(smem_addr(sb));
#if !defined(__CUDA_ARCH__) && defined(CTILE_DEVICE_EMULATION)
  // Every thread's fragment of A, gathered across the warpgroup at the issue (the instruction
  // reads all 128 threads' registers).
  float mine[DA::regs];
  for (int r = 0; r < DA::regs; ++r) mine[r] = up(a.get(r));
  static thread_local float all[128 * 128];
  static_assert(DA::regs <= 128, "mma_wg_rs: emulation holds up to 128 A registers per thread");
  ::ct_emu::warpgroup_gather(mine, DA::regs, all);
#endif
  (void)tid;
  wgmma_fence();
#pragma unroll
  for (int mb = 0; mb < MB; ++mb) {
#pragma unroll
    for (int ks = 0; ks < K / 16; ++ks) {
      unsigned af[4];
#pragma unroll
      for (int q = 0; q < 4; ++q) af[q] = a.w[2 * KA * mb + 4 * ks + q];
#if !defined(__CUDA_ARCH__) && defined(CTILE_DEVICE_EMULATION)
      float rows[2][16];
      {
        const int t = tid & 127, wl = t / 32, l = t % 32;
        for (int h = 0; h < 2; ++h)
          for (int k = 0; k < 16; ++k) {
            const int row = 16 * wl + l / 4 + 8 * h;
            const int q = 32 * ((row >> 4) & 3) + 4 * (row & 7) + ((k >> 1) & 3);
            const int reg = (k & 1) + 2 * ((row >> 3) & 1) + 8 * ks + 4 * (k >= 8 ? 1 : 0) + 4 * KA * mb;
            rows[h][k] = all[q * DA::regs + reg];
          }
      }
#endif
#pragma unroll
      for (int c = 0; c < NC; ++c) {
        const unsigned long long db = wgmma_desc_add(db0, wgmma_b_off<K, N, NI, SWB, TB>(c, ks));
        float(&dc)[NI / 2] = *reinterpret_cast<float(*)[NI / 2]>(&d[4 * (c * (NI / 8) + NA * mb)]);
#if defined(__CUDA_ARCH__)
        wgmma_k16_rs<TA, NI, TB>(dc, af, db, 1);
#elif defined(CTILE_DEVICE_EMULATION)
        const int t = tid & 127;
        unsigned char* const sm = ::ct_emu::dynamic_smem();
        ::ct_emu::wgmma_defer([&dc, rows, db, t, sm] { wgmma_emulated_rs<TA, NI, SWB, TB>(dc, rows, db, 1, t, sm); });
        (void)af;
#else
        (void)dc, (void)db, (void)af;
#endif
      }
    }
  }
  wgmma_commit();
}

// out = acc + a @ b with A in registers, done when it returns.
template <class D, int M, int N, int K, int W, int SWB, int TB, class TA, class DA>
CT_DEV void mma_wg_rs(Regs<float, D::regs>& out, const Regs<float, D::regs>& acc, const Regs<TA, DA::regs>& a, const TA* sb,
                      int tid) {
  out = acc;
  mma_wg_issue_rs<D, M, N, K, W, SWB, TB, TA, DA>(out, a, sb, tid);
  wgmma_wait<0>();
}

}  // namespace ct
