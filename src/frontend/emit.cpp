// Op emission with user-facing checks. Every check here is a user error reported at the user's
// file:line; the verifier later re-checks the result as an internal invariant.
#include "ctile/frontend/emit.hpp"
#include "ctile/ir/op_info.hpp"

#include <algorithm>
#include <numeric>

namespace ctile::detail {

namespace {
thread_local TraceContext* g_current = nullptr;

ir::Builder& B(const SourceLoc& loc) {
  TraceContext& c = TraceContext::current(loc);
  c.raise_deferred();
  return c.b();
}

// Ops are built through their type rule (ir/op_info.hpp); `declared` is the result type of ops that
// declare it (constant, iota, broadcast, reshape, extract, convert).
ValueId one(ir::Builder& b, ir::OpKind k, std::vector<ValueId> operands, const SourceLoc& loc,
            std::vector<ir::Type> declared = {}) {
  return b.build(k, std::move(operands), loc, std::move(declared)).results[0];
}
template <class F>
ValueId one(ir::Builder& b, ir::OpKind k, std::vector<ValueId> operands, const SourceLoc& loc, std::vector<ir::Type> declared,
            F&& attrs) {
  return b.build(k, std::move(operands), loc, std::move(declared), std::forward<F>(attrs)).results[0];
}

std::string tstr(ValueId v) { return ir::type_str(type_of(v)); }

ir::Type tile_type(ValueId v, const char* what, const SourceLoc& loc) {
  ir::Type t = type_of(v);
  if (!t.is_tile()) user_error(std::string(what) + " expects a tile, got " + ir::type_str(t), loc);
  return t;
}

int norm_axis(int axis, int rank, const char* what, const SourceLoc& loc) {
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank)
    user_error(std::string(what) + ": axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank),
               loc);
  return axis;
}

// numpy broadcasting of two shapes: trailing axes aligned, extents 1 stretch.
bool broadcast_shapes(const Shape& a, const Shape& b, Shape& out) {
  const std::size_t r = std::max(a.size(), b.size());
  out.assign(r, 1);
  for (std::size_t i = 0; i < r; ++i) {
    const std::int64_t x = i < r - a.size() ? 1 : a[i - (r - a.size())];
    const std::int64_t y = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (x != y && x != 1 && y != 1) return false;
    out[i] = std::max(x, y);
  }
  return true;
}

// Brings a tile to `shape` (which it broadcasts to) by a reshape to equal rank and a broadcast.
ValueId to_shape(ValueId v, const Shape& shape, const SourceLoc& loc) {
  const Shape s = shape_of(v);
  if (s == shape) return v;
  ValueId x = v;
  if (s.size() < shape.size()) {
    Shape padded(shape.size() - s.size(), 1);
    padded.insert(padded.end(), s.begin(), s.end());
    x = emit_reshape(x, padded, loc);
  }
  if (shape_of(x) != shape) x = emit_broadcast(x, shape, loc);
  return x;
}

void same_dtype(ValueId a, ValueId b, const char* what, const SourceLoc& loc) {
  if (type_of(a).dtype != type_of(b).dtype)
    user_error(std::string(what) + ": element types differ (" + tstr(a) + " vs " + tstr(b) + "); convert one with .to<T>()",
               loc);
}

bool is_index_kind(DType d) { return is_integer(d); }

// The user's precision choice for `op` (already built with its operands), checked: a UserError at
// the user's line names what the op does not support.
void apply_numerics(ir::Op& op, const Numerics& n, const char* what, const SourceLoc& loc, DType d) {
  if (n.rounding != ir::Rounding::Default || n.ftz) {
    if (!is_float(d)) user_error(std::string(what) + ": a rounding mode applies to floating-point tiles only", loc);
    op.rounding = n.rounding;
    op.ftz = n.ftz;
    if (!ir::takes_rounding(op))
      user_error(std::string(what) + " takes no rounding mode (only exp, exp2, log, log2, sqrt, rsqrt, tanh and division do)", loc);
    if (!ir::rounding_allowed(op, n.rounding))
      user_error(std::string(what) + " has no correctly rounded (rn) mode on the GPU; use ctile::rounding::full or ctile::rounding::approx", loc);
    if (d == DType::f64 && (n.rounding == ir::Rounding::Approx || n.ftz))
      user_error(std::string(what) + ": f64 has no approximate mode; use f32 tiles or the default precision", loc);
  }
  if (n.propagate_nan) {
    if (!ir::takes_nan_policy(op) || !is_float(d))
      user_error(std::string(what) + ": the NaN policy applies to floating-point min and max only", loc);
    op.propagate_nan = true;
  }
}

}  // namespace

