// The CPU reference interpreter: per-block environment, tile storage, and the op implementations
// (each works on whole tiles; element loops are templates dispatched once per op on the dtype).
// Private to backend/cpu.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "ctile/backend/backend.hpp"
#include "ctile/core/dtype.hpp"
#include "ctile/core/error.hpp"
#include "ctile/core/shape.hpp"
#include "ctile/ir/ir.hpp"

namespace ctile::backend::cpu {

class RaceChecker;

// Raw element storage; keeps its capacity when reused (loop iterations, later blocks).
class Buffer {
 public:
  std::byte* ensure(std::size_t bytes) {
    if (bytes > cap_) {
      const std::size_t words = (bytes + 7) / 8;
      mem_ = std::make_unique<std::uint64_t[]>(words);
      cap_ = words * 8;
    }
    return data();
  }
  std::byte* data() const { return reinterpret_cast<std::byte*>(mem_.get()); }
  void swap(Buffer& o) noexcept {
    std::swap(mem_, o.mem_);
    std::swap(cap_, o.cap_);
  }

 private:
  std::unique_ptr<std::uint64_t[]> mem_;
  std::size_t cap_ = 0;
};

// A tile value: n elements of `dtype` in row-major order; `shape` points into Kernel::values.
struct Tile {
  DType dtype = DType::f32;
  const Shape* shape = nullptr;
  std::int64_t n = 0;
  Buffer buf;

  std::byte* bytes() const { return buf.data(); }
  template <class T>
  T* as() const { return reinterpret_cast<T*>(buf.data()); }
  std::size_t size_bytes() const { return static_cast<std::size_t>(n) * static_cast<std::size_t>(dtype_size(dtype)); }
  int rank() const { return static_cast<int>(shape->size()); }
};

// One environment entry: a tile, or (for Tensor/Partition/Piece values) the parameter it views.
struct Slot {
  Tile tile;
  int param = -1;

  void assign(const Slot& o) {
    param = o.param;
    tile.dtype = o.tile.dtype;
    tile.shape = o.tile.shape;
    tile.n = o.tile.n;
    if (o.tile.shape) std::memcpy(tile.buf.ensure(o.tile.size_bytes()), o.tile.bytes(), o.tile.size_bytes());
  }
  void swap(Slot& o) noexcept {
    std::swap(param, o.param);
    std::swap(tile.dtype, o.tile.dtype);
    std::swap(tile.shape, o.tile.shape);
    std::swap(tile.n, o.tile.n);
    tile.buf.swap(o.tile.buf);
  }
};

// Sets up `t` as a tile of type `ty` (a Tile type) with storage for its elements (contents undefined).
inline void prepare(Tile& t, const ir::Type& ty) {
  t.dtype = ty.dtype;
  t.shape = &ty.shape;
  t.n = numel(ty.shape);
  t.buf.ensure(t.size_bytes());
}

// A tensor argument as the interpreter sees it.
struct TensorView {
  std::byte* data = nullptr;
  DType dtype = DType::f32;
  int rank = 0;
  std::array<std::int64_t, kMaxRank> ext{};
  std::array<std::int64_t, kMaxRank> stride{};
  int param = -1;  // index into Kernel::params
  ir::Access access = ir::Access::Read;
};

// Everything shared by the blocks of one launch (read-only while blocks run, except the checker).
struct Launch {
  const ir::Kernel* kernel = nullptr;
  std::vector<TensorView> views;  // per param (unused for scalar params)
  std::span<const ArgValue> args;
  int grid_rank = 1;
  std::array<std::int64_t, kMaxRank> grid{};
  RaceChecker* race = nullptr;  // null when race checking is off
};

// Coordinates of the block being run.
struct BlockCoord {
  std::int64_t linear = 0;
  std::array<std::int64_t, kMaxRank> c{};
};

// Runs tile blocks one after another with one reusable environment.
class BlockInterp {
 public:
  explicit BlockInterp(const Launch& l);
  void run(std::int64_t linear_block);

