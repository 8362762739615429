// Tile<T>: a traced n-d value of element type T (a scalar is a rank-0 tile). The element type is a
// template parameter, so mixing element types without an explicit `.to<U>()` does not compile;
// shapes are trace-time values checked while tracing. Literals of the same kind (integers with
// integer tiles, floating-point numbers with float tiles) combine with tiles directly, on either
// side, in every operator and every element-wise function (`v * 2.0f`, `2.0f < v`,
// `maximum(v, 0.0f)`, `fma(a, 2.0f, 1.0f)`, `where(c, 0.0f, v)`): the literal becomes a scalar
// tile of the tile's element type. The full list is docs/language.md.
#pragma once

#include <array>
#include <concepts>
#include <initializer_list>
#include <source_location>
#include <type_traits>
#include <vector>

#include "ctile/core/dtype.hpp"
#include "ctile/frontend/emit.hpp"

namespace ctile {

namespace detail {

// A C++ literal that may combine with a Tile<T>: same kind (float with float, integer with integer).
template <class U, class T>
concept LiteralFor = std::is_arithmetic_v<U> && !std::is_same_v<U, bool> &&
                     ((is_float_element<T> && std::is_floating_point_v<U>) || (is_int_element<T> && std::is_integral_v<U>));

template <class U>
ir::Scalar to_scalar(U v) {
  if constexpr (is_narrow_float_element<U>) return ir::Scalar::of_float(static_cast<float>(v));
  else if constexpr (std::is_floating_point_v<U>) return ir::Scalar::of_float(static_cast<double>(v));
  else if constexpr (std::is_unsigned_v<U>) return ir::Scalar::of_int(static_cast<std::int64_t>(static_cast<std::uint64_t>(v)));
  else return ir::Scalar::of_int(static_cast<std::int64_t>(v));
}
}  // namespace detail

template <Element T>
class Tile : public detail::TileBase {
 public:
  using element_type = T;
  static constexpr DType dtype = dtype_of<T>;

  Tile(const Tile&) = default;
  Tile& operator=(const Tile&) = default;
  ~Tile() = default;

  // Wraps an IR value (internal; the value's dtype must be T).
  Tile(ir::ValueId v, const SourceLoc& where) : TileBase(v, where) {}

  Shape shape() const { return detail::shape_of(value()); }
  int rank() const { return static_cast<int>(shape().size()); }
  bool is_scalar() const { return shape().empty(); }

  // Creation.
  static Tile full(const Shape& shape, T v, std::source_location l = std::source_location::current()) {
    return Tile(detail::emit_constant(detail::to_scalar(v), dtype, shape, l), l);
  }
  static Tile zeros(const Shape& shape, std::source_location l = std::source_location::current()) {
    return full(shape, T{}, l);
  }
  static Tile scalar(T v, std::source_location l = std::source_location::current()) { return full({}, v, l); }

  // Explicit conversion of the element type.
  template <Element U>
  Tile<U> to(std::source_location l = std::source_location::current()) const {
    return Tile<U>(detail::emit_convert(value(), dtype_of<U>, l), l);
  }

  Tile reshape(const Shape& s, std::source_location l = std::source_location::current()) const {
    return Tile(detail::emit_reshape(value(), s, l), l);
  }
  Tile broadcast_to(const Shape& s, std::source_location l = std::source_location::current()) const {
    return Tile(detail::emit_broadcast(value(), s, l), l);
  }