// ---- context plumbing ----
TraceContext& TraceContext::current(const SourceLoc& where) {
  if (!g_current)
    throw UserError("ctile tiles and kernel parameters exist only while a kernel is traced (inside the kernel "
                    "function during its first launch); this code ran outside a trace",
                    where);
  return *g_current;
}
TraceContext* TraceContext::current_or_null() { return g_current; }
TraceScope::TraceScope(TraceContext& c) : prev_(g_current) { g_current = &c; }
TraceScope::~TraceScope() { g_current = prev_; }

ir::Type type_of(ValueId v) { return TraceContext::current({}).kernel().type(v); }
Shape shape_of(ValueId v) { return type_of(v).shape; }

void user_error(const std::string& msg, const SourceLoc& loc) { throw UserError(msg, loc); }

void check_tile_shape(const Shape& s, const char* what, const SourceLoc& loc) {
  if (static_cast<int>(s.size()) > kMaxRank)
    user_error(std::string(what) + ": tiles have rank at most 6, got " + shape_str(s), loc);
  for (std::int64_t d : s)
    if (!is_pow2(d))
      user_error(std::string(what) + ": every tile extent must be a power of two, got " + shape_str(s), loc);
  std::int64_t n = 0;
  if (!checked_numel(s, n) || n > (std::int64_t{1} << 24))
    user_error(std::string(what) + ": tile " + shape_str(s) + " has more than 2^24 elements", loc);
}

// ---- creation and grid ----
ValueId emit_constant(ir::Scalar v, DType d, const Shape& shape, const SourceLoc& loc) {
  check_tile_shape(shape, "constant tile", loc);
  return one(B(loc), ir::OpKind::Constant, {}, loc, {ir::Type::tile(d, shape)},
             [&](ir::Op& op) { op.value = ir::scalar_cast(v, d); });
}

ValueId emit_iota(std::int64_t n, DType d, const SourceLoc& loc) {
  check_tile_shape({n}, "iota", loc);
  if (is_bool(d)) user_error("iota needs a numeric element type", loc);
  return one(B(loc), ir::OpKind::Iota, {}, loc, {ir::Type::tile(d, {n})});
}

ValueId emit_block_id(int axis, const SourceLoc& loc) {
  ir::Builder& b = B(loc);
  if (axis < 0 || axis >= b.kernel().grid_rank)
    user_error("block_id(" + std::to_string(axis) + "): the grid of this launch has " +
                   std::to_string(b.kernel().grid_rank) + " axes",
               loc);
  return one(b, ir::OpKind::BlockId, {}, loc, {}, [&](ir::Op& op) { op.axis = axis; });
}

ValueId emit_num_blocks(int axis, const SourceLoc& loc) {
  ir::Builder& b = B(loc);
  if (axis < 0 || axis >= b.kernel().grid_rank)
    user_error("num_blocks(" + std::to_string(axis) + "): the grid of this launch has " +
                   std::to_string(b.kernel().grid_rank) + " axes",
               loc);
  return one(b, ir::OpKind::NumBlocks, {}, loc, {}, [&](ir::Op& op) { op.axis = axis; });
}

ValueId emit_dim(ValueId x, int axis, const SourceLoc& loc) {
  ir::Builder& b = B(loc);
  const ir::Type& t = type_of(x);
  if (t.is_tile()) user_error("extent() applies to tensors, not tiles (a tile's shape is known: .shape())", loc);
  axis = norm_axis(axis, t.rank, "extent", loc);
  return one(b, ir::OpKind::Dim, {x}, loc, {}, [&](ir::Op& op) { op.axis = axis; });
}

// ---- element-wise ----
ValueId emit_unary(ir::UnaryFn f, ValueId x, const SourceLoc& loc, Numerics n) {
  const ir::Type& t = tile_type(x, ir::unary_name(f), loc);
  const DType d = t.dtype;
  using U = ir::UnaryFn;
  const bool int_only = f == U::Popcount || f == U::Clz;
  const bool float_only = f != U::Neg && f != U::Abs && f != U::Not && !int_only;
  if (int_only && !is_integer(d))
    user_error(std::string(ir::unary_name(f)) + " needs an integer tile, got " + ir::type_str(t) +
                   (is_float(d) ? "; reinterpret float bits with bitcast<u32>() (or the same-width integer) first" : ""),
               loc);
  if (float_only && !is_float(d))
    user_error(std::string(ir::unary_name(f)) + " needs a floating-point tile, got " + ir::type_str(t) +
                   "; convert with .to<float>() first",
               loc);
  if ((f == U::Neg || f == U::Abs) && (is_unsigned_int(d) || is_bool(d)))
    user_error(std::string(ir::unary_name(f)) + " needs a signed or floating-point tile, got " + ir::type_str(t), loc);
  if (f == U::Not && is_float(d)) user_error("~ needs an integer or bool tile, got " + ir::type_str(t), loc);
  return one(B(loc), ir::OpKind::Unary, {x}, loc, {}, [&](ir::Op& op) {
    op.unary = f;
    apply_numerics(op, n, ir::unary_name(f), loc, d);
  });
}

