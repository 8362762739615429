// Thread coordinates and the index spaces that hand out write tokens.
//
// A token (ThreadIndex, ThreadIndex2D, TileIndex, BlockIndex, WarpIndex) names one element of an
// output that no other thread of the launch can name with a token of the same type: it is made
// only by the functions below, from the thread's own coordinates, and it cannot be copied, moved,
// assigned or have its address taken, so it cannot be handed to another thread (through shared
// memory, say) or outlive the kernel. DisjointSpan::get_mut takes a token of the span's index type;
// that is why writes through a DisjointSpan never race.
//
//   index_1d()                      ThreadIndex: the linear index of this thread in the grid
//   index_1d_vec4()                 Vec4Index q: elements [4q, 4q + 4), for 16-byte vector stores
//   grid_stride(n)                  ThreadIndex i, i + T, i + 2T ... < n (T: threads in the grid)
//   index_2d()                      ThreadIndex2D (row, col): col from x, row from y (and z)
//   tile_2d<R, C>()                 TileIndex: the elements of this block's R x C tile this
//   tile_2d_transposed<R, C>()        thread covers (rows ty, ty + block_y, ...; cols likewise),
//                                   the tile of block (bx, by) or, transposed, of (by, bx)
//   block_leader()                  BlockIndex of this block, valid in its first thread only
//   warp_leader()                   WarpIndex of this warp, valid in its lane 0 only
//
// Coordinates (plain numbers, they grant nothing): thread_idx(), block_idx(), block_dim(),
// grid_dim(), thread_in_block(), block_size(), lane_id(), warp_id() (in the block),
// warps_per_block(), grid_threads().
#pragma once

#include "ctile/simt/config.h"