  // ---- element-wise arithmetic (hidden friends: found by ADL, accept the located conversion) ----
#define CTILE_TILE_BINOP(OP, FN)                                                                        \
  friend Tile operator OP(detail::Located<Tile> a, const Tile& b) {                                     \
    return Tile(detail::emit_binary(ir::BinaryFn::FN, a.x.value(), b.value(), a.loc), a.loc);          \
  }                                                                                                     \
  template <detail::LiteralFor<T> U>                                                                    \
  friend Tile operator OP(detail::Located<Tile> a, U b) {                                               \
    return Tile(detail::emit_binary_scalar(ir::BinaryFn::FN, a.x.value(), detail::to_scalar(b), false, a.loc), a.loc); \
  }                                                                                                     \
  template <detail::LiteralFor<T> U>                                                                    \
  friend Tile operator OP(U a, detail::Located<Tile> b) {                                               \
    return Tile(detail::emit_binary_scalar(ir::BinaryFn::FN, b.x.value(), detail::to_scalar(a), true, b.loc), b.loc); \
  }                                                                                                     \
  template <class R>                                                                                    \
  Tile& operator OP##=(const R & r) {                                                                   \
    *this = *this OP r;                                                                                 \
    return *this;                                                                                       \
  }
  CTILE_TILE_BINOP(+, Add)
  CTILE_TILE_BINOP(-, Sub)
  CTILE_TILE_BINOP(*, Mul)
  CTILE_TILE_BINOP(/, Div)
  CTILE_TILE_BINOP(%, Rem)
#undef CTILE_TILE_BINOP

#define CTILE_TILE_BITOP(OP, FN)                                                                        \
  friend Tile operator OP(detail::Located<Tile> a, const Tile& b)                                       \
    requires(!is_float_element<T>)                                                                 \
  {                                                                                                     \
    return Tile(detail::emit_binary(ir::BinaryFn::FN, a.x.value(), b.value(), a.loc), a.loc);          \
  }                                                                                                     \
  template <detail::LiteralFor<T> U>                                                                    \
  friend Tile operator OP(detail::Located<Tile> a, U b) {                                               \
    return Tile(detail::emit_binary_scalar(ir::BinaryFn::FN, a.x.value(), detail::to_scalar(b), false, a.loc), a.loc); \
  }                                                                                                     \
  template <detail::LiteralFor<T> U>                                                                    \
  friend Tile operator OP(U a, detail::Located<Tile> b) {                                               \
    return Tile(detail::emit_binary_scalar(ir::BinaryFn::FN, b.x.value(), detail::to_scalar(a), true, b.loc), b.loc); \
  }                                                                                                     \
  template <class R>                                                                                    \
  Tile& operator OP##=(const R & r) {                                                                   \
    *this = *this OP r;                                                                                 \
    return *this;                                                                                       \
  }
  CTILE_TILE_BITOP(&, And)
  CTILE_TILE_BITOP(|, Or)
  CTILE_TILE_BITOP(^, Xor)
  CTILE_TILE_BITOP(<<, Shl)
  CTILE_TILE_BITOP(>>, Shr)
#undef CTILE_TILE_BITOP

  friend Tile operator-(detail::Located<Tile> a) {
    return Tile(detail::emit_unary(ir::UnaryFn::Neg, a.x.value(), a.loc), a.loc);
  }
  friend Tile operator~(detail::Located<Tile> a)
    requires(!is_float_element<T>)
  {
    return Tile(detail::emit_unary(ir::UnaryFn::Not, a.x.value(), a.loc), a.loc);
  }

  // ---- comparisons give Tile<bool> ----
#define CTILE_TILE_CMP(OP, PRED)                                                                        \
  friend Tile<bool> operator OP(detail::Located<Tile> a, const Tile& b) {                               \
    return Tile<bool>(detail::emit_cmp(ir::CmpPred::PRED, a.x.value(), b.value(), a.loc), a.loc);      \
  }                                                                                                     \
  template <detail::LiteralFor<T> U>                                                                    \
  friend Tile<bool> operator OP(detail::Located<Tile> a, U b) {                                         \
    return Tile<bool>(detail::emit_cmp_scalar(ir::CmpPred::PRED, a.x.value(), detail::to_scalar(b), a.loc), a.loc); \
  }                                                                                                     \
  template <detail::LiteralFor<T> U>                                                                    \
  friend Tile<bool> operator OP(U a, detail::Located<Tile> b) {                                         \
    const ir::ValueId c = detail::emit_constant(detail::to_scalar(a), dtype, {}, b.loc);                \
    return Tile<bool>(detail::emit_cmp(ir::CmpPred::PRED, c, b.x.value(), b.loc), b.loc);              \
  }
  CTILE_TILE_CMP(==, Eq)
  CTILE_TILE_CMP(!=, Ne)
  CTILE_TILE_CMP(<, Lt)
  CTILE_TILE_CMP(<=, Le)
  CTILE_TILE_CMP(>, Gt)
  CTILE_TILE_CMP(>=, Ge)
#undef CTILE_TILE_CMP
};

// A run-time scalar kernel parameter (the value is given at launch); behaves as a rank-0 tile.
template <Element T>
class Scalar : public Tile<T> {
 public:
  using Tile<T>::Tile;
  Scalar(const Tile<T>& t) : Tile<T>(t) {}  // NOLINT: a scalar tile is a Scalar
};