ValueId emit_binary(ir::BinaryFn f, ValueId a, ValueId b, const SourceLoc& loc, Numerics n) {
  const char* name = ir::binary_name(f);
  tile_type(a, name, loc);
  tile_type(b, name, loc);
  same_dtype(a, b, name, loc);
  const DType d = type_of(a).dtype;
  using F = ir::BinaryFn;
  if ((f == F::Pow || f == F::Atan2) && !is_float(d))
    user_error(std::string(name) + " needs floating-point tiles, got " + tstr(a) + "; convert with .to<float>() first", loc);
  if ((f == F::And || f == F::Or || f == F::Xor) && is_float(d))
    user_error(std::string(name) + " needs integer or bool tiles, got " + tstr(a), loc);
  if ((f == F::Shl || f == F::Shr) && !is_integer(d)) user_error(std::string(name) + " needs integer tiles, got " + tstr(a), loc);
  if ((f == F::Add || f == F::Sub || f == F::Mul || f == F::Div || f == F::Rem || f == F::Min || f == F::Max) &&
      is_bool(d))
    user_error(std::string(name) + " is not defined on bool tiles; convert them first", loc);
  Shape s;
  if (!broadcast_shapes(shape_of(a), shape_of(b), s))
    user_error(std::string(name) + ": shapes " + shape_str(shape_of(a)) + " and " + shape_str(shape_of(b)) +
                   " do not broadcast",
               loc);
  const ValueId x = to_shape(a, s, loc), y = to_shape(b, s, loc);
  return one(B(loc), ir::OpKind::Binary, {x, y}, loc, {}, [&](ir::Op& op) {
    op.binary = f;
    apply_numerics(op, n, name, loc, d);
  });
}

ValueId emit_binary_scalar(ir::BinaryFn f, ValueId a, ir::Scalar s, bool scalar_on_left, const SourceLoc& loc) {
  const ValueId c = emit_constant(s, tile_type(a, ir::binary_name(f), loc).dtype, {}, loc);
  return scalar_on_left ? emit_binary(f, c, a, loc) : emit_binary(f, a, c, loc);
}

ValueId emit_cmp(ir::CmpPred p, ValueId a, ValueId b, const SourceLoc& loc) {
  tile_type(a, "comparison", loc);
  tile_type(b, "comparison", loc);
  same_dtype(a, b, "comparison", loc);
  Shape s;
  if (!broadcast_shapes(shape_of(a), shape_of(b), s))
    user_error("comparison: shapes " + shape_str(shape_of(a)) + " and " + shape_str(shape_of(b)) + " do not broadcast", loc);
  const ValueId x = to_shape(a, s, loc), y = to_shape(b, s, loc);
  return one(B(loc), ir::OpKind::Cmp, {x, y}, loc, {}, [&](ir::Op& op) { op.cmp = p; });
}

ValueId emit_cmp_scalar(ir::CmpPred p, ValueId a, ir::Scalar s, const SourceLoc& loc) {
  return emit_cmp(p, a, emit_constant(s, tile_type(a, "comparison", loc).dtype, {}, loc), loc);
}

ValueId emit_select(ValueId c, ValueId a, ValueId b, const SourceLoc& loc) {
  if (tile_type(c, "where", loc).dtype != DType::b1) user_error("where: the condition must be a bool tile, got " + tstr(c), loc);
  tile_type(a, "where", loc);
  tile_type(b, "where", loc);
  same_dtype(a, b, "where", loc);
  Shape s1, s;
  if (!broadcast_shapes(shape_of(a), shape_of(b), s1) || !broadcast_shapes(s1, shape_of(c), s))
    user_error("where: shapes " + shape_str(shape_of(c)) + ", " + shape_str(shape_of(a)) + " and " +
                   shape_str(shape_of(b)) + " do not broadcast",
               loc);
  const ValueId cc = to_shape(c, s, loc), x = to_shape(a, s, loc), y = to_shape(b, s, loc);
  return one(B(loc), ir::OpKind::Select, {cc, x, y}, loc);
}