namespace ctile::simt {

struct Dim3 {
  u32 x, y, z;
};

namespace detail {

#if CTILE_SIMT_DEVICE
// The block extents are the contract's (the source defines them).
inline constexpr u32 kBX = CTILE_SIMT_BLOCK_X, kBY = CTILE_SIMT_BLOCK_Y, kBZ = CTILE_SIMT_BLOCK_Z;
// Every launch runs blocks of exactly that shape (prepare() launches nothing else; .reqntid says so
// to ptxas), so each coordinate is below its extent. The optimizer is told (NVVM does not take it
// from .reqntid): it then folds the wrap-around tests of the index spaces (tile_2d's column step,
// say) and unrolls their loops as it would a hand-written loop over threadIdx.
inline u32 tid_x() {
  if (kBX == 1) return 0u;
  const u32 t = threadIdx.x;
  __builtin_assume(t < kBX);
  return t;
}
inline u32 tid_y() {
  if (kBY == 1) return 0u;
  const u32 t = threadIdx.y;
  __builtin_assume(t < kBY);
  return t;
}
inline u32 tid_z() {
  if (kBZ == 1) return 0u;
  const u32 t = threadIdx.z;
  __builtin_assume(t < kBZ);
  return t;
}
// The module is compiled per grid rank (1: y = z = 1, 2: z = 1, 3): the missing axes fold to 0.
#if CTILE_SIMT_GRID_RANK >= 2
inline u32 bid_y() { return blockIdx.y; }
inline u32 grid_y() { return gridDim.y; }
#else
inline u32 bid_y() { return 0u; }
inline u32 grid_y() { return 1u; }
#endif
#if CTILE_SIMT_GRID_RANK >= 3
inline u32 bid_z() { return blockIdx.z; }
inline u32 grid_z() { return gridDim.z; }
#else
inline u32 bid_z() { return 0u; }
inline u32 grid_z() { return 1u; }
#endif
inline u32 bid_x() { return blockIdx.x; }
inline u32 grid_x() { return gridDim.x; }
inline u64 blocks_in_grid() { return (u64)gridDim.x * grid_y() * grid_z(); }
inline u32 bdim_x() { return kBX; }
inline u32 bdim_y() { return kBY; }
inline u32 bdim_z() { return kBZ; }
inline u32 in_block() { return tid_x() + kBX * (tid_y() + kBY * tid_z()); }
inline u64 block_linear() { return bid_x() + (u64)grid_x() * (bid_y() + (u64)grid_y() * bid_z()); }
#else
inline const ThreadState& st(const char* what) { return current(what); }
inline u32 tid_x() { return st("thread_idx()").thread.x; }
inline u32 tid_y() { return st("thread_idx()").thread.y; }
inline u32 tid_z() { return st("thread_idx()").thread.z; }
inline u32 bid_x() { return st("block_idx()").block.x; }
inline u32 bid_y() { return st("block_idx()").block.y; }
inline u32 bid_z() { return st("block_idx()").block.z; }
inline u32 grid_x() { return st("grid_dim()").grid_dim.x; }
inline u32 grid_y() { return st("grid_dim()").grid_dim.y; }
inline u64 blocks_in_grid() {
  const ThreadState& s = st("grid_dim()");
  return (u64)s.grid_dim.x * s.grid_dim.y * s.grid_dim.z;
}
inline u32 bdim_x() { return st("block_dim()").block_dim.x; }
inline u32 bdim_y() { return st("block_dim()").block_dim.y; }
inline u32 bdim_z() { return st("block_dim()").block_dim.z; }
inline u32 in_block() { return st("a SIMT index").in_block; }
inline u64 block_linear() { return st("a SIMT index").block_linear; }
#endif
inline u32 threads_per_block() { return bdim_x() * bdim_y() * bdim_z(); }

}  // namespace detail

inline Dim3 thread_idx() { return Dim3{detail::tid_x(), detail::tid_y(), detail::tid_z()}; }
inline Dim3 block_idx() { return Dim3{detail::bid_x(), detail::bid_y(), detail::bid_z()}; }
inline Dim3 block_dim() { return Dim3{detail::bdim_x(), detail::bdim_y(), detail::bdim_z()}; }
#if CTILE_SIMT_DEVICE
inline Dim3 grid_dim() { return Dim3{gridDim.x, detail::grid_y(), detail::grid_z()}; }
#else
inline Dim3 grid_dim() {
  const detail::ThreadState& s = detail::st("grid_dim()");
  return Dim3{s.grid_dim.x, s.grid_dim.y, s.grid_dim.z};
}
#endif
// The linear index of this thread in its block (x fastest), and the threads of a block.
inline u32 thread_in_block() { return detail::in_block(); }
inline u32 block_size() { return detail::threads_per_block(); }
inline u32 lane_id() { return detail::in_block() % kWarpSize; }
inline u32 warp_id() { return detail::in_block() / kWarpSize; }
inline u32 warps_per_block() { return (detail::threads_per_block() + kWarpSize - 1) / kWarpSize; }
// Threads in the whole grid.
inline i64 grid_threads() { return (i64)(detail::blocks_in_grid() * detail::threads_per_block()); }

// Tokens share this shape: a private constructor, no copies, no moves, no address.
#define CTILE_SIMT_TOKEN_RULES(Name)          \
  Name(const Name&) = delete;                 \
  Name& operator=(const Name&) = delete;      \
  Name(Name&&) = delete;                      \
  Name& operator=(Name&&) = delete;           \
  const Name* operator&() const = delete;

// This thread's element of a 1-D output: its linear index in the grid (x fastest, then y, z, then
// the blocks in the same order), or one of its grid-stride indices.
class ThreadIndex {
 public:
  CTILE_SIMT_TOKEN_RULES(ThreadIndex)
  i64 get() const { return v_; }

 private:
  friend struct detail::Access;
  explicit ThreadIndex(i64 v) : v_(v) {}
  i64 v_;
};

// This thread's four consecutive elements of a 1-D output, [4q, 4q + 4) for its linear index q
// (index_1d_vec4()): the index space of 16-byte vector stores (DisjointSpan<T, Vec4Index>, for
// 4-byte elements). The last group may stick out of the output; get_mut writes what is inside.
class Vec4Index {
 public:
  CTILE_SIMT_TOKEN_RULES(Vec4Index)
  i64 get() const { return q_; }          // q
  i64 first() const { return 4 * q_; }    // the first of its elements

 private:
  friend struct detail::Access;
  explicit Vec4Index(i64 q) : q_(q) {}
  i64 q_;
};

// This thread's element of a 2-D output: col = block x * block_dim.x + thread x, row = the same
// over y, with z folded into the rows (so it is unique in any launch shape).
class ThreadIndex2D {
 public:
  CTILE_SIMT_TOKEN_RULES(ThreadIndex2D)
  i64 row() const { return r_; }
  i64 col() const { return c_; }

