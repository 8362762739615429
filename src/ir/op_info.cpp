// The op registry (op_info.hpp): the traits table and the type rule of every op.
#include "ctile/ir/op_info.hpp"

#include <array>

namespace ctile::ir {
namespace {

using detail::cat;

constexpr std::size_t kOpKinds = static_cast<std::size_t>(OpKind::Yield) + 1;

constexpr OpTraits row(const char* name, Effect e, bool crosses = false, int regions = 0, bool declared = false,
                       bool isolated = false) {
  return OpTraits{name, e, crosses, regions, declared, isolated};
}

// One row per OpKind, in enum order (checked below).
constexpr std::array<OpTraits, kOpKinds> kTraits = {{
    row("ct.block_id", Effect::None),
    row("ct.num_blocks", Effect::None),
    row("ct.dim", Effect::None),
    row("ct.make_partition", Effect::None),
    row("ct.partition_count", Effect::None),
    row("ct.load", Effect::ReadMemory),
    row("ct.load_piece", Effect::ReadMemory),
    row("ct.load_window", Effect::ReadMemory, false, 0, true),
    row("ct.store_piece", Effect::WriteMemory),
    row("ct.store_window", Effect::WriteMemory),
    row("ct.gather", Effect::ReadMemory),
    // Duplicate indices in one tile resolve to the last element: elements of other threads matter.
    row("ct.scatter_piece", Effect::WriteMemory, true),
    row("ct.scatter_unchecked", Effect::WriteMemory, true),
    row("ct.atomic_rmw", Effect::WriteMemory),
    row("ct.atomic_cas", Effect::WriteMemory),
    row("ct.constant", Effect::None, false, 0, true),
    row("ct.iota", Effect::None, false, 0, true),
    row("ct.broadcast", Effect::None, true, 0, true),
    row("ct.reshape", Effect::None, true, 0, true),
    row("ct.permute", Effect::None, true),
    row("ct.cat", Effect::None, true),
    row("ct.extract", Effect::None, true, 0, true),
    row("ct.unary", Effect::None),
    row("ct.binary", Effect::None),
    row("ct.fma", Effect::None),
    row("ct.cmp", Effect::None),
    row("ct.select", Effect::None),
    row("ct.convert", Effect::None, false, 0, true),
    row("ct.bitcast", Effect::None, false, 0, true),
    // Pure: the same seed and offset give the same numbers (a counter-based generator has no state).
    row("ct.random", Effect::None),
    row("ct.reduce", Effect::None, true),
    row("ct.scan", Effect::None, true),
    row("ct.reduce_with", Effect::None, true, 1, false, true),
    row("ct.scan_with", Effect::None, true, 1, false, true),
    row("ct.mma", Effect::None, true),
    row("ct.convert_layout", Effect::None, true),
    row("ct.for", Effect::Control, false, 1),
    row("ct.if", Effect::Control, false, 2),
    row("ct.while", Effect::Control, false, 2),
    row("ct.yield", Effect::Terminator),
}};

constexpr bool names_in_order() {
  // A few spot checks that the table follows the enum (a shifted row would misname every op after it).
  return kTraits[static_cast<std::size_t>(OpKind::Load)].name[3] == 'l' &&
         kTraits[static_cast<std::size_t>(OpKind::Mma)].name[3] == 'm' &&
         kTraits[static_cast<std::size_t>(OpKind::ScanWith)].name[7] == '_' &&
         kTraits[static_cast<std::size_t>(OpKind::ConvertLayout)].name[11] == 'l' &&
         kTraits[static_cast<std::size_t>(OpKind::Yield)].name[3] == 'y';
}
static_assert(names_in_order(), "kTraits rows must follow the order of OpKind");

bool is_i64_scalar(const Type& t) { return t.is_scalar() && t.dtype == DType::i64; }
bool is_bool_scalar(const Type& t) { return t.is_scalar() && t.dtype == DType::b1; }
bool is_atomic_dtype(DType d) {
  return d == DType::i32 || d == DType::i64 || d == DType::u32 || d == DType::u64 || d == DType::f32 ||
         d == DType::f64;
}

bool unary_ok(UnaryFn f, DType d) {
  const bool bits = f == UnaryFn::Popcount || f == UnaryFn::Clz;  // integer-only
  if (is_float(d)) return f != UnaryFn::Not && !bits;
  if (is_signed_int(d)) return f == UnaryFn::Neg || f == UnaryFn::Abs || f == UnaryFn::Not || bits;
  if (is_unsigned_int(d)) return f == UnaryFn::Not || bits;
  return f == UnaryFn::Not;  // bool
}

bool binary_ok(BinaryFn f, DType d) {
  switch (f) {
    case BinaryFn::Add: case BinaryFn::Sub: case BinaryFn::Mul: case BinaryFn::Div:
    case BinaryFn::Rem: case BinaryFn::Min: case BinaryFn::Max:
      return is_float(d) || is_integer(d);
    case BinaryFn::Pow: case BinaryFn::Atan2: return is_float(d);
    case BinaryFn::And: case BinaryFn::Or: case BinaryFn::Xor: return is_integer(d) || is_bool(d);
    case BinaryFn::Shl: case BinaryFn::Shr: return is_integer(d);
  }
  return false;
}

// The operand pairs and accumulators of ct.mma (docs/ir.md): a and b of one type, or two fp8
// types (e4m3 and e5m2 mix) into f32.
bool mma_ok(DType a, DType b, DType acc) {
  if (is_fp8(a) || is_fp8(b)) return is_fp8(a) && is_fp8(b) && acc == DType::f32;
  if (a != b) return false;
  switch (a) {
    case DType::f16: return acc == DType::f32 || acc == DType::f16;
    case DType::bf16: return acc == DType::f32;
    case DType::f32: return acc == DType::f32;
    case DType::f64: return acc == DType::f64;
    case DType::i8: case DType::u8: return acc == DType::i32;
    default: return false;
  }
}

// The checks of one op's type rule, over its operand types.
class Rule {
 public:
  Rule(const Kernel& k, const Op& op, std::span<const Type> declared) : k_(k), op_(op), declared_(declared) {}