ValueId emit_fma(ValueId a, ValueId b, ValueId c, const SourceLoc& loc) {
  for (ValueId v : {a, b, c}) tile_type(v, "fma", loc);
  same_dtype(a, b, "fma", loc);
  same_dtype(a, c, "fma", loc);
  if (!is_float(type_of(a).dtype)) user_error("fma needs floating-point tiles, got " + tstr(a), loc);
  Shape s1, s;
  if (!broadcast_shapes(shape_of(a), shape_of(b), s1) || !broadcast_shapes(s1, shape_of(c), s))
    user_error("fma: shapes do not broadcast", loc);
  return one(B(loc), ir::OpKind::Fma, {to_shape(a, s, loc), to_shape(b, s, loc), to_shape(c, s, loc)}, loc);
}

ValueId emit_convert(ValueId x, DType to, const SourceLoc& loc) {
  const ir::Type& t = tile_type(x, "to<T>()", loc);
  if (t.dtype == to) return x;
  return one(B(loc), ir::OpKind::Convert, {x}, loc, {ir::Type::tile(to, t.shape)});
}

ValueId emit_bitcast(ValueId x, DType to, const SourceLoc& loc) {
  const ir::Type& t = tile_type(x, "bitcast", loc);
  if (is_bool(t.dtype) || is_bool(to))
    user_error("bitcast: bool tiles have no bit pattern to reinterpret (" + ir::type_str(t) + " to " +
                   std::string(dtype_name(to)) + "); use .to<T>() or where()",
               loc);
  const auto bytes = [](DType d) { return std::to_string(dtype_size(d)) + (dtype_size(d) == 1 ? " byte" : " bytes"); };
  if (dtype_size(t.dtype) != dtype_size(to))
    user_error("bitcast: " + std::string(dtype_name(t.dtype)) + " (" + bytes(t.dtype) + ") and " + std::string(dtype_name(to)) +
                   " (" + bytes(to) + ") differ in width; a bitcast keeps every element's bits",
               loc);
  if (t.dtype == to) return x;
  return one(B(loc), ir::OpKind::Bitcast, {x}, loc, {ir::Type::tile(to, t.shape)});
}

ValueId emit_random(ir::RandomDist d, ValueId seed, ValueId offsets, const char* what, const SourceLoc& loc) {
  const ir::Type& s = tile_type(seed, what, loc);
  const ir::Type& o = tile_type(offsets, what, loc);
  if (!s.is_scalar() || !is_integer(s.dtype))
    user_error(std::string(what) + ": the seed must be an integer scalar, got " + ir::type_str(s), loc);
  if (!is_integer(o.dtype))
    user_error(std::string(what) + ": the offsets must be an integer tile (one counter per element), got " + ir::type_str(o) +
                   "; build them with ct::iota<std::int64_t>(n) + base",
               loc);
  const Shape shape = o.shape;
  const ValueId off = emit_convert(offsets, DType::i64, loc);
  const ValueId sd = to_shape(emit_convert(seed, DType::i64, loc), shape, loc);
  return one(B(loc), ir::OpKind::Random, {sd, off}, loc, {}, [&](ir::Op& op) { op.random = d; });
}

// ---- shapes ----
ValueId emit_broadcast(ValueId x, const Shape& shape, const SourceLoc& loc) {
  const ir::Type& t = tile_type(x, "broadcast", loc);
  check_tile_shape(shape, "broadcast", loc);
  if (t.shape == shape) return x;
  Shape s = t.shape;
  if (s.size() < shape.size()) {
    Shape padded(shape.size() - s.size(), 1);
    padded.insert(padded.end(), s.begin(), s.end());
    s = padded;
  }
  bool ok = s.size() == shape.size();
  for (std::size_t i = 0; ok && i < s.size(); ++i) ok = s[i] == shape[i] || s[i] == 1;
  if (!ok) user_error("cannot broadcast a tile of shape " + shape_str(t.shape) + " to " + shape_str(shape), loc);
  ValueId v = s == t.shape ? x : emit_reshape(x, s, loc);
  if (s == shape) return v;
  return one(B(loc), ir::OpKind::Broadcast, {v}, loc, {ir::Type::tile(t.dtype, shape)});
}

ValueId emit_reshape(ValueId x, const Shape& shape, const SourceLoc& loc) {
  const ir::Type& t = tile_type(x, "reshape", loc);
  check_tile_shape(shape, "reshape", loc);
  if (numel(t.shape) != numel(shape))
    user_error("reshape: " + shape_str(t.shape) + " and " + shape_str(shape) + " hold different numbers of elements", loc);
  if (t.shape == shape) return x;
  return one(B(loc), ir::OpKind::Reshape, {x}, loc, {ir::Type::tile(t.dtype, shape)});
}