// i64 scalars: block ids, extents, loop counters.
using Index = Tile<std::int64_t>;

namespace detail {
// An operand of a DSL function whose tiles have element type T: a Tile<T> (or a Scalar<T>
// parameter), or a literal of T's kind.
template <class X, class T>
concept OperandFor = std::derived_from<X, Tile<T>> || LiteralFor<X, T>;

// The operand as a tile: a literal becomes a rank-0 constant of T (it broadcasts like any tile).
template <Element T, class X>
Tile<T> as_tile(const X& x, const std::source_location& l) {
  if constexpr (std::derived_from<X, Tile<T>>) return x;
  else return Tile<T>(emit_constant(to_scalar(x), dtype_of<T>, {}, l), l);
}
}  // namespace detail

// An index argument: an integer scalar or tile (of any integer type), or an integer literal.
// Tile loads take scalar indices; gather, scatter and atomics take index tiles (scalars broadcast).
class IndexArg {
 public:
  IndexArg(const Index& t) : v_(t.value()) {}  // NOLINT
  template <Element I>
    requires is_int_element<I>
  IndexArg(const Tile<I>& t) : v_(t.value()) {}  // NOLINT
  template <std::integral I>
  IndexArg(I v) : lit_(true), literal_(static_cast<std::int64_t>(v)) {}  // NOLINT
  ir::ValueId resolve(const SourceLoc& loc) const {  // doc: internal (the tracer's)
    return lit_ ? detail::emit_constant(ir::Scalar::of_int(literal_), DType::i64, {}, loc) : v_;
  }

 private:
  ir::ValueId v_ = ir::kNoValue;
  bool lit_ = false;
  std::int64_t literal_ = 0;
};

namespace detail {
template <std::size_t N>
std::vector<ValueId> resolve_indices(const std::array<IndexArg, N>& idx, const SourceLoc& loc) {
  std::vector<ValueId> r;
  for (const IndexArg& i : idx) r.push_back(i.resolve(loc));
  return r;
}
template <class Tuple>
std::vector<ValueId> tile_values(const Tuple& tiles) {
  std::vector<ValueId> r;
  for (const auto& t : tiles) r.push_back(t.value());
  return r;
}
}  // namespace detail

// ---- creation ----
template <Element T>
Tile<T> iota(std::int64_t n, std::source_location l = std::source_location::current()) {
  return Tile<T>(detail::emit_iota(n, dtype_of<T>, l), l);
}
template <Element T>
Tile<T> constant(T v, std::source_location l = std::source_location::current()) {
  return Tile<T>::full({}, v, l);
}

// ---- grid ----
inline Index block_id(int axis, std::source_location l = std::source_location::current()) {
  return Index(detail::emit_block_id(axis, l), l);
}
inline Index num_blocks(int axis, std::source_location l = std::source_location::current()) {
  return Index(detail::emit_num_blocks(axis, l), l);
}

// ---- precision (docs/ir.md, "Numerics") ----
// A rounding for one float op: ctile::rounding::rn (correctly rounded: division and sqrt),
// ctile::rounding::full (within a few ulp, the default of the transcendental functions),
// ctile::rounding::approx (the hardware's fast approximations, subnormals flushed to zero; also
// spelled ctile::approx). The kernel option fast_math makes every op left at its default approx;
// an op given a precision here keeps it.
struct Precision {
  ir::Rounding rounding;
  bool ftz;
};
namespace rounding {
inline constexpr Precision rn{ir::Rounding::Rn, false};
inline constexpr Precision full{ir::Rounding::Full, false};
inline constexpr Precision approx{ir::Rounding::Approx, true};
}  // namespace rounding
inline constexpr Precision approx = rounding::approx;
// min/max (element-wise and reductions) ignore a NaN operand by default; with propagate_nan a NaN
// operand gives NaN.
struct NanPolicy {
  bool propagate;
};
inline constexpr NanPolicy propagate_nan{true};
inline constexpr NanPolicy ignore_nan{false};

