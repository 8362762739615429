// Kernel parameter types. Their types carry the access discipline:
//   Mut<T, N>           this tile block's exclusive piece of a partitioned output: load, store (no
//                       index: a block cannot address another block's piece), scatter inside the piece.
//   Ref<T, N>           a shared, read-only tensor: shape, partition views, gather. It has no store
//                       member at all, so writing to an input does not compile.
//   Atomic<T, N>        a whole tensor every block may update, only through atomic operations.
//   UncheckedMut<T, N>  a whole tensor every block may store anywhere: the unsafe opt-out, each
//                       store tagged `ctile::unchecked`; the CPU race checker verifies it.
//   Scalar<T>           a run-time scalar.            Const<T>  a trace-time constant.
// Optional static tile dims on Mut (Mut<float, 2, 64, 64>) are checked against the partition at launch.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <string>
#include <tuple>

#include "ctile/core/unchecked.hpp"
#include "ctile/frontend/tile.hpp"

namespace ctile {

namespace detail {
// What the launcher knows about one kernel parameter for one specialisation. Every field is part
// of the kernel cache key; `facts` (Piece, Read, Atomic, Unchecked) are computed from the tensor
// argument (detail::tensor_facts, runtime/launch.hpp) and end up in ir::Param::facts.
struct ParamSpec {
  enum class Kind : std::uint8_t { Piece, Read, Atomic, Unchecked, Scalar, Const };
  Kind kind = Kind::Read;
  DType dtype = DType::f32;
  int rank = 0;
  Shape tile_shape;          // Piece
  ir::Scalar const_value;    // Const
  ir::TensorFacts facts;     // tensor-like kinds: alignment, contiguity, divisibility by 16

  ParamSpec() = default;
  ParamSpec(Kind k, DType d, int r, Shape tile = {}, ir::Scalar cv = {}, ir::TensorFacts f = {})
      : kind(k), dtype(d), rank(r), tile_shape(std::move(tile)), const_value(cv), facts(f) {}

  // Every field, with a floating-point Const value as its bit pattern: compared as doubles, a NaN
  // would equal nothing (and break the strict weak ordering of the kernel cache's map), and -0.0
  // would share +0.0's kernel although 1 / c differs.
  [[nodiscard]] auto key() const {
    return std::tuple<Kind, DType, int, const Shape&, bool, std::int64_t, std::uint64_t, const ir::TensorFacts&>(
        kind, dtype, rank, tile_shape, const_value.is_float, const_value.i, std::bit_cast<std::uint64_t>(const_value.f),
        facts);
  }
  friend bool operator==(const ParamSpec& a, const ParamSpec& b) { return a.key() == b.key(); }
  friend bool operator<(const ParamSpec& a, const ParamSpec& b) { return a.key() < b.key(); }
};

template <std::size_t N>
std::array<std::int64_t, N> to_array(const Shape& s) {
  std::array<std::int64_t, N> a{};
  for (std::size_t i = 0; i < N; ++i) a[i] = s[i];
  return a;
}

}  // namespace detail

// A read-only tensor cut into tiles of a trace-time shape; tiles are addressed by tile indices.
template <Element T, int N>
class PartitionView {
 public:
  PartitionView(ir::ValueId v, Shape tile) : v_(v), tile_(std::move(tile)) {}

  // The tile at tile index `idx`; elements past the tensor's end read `pad`.
  Tile<T> load(const std::array<IndexArg, N>& idx, T pad = T{},
               std::source_location l = std::source_location::current()) const {
    return Tile<T>(detail::emit_load(v_, detail::resolve_indices(idx, l), detail::to_scalar(pad), l), l);
  }
  // Number of tiles along `axis` (ceil(extent / tile)).
  Index count(int axis, std::source_location l = std::source_location::current()) const {
    return Index(detail::emit_partition_count(v_, axis, l), l);
  }
  std::array<std::int64_t, N> tile_shape() const { return detail::to_array<N>(tile_); }
  ir::ValueId value() const { return v_; }  // doc: internal (the IR value)

 private:
  ir::ValueId v_;
  Shape tile_;
};

// Shared by the read-capable parameter kinds.
template <Element T, int N>
class TensorParamBase {
 public:
  static_assert(N >= 1 && N <= kMaxRank, "ctile: tensor parameters have rank 1..6");
  explicit TensorParamBase(ir::ValueId v) : v_(v) {}
  ir::ValueId value() const { return v_; }  // doc: internal (the IR value)

  // Run-time extent along `axis`, and all extents.
  Index extent(int axis, std::source_location l = std::source_location::current()) const {
    return Index(detail::emit_dim(v_, axis, l), l);
  }
  std::array<Index, N> shape(std::source_location l = std::source_location::current()) const {
    return make_shape(l, std::make_index_sequence<N>{});
  }
  // Element-wise gather: result[e] = tensor[idx_0[e], ..., idx_{N-1}[e]], `pad` when out of bounds.
  Tile<T> gather(const std::array<IndexArg, N>& idx, T pad = T{},
                 std::source_location l = std::source_location::current()) const {
    return Tile<T>(detail::emit_gather(v_, detail::resolve_indices(idx, l), detail::to_scalar(pad), l), l);
  }
  Tile<T> gather(const IndexArg& idx, T pad = T{}, std::source_location l = std::source_location::current()) const
    requires(N == 1)
  {
    return gather(std::array<IndexArg, 1>{idx}, pad, l);
  }