ValueId emit_permute(ValueId x, const std::vector<int>& perm, const SourceLoc& loc) {
  const ir::Type& t = tile_type(x, "permute", loc);
  std::vector<int> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int> iota_v(t.shape.size());
  std::iota(iota_v.begin(), iota_v.end(), 0);
  if (sorted != iota_v) user_error("permute: the permutation does not match a tile of rank " + std::to_string(t.rank), loc);
  return one(B(loc), ir::OpKind::Permute, {x}, loc, {}, [&](ir::Op& op) { op.perm = perm; });
}

ValueId emit_cat(ValueId a, ValueId b, int axis, const SourceLoc& loc) {
  const ir::Type& ta = tile_type(a, "cat", loc);
  const ir::Type& tb = tile_type(b, "cat", loc);
  same_dtype(a, b, "cat", loc);
  if (ta.rank != tb.rank) user_error("cat: ranks differ (" + tstr(a) + " vs " + tstr(b) + ")", loc);
  axis = norm_axis(axis, ta.rank, "cat", loc);
  Shape s = ta.shape;
  for (int i = 0; i < ta.rank; ++i)
    if (i != axis && ta.shape[static_cast<std::size_t>(i)] != tb.shape[static_cast<std::size_t>(i)])
      user_error("cat: shapes " + shape_str(ta.shape) + " and " + shape_str(tb.shape) + " differ off the axis", loc);
  s[static_cast<std::size_t>(axis)] += tb.shape[static_cast<std::size_t>(axis)];
  check_tile_shape(s, "cat (result)", loc);
  return one(B(loc), ir::OpKind::Cat, {a, b}, loc, {}, [&](ir::Op& op) { op.axis = axis; });
}

ValueId emit_extract(ValueId x, const Shape& offsets, const Shape& shape, const SourceLoc& loc) {
  const ir::Type& t = tile_type(x, "extract", loc);
  check_tile_shape(shape, "extract", loc);
  if (offsets.size() != t.shape.size() || shape.size() != t.shape.size())
    user_error("extract: offsets and shape need one entry per axis of " + tstr(x), loc);
  for (std::size_t i = 0; i < shape.size(); ++i)
    if (offsets[i] < 0 || offsets[i] + shape[i] > t.shape[i])
      user_error("extract: the window at " + shape_str(offsets) + " of shape " + shape_str(shape) + " leaves " +
                     shape_str(t.shape),
                 loc);
  return one(B(loc), ir::OpKind::Extract, {x}, loc, {ir::Type::tile(t.dtype, shape)},
             [&](ir::Op& op) { op.offsets = offsets; });
}

// ---- reductions, scans, mma ----
ValueId emit_reduce(ir::ReduceKind k, ValueId x, int axis, bool keepdims, const SourceLoc& loc, Numerics n) {
  const ir::Type& t = tile_type(x, ir::reduce_name(k), loc);
  // The user's word for a bool max/min.
  const char* what = !is_bool(t.dtype) ? ir::reduce_name(k) : k == ir::ReduceKind::Max ? "any (max)" : k == ir::ReduceKind::Min ? "all (min)" : ir::reduce_name(k);
  axis = norm_axis(axis, t.rank, what, loc);
  // On bool, max is any and min is all (false < true); the rest have no meaning there.
  if (is_bool(t.dtype) && k != ir::ReduceKind::Max && k != ir::ReduceKind::Min)
    user_error(std::string(ir::reduce_name(k)) + " is not defined on bool tiles; use any/all, or convert with .to<int>() to count",
               loc);
  const Shape kept = t.shape;
  ValueId r = one(B(loc), ir::OpKind::Reduce, {x}, loc, {}, [&](ir::Op& op) {
    op.reduce = k;
    op.axis = axis;
    apply_numerics(op, n, ir::reduce_name(k), loc, t.dtype);
  });
  if (keepdims) {
    Shape ks = kept;
    ks[static_cast<std::size_t>(axis)] = 1;
    r = emit_reshape(r, ks, loc);
  }
  return r;
}

ValueId emit_scan(ir::ReduceKind k, ValueId x, int axis, bool exclusive, bool reverse, const char* what, const SourceLoc& loc) {
  const ir::Type& t = tile_type(x, what, loc);
  axis = norm_axis(axis, t.rank, what, loc);
  if (k == ir::ReduceKind::ArgMax || k == ir::ReduceKind::ArgMin) user_error(std::string(what) + ": not a scan", loc);
  if (is_bool(t.dtype) && (k == ir::ReduceKind::Sum || k == ir::ReduceKind::Prod))
    user_error(std::string(what) + " is not defined on bool tiles (cummax/cummin are running any/all); convert with .to<int>() to count",
               loc);
  return one(B(loc), ir::OpKind::Scan, {x}, loc, {}, [&](ir::Op& op) {
    op.reduce = k;
    op.axis = axis;
    op.exclusive = exclusive;
    op.reverse = reverse;
  });
}