 private:
  friend struct detail::Access;
  ThreadIndex2D(i64 r, i64 c) : r_(r), c_(c) {}
  i64 r_, c_;
};

// One element of this block's R x C tile that this thread covers (see tile_2d). The type carries
// the tile shape and its orientation, so tokens of different tilings never meet in one span.
template <int R, int C, bool Transposed>
class TileIndex {
  static_assert(R > 0 && C > 0, "tile extents must be positive");

 public:
  CTILE_SIMT_TOKEN_RULES(TileIndex)
  i64 row() const { return r_; }       // in the output
  i64 col() const { return c_; }
  u32 tile_row() const { return tr_; }  // in the tile: 0 .. R - 1
  u32 tile_col() const { return tc_; }

 private:
  friend struct detail::Access;
  TileIndex(i64 r, i64 c, u32 tr, u32 tc) : r_(r), c_(c), tr_(tr), tc_(tc) {}
  i64 r_, c_;
  u32 tr_, tc_;
};

// This block's element of a per-block output; valid only in the block's first thread.
class BlockIndex {
 public:
  CTILE_SIMT_TOKEN_RULES(BlockIndex)
  i64 get() const { return v_; }
  bool valid() const { return valid_; }

 private:
  friend struct detail::Access;
  BlockIndex(i64 v, bool valid) : v_(v), valid_(valid) {}
  i64 v_;
  bool valid_;
};

// This warp's element of a per-warp output (warps numbered across the grid); valid only in lane 0.
class WarpIndex {
 public:
  CTILE_SIMT_TOKEN_RULES(WarpIndex)
  i64 get() const { return v_; }
  bool valid() const { return valid_; }

 private:
  friend struct detail::Access;
  WarpIndex(i64 v, bool valid) : v_(v), valid_(valid) {}
  i64 v_;
  bool valid_;
};

#undef CTILE_SIMT_TOKEN_RULES

// The ranges of grid_stride() and tile_2d().
class GridStride {
 public:
  struct End {
    i64 n;
  };
  struct Iter {
    i64 i, step;
    ThreadIndex operator*() const;
    Iter& operator++() {
      i += step;
      return *this;
    }
    bool operator!=(const End& e) const { return i < e.n; }
  };
  Iter begin() const { return Iter{start_, step_}; }
  End end() const { return End{n_}; }

 private:
  friend struct detail::Access;
  GridStride(i64 start, i64 step, i64 n) : start_(start), step_(step), n_(n) {}
  i64 start_, step_, n_;
};

template <int R, int C, bool Transposed>
class TileRange {
 public:
  struct End {};
  struct Iter {
    i64 r0, c0;     // the tile's origin
    u32 r, c;       // position in the tile
    u32 c_first, dr, dc;
    TileIndex<R, C, Transposed> operator*() const;
    Iter& operator++() {
#if CTILE_SIMT_DEVICE
      // A block at least C threads wide covers one column per tile row: the next element is a row
      // down. The general step below gives the same, but the optimizer does not see it through the
      // loop (the column is reset each time), so it would neither unroll nor strength-reduce.
      if constexpr (detail::kBX >= static_cast<u32>(C)) {
        r += dr;
        return *this;
      }
#endif
      c += dc;
      if (c >= (u32)C) {
        c = c_first;
        r += dr;
      }
      return *this;
    }
    bool operator!=(const End&) const { return r < (u32)R && c_first < (u32)C; }
  };
  Iter begin() const { return it_; }
  End end() const { return End{}; }