 private:
  template <std::size_t... I>
  std::array<Index, N> make_shape(const std::source_location& l, std::index_sequence<I...>) const {
    return {Index(detail::emit_dim(v_, static_cast<int>(I), l), l)...};
  }
  ir::ValueId v_;
};

// A shared, read-only tensor. There is deliberately no store, scatter or atomic member.
template <Element T, int N>
class Ref : public TensorParamBase<T, N> {
 public:
  using element_type = T;
  static constexpr int rank = N;
  using TensorParamBase<T, N>::TensorParamBase;

  // A view of this tensor cut into tiles of `tile` (powers of two, one extent per axis).
  PartitionView<T, N> tiles(const Shape& tile, std::source_location l = std::source_location::current()) const {
    return PartitionView<T, N>(detail::emit_make_partition(this->value(), tile, l), tile);
  }
  // The tile of `shape` whose element 0 is tensor[origin]: element e reads tensor[origin + e] at
  // any element coordinates (not only tile multiples); elements outside the tensor read `pad`.
  Tile<T> load_window(const std::array<IndexArg, N>& origin, const Shape& shape, T pad = T{},
                      std::source_location l = std::source_location::current()) const {
    return Tile<T>(detail::emit_load_window(this->value(), detail::resolve_indices(origin, l), shape, detail::to_scalar(pad), l),
                   l);
  }
};

// This tile block's exclusive piece of a partitioned output.
template <Element T, int N, std::int64_t... TileDims>
class Mut {
 public:
  static_assert(N >= 1 && N <= kMaxRank, "ctile: Mut parameters have rank 1..6");
  static_assert(sizeof...(TileDims) == 0 || sizeof...(TileDims) == static_cast<std::size_t>(N),
                "ctile: Mut<T, N, dims...> names either no tile extents or exactly N of them");
  using element_type = T;
  static constexpr int rank = N;

  Mut(ir::ValueId v, Shape tile) : v_(v), tile_(std::move(tile)) {}

  // The piece's contents; elements past the tensor's end read `pad`.
  Tile<T> load(T pad = T{}, std::source_location l = std::source_location::current()) const {
    return Tile<T>(detail::emit_load_piece(v_, detail::to_scalar(pad), l), l);
  }
  // Stores a tile of the piece's shape (a smaller tile broadcasts); elements past the end are masked.
  void store(const Tile<T>& t, std::source_location l = std::source_location::current()) const {
    detail::emit_store_piece(v_, t.value(), l);
  }
  template <detail::LiteralFor<T> U>
  void store(U v, std::source_location l = std::source_location::current()) const {
    store(Tile<T>::full({}, static_cast<T>(v), l), l);
  }
  // Stores tile `t` (any shape of the piece's rank) with its element 0 at piece-relative element
  // offsets `offset`: element e goes to piece element offset + e; elements outside the piece or
  // the tensor are not written. Writes the piece a part at a time (a row chunk, a halo-free core).
  void store_window(const std::array<IndexArg, N>& offset, const Tile<T>& t,
                    std::source_location l = std::source_location::current()) const {
    detail::emit_store_window(v_, detail::resolve_indices(offset, l), t.value(), l);
  }
  // Stores `v[e]` at piece-relative coordinates idx[.][e]; coordinates outside the piece are dropped.
  // `v` may be a literal (it broadcasts to the indices' shape).
  template <detail::OperandFor<T> V>
  void scatter(const std::array<IndexArg, N>& idx, const V& v,
               std::source_location l = std::source_location::current()) const {
    const std::vector<ir::ValueId> at = detail::resolve_indices(idx, l);
    const Tile<T> tv = detail::as_tile<T>(v, l);
    detail::emit_scatter_piece(v_, at, tv.value(), l);
  }

  std::array<std::int64_t, N> tile_shape() const { return detail::to_array<N>(tile_); }
  // The piece's tile coordinates (this block's id along each grid axis).
  std::array<Index, N> tile_index(std::source_location l = std::source_location::current()) const {
    return make_index(l, std::make_index_sequence<N>{});
  }
  Index extent(int axis, std::source_location l = std::source_location::current()) const {
    return Index(detail::emit_dim(v_, axis, l), l);
  }
  // Number of pieces along `axis` (the grid extent).
  Index count(int axis, std::source_location l = std::source_location::current()) const {
    return Index(detail::emit_partition_count(v_, axis, l), l);
  }
  ir::ValueId value() const { return v_; }  // doc: internal (the IR value)