ValueId emit_mma(ValueId a, ValueId b, ValueId acc, const SourceLoc& loc) {
  const ir::Type& ta = tile_type(a, "mma", loc);
  const ir::Type& tb = tile_type(b, "mma", loc);
  const ir::Type& tc = tile_type(acc, "mma", loc);
  const int r = ta.rank;
  if ((r != 2 && r != 3) || tb.rank != r || tc.rank != r)
    user_error("mma needs three rank-2 tiles ([M,K] @ [K,N] + [M,N]) or three rank-3 tiles (batched: [P,M,K] @ [P,K,N] + "
               "[P,M,N]), got " + tstr(a) + ", " + tstr(b) + ", " + tstr(acc),
               loc);
  const auto at = [](const ir::Type& t, int d) { return t.shape[static_cast<std::size_t>(d)]; };
  if (at(ta, r - 1) != at(tb, r - 2) || at(tc, r - 2) != at(ta, r - 2) || at(tc, r - 1) != at(tb, r - 1) ||
      (r == 3 && (at(tb, 0) != at(ta, 0) || at(tc, 0) != at(ta, 0))))
    user_error("mma: shapes " + shape_str(ta.shape) + " @ " + shape_str(tb.shape) + " + " + shape_str(tc.shape) +
                   (r == 2 ? " do not agree ([M,K] @ [K,N] + [M,N])" : " do not agree ([P,M,K] @ [P,K,N] + [P,M,N])"),
               loc);
  const DType in = ta.dtype, in_b = tb.dtype, out = tc.dtype;
  const bool fp8 = is_fp8(in) && is_fp8(in_b);  // e4m3 and e5m2 mix
  const bool ok = (fp8 && out == DType::f32) ||
                  (in == in_b && ((in == DType::f16 && (out == DType::f32 || out == DType::f16)) ||
                                  (in == DType::bf16 && out == DType::f32) || (in == DType::f32 && out == DType::f32) ||
                                  (in == DType::f64 && out == DType::f64) ||
                                  ((in == DType::i8 || in == DType::u8) && out == DType::i32)));
  if (!ok)
    user_error("mma: unsupported element types " + std::string(dtype_name(in)) + " x " + std::string(dtype_name(in_b)) +
                   " -> " + std::string(dtype_name(out)) +
                   " (supported: f16->f32|f16, bf16->f32, f32->f32, f64->f64, i8|u8->i32, and f8e4m3|f8e5m2 x "
                   "f8e4m3|f8e5m2->f32)",
               loc);
  return one(B(loc), ir::OpKind::Mma, {a, b, acc}, loc);
}

// ---- memory ----
ValueId as_index(ValueId v, const SourceLoc& loc) {
  const ir::Type& t = type_of(v);
  if (!t.is_scalar() || !is_index_kind(t.dtype)) user_error("an index must be an integer scalar, got " + ir::type_str(t), loc);
  return emit_convert(v, DType::i64, loc);
}

ValueId emit_make_partition(ValueId tensor, const Shape& tile, const SourceLoc& loc) {
  const ir::Type& t = type_of(tensor);
  if (static_cast<int>(tile.size()) != t.rank)
    user_error("tiles(" + shape_str(tile) + "): a rank-" + std::to_string(t.rank) + " tensor needs " +
                   std::to_string(t.rank) + " tile extents",
               loc);
  check_tile_shape(tile, "tiles()", loc);
  return one(B(loc), ir::OpKind::MakePartition, {tensor}, loc, {}, [&](ir::Op& op) { op.shape = tile; });
}

ValueId emit_partition_count(ValueId p, int axis, const SourceLoc& loc) {
  const ir::Type& t = type_of(p);
  axis = norm_axis(axis, t.rank, "count", loc);
  return one(B(loc), ir::OpKind::PartitionCount, {p}, loc, {}, [&](ir::Op& op) { op.axis = axis; });
}

ValueId emit_load(ValueId partition, const std::vector<ValueId>& idx, ir::Scalar pad, const SourceLoc& loc) {
  const ir::Type& t = type_of(partition);
  if (static_cast<int>(idx.size()) != t.rank)
    user_error("load: a rank-" + std::to_string(t.rank) + " partition needs " + std::to_string(t.rank) + " tile indices, got " +
                   std::to_string(idx.size()),
               loc);
  std::vector<ValueId> ops{partition};
  for (ValueId i : idx) ops.push_back(as_index(i, loc));
  return one(B(loc), ir::OpKind::Load, ops, loc, {}, [&](ir::Op& op) { op.value = ir::scalar_cast(pad, t.dtype); });
}