  std::vector<Type> run();

 private:
  [[noreturn]] void fail(const std::string& m) const { throw TypeError(m); }
  std::size_t n() const { return op_.operands.size(); }
  const Type& T(std::size_t i) const { return k_.type(op_.operands[i]); }
  void nops(std::size_t want) const {
    if (n() != want) fail(cat("expected ", want, " operands, got ", n()));
  }
  const Type& tile(std::size_t i) const {
    if (!T(i).is_tile()) fail(cat("operand ", i, " has type ", type_str(T(i)), ", expected a tile"));
    return T(i);
  }
  void i64_scalar(std::size_t i) const {
    if (!is_i64_scalar(T(i))) fail(cat("operand ", i, " has type ", type_str(T(i)), ", expected an i64 scalar"));
  }
  void operand_is(std::size_t i, const Type& want) const {
    if (!(T(i) == want)) fail(cat("operand ", i, " has type ", type_str(T(i)), ", expected ", type_str(want)));
  }
  void axis_in(int rank) const {
    if (op_.axis < 0 || op_.axis >= rank) fail(cat("axis ", op_.axis, " out of range [0, ", rank, ")"));
  }
  const Type& kind_of(std::size_t i, TypeKind kd, const char* what) const {
    if (T(i).kind != kd) fail(cat("operand ", i, " has type ", type_str(T(i)), ", expected ", what));
    return T(i);
  }
  // The declared result type of an op whose result type is given.
  const Type& declared(std::size_t i = 0) const {
    if (declared_.size() <= i) fail(cat("expected ", i + 1, " declared result type(s), got ", declared_.size()));
    return declared_[i];
  }
  // Index tiles ops[first .. first+rank): integer tiles of one shape; returns that shape.
  Shape indices(std::size_t first, int rank) const {
    Shape s;
    for (int d = 0; d < rank; ++d) {
      const std::size_t i = first + static_cast<std::size_t>(d);
      const Type& t = tile(i);
      if (!is_integer(t.dtype)) fail(cat("index operand ", i, " has type ", type_str(t), ", expected integers"));
      if (d == 0) s = t.shape;
      else if (t.shape != s) fail(cat("index operand ", i, " has shape ", shape_str(t.shape), ", expected ", shape_str(s)));
    }
    return s;
  }
  int tensor_rank(const Type& t) const {
    if (t.rank < 1) fail("the tensor must have rank >= 1");
    return t.rank;
  }
  void no_numerics() const {
    if (op_.rounding != Rounding::Default && !takes_rounding(op_))
      fail(cat("rounding = ", rounding_name(op_.rounding), " on an op that takes no rounding"));
    if (op_.rounding != Rounding::Default && !rounding_allowed(op_, op_.rounding))
      fail(cat("rounding = ", rounding_name(op_.rounding), " is not available for this op"));
    if (op_.ftz && !takes_rounding(op_)) fail("ftz on an op that takes no rounding");
    if (op_.propagate_nan && !takes_nan_policy(op_)) fail("propagate_nan on an op that is not a float min/max");
    if (op_.propagate_nan && !op_.operands.empty() && !is_float(T(0).dtype)) fail("propagate_nan on integers");
    if ((op_.rounding != Rounding::Default || op_.ftz) && !op_.operands.empty() && !is_float(T(0).dtype))
      fail("a rounding mode on a non-float op");
    if ((op_.rounding == Rounding::Approx || op_.ftz) && !op_.operands.empty() && T(0).dtype == DType::f64)
      fail("approx and ftz are not available for f64");
  }