// ---- element-wise math ----
#define CTILE_UNARY_FN(NAME, FN)                                                                   \
  template <Element T>                                                                             \
  Tile<T> NAME(const Tile<T>& x, std::source_location l = std::source_location::current()) {      \
    return Tile<T>(detail::emit_unary(ir::UnaryFn::FN, x.value(), l), l);                          \
  }                                                                                                \
  template <Element T>                                                                             \
  Tile<T> NAME(const Tile<T>& x, Precision p, std::source_location l = std::source_location::current()) { \
    return Tile<T>(detail::emit_unary(ir::UnaryFn::FN, x.value(), l, {p.rounding, p.ftz, false}), l); \
  }
CTILE_UNARY_FN(exp, Exp)
CTILE_UNARY_FN(exp2, Exp2)
CTILE_UNARY_FN(log, Log)
CTILE_UNARY_FN(log2, Log2)
CTILE_UNARY_FN(sqrt, Sqrt)
CTILE_UNARY_FN(rsqrt, Rsqrt)
CTILE_UNARY_FN(tanh, Tanh)
CTILE_UNARY_FN(sin, Sin)
CTILE_UNARY_FN(cos, Cos)
CTILE_UNARY_FN(abs, Abs)
CTILE_UNARY_FN(floor, Floor)
CTILE_UNARY_FN(ceil, Ceil)
CTILE_UNARY_FN(erf, Erf)
CTILE_UNARY_FN(erfc, Erfc)
CTILE_UNARY_FN(sigmoid, Sigmoid)
CTILE_UNARY_FN(log1p, Log1p)
CTILE_UNARY_FN(expm1, Expm1)
#undef CTILE_UNARY_FN

// Bit counts of integer tiles, in the element's own width (popcount of an i8 -1 is 8, clz of 0 is
// the width); the result has the operand's type.
template <Element T>
Tile<T> popcount(const Tile<T>& x, std::source_location l = std::source_location::current()) {
  return Tile<T>(detail::emit_unary(ir::UnaryFn::Popcount, x.value(), l), l);
}
template <Element T>
Tile<T> clz(const Tile<T>& x, std::source_location l = std::source_location::current()) {
  return Tile<T>(detail::emit_unary(ir::UnaryFn::Clz, x.value(), l), l);
}

// The same bits read as element type U of the same width (bitcast<std::uint32_t>(f32 tile));
// a different width or bool is a UserError.
template <Element U, Element T>
Tile<U> bitcast(const Tile<T>& x, std::source_location l = std::source_location::current()) {
  return Tile<U>(detail::emit_bitcast(x.value(), dtype_of<U>, l), l);
}

inline Tile<bool> logical_not(const Tile<bool>& x, std::source_location l = std::source_location::current()) {
  return Tile<bool>(detail::emit_unary(ir::UnaryFn::Not, x.value(), l), l);
}

// Binary element-wise functions. A tile of T on one side and a literal of T's kind on the other
// works on either side, like the operators.
#define CTILE_BINARY_FN(NAME, FN)                                                                   \
  template <Element T>                                                                              \
  Tile<T> NAME(const Tile<T>& a, const std::type_identity_t<Tile<T>>& b,                            \
               std::source_location l = std::source_location::current()) {                          \
    return Tile<T>(detail::emit_binary(ir::BinaryFn::FN, a.value(), b.value(), l), l);              \
  }                                                                                                 \
  template <Element T, detail::LiteralFor<T> U>                                                     \
  Tile<T> NAME(const Tile<T>& a, U b, std::source_location l = std::source_location::current()) {  \
    return NAME(a, detail::as_tile<T>(b, l), l);                                                    \
  }                                                                                                 \
  template <Element T, detail::LiteralFor<T> U>                                                     \
  Tile<T> NAME(U a, const Tile<T>& b, std::source_location l = std::source_location::current()) {  \
    return NAME(detail::as_tile<T>(a, l), b, l);                                                    \
  }
CTILE_BINARY_FN(maximum, Max)
CTILE_BINARY_FN(minimum, Min)
CTILE_BINARY_FN(pow, Pow)
CTILE_BINARY_FN(atan2, Atan2)  // atan2(y, x): the angle of (x, y), in [-pi, pi]
#undef CTILE_BINARY_FN