ValueId emit_load_piece(ValueId piece, ir::Scalar pad, const SourceLoc& loc) {
  const ir::Type& t = type_of(piece);
  return one(B(loc), ir::OpKind::LoadPiece, {piece}, loc, {}, [&](ir::Op& op) { op.value = ir::scalar_cast(pad, t.dtype); });
}

void emit_store_piece(ValueId piece, ValueId tile, const SourceLoc& loc) {
  const ir::Type& p = type_of(piece);
  const ir::Type& t = tile_type(tile, "store", loc);
  if (t.dtype != p.dtype) user_error("store: element types differ (" + ir::type_str(t) + " into " + ir::type_str(p) + ")", loc);
  Shape s;
  if (!broadcast_shapes(t.shape, p.shape, s) || s != p.shape)
    user_error("store: a tile of shape " + shape_str(t.shape) + " does not fit the piece's tile shape " +
                   shape_str(p.shape),
               loc);
  B(loc).build(ir::OpKind::StorePiece, {piece, to_shape(tile, p.shape, loc)}, loc);
}

ValueId emit_load_window(ValueId tensor, const std::vector<ValueId>& origin, const Shape& shape, ir::Scalar pad,
                         const SourceLoc& loc) {
  const ir::Type& t = type_of(tensor);
  if (static_cast<int>(shape.size()) != t.rank)
    user_error("load_window: a rank-" + std::to_string(t.rank) + " tensor needs a window of rank " + std::to_string(t.rank) +
                   ", got " + shape_str(shape),
               loc);
  if (static_cast<int>(origin.size()) != t.rank)
    user_error("load_window: a rank-" + std::to_string(t.rank) + " tensor needs " + std::to_string(t.rank) +
                   " element coordinates, got " + std::to_string(origin.size()),
               loc);
  check_tile_shape(shape, "load_window", loc);
  std::vector<ValueId> ops{tensor};
  for (ValueId i : origin) ops.push_back(as_index(i, loc));
  return one(B(loc), ir::OpKind::LoadWindow, ops, loc, {ir::Type::tile(t.dtype, shape)},
             [&](ir::Op& op) { op.value = ir::scalar_cast(pad, t.dtype); });
}

void emit_store_window(ValueId piece, const std::vector<ValueId>& offsets, ValueId tile, const SourceLoc& loc) {
  const ir::Type& p = type_of(piece);
  const ir::Type& t = tile_type(tile, "store_window", loc);
  if (t.dtype != p.dtype)
    user_error("store_window: element types differ (" + ir::type_str(t) + " into " + ir::type_str(p) + ")", loc);
  if (t.rank != p.rank)
    user_error("store_window: a tile of shape " + shape_str(t.shape) + " into a rank-" + std::to_string(p.rank) +
                   " piece; the ranks must agree",
               loc);
  if (static_cast<int>(offsets.size()) != p.rank)
    user_error("store_window: a rank-" + std::to_string(p.rank) + " piece needs " + std::to_string(p.rank) +
                   " element offsets, got " + std::to_string(offsets.size()),
               loc);
  std::vector<ValueId> ops{piece};
  for (ValueId i : offsets) ops.push_back(as_index(i, loc));
  ops.push_back(tile);
  B(loc).build(ir::OpKind::StoreWindow, ops, loc);
}

namespace {
// Index tiles: integer element types, one per tensor axis, broadcast to one common shape.
std::vector<ValueId> index_tiles(const ir::Type& tensor, const std::vector<ValueId>& idx, Shape& common,
                                 const char* what, const SourceLoc& loc) {
  if (static_cast<int>(idx.size()) != tensor.rank)
    user_error(std::string(what) + ": a rank-" + std::to_string(tensor.rank) + " tensor needs " +
                   std::to_string(tensor.rank) + " index tiles, got " + std::to_string(idx.size()),
               loc);
  common.clear();
  for (ValueId i : idx) {
    const ir::Type& t = tile_type(i, what, loc);
    if (!is_integer(t.dtype)) user_error(std::string(what) + ": index tiles need an integer element type, got " + ir::type_str(t), loc);
    Shape s;
    if (!broadcast_shapes(common, t.shape, s))
      user_error(std::string(what) + ": index tile shapes do not broadcast", loc);
    common = s;
  }
  std::vector<ValueId> r;
  for (ValueId i : idx) r.push_back(to_shape(i, common, loc));
  return r;
}
}  // namespace