  const Kernel& k_;
  const Op& op_;
  std::span<const Type> declared_;
};

std::vector<Type> Rule::run() {
  const Op& op = op_;
  no_numerics();
  switch (op.kind) {
    case OpKind::BlockId:
    case OpKind::NumBlocks:
      nops(0);
      axis_in(k_.grid_rank);
      return {Type::scalar(DType::i64)};
    case OpKind::Dim:
      nops(1);
      if (T(0).kind == TypeKind::Tile) fail(cat("operand has type ", type_str(T(0)), ", expected a tensor, partition or piece"));
      axis_in(T(0).rank);
      return {Type::scalar(DType::i64)};
    case OpKind::MakePartition: {
      nops(1);
      const Type& t = kind_of(0, TypeKind::Tensor, "a tensor");
      if (t.access != Access::Read) fail(cat("operand has type ", type_str(t), ", expected a read-only tensor"));
      if (static_cast<int>(op.shape.size()) != t.rank)
        fail(cat("tile shape ", shape_str(op.shape), " does not have the tensor's rank ", t.rank));
      for (std::int64_t e : op.shape)
        if (!is_pow2(e)) fail(cat("tile shape ", shape_str(op.shape), " has an extent that is not a power of two"));
      return {Type::partition(t.dtype, t.rank, op.shape)};
    }
    case OpKind::PartitionCount:
      nops(1);
      if (T(0).kind != TypeKind::Partition && T(0).kind != TypeKind::Piece)
        fail(cat("operand has type ", type_str(T(0)), ", expected a partition or piece"));
      axis_in(T(0).rank);
      return {Type::scalar(DType::i64)};
    case OpKind::Load: {
      if (n() < 1) fail("expected a partition operand");
      const Type& p = kind_of(0, TypeKind::Partition, "a partition");
      nops(1 + static_cast<std::size_t>(p.rank));
      for (std::size_t i = 1; i < n(); ++i) i64_scalar(i);
      return {Type::tile(p.dtype, p.shape)};
    }
    case OpKind::LoadPiece: {
      nops(1);
      const Type& p = kind_of(0, TypeKind::Piece, "a piece");
      return {Type::tile(p.dtype, p.shape)};
    }
    case OpKind::LoadWindow: {
      if (n() < 1) fail("expected a tensor operand");
      const Type& t = kind_of(0, TypeKind::Tensor, "a tensor");
      if (t.access != Access::Read) fail(cat("operand has type ", type_str(t), ", expected a read-only tensor"));
      const int r = tensor_rank(t);
      nops(1 + static_cast<std::size_t>(r));
      for (std::size_t i = 1; i < n(); ++i) i64_scalar(i);
      const Type& y = declared();
      if (!y.is_tile() || y.dtype != t.dtype || y.rank != r)
        fail(cat("result has type ", type_str(y), ", expected a rank-", r, " tile of ", dtype_name(t.dtype)));
      for (std::int64_t e : y.shape)
        if (!is_pow2(e)) fail(cat("window shape ", shape_str(y.shape), " has an extent that is not a power of two"));
      return {y};
    }
    case OpKind::StoreWindow: {
      // Into a piece (offsets relative to it), or into a whole unchecked tensor (offsets absolute:
      // what canonicalize makes of a scatter whose indices are a block of consecutive positions).
      if (n() < 1) fail("expected a piece or an unchecked tensor operand");
      if (T(0).kind == TypeKind::Tensor && T(0).access != Access::Unchecked)
        fail(cat("operand 0 has type ", type_str(T(0)), ", expected a piece or an unchecked tensor"));
      const Type& p = T(0).kind == TypeKind::Tensor ? T(0) : kind_of(0, TypeKind::Piece, "a piece or an unchecked tensor");
      if (p.kind == TypeKind::Tensor) tensor_rank(p);
      nops(2 + static_cast<std::size_t>(p.rank));
      for (std::size_t i = 1; i + 1 < n(); ++i) i64_scalar(i);
      const Type& v = tile(n() - 1);
      if (v.dtype != p.dtype || v.rank != p.rank)
        fail(cat("operand ", n() - 1, " has type ", type_str(v), ", expected a rank-", p.rank, " tile of ", dtype_name(p.dtype)));
      return {};
    }
    case OpKind::StorePiece: {
      nops(2);
      const Type& p = kind_of(0, TypeKind::Piece, "a piece");
      operand_is(1, Type::tile(p.dtype, p.shape));
      return {};
    }
    case OpKind::Gather: {
      if (n() < 1) fail("expected a tensor operand");
      const Type& t = kind_of(0, TypeKind::Tensor, "a tensor");
      if (t.access == Access::Piece) fail("cannot gather from a tensor with piece access");
      const int r = tensor_rank(t);
      nops(1 + static_cast<std::size_t>(r));
      return {Type::tile(t.dtype, indices(1, r))};
    }
    case OpKind::ScatterPiece:
    case OpKind::ScatterUnchecked: {
      if (n() < 1) fail("expected a tensor operand");
      const Type* t;
      if (op.kind == OpKind::ScatterPiece) {
        t = &kind_of(0, TypeKind::Piece, "a piece");
      } else {
        t = &kind_of(0, TypeKind::Tensor, "a tensor");
        if (t->access != Access::Unchecked) fail(cat("operand has type ", type_str(*t), ", expected an unchecked tensor"));
      }
      const int r = tensor_rank(*t);
      nops(2 + static_cast<std::size_t>(r));
      operand_is(n() - 1, Type::tile(t->dtype, indices(1, r)));
      return {};
    }
    case OpKind::AtomicRMW:
    case OpKind::AtomicCAS: {
      if (n() < 1) fail("expected a tensor operand");
      const Type& t = kind_of(0, TypeKind::Tensor, "a tensor");
      if (t.access != Access::Atomic) fail(cat("operand has type ", type_str(t), ", expected an atomic tensor"));
      // The narrow floats: read-modify-writes only, no CAS.
      const bool half = t.dtype == DType::f16 || t.dtype == DType::bf16 || is_fp8(t.dtype);
      if (!is_atomic_dtype(t.dtype) && !(half && op.kind == OpKind::AtomicRMW))
        fail(cat("atomics on ", dtype_name(t.dtype), " are not supported"));
      const int r = tensor_rank(t);
      const std::size_t nv = op.kind == OpKind::AtomicRMW ? 1 : 2;
      nops(1 + static_cast<std::size_t>(r) + nv);
      const Type vt = Type::tile(t.dtype, indices(1, r));
      for (std::size_t i = n() - nv; i < n(); ++i) operand_is(i, vt);
      return {vt};
    }
    case OpKind::Constant: {
      nops(0);
      const Type& y = declared();
      if (!y.is_tile()) fail(cat("result has type ", type_str(y), ", expected a tile"));
      return {y};
    }
    case OpKind::Iota: {
      nops(0);
      const Type& y = declared();
      if (!y.is_tile() || y.rank != 1 || is_bool(y.dtype))
        fail(cat("result has type ", type_str(y), ", expected a 1-D numeric tile"));
      if (const std::int64_t g = op.value.i; op.value.is_float || g < 0 || (g > 1 && (!is_pow2(g) || y.shape[0] % g != 0)))
        fail(cat("floor ", g, " is not a power of two that divides the length ", y.shape[0]));
      return {y};
    }
    case OpKind::Broadcast: {
      nops(1);
      const Type& x = tile(0);
      const Type& y = declared();
      if (!y.is_tile() || y.dtype != x.dtype || y.rank != x.rank) fail(cat("cannot broadcast ", type_str(x), " to ", type_str(y)));
      for (std::size_t d = 0; d < x.shape.size(); ++d)
        if (x.shape[d] != y.shape[d] && x.shape[d] != 1)
          fail(cat("cannot broadcast ", type_str(x), " to ", type_str(y), " (axis ", d, ")"));
      return {y};
    }
    case OpKind::Reshape: {
      nops(1);
      const Type& x = tile(0);
      const Type& y = declared();
      if (!y.is_tile() || y.dtype != x.dtype || numel(y.shape) != numel(x.shape))
        fail(cat("cannot reshape ", type_str(x), " to ", type_str(y)));
      return {y};
    }
    case OpKind::Permute: {
      nops(1);
      const Type& x = tile(0);
      if (static_cast<int>(op.perm.size()) != x.rank) fail(cat("perm has ", op.perm.size(), " entries for rank ", x.rank));
      std::vector<char> seen(op.perm.size(), 0);
      Shape s(op.perm.size());
      for (std::size_t i = 0; i < op.perm.size(); ++i) {
        const int p = op.perm[i];
        if (p < 0 || p >= x.rank || seen[static_cast<std::size_t>(p)]) fail("perm is not a permutation");
        seen[static_cast<std::size_t>(p)] = 1;
        s[i] = x.shape[static_cast<std::size_t>(p)];
      }
      return {Type::tile(x.dtype, s)};
    }
    case OpKind::Cat: {
      nops(2);
      const Type& a = tile(0);
      const Type& b = tile(1);
      if (a.dtype != b.dtype || a.rank != b.rank) fail(cat("cannot concatenate ", type_str(a), " and ", type_str(b)));
      axis_in(a.rank);
      Shape s = a.shape;
      for (std::size_t d = 0; d < s.size(); ++d) {
        if (static_cast<int>(d) == op.axis) s[d] += b.shape[d];
        else if (a.shape[d] != b.shape[d])
          fail(cat("cannot concatenate ", type_str(a), " and ", type_str(b), " along axis ", op.axis));
      }
      return {Type::tile(a.dtype, s)};
    }
    case OpKind::Extract: {
      nops(1);
      const Type& x = tile(0);
      const Type& y = declared();
      if (!y.is_tile() || y.dtype != x.dtype || y.rank != x.rank) fail(cat("cannot extract ", type_str(y), " from ", type_str(x)));
      if (static_cast<int>(op.offsets.size()) != x.rank) fail(cat("offsets ", shape_str(op.offsets), " do not have rank ", x.rank));
      for (std::size_t d = 0; d < op.offsets.size(); ++d)
        if (op.offsets[d] < 0 || op.offsets[d] > x.shape[d] - y.shape[d])
          fail(cat("extracting ", shape_str(y.shape), " at ", shape_str(op.offsets), " from ", type_str(x), " is out of bounds"));
      return {y};
    }
    case OpKind::Unary: {
      nops(1);
      const Type& x = tile(0);
      if (!unary_ok(op.unary, x.dtype)) fail(cat(unary_name(op.unary), " is not defined on ", dtype_name(x.dtype)));
      return {x};
    }
    case OpKind::Binary: {
      nops(2);
      const Type& a = tile(0);
      operand_is(1, a);
      if (!binary_ok(op.binary, a.dtype)) fail(cat(binary_name(op.binary), " is not defined on ", dtype_name(a.dtype)));
      return {a};
    }
    case OpKind::Fma: {
      nops(3);
      const Type& a = tile(0);
      operand_is(1, a);
      operand_is(2, a);
      if (is_bool(a.dtype)) fail("fma is not defined on bool");
      return {a};
    }
    case OpKind::Cmp: {
      nops(2);
      const Type& a = tile(0);
      operand_is(1, a);
      return {Type::tile(DType::b1, a.shape)};
    }
    case OpKind::Select: {
      nops(3);
      const Type& a = tile(1);
      operand_is(0, Type::tile(DType::b1, a.shape));
      operand_is(2, a);
      return {a};
    }
    case OpKind::Convert: {
      nops(1);
      const Type& x = tile(0);
      const Type& y = declared();
      if (!y.is_tile() || y.shape != x.shape) fail(cat("cannot convert ", type_str(x), " to ", type_str(y)));
      return {y};
    }
    case OpKind::Bitcast: {
      nops(1);
      const Type& x = tile(0);
      const Type& y = declared();
      if (!y.is_tile() || y.shape != x.shape) fail(cat("cannot bitcast ", type_str(x), " to ", type_str(y)));
      if (is_bool(x.dtype) || is_bool(y.dtype) || dtype_size(x.dtype) != dtype_size(y.dtype))
        fail(cat("cannot bitcast ", dtype_name(x.dtype), " to ", dtype_name(y.dtype), " (bitcasts keep the width; bool has none)"));
      return {y};
    }
    case OpKind::Random: {
      nops(2);
      const Type& off = tile(1);
      operand_is(0, Type::tile(DType::i64, off.shape));
      operand_is(1, Type::tile(DType::i64, off.shape));
      return {Type::tile(op.random == RandomDist::Bits ? DType::u32 : DType::f32, off.shape)};
    }
    case OpKind::Reduce: {
      nops(1);
      const Type& x = tile(0);
      axis_in(x.rank);
      const bool arith = op.reduce == ReduceKind::Sum || op.reduce == ReduceKind::Prod;
      if (arith && is_bool(x.dtype)) fail(cat(reduce_name(op.reduce), " is not defined on bool"));
      Shape s = x.shape;
      s.erase(s.begin() + op.axis);
      const bool arg = op.reduce == ReduceKind::ArgMax || op.reduce == ReduceKind::ArgMin;
      return {Type::tile(arg ? DType::i64 : x.dtype, s)};
    }
    case OpKind::Scan: {
      nops(1);
      const Type& x = tile(0);
      axis_in(x.rank);
      if (op.reduce == ReduceKind::ArgMax || op.reduce == ReduceKind::ArgMin)
        fail(cat(reduce_name(op.reduce), " is not a scan (sum, prod, max, min)"));
      if (is_bool(x.dtype) && (op.reduce == ReduceKind::Sum || op.reduce == ReduceKind::Prod))
        fail(cat(reduce_name(op.reduce), " scan is not defined on bool"));
      return {x};
    }
    case OpKind::ReduceWith:
    case OpKind::ScanWith: {
      // k combined tiles of one shape (then, for an exclusive scan, k identity scalars).
      const bool ids = op.kind == OpKind::ScanWith && op.exclusive;
      if (n() == 0 || (ids && n() % 2 != 0))
        fail(cat("expected ", ids ? "k tiles and k identity scalars" : "at least one tile", ", got ", n(), " operands"));
      const std::size_t nk = ids ? n() / 2 : n();
      const Shape& s = tile(0).shape;
      axis_in(static_cast<int>(s.size()));
      std::vector<Type> out;
      for (std::size_t i = 0; i < nk; ++i) {
        const Type& x = tile(i);
        if (x.shape != s) fail(cat("operand ", i, " has shape ", shape_str(x.shape), ", expected ", shape_str(s), " (one shape for all)"));
        if (ids) operand_is(nk + i, Type::scalar(x.dtype));
        Shape r = s;
        if (op.kind == OpKind::ReduceWith) r.erase(r.begin() + op.axis);
        out.push_back(Type::tile(x.dtype, r));
      }
      return out;
    }
    case OpKind::Mma: {
      nops(3);
      const Type& a = tile(0);
      const Type& b = tile(1);
      const Type& c = tile(2);
      // [M,K] x [K,N] + [M,N], or batched: [P,M,K] x [P,K,N] + [P,M,N].
      const int r = a.rank;
      const auto at = [](const Type& t, int d) { return t.shape[static_cast<std::size_t>(d)]; };
      if ((r != 2 && r != 3) || b.rank != r || c.rank != r || at(a, r - 1) != at(b, r - 2) || at(c, r - 2) != at(a, r - 2) ||
          at(c, r - 1) != at(b, r - 1) || (r == 3 && (at(b, 0) != at(a, 0) || at(c, 0) != at(a, 0))))
        fail(cat("shapes ", type_str(a), " x ", type_str(b), " + ", type_str(c),
                 " do not match [M,K] x [K,N] + [M,N] or [P,M,K] x [P,K,N] + [P,M,N]"));
      if (!mma_ok(a.dtype, b.dtype, c.dtype))
        fail(cat("unsupported dtypes ", dtype_name(a.dtype), " x ", dtype_name(b.dtype), " -> ", dtype_name(c.dtype)));
      return {c};
    }
    case OpKind::ConvertLayout: {
      nops(1);
      return {tile(0)};
    }
    case OpKind::For: {
      if (n() < 3) fail(cat("expected at least 3 operands (lb, ub, step), got ", n()));
      for (std::size_t i = 0; i < 3; ++i) i64_scalar(i);
      std::vector<Type> carried;
      for (std::size_t i = 3; i < n(); ++i) carried.push_back(T(i));
      return carried;
    }
    case OpKind::If: {
      nops(1);
      if (!is_bool_scalar(T(0))) fail(cat("condition has type ", type_str(T(0)), ", expected a bool scalar"));
      return std::vector<Type>(declared_.begin(), declared_.end());
    }
    case OpKind::While: {
      std::vector<Type> carried;
      for (std::size_t i = 0; i < n(); ++i) carried.push_back(T(i));
      return carried;
    }
    case OpKind::Yield:
      return {};
  }
  fail("unknown op kind");
}

}  // namespace

const OpTraits& traits(OpKind k) {
  const auto i = static_cast<std::size_t>(k);
  CTILE_CHECK(i < kOpKinds, "op kind ", i, " is not in the registry");
  return kTraits[i];
}

const char* op_name(OpKind k) {
  const auto i = static_cast<std::size_t>(k);
  return i < kOpKinds ? kTraits[i].name : "ct.?";
}

bool removable_if_unused(const Op& op) {
  const Effect e = traits(op.kind).effect;
  return e == Effect::None || e == Effect::ReadMemory;
}

bool is_pure(const Op& op) { return traits(op.kind).effect == Effect::None; }

bool reads_mutable_memory(const Kernel& k, const Op& op) {
  if (traits(op.kind).effect != Effect::ReadMemory || op.operands.empty()) return false;
  const Type& t = k.type(op.operands[0]);
  return t.kind == TypeKind::Piece || t.access != Access::Read;
}

std::vector<Type> infer_types(const Kernel& k, const Op& op, std::span<const Type> declared) {
  return Rule(k, op, declared).run();
}

bool combinable(OpKind k) {
  switch (k) {
    case OpKind::Constant: case OpKind::Unary: case OpKind::Binary: case OpKind::Fma: case OpKind::Cmp:
    case OpKind::Select: case OpKind::Convert: case OpKind::Bitcast:
      return true;
    default: return false;
  }
}

bool takes_rounding(const Op& op) {
  if (op.kind == OpKind::Unary) {
    switch (op.unary) {
      case UnaryFn::Exp: case UnaryFn::Exp2: case UnaryFn::Log: case UnaryFn::Log2:
      case UnaryFn::Sqrt: case UnaryFn::Rsqrt: case UnaryFn::Tanh:
        return true;
      default: return false;
    }
  }
  return op.kind == OpKind::Binary && op.binary == BinaryFn::Div;
}

bool rounding_allowed(const Op& op, Rounding r) {
  if (!takes_rounding(op)) return r == Rounding::Default;
  if (r == Rounding::Default || r == Rounding::Full || r == Rounding::Approx) return true;
  // Rn (correctly rounded) exists for division and square root only; the transcendental
  // functions are never correctly rounded on the GPU.
  return (op.kind == OpKind::Binary && op.binary == BinaryFn::Div) ||
         (op.kind == OpKind::Unary && op.unary == UnaryFn::Sqrt);
}

Rounding default_rounding(const Op& op) {
  if (op.kind == OpKind::Binary && op.binary == BinaryFn::Div) return Rounding::Rn;
  if (op.kind == OpKind::Unary && op.unary == UnaryFn::Sqrt) return Rounding::Rn;
  return Rounding::Full;
}

bool takes_nan_policy(const Op& op) {
  if (op.kind == OpKind::Binary) return op.binary == BinaryFn::Min || op.binary == BinaryFn::Max;
  if (op.kind == OpKind::Reduce) return op.reduce == ReduceKind::Max || op.reduce == ReduceKind::Min;
  return false;
}

bool calls_function(const Op& op) {
  if (op.kind == OpKind::Unary) return op.unary != UnaryFn::Neg && op.unary != UnaryFn::Abs && op.unary != UnaryFn::Not;
  if (op.kind == OpKind::Binary)
    return op.binary == BinaryFn::Div || op.binary == BinaryFn::Rem || op.binary == BinaryFn::Pow ||
           op.binary == BinaryFn::Atan2;
  return false;
}

}  // namespace ctile::ir