// maximum / minimum with a NaN policy; either operand may be a literal.
#define CTILE_MINMAX_NAN_FN(NAME, FN)                                                               \
  template <Element T>                                                                              \
  Tile<T> NAME(const Tile<T>& a, const std::type_identity_t<Tile<T>>& b, NanPolicy n,               \
               std::source_location l = std::source_location::current()) {                          \
    return Tile<T>(                                                                                 \
        detail::emit_binary(ir::BinaryFn::FN, a.value(), b.value(), l, {ir::Rounding::Default, false, n.propagate}), l); \
  }                                                                                                 \
  template <Element T, detail::LiteralFor<T> U>                                                     \
  Tile<T> NAME(const Tile<T>& a, U b, NanPolicy n, std::source_location l = std::source_location::current()) { \
    return NAME(a, detail::as_tile<T>(b, l), n, l);                                                 \
  }                                                                                                 \
  template <Element T, detail::LiteralFor<T> U>                                                     \
  Tile<T> NAME(U a, const Tile<T>& b, NanPolicy n, std::source_location l = std::source_location::current()) { \
    return NAME(detail::as_tile<T>(a, l), b, n, l);                                                 \
  }
CTILE_MINMAX_NAN_FN(maximum, Max)
CTILE_MINMAX_NAN_FN(minimum, Min)
#undef CTILE_MINMAX_NAN_FN

// a / b with a chosen precision (plain `/` uses the default: correctly rounded).
template <Element T>
Tile<T> div(const Tile<T>& a, const std::type_identity_t<Tile<T>>& b, Precision p,
            std::source_location l = std::source_location::current()) {
  return Tile<T>(detail::emit_binary(ir::BinaryFn::Div, a.value(), b.value(), l, {p.rounding, p.ftz, false}), l);
}
template <Element T, detail::LiteralFor<T> U>
Tile<T> div(const Tile<T>& a, U b, Precision p, std::source_location l = std::source_location::current()) {
  return div(a, detail::as_tile<T>(b, l), p, l);
}
template <Element T, detail::LiteralFor<T> U>
Tile<T> div(U a, const Tile<T>& b, Precision p, std::source_location l = std::source_location::current()) {
  return div(detail::as_tile<T>(a, l), b, p, l);
}

// fma(a, b, c) = a * b + c, rounded once. Any operand but all three may be a literal; the first
// tile among them gives the element type.
// (Literals become constants left to right: the order of function arguments is unspecified, and the
// IR must not depend on the compiler.)
template <Element T, detail::OperandFor<T> B, detail::OperandFor<T> C>
Tile<T> fma(const Tile<T>& a, const B& b, const C& c, std::source_location l = std::source_location::current()) {
  const Tile<T> tb = detail::as_tile<T>(b, l);
  const Tile<T> tc = detail::as_tile<T>(c, l);
  return Tile<T>(detail::emit_fma(a.value(), tb.value(), tc.value(), l), l);
}
template <Element T, detail::LiteralFor<T> A, detail::OperandFor<T> C>
Tile<T> fma(A a, const Tile<T>& b, const C& c, std::source_location l = std::source_location::current()) {
  const Tile<T> ta = detail::as_tile<T>(a, l);
  return fma(ta, b, c, l);
}
template <Element T, detail::LiteralFor<T> A, detail::LiteralFor<T> B>
Tile<T> fma(A a, B b, const Tile<T>& c, std::source_location l = std::source_location::current()) {
  const Tile<T> ta = detail::as_tile<T>(a, l);
  const Tile<T> tb = detail::as_tile<T>(b, l);
  return fma(ta, tb, c, l);
}

// where(cond, a, b): element-wise select; the three shapes broadcast. Either branch may be a
// literal.
template <Element T>
Tile<T> where(const Tile<bool>& c, const Tile<T>& a, const std::type_identity_t<Tile<T>>& b,
              std::source_location l = std::source_location::current()) {
  return Tile<T>(detail::emit_select(c.value(), a.value(), b.value(), l), l);
}
template <Element T, detail::LiteralFor<T> U>
Tile<T> where(const Tile<bool>& c, const Tile<T>& a, U b, std::source_location l = std::source_location::current()) {
  return where(c, a, detail::as_tile<T>(b, l), l);
}
template <Element T, detail::LiteralFor<T> U>
Tile<T> where(const Tile<bool>& c, U a, const Tile<T>& b, std::source_location l = std::source_location::current()) {
  return where(c, detail::as_tile<T>(a, l), b, l);
}
// Both branches literals: the element type is named (`where<float>(c, 1, 0)`), or it is the
// literals' common type when they have the same one (`where(c, 1.0f, 0.0f)` is a Tile<float>).
template <class T = void, class U, class V>
  requires(std::is_void_v<T> ? (std::is_same_v<U, V> && detail::LiteralFor<U, U>)
                             : (detail::LiteralFor<U, T> && detail::LiteralFor<V, T>))