 private:
  const ir::Op& exec(const ir::Region& r);  // runs r's ops; returns its Yield
  void exec_op(const ir::Op& op);
  void exec_for(const ir::Op& op);
  void exec_while(const ir::Op& op);
  void exec_combine(const ir::Op& op);  // ct.reduce_with, ct.scan_with
  void copy_in(const std::vector<ir::ValueId>& dst, std::size_t first, std::vector<Slot>& src);
  std::int64_t i64(ir::ValueId v) const { return env_[static_cast<std::size_t>(v)].tile.as<std::int64_t>()[0]; }
  Slot& slot(ir::ValueId v) { return env_[static_cast<std::size_t>(v)]; }
  const TensorView& view(ir::ValueId v) const;

  const Launch& L_;
  const ir::Kernel& k_;
  std::vector<Slot> env_;
  BlockCoord blk_;
};

// ---- op implementations (ops_*.cpp) ----
// element-wise (ops_elementwise.cpp)
void op_bitcast(const Tile& x, Tile& out);
void op_random(ir::RandomDist d, const Tile& seed, const Tile& offsets, Tile& out);
void op_unary(ir::UnaryFn fn, const Tile& x, Tile& out);
// propagate_nan: float min/max give NaN when either operand is NaN (else the other operand).
void op_binary(ir::BinaryFn fn, const Tile& a, const Tile& b, Tile& out, bool propagate_nan = false);
void op_fma(const Tile& a, const Tile& b, const Tile& c, Tile& out);
void op_cmp(ir::CmpPred p, const Tile& a, const Tile& b, Tile& out);
void op_select(const Tile& c, const Tile& a, const Tile& b, Tile& out);
void op_convert(const Tile& x, Tile& out);
// construction and shapes (ops_shape.cpp)
void op_constant(const ir::Scalar& v, Tile& out);
void op_iota(Tile& out, std::int64_t floor = 1);  // element i: i - i % floor (floor 0 or 1: i)
void op_broadcast(const Tile& x, Tile& out);
void op_reshape(const Tile& x, Tile& out);
void op_permute(const std::vector<int>& perm, const Tile& x, Tile& out);
void op_cat(int axis, const Tile& a, const Tile& b, Tile& out);
void op_extract(const Shape& offsets, const Tile& x, Tile& out);
// reductions, scans, mma (ops_reduce.cpp)
void op_reduce(ir::ReduceKind kind, int axis, const Tile& x, Tile& out, bool propagate_nan = false);
void op_scan(ir::ReduceKind kind, int axis, bool exclusive, bool reverse, const Tile& x, Tile& out);
void op_mma(const Tile& a, const Tile& b, const Tile& acc, Tile& out);
// memory (ops_memory.cpp). `tile_index` addresses a tile of shape out.shape (Load/LoadPiece).
void op_load(const TensorView& t, const std::int64_t* tile_index, const ir::Scalar& pad, Tile& out);
void op_store_piece(const TensorView& t, const std::int64_t* tile_index, const Tile& value);
// LoadWindow: element 0 of the tile at element coordinates `origin` (any values; outside: pad).
void op_load_window(const TensorView& t, const std::int64_t* origin, const ir::Scalar& pad, Tile& out);
// StoreWindow: element 0 at piece-relative `offsets` in the piece of shape `piece` at `tile_index`;
// only elements inside both the piece and the tensor are written.
void op_store_window(const TensorView& t, const Shape& piece, const std::int64_t* tile_index, const std::int64_t* offsets,
                     const Tile& value);
void op_gather(const TensorView& t, const std::vector<const Tile*>& idx, const ir::Scalar& pad, Tile& out);
void op_scatter_piece(const TensorView& t, const Shape& tile, const std::int64_t* tile_index,
                      const std::vector<const Tile*>& idx, const Tile& value);
// A store window into a whole unchecked tensor: element e goes to offsets + e, dropped outside the
// tensor; recorded for the race checker like an unchecked scatter.
void op_store_window_unchecked(const TensorView& t, const std::int64_t* offsets, const Tile& value, RaceChecker* race,
                               std::int64_t block);
void op_scatter_unchecked(const TensorView& t, const std::vector<const Tile*>& idx, const Tile& value,
                          RaceChecker* race, std::int64_t block);
void op_atomic_rmw(ir::AtomicKind kind, const TensorView& t, const std::vector<const Tile*>& idx,
                   const Tile& value, Tile& old);
void op_atomic_cas(const TensorView& t, const std::vector<const Tile*>& idx, const Tile& expected,
                   const Tile& desired, Tile& old);

}  // namespace ctile::backend::cpu
