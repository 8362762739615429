// Layouts of the GPU-level IR: where the elements of a tile value live among the threads of a tile
// block (docs/compiler.md, "Layouts"). Every tile extent is a power of two, so a tile of 2^n
// elements is addressed by the n bits of its row-major linear index, and a distributed layout is a
// map from the bits of (register index, lane, warp) to those element bits:
//
//   element(r, l, w) = OR over k of  bit_k(r) << reg[k]  |  bit_k(l) << lane[k]  |  bit_k(w) << warp[k]
//
// Every element bit is named exactly once; a lane or warp bit that names none (kCopy) selects a
// copy: the threads that differ only in it hold the same elements. The familiar blocked layouts are
// special cases (the low register bits on the contiguous axis, then the lanes, then the warps), and
// so are reduction results (the reduced axis' bits dropped: their lanes and warps become copies),
// transposes (a relabelling of bits) and broadcasts. This is our own formulation of the idea behind
// CuTe's layouts and Triton's linear layouts, restricted to bit permutations.
//
// Shared layouts place a tile in shared memory: row-major, optionally with padding after every row
// (to spread the rows over banks), or swizzled for Hopper's wgmma (`swizzle` bytes per atom row:
// the tile's rows of `row` 16-bit elements cut into column blocks of swizzle / 2 elements, each
// block its rows of `swizzle` bytes in atoms of 8 rows, the 16-byte chunks of a row XORed with the
// row's index in its atom; shared_offset below). The accumulator fragments of the tensor cores (mma.sync
// m16n8k16) are bit permutations too, so they are distributed layouts (mma_accumulator below).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ctile/core/shape.hpp"

namespace ctile::ir {

enum class LayoutKind : std::uint8_t { None, Dist, Shared };

struct Layout {
  static constexpr int kCopy = -1;

  LayoutKind kind = LayoutKind::None;
  // Dist: the element bit of each register, lane and warp bit (lane has 5 entries; warp log2(warps)).
  std::vector<int> reg, lane, warp;
  // Shared: `pad` elements of padding after every `row` elements (0: no padding), or (swizzle 32,
  // 64 or 128) the swizzled layout of rows of `row` elements.
  std::int64_t row = 0, pad = 0;
  int swizzle = 0;
  // Shared, swizzled: the [R][C] tile is held as its transpose [C][R] (rows of `row` = R elements):
  // what permute({1, 0}) of a tile in shared memory gives (wgmma reads it as a K-major B).
  bool trans = false;