auto where(const Tile<bool>& c, U a, V b, std::source_location l = std::source_location::current()) {
  using E = std::conditional_t<std::is_void_v<T>, U, T>;
  const Tile<E> ta = detail::as_tile<E>(a, l);
  const Tile<E> tb = detail::as_tile<E>(b, l);
  return where(c, ta, tb, l);
}

// ---- random numbers (docs/ir.md, "Random numbers") ----
// Counter-based (Philox-4x32-10): element i of the result depends only on the seed and offsets[i]
// (its counter), so the same (seed, offset) gives the same number in every tile block, on the CPU
// and on the GPU alike (bit-identical), and distinct offsets give independent numbers. The seed is
// an integer scalar (a kernel parameter or a literal), the offsets an integer tile of any shape.
// rand: uniform f32 in [0, 1) (24 random bits); randn: standard normal f32 (Box-Muller);
// rand_bits: the 32 random bits as u32.
#define CTILE_RANDOM_FN(NAME, DIST, ELEM)                                                           \
  template <Element I>                                                                              \
    requires is_int_element<I>                                                                      \
  Tile<ELEM> NAME(const IndexArg& seed, const Tile<I>& offsets,                                     \
                  std::source_location l = std::source_location::current()) {                       \
    return Tile<ELEM>(detail::emit_random(ir::RandomDist::DIST, seed.resolve(l), offsets.value(), #NAME, l), l); \
  }
CTILE_RANDOM_FN(rand, Uniform, float)
CTILE_RANDOM_FN(randn, Normal, float)
CTILE_RANDOM_FN(rand_bits, Bits, std::uint32_t)
#undef CTILE_RANDOM_FN

// ---- shape manipulation ----
template <Element T>
Tile<T> reshape(const Tile<T>& x, const Shape& s, std::source_location l = std::source_location::current()) {
  return Tile<T>(detail::emit_reshape(x.value(), s, l), l);
}
template <Element T>
Tile<T> broadcast(const Tile<T>& x, const Shape& s, std::source_location l = std::source_location::current()) {
  return Tile<T>(detail::emit_broadcast(x.value(), s, l), l);
}
template <Element T>
Tile<T> permute(const Tile<T>& x, const std::vector<int>& perm, std::source_location l = std::source_location::current()) {
  return Tile<T>(detail::emit_permute(x.value(), perm, l), l);
}
template <Element T>
Tile<T> transpose(const Tile<T>& x, std::source_location l = std::source_location::current()) {
  return permute(x, {1, 0}, l);
}
template <Element T>
Tile<T> cat(const Tile<T>& a, const std::type_identity_t<Tile<T>>& b, int axis,
            std::source_location l = std::source_location::current()) {
  return Tile<T>(detail::emit_cat(a.value(), b.value(), axis, l), l);
}
template <Element T>
Tile<T> extract(const Tile<T>& x, const Shape& offsets, const Shape& shape,
                std::source_location l = std::source_location::current()) {
  return Tile<T>(detail::emit_extract(x.value(), offsets, shape, l), l);
}
// Inserts an axis of extent 1 at `axis`.
template <Element T>
Tile<T> expand_dims(const Tile<T>& x, int axis, std::source_location l = std::source_location::current()) {
  Shape s = x.shape();
  if (axis < 0 || axis > static_cast<int>(s.size()))
    detail::user_error("expand_dims: axis " + std::to_string(axis) + " out of range for a tile of rank " +
                           std::to_string(s.size()), l);
  s.insert(s.begin() + axis, 1);
  return reshape(x, s, l);
}

// ---- reductions and scans (keepdims keeps the reduced axis with extent 1) ----
#define CTILE_REDUCE_FN(NAME, KIND)                                                                 \
  template <Element T>                                                                              \
  Tile<T> NAME(const Tile<T>& x, int axis, bool keepdims = false,                                   \
               std::source_location l = std::source_location::current()) {                          \
    return Tile<T>(detail::emit_reduce(ir::ReduceKind::KIND, x.value(), axis, keepdims, l), l);     \
  }
CTILE_REDUCE_FN(sum, Sum)
CTILE_REDUCE_FN(max, Max)
CTILE_REDUCE_FN(min, Min)
CTILE_REDUCE_FN(prod, Prod)
#undef CTILE_REDUCE_FN
template <Element T>
Tile<T> max(const Tile<T>& x, int axis, bool keepdims, NanPolicy n, std::source_location l = std::source_location::current()) {
  return Tile<T>(detail::emit_reduce(ir::ReduceKind::Max, x.value(), axis, keepdims, l, {ir::Rounding::Default, false, n.propagate}), l);
}
template <Element T>
Tile<T> min(const Tile<T>& x, int axis, bool keepdims, NanPolicy n, std::source_location l = std::source_location::current()) {
  return Tile<T>(detail::emit_reduce(ir::ReduceKind::Min, x.value(), axis, keepdims, l, {ir::Rounding::Default, false, n.propagate}), l);
}
// any/all of a bool tile along an axis (the max/min of bools: false < true).
inline Tile<bool> any(const Tile<bool>& x, int axis, bool keepdims = false,
                      std::source_location l = std::source_location::current()) {
  return Tile<bool>(detail::emit_reduce(ir::ReduceKind::Max, x.value(), axis, keepdims, l), l);
}
inline Tile<bool> all(const Tile<bool>& x, int axis, bool keepdims = false,
                      std::source_location l = std::source_location::current()) {
  return Tile<bool>(detail::emit_reduce(ir::ReduceKind::Min, x.value(), axis, keepdims, l), l);
}
template <Element T>
Index argmax(const Tile<T>& x, int axis, bool keepdims = false, std::source_location l = std::source_location::current()) {
  return Index(detail::emit_reduce(ir::ReduceKind::ArgMax, x.value(), axis, keepdims, l), l);
}
template <Element T>
Index argmin(const Tile<T>& x, int axis, bool keepdims = false, std::source_location l = std::source_location::current()) {
  return Index(detail::emit_reduce(ir::ReduceKind::ArgMin, x.value(), axis, keepdims, l), l);
}
// Scans: inclusive and forward by default; ct::exclusive (element i combines the elements before
// i, the first gets the identity: 0, 1, the lowest or the highest value), ct::reverse (from the
// last element to the first), or both (`ct::exclusive | ct::reverse`).
struct ScanMode {
  bool exclusive = false;
  bool reverse = false;
  friend constexpr ScanMode operator|(ScanMode a, ScanMode b) { return {a.exclusive || b.exclusive, a.reverse || b.reverse}; }
};
inline constexpr ScanMode exclusive{true, false};
inline constexpr ScanMode reverse{false, true};
#define CTILE_SCAN_FN(NAME, KIND)                                                                   \
  template <Element T>                                                                              \
  Tile<T> NAME(const Tile<T>& x, int axis, ScanMode m = {}, std::source_location l = std::source_location::current()) { \
    return Tile<T>(detail::emit_scan(ir::ReduceKind::KIND, x.value(), axis, m.exclusive, m.reverse, #NAME, l), l); \
  }
CTILE_SCAN_FN(cumsum, Sum)
CTILE_SCAN_FN(cumprod, Prod)
CTILE_SCAN_FN(cummax, Max)
CTILE_SCAN_FN(cummin, Min)
#undef CTILE_SCAN_FN

// ---- matrix multiply-accumulate: acc[M,N] + a[M,K] @ b[K,N] ----
template <Element A, Element Acc>
Tile<Acc> mma(const Tile<A>& a, const std::type_identity_t<Tile<A>>& b, const Tile<Acc>& acc,
              std::source_location l = std::source_location::current()) {
  return Tile<Acc>(detail::emit_mma(a.value(), b.value(), acc.value(), l), l);
}
// The fp8 types mix: an e4m3 x e5m2 (or e5m2 x e4m3) product into f32.
template <Element A, Element B, Element Acc>
  requires(is_fp8_element<A> && is_fp8_element<B> && !std::is_same_v<A, B>)
Tile<Acc> mma(const Tile<A>& a, const Tile<B>& b, const Tile<Acc>& acc, std::source_location l = std::source_location::current()) {
  return Tile<Acc>(detail::emit_mma(a.value(), b.value(), acc.value(), l), l);
}

// Trace-time assertion: fails the trace with a UserError at the caller's line.
inline void static_check(bool cond, const std::string& msg, std::source_location l = std::source_location::current()) {
  if (!cond) detail::user_error(msg, l);
}

}  // namespace ctile