 private:
  template <std::size_t... I>
  std::array<Index, N> make_index(const std::source_location& l, std::index_sequence<I...>) const {
    return {Index(detail::emit_block_id(static_cast<int>(I), l), l)...};
  }
  ir::ValueId v_;
  Shape tile_;
};

// A whole tensor updated by every tile block through atomics only.
template <Element T, int N>
class Atomic : public TensorParamBase<T, N> {
 public:
  using element_type = T;
  static constexpr int rank = N;
  using TensorParamBase<T, N>::TensorParamBase;

  // The value operands may be literals (they broadcast to the indices' shape): counts.add({i}, 1).
#define CTILE_ATOMIC_FN(NAME, KIND)                                                                    \
  template <detail::OperandFor<T> V>                                                                   \
  Tile<T> NAME(const std::array<IndexArg, N>& idx, const V& v,                                         \
               std::source_location l = std::source_location::current()) const {                       \
    const std::vector<ir::ValueId> at = detail::resolve_indices(idx, l);                               \
    const Tile<T> tv = detail::as_tile<T>(v, l);                                                       \
    return Tile<T>(detail::emit_atomic_rmw(ir::AtomicKind::KIND, this->value(), at, tv.value(), l), l); \
  }
  CTILE_ATOMIC_FN(add, Add)
  CTILE_ATOMIC_FN(max, Max)
  CTILE_ATOMIC_FN(min, Min)
  CTILE_ATOMIC_FN(exchange, Exch)
#undef CTILE_ATOMIC_FN

  template <detail::OperandFor<T> E, detail::OperandFor<T> D>
  Tile<T> compare_exchange(const std::array<IndexArg, N>& idx, const E& expected, const D& desired,
                           std::source_location l = std::source_location::current()) const {
    const std::vector<ir::ValueId> at = detail::resolve_indices(idx, l);
    const Tile<T> e = detail::as_tile<T>(expected, l);  // in order: argument order is unspecified
    const Tile<T> d = detail::as_tile<T>(desired, l);
    return Tile<T>(detail::emit_atomic_cas(this->value(), at, e.value(), d.value(), l), l);
  }
};

// The unsafe opt-out: a whole tensor any tile block may store anywhere. Every store is tagged.
template <Element T, int N>
class UncheckedMut : public TensorParamBase<T, N> {
 public:
  using element_type = T;
  static constexpr int rank = N;
  using TensorParamBase<T, N>::TensorParamBase;

  void scatter(unchecked_t, const std::array<IndexArg, N>& idx, const Tile<T>& v,
               std::source_location l = std::source_location::current()) const {
    detail::emit_scatter_unchecked(this->value(), detail::resolve_indices(idx, l), v.value(), l);
  }
  void scatter(unchecked_t u, const IndexArg& idx, const Tile<T>& v,
               std::source_location l = std::source_location::current()) const
    requires(N == 1)
  {
    scatter(u, std::array<IndexArg, 1>{idx}, v, l);
  }
  // One element at an arbitrary index.
  void store_at(unchecked_t, const std::array<IndexArg, N>& idx, const Tile<T>& v,
                std::source_location l = std::source_location::current()) const {
    detail::emit_scatter_unchecked(this->value(), detail::resolve_indices(idx, l), v.value(), l);
  }
  // The same with a literal value (it broadcasts to the indices' shape).
  template <detail::LiteralFor<T> U>
  void scatter(unchecked_t u, const std::array<IndexArg, N>& idx, U v,
               std::source_location l = std::source_location::current()) const {
    scatter(u, idx, detail::as_tile<T>(v, l), l);
  }
  template <detail::LiteralFor<T> U>
  void scatter(unchecked_t u, const IndexArg& idx, U v, std::source_location l = std::source_location::current()) const
    requires(N == 1)
  {
    scatter(u, std::array<IndexArg, 1>{idx}, detail::as_tile<T>(v, l), l);
  }
  template <detail::LiteralFor<T> U>
  void store_at(unchecked_t u, const std::array<IndexArg, N>& idx, U v,
                std::source_location l = std::source_location::current()) const {
    store_at(u, idx, detail::as_tile<T>(v, l), l);
  }
};

// A trace-time constant parameter: part of the specialisation key, folded into the IR.
template <Element T>
class Const {
 public:
  explicit Const(T v) : v_(v) {}
  T value() const { return v_; }
  operator T() const { return v_; }  // NOLINT: reads like the value it is

 private:
  T v_;
};

// Loads x's tile at the same tile index and of the same tile shape as the output piece `like`.
template <Element T, int N, Element U, std::int64_t... D>
Tile<T> load_like(const Ref<T, N>& x, const Mut<U, N, D...>& like, T pad = T{},
                  std::source_location l = std::source_location::current()) {
  const auto ts = like.tile_shape();
  auto view = x.tiles(Shape(ts.begin(), ts.end()), l);
  std::array<IndexArg, N> idx = [&]<std::size_t... I>(std::index_sequence<I...>) {
    return std::array<IndexArg, N>{IndexArg(block_id(static_cast<int>(I), l))...};
  }(std::make_index_sequence<N>{});
  return view.load(idx, pad, l);
}

}  // namespace ctile