ValueId emit_gather(ValueId tensor, const std::vector<ValueId>& idx, ir::Scalar pad, const SourceLoc& loc) {
  const ir::Type& t = type_of(tensor);
  Shape s;
  std::vector<ValueId> ops{tensor};
  for (ValueId i : index_tiles(t, idx, s, "gather", loc)) ops.push_back(i);
  return one(B(loc), ir::OpKind::Gather, ops, loc, {}, [&](ir::Op& op) { op.value = ir::scalar_cast(pad, t.dtype); });
}

namespace {
// Scatter into a piece (indices relative to it) or into an unchecked tensor: same operand checks.
void emit_scatter(ir::OpKind kind, ValueId dest, const std::vector<ValueId>& idx, ValueId value, const SourceLoc& loc) {
  const ir::Type& t = type_of(dest);
  Shape s;
  std::vector<ValueId> ops{dest};
  for (ValueId i : index_tiles(t, idx, s, "scatter", loc)) ops.push_back(i);
  if (tile_type(value, "scatter", loc).dtype != t.dtype) user_error("scatter: element types differ", loc);
  Shape vs;
  if (!broadcast_shapes(shape_of(value), s, vs) || vs != s)
    user_error("scatter: values of shape " + shape_str(shape_of(value)) + " do not match indices of shape " + shape_str(s), loc);
  ops.push_back(to_shape(value, s, loc));
  B(loc).build(kind, ops, loc);
}
}  // namespace

void emit_scatter_piece(ValueId piece, const std::vector<ValueId>& idx, ValueId value, const SourceLoc& loc) {
  emit_scatter(ir::OpKind::ScatterPiece, piece, idx, value, loc);
}

void emit_scatter_unchecked(ValueId tensor, const std::vector<ValueId>& idx, ValueId value, const SourceLoc& loc) {
  emit_scatter(ir::OpKind::ScatterUnchecked, tensor, idx, value, loc);
}

ValueId emit_atomic_rmw(ir::AtomicKind k, ValueId tensor, const std::vector<ValueId>& idx, ValueId value,
                        const SourceLoc& loc) {
  const ir::Type& t = type_of(tensor);
  const DType d = t.dtype;
  if (!(d == DType::i32 || d == DType::i64 || d == DType::u32 || d == DType::u64 || d == DType::f32 || d == DType::f64 ||
        d == DType::f16 || d == DType::bf16 || is_fp8(d)))
    user_error(std::string("atomic ") + ir::atomic_name(k) +
                   " supports i32, i64, u32, u64, f16, bf16, f8e4m3, f8e5m2, f32 and f64 tensors, not " + std::string(dtype_name(d)),
               loc);
  Shape s;
  std::vector<ValueId> ops{tensor};
  for (ValueId i : index_tiles(t, idx, s, "atomic", loc)) ops.push_back(i);
  if (tile_type(value, "atomic", loc).dtype != d) user_error("atomic: element types differ", loc);
  Shape vs;
  if (!broadcast_shapes(shape_of(value), s, vs)) user_error("atomic: value and index shapes do not broadcast", loc);
  if (vs != s) {  // a larger value tile: broadcast the indices to it
    for (std::size_t i = 1; i < ops.size(); ++i) ops[i] = to_shape(ops[i], vs, loc);
    s = vs;
  }
  ops.push_back(to_shape(value, s, loc));
  return one(B(loc), ir::OpKind::AtomicRMW, ops, loc, {}, [&](ir::Op& op) { op.atomic = k; });
}

ValueId emit_atomic_cas(ValueId tensor, const std::vector<ValueId>& idx, ValueId expected, ValueId desired,
                        const SourceLoc& loc) {
  const ir::Type& t = type_of(tensor);
  const DType d = t.dtype;
  if (!(d == DType::i32 || d == DType::i64 || d == DType::u32 || d == DType::u64 || d == DType::f32 || d == DType::f64))
    user_error("compare_exchange supports i32, i64, u32, u64, f32 and f64 tensors, not " + std::string(dtype_name(d)), loc);
  Shape s;
  std::vector<ValueId> ops{tensor};
  for (ValueId i : index_tiles(t, idx, s, "compare_exchange", loc)) ops.push_back(i);
  for (ValueId v : {expected, desired})
    if (tile_type(v, "compare_exchange", loc).dtype != d) user_error("compare_exchange: element types differ", loc);
  ops.push_back(to_shape(expected, s, loc));
  ops.push_back(to_shape(desired, s, loc));
  return one(B(loc), ir::OpKind::AtomicCAS, ops, loc);
}

}  // namespace ctile::detail