 private:
  friend struct detail::Access;
  explicit TileRange(Iter it) : it_(it) {}
  Iter it_;
};

namespace detail {

struct Access {
  static ThreadIndex thread_index(i64 v) { return ThreadIndex(v); }
  static Vec4Index vec4_index(i64 q) { return Vec4Index(q); }
  static ThreadIndex2D thread_index_2d(i64 r, i64 c) { return ThreadIndex2D(r, c); }
  template <int R, int C, bool T>
  static TileIndex<R, C, T> tile_index(i64 r, i64 c, u32 tr, u32 tc) {
    return TileIndex<R, C, T>(r, c, tr, tc);
  }
  static BlockIndex block_index(i64 v, bool valid) { return BlockIndex(v, valid); }
  static WarpIndex warp_index(i64 v, bool valid) { return WarpIndex(v, valid); }
  static GridStride grid_stride(i64 start, i64 step, i64 n) { return GridStride(start, step, n); }
  template <int R, int C, bool T>
  static TileRange<R, C, T> tile_range(typename TileRange<R, C, T>::Iter it) {
    return TileRange<R, C, T>(it);
  }
  // The private constructors of Maybe / MaybeMut and of the parameter types (span.h, ...).
  template <class M, class... A>
  static M make(A... a) {
    return M(a...);
  }
  template <class P, class D>
  static P param(const D& d) {
    return P(d);
  }
};

inline i64 linear_thread() { return (i64)(block_linear() * threads_per_block() + in_block()); }

}  // namespace detail

inline ThreadIndex GridStride::Iter::operator*() const { return detail::Access::thread_index(i); }

template <int R, int C, bool T>
TileIndex<R, C, T> TileRange<R, C, T>::Iter::operator*() const {
  return detail::Access::tile_index<R, C, T>(r0 + r, c0 + c, r, c);
}

inline ThreadIndex index_1d() { return detail::Access::thread_index(detail::linear_thread()); }
// The same thread's four elements [4q, 4q + 4), q = its linear index: launch a quarter of the
// threads (rounded up) and let each move 16 bytes at once.
inline Vec4Index index_1d_vec4() { return detail::Access::vec4_index(detail::linear_thread()); }

// The indices i, i + T, i + 2T, ... below n, where i is index_1d() and T the threads of the grid:
// for (auto i : grid_stride(n)) out.get_mut(i).set(...);
inline GridStride grid_stride(i64 n) {
  return detail::Access::grid_stride(detail::linear_thread(), grid_threads(), n);
}

inline ThreadIndex2D index_2d() {
  const i64 col = (i64)detail::bid_x() * detail::bdim_x() + detail::tid_x();
  const i64 rows_per_z = (i64)detail::grid_y() * detail::bdim_y();
  const i64 z = (i64)detail::bid_z() * detail::bdim_z() + detail::tid_z();
  const i64 row = z * rows_per_z + (i64)detail::bid_y() * detail::bdim_y() + detail::tid_y();
  return detail::Access::thread_index_2d(row, col);
}

namespace detail {
template <int R, int C, bool T>
TileRange<R, C, T> tile_range() {
  // Tiles are numbered by (block row, block col) = (z * grid_y + y, x); transposed swaps them.
  const i64 brow = (i64)bid_z() * grid_y() + bid_y(), bcol = bid_x();
  typename TileRange<R, C, T>::Iter it;
  it.r0 = (T ? bcol : brow) * R;
  it.c0 = (T ? brow : bcol) * C;
  it.r = tid_y() + bdim_y() * tid_z();
  it.c = tid_x();
  it.c_first = it.c;
  it.dr = bdim_y() * bdim_z();
  it.dc = bdim_x();
  return Access::tile_range<R, C, T>(it);
}
}  // namespace detail

// The elements of this block's R x C tile that this thread covers: rows ty, ty + block_dim.y, ...
// and cols tx, tx + block_dim.x, ... below R and C (z folds into the rows). Block (bx, by) covers
// the tile at (by * R, bx * C).
template <int R, int C>
TileRange<R, C, false> tile_2d() {
  return detail::tile_range<R, C, false>();
}
// The same positions in the tile at (bx * R, by * C): the output of a transpose whose block
// (bx, by) read the input tile at (by * R, bx * C).
template <int R, int C>
TileRange<R, C, true> tile_2d_transposed() {
  return detail::tile_range<R, C, true>();
}

inline BlockIndex block_leader() {
  return detail::Access::block_index((i64)detail::block_linear(), detail::in_block() == 0);
}
inline WarpIndex warp_leader() {
  const i64 w = (i64)detail::block_linear() * warps_per_block() + warp_id();
  return detail::Access::warp_index(w, lane_id() == 0);
}

}  // namespace ctile::simt