  bool is_dist() const { return kind == LayoutKind::Dist; }
  bool is_shared() const { return kind == LayoutKind::Shared; }
  bool is_swizzled() const { return kind == LayoutKind::Shared && swizzle != 0; }
  int regs() const { return 1 << reg.size(); }
  int warps() const { return 1 << warp.size(); }
  int threads() const { return 32 * warps(); }
  // Element index held in register r by lane l of warp w.
  std::int64_t element(std::int64_t r, int l, int w) const;
  // Element bits named by lanes / warps (a mask), and the lane / warp bits that select copies.
  std::int64_t lane_elem_mask() const;
  std::int64_t warp_elem_mask() const;
  int copy_lane_mask() const;
  int copy_warp_mask() const;
  friend bool operator==(const Layout&, const Layout&) = default;
};

// "#dist<reg=[0,1,2], lane=[3,4,5,6,7], warp=[8,*]>" ("*": a copy bit), "#shared<row=1024, pad=8>",
// "#shared<row=64, swizzle=128>", "#shared<row=64, swizzle=128, trans>", "" for None.
std::string layout_str(const Layout& l);

// Checks a distributed layout against a tile of `numel` elements (a power of two) and `warps`
// warps: every element bit named once, 5 lane bits, log2(warps) warp bits. Returns "" or a problem.
std::string check_dist(const Layout& l, std::int64_t numel, int warps);

// The blocked layout of a tile of `shape` over `warps` warps: `vec` consecutive elements of the last
// axis per register group, then lanes along the last axis, then the axes before it (row-major),
// then warps the same way; what remains of the tile goes to more registers, and lanes or warps with
// no element left hold copies. `warps_last`: warps take the last axis' bits before the outer axes'
// (several warps per row) or, if false, the outer axes first (rows spread over warps).
Layout blocked(const Shape& shape, int vec, int warps, bool warps_last = true);
// Every thread holds the whole tile (no lane or warp names an element).
Layout replicated(const Shape& shape, int warps);

// The layout of a reduction's result along `axis` of a tile of `shape` held in `l`: the axis'
// bits are dropped (registers go, lanes and warps become copies), the bits above move down.
Layout slice(const Layout& l, const Shape& shape, int axis);
// The layout of permute(x, perm) when x is held in `l`: the same registers, lanes and warps, each
// naming the bit of the element's new position (a relabelling: no data moves).
Layout permute(const Layout& l, const Shape& shape, const std::vector<int>& perm);
// For broadcast(x) -> a tile of `to` held in `result`: the layout x (of shape `from`) must have for
// the broadcast to move no data (the stretched axes' registers dropped, their lanes and warps copies).
Layout broadcast_source(const Layout& result, const Shape& from, const Shape& to);
// The tensor-core accumulator layout of an [m, n] tile over `warps` warps (mma.sync m16n8k16, the
// D/C fragment): the warps form a wm x wn grid (mma_warp_grid), each holding an (m/wm) x (n/wn)
// warp tile as m16n8 atoms. Within an atom, register bit 0 and lane bits 0-1 name column bits 0-2,
// lane bits 2-4 row bits 0-2, register bit 1 row bit 3; the next register bits step over the atoms
// along n, then along m; the warp bits over the warp grid along n, then along m. Register 4*a + j
// of a thread is element j of the fragment of its warp's atom a (a = atom_n + atoms_n * atom_m).
struct MmaWarpGrid {
  int wm = 1, wn = 1;
};
// The warp grid for an [m, n] accumulator (m a multiple of 16, n of 16): warp tiles as square as
// possible, at least 16 x 16. Returns {0, 0} when `warps` cannot be arranged so.
// A tensor-core mma stages its operands row-major in shared memory with this many elements (16
// bytes) of padding after every row, so the 8 rows one ldmatrix reads fall on distinct banks.
constexpr int kMmaRowPad = 8;
MmaWarpGrid mma_warp_grid(std::int64_t m, std::int64_t n, int warps);
Layout mma_accumulator(std::int64_t m, std::int64_t n, int warps);

// Hopper's warpgroup mma (wgmma.mma_async m64nNk16, sm_90a): each warpgroup of 4 warps computes
// 64-row blocks of the [m, n] accumulator over all n columns; warp w holds 16-row slices. The
// layout is mma_accumulator's atoms with the warp bits on row bits 4, 5, ... (warp w: rows 16 w +
// 64 * warps / 4 * b, block b = 0, 1, ... in registers above the n atoms). Register 4 * (na + NA * b)
// + j of a thread is element j of the m16n8 fragment (na, b) of its warp, as for mma.sync. With m
// = 16 * warps it is mma_accumulator over a warps x 1 grid. Requires warps a multiple of 4, m a
// multiple of 16 * warps, n a multiple of 64 (powers of two).
// A swizzled tile starts at a multiple of this many bytes of shared memory (the swizzle pattern's
// period: 8 rows of 128 bytes).
constexpr std::int64_t kSwizzleAlign = 1024;
// K of one instruction: 32 bytes of K (k16 for 16-bit operands, k32 for 8-bit ones).
constexpr int wgmma_k(int elem_bytes) { return 32 / elem_bytes; }
// m, n, k of a product of operands of `elem_bytes` bytes (2: bf16 / f16, 1: fp8) over `warps`.
bool wgmma_shape(std::int64_t m, std::int64_t n, std::int64_t k, int warps, int elem_bytes = 2);
Layout wgmma_accumulator(std::int64_t m, std::int64_t n, int warps);
// A [m, k] operand of wgmma held in registers (register-A wgmma): the accumulator's layout (the
// m16n8k16 A fragment of each warp's 16-row slice, per k16 step), so a product's result converted
// to 16 bits feeds the next product as it is. k a multiple of 16.
Layout wgmma_a_fragment(std::int64_t m, std::int64_t k, int warps);
// The swizzled shared layout of a wgmma operand with rows of `row` elements of `elem_bytes` bytes
// (A: K, B: N, or K when held K-major): a swizzle of the row's bytes for rows of 32 or 64 bytes,
// else 128 (rows a multiple of 128 bytes); 0 when none fits.
int wgmma_swizzle(std::int64_t row, int elem_bytes = 2);
// The element offset of (r, c) in a [rows][row] tile of `elem_bytes`-byte elements held in the
// swizzled layout `swizzle` (device/async.h's Swizzled computes the same).
std::int64_t shared_offset(const Layout& l, std::int64_t rows, std::int64_t r, std::int64_t c, int elem_bytes = 2);

// True when converting `from` to `to` moves no data between threads (same lanes and warps: the
// registers are only renumbered).
bool registers_only(const Layout& from, const Layout& to);

}  // namespace ctile::ir
