// The IR verifier: structural and type rules of the tile IR (docs/ir.md). Any violation is a bug in
// whoever produced the IR (the tracing front end), so it throws InternalError naming the op, the
// problem and the op's source location.
#include <algorithm>
#include <string>
#include <vector>

#include "ctile/ir/ir.hpp"

namespace ctile::ir {
namespace {

using detail::cat;

bool is_i64_scalar(const Type& t) { return t.is_scalar() && t.dtype == DType::i64; }
bool is_bool_scalar(const Type& t) { return t.is_scalar() && t.dtype == DType::b1; }
bool is_atomic_dtype(DType d) {
  return d == DType::i32 || d == DType::i64 || d == DType::u32 || d == DType::u64 || d == DType::f32 ||
         d == DType::f64;
}

bool unary_ok(UnaryFn f, DType d) {
  if (is_float(d)) return f != UnaryFn::Not;
  if (is_signed_int(d)) return f == UnaryFn::Neg || f == UnaryFn::Abs || f == UnaryFn::Not;
  return f == UnaryFn::Not;  // unsigned ints and bool
}

bool binary_ok(BinaryFn f, DType d) {
  switch (f) {
    case BinaryFn::Add: case BinaryFn::Sub: case BinaryFn::Mul: case BinaryFn::Div:
    case BinaryFn::Rem: case BinaryFn::Min: case BinaryFn::Max:
      return is_float(d) || is_integer(d);
    case BinaryFn::Pow: return is_float(d);
    case BinaryFn::And: case BinaryFn::Or: case BinaryFn::Xor: return is_integer(d) || is_bool(d);
    case BinaryFn::Shl: case BinaryFn::Shr: return is_integer(d);
  }
  return false;
}

bool mma_ok(DType ab, DType acc) {
  switch (ab) {
    case DType::f16: return acc == DType::f32 || acc == DType::f16;
    case DType::bf16: return acc == DType::f32;
    case DType::f32: return acc == DType::f32;
    case DType::f64: return acc == DType::f64;
    case DType::i8: case DType::u8: return acc == DType::i32;
    default: return false;
  }
}

bool is_control(OpKind k) { return k == OpKind::For || k == OpKind::If || k == OpKind::While; }

class Verifier {
 public:
  explicit Verifier(const Kernel& k) : k_(k), defined_(k.values.size(), 0), visible_(k.values.size(), 0) {}

  void run() {
    if (k_.grid_rank < 1 || k_.grid_rank > kMaxRank) kfail(cat("grid rank ", k_.grid_rank, " is not in [1, ", kMaxRank, "]"));
    if (k_.body.args.size() != k_.params.size())
      kfail(cat("the body has ", k_.body.args.size(), " arguments for ", k_.params.size(), " parameters"));
    for (std::size_t i = 0; i < k_.params.size(); ++i) {
      const Param& p = k_.params[i];
      if (p.value != k_.body.args[i])
        kfail(cat("parameter '", p.name, "' is value %", p.value, " but body argument ", i, " is %", k_.body.args[i]));
      if (!in_range(p.value)) kfail(cat("parameter '", p.name, "' has value id %", p.value, " out of range"));
      const bool ok_kind = p.type.kind == TypeKind::Piece || p.type.kind == TypeKind::Tensor || p.type.is_scalar();
      if (!ok_kind) kfail(cat("parameter '", p.name, "' has type ", type_str(p.type), " (not a piece, tensor or scalar)"));
      if (!(k_.type(p.value) == p.type))
        kfail(cat("parameter '", p.name, "' has type ", type_str(p.type), " but its value %", p.value, " has type ",
                  type_str(k_.type(p.value))));
      if (p.type.kind == TypeKind::Tensor && p.type.access == Access::Piece)
        kfail(cat("parameter '", p.name, "' is a tensor with piece access"));
      // Block b owns the tile at tile index b of every piece parameter: the pieces of different
      // blocks are disjoint only if the ranks agree.
      if (p.type.kind == TypeKind::Piece && p.type.rank != k_.grid_rank)
        kfail(cat("piece parameter '", p.name, "' has rank ", p.type.rank, " but the grid has ", k_.grid_rank, " axes"));
    }
    region(k_.body, nullptr, 0, {});
  }

 private:
  [[noreturn]] void fail(const Op& op, const std::string& msg) const {
    throw InternalError(cat("IR verifier: ", op_name(op.kind), ": ", msg, " at ", op.loc.str()));
  }
  [[noreturn]] void kfail(const std::string& msg) const {
    throw InternalError(cat("IR verifier: kernel '", k_.name, "': ", msg));
  }
  [[noreturn]] void fail_at(const Op* op, const std::string& msg) const {
    if (op) fail(*op, msg);
    kfail(msg);
  }

  bool in_range(ValueId v) const { return v >= 0 && static_cast<std::size_t>(v) < k_.values.size(); }

  // A well-formed type: static shapes with power-of-two extents, ranks within limits.
  void check_type(const Op* op, ValueId v) const {
    const Type& t = k_.type(v);
    const auto where = [&] { return cat("value %", v, " of type ", type_str(t), ": "); };
    if (t.rank < 0 || t.rank > kMaxRank) fail_at(op, cat(where(), "rank out of [0, ", kMaxRank, "]"));
    switch (t.kind) {
      case TypeKind::Tensor:
        if (!t.shape.empty()) fail_at(op, cat(where(), "a tensor type carries a tile shape"));
        return;
      case TypeKind::Tile:
      case TypeKind::Partition:
      case TypeKind::Piece:
        if (static_cast<int>(t.shape.size()) != t.rank) fail_at(op, cat(where(), "rank does not match the shape"));
        for (std::int64_t e : t.shape)
          if (!is_pow2(e)) fail_at(op, cat(where(), "tile extent ", e, " is not a power of two"));
        if (t.kind == TypeKind::Partition && t.access != Access::Read)
          fail_at(op, cat(where(), "a partition must have read access"));
        if (t.kind == TypeKind::Piece && t.access != Access::Piece)
          fail_at(op, cat(where(), "a piece must have piece access"));
        return;
    }
  }

  void define(const Op* op, ValueId v, const char* what) {
    if (!in_range(v)) fail_at(op, cat(what, " value id %", v, " out of range [0, ", k_.values.size(), ")"));
    auto& d = defined_[static_cast<std::size_t>(v)];
    if (d) fail_at(op, cat(what, " %", v, " is defined more than once"));
    d = 1;
    visible_[static_cast<std::size_t>(v)] = 1;
    scope_.push_back(v);
    check_type(op, v);
  }

  // Checks region r (owned by `owner`, region number `index`; null for the kernel body) whose Yield
  // must carry `yields`. Region arguments are checked by the owner before.
  void region(const Region& r, const Op* owner, std::size_t index, const std::vector<Type>& yields) {
    const std::size_t mark = scope_.size();
    for (ValueId a : r.args) define(owner, a, "region argument");
    if (r.ops.empty() || !r.ops.back() || r.ops.back()->kind != OpKind::Yield)
      fail_at(owner, cat("region ", index, " does not end with ct.yield"));
    for (std::size_t i = 0; i < r.ops.size(); ++i) {
      if (!r.ops[i]) fail_at(owner, cat("region ", index, " holds a null op"));
      const Op& op = *r.ops[i];
      if (op.kind == OpKind::Yield && i + 1 != r.ops.size()) fail(op, "ct.yield is not the last op of its region");
      for (std::size_t j = 0; j < op.operands.size(); ++j) {
        const ValueId v = op.operands[j];
        if (!in_range(v)) fail(op, cat("operand ", j, " has value id %", v, " out of range [0, ", k_.values.size(), ")"));
        if (!visible_[static_cast<std::size_t>(v)])
          fail(op, cat("operand ", j, " (%", v, ") is not defined before this use (dominance)"));
      }
      for (std::size_t j = 0; j < op.results.size(); ++j)
        if (!in_range(op.results[j]))
          fail(op, cat("result ", j, " has value id %", op.results[j], " out of range [0, ", k_.values.size(), ")"));
      if (op.kind == OpKind::Yield) {
        if (!op.results.empty()) fail(op, "ct.yield has results");
        if (!op.regions.empty()) fail(op, "ct.yield has regions");
        if (op.operands.size() != yields.size())
          fail(op, cat("yields ", op.operands.size(), " values, expected ", yields.size()));
        for (std::size_t j = 0; j < yields.size(); ++j)
          if (!(k_.type(op.operands[j]) == yields[j]))
            fail(op, cat("yielded value ", j, " has type ", type_str(k_.type(op.operands[j])), ", expected ",
                         type_str(yields[j])));
        continue;
      }
      check_op(op);
      for (ValueId v : op.results) define(&op, v, "result");
    }
    while (scope_.size() > mark) {
      visible_[static_cast<std::size_t>(scope_.back())] = 0;
      scope_.pop_back();
    }
  }

  void check_op(const Op& op) {
    const auto& ops = op.operands;
    const std::size_t n_ops = ops.size();
    auto T = [&](std::size_t i) -> const Type& { return k_.type(ops[i]); };
    auto R = [&](std::size_t i) -> const Type& { return k_.type(op.results[i]); };
    auto nops = [&](std::size_t n) {
      if (n_ops != n) fail(op, cat("expected ", n, " operands, got ", n_ops));
    };
    auto nres = [&](std::size_t n) {
      if (op.results.size() != n) fail(op, cat("expected ", n, " results, got ", op.results.size()));
    };
    auto tile = [&](std::size_t i) -> const Type& {
      if (!T(i).is_tile()) fail(op, cat("operand ", i, " has type ", type_str(T(i)), ", expected a tile"));
      return T(i);
    };
    auto i64_scalar = [&](std::size_t i) {
      if (!is_i64_scalar(T(i))) fail(op, cat("operand ", i, " has type ", type_str(T(i)), ", expected an i64 scalar"));
    };
    auto result_is = [&](const Type& want) {
      nres(1);
      if (!(R(0) == want)) fail(op, cat("result has type ", type_str(R(0)), ", expected ", type_str(want)));
    };
    auto operand_is = [&](std::size_t i, const Type& want) {
      if (!(T(i) == want)) fail(op, cat("operand ", i, " has type ", type_str(T(i)), ", expected ", type_str(want)));
    };
    auto axis_in = [&](int rank) {
      if (op.axis < 0 || op.axis >= rank) fail(op, cat("axis ", op.axis, " out of range [0, ", rank, ")"));
    };
    auto kind_of = [&](std::size_t i, TypeKind k, const char* what) -> const Type& {
      if (T(i).kind != k) fail(op, cat("operand ", i, " has type ", type_str(T(i)), ", expected ", what));
      return T(i);
    };
    // Index tiles ops[first .. first+rank): integer tiles of one shape; returns that shape.
    auto indices = [&](std::size_t first, int rank) -> Shape {
      Shape s;
      for (int d = 0; d < rank; ++d) {
        const std::size_t i = first + static_cast<std::size_t>(d);
        const Type& t = tile(i);
        if (!is_integer(t.dtype)) fail(op, cat("index operand ", i, " has type ", type_str(t), ", expected integers"));
        if (d == 0) s = t.shape;
        else if (t.shape != s)
          fail(op, cat("index operand ", i, " has shape ", shape_str(t.shape), ", expected ", shape_str(s)));
      }
      return s;
    };
    auto tensor_rank = [&](const Type& t) {
      if (t.rank < 1) fail(op, "the tensor must have rank >= 1");
      return t.rank;
    };

    if (!is_control(op.kind) && !op.regions.empty()) fail(op, cat("has ", op.regions.size(), " regions, expected none"));

    switch (op.kind) {
      case OpKind::BlockId:
      case OpKind::NumBlocks:
        nops(0);
        axis_in(k_.grid_rank);
        return result_is(Type::scalar(DType::i64));
      case OpKind::Dim: {
        nops(1);
        if (T(0).kind == TypeKind::Tile) fail(op, cat("operand has type ", type_str(T(0)), ", expected a tensor, partition or piece"));
        axis_in(T(0).rank);
        return result_is(Type::scalar(DType::i64));
      }
      case OpKind::MakePartition: {
        nops(1);
        const Type& t = kind_of(0, TypeKind::Tensor, "a tensor");
        if (t.access != Access::Read) fail(op, cat("operand has type ", type_str(t), ", expected a read-only tensor"));
        if (static_cast<int>(op.shape.size()) != t.rank)
          fail(op, cat("tile shape ", shape_str(op.shape), " does not have the tensor's rank ", t.rank));
        for (std::int64_t e : op.shape)
          if (!is_pow2(e)) fail(op, cat("tile shape ", shape_str(op.shape), " has an extent that is not a power of two"));
        return result_is(Type::partition(t.dtype, t.rank, op.shape));
      }
      case OpKind::PartitionCount: {
        nops(1);
        if (T(0).kind != TypeKind::Partition && T(0).kind != TypeKind::Piece)
          fail(op, cat("operand has type ", type_str(T(0)), ", expected a partition or piece"));
        axis_in(T(0).rank);
        return result_is(Type::scalar(DType::i64));
      }
      case OpKind::Load: {
        if (n_ops < 1) fail(op, "expected a partition operand");
        const Type& p = kind_of(0, TypeKind::Partition, "a partition");
        nops(1 + static_cast<std::size_t>(p.rank));
        for (std::size_t i = 1; i < n_ops; ++i) i64_scalar(i);
        return result_is(Type::tile(p.dtype, p.shape));
      }
      case OpKind::LoadPiece: {
        nops(1);
        const Type& p = kind_of(0, TypeKind::Piece, "a piece");
        return result_is(Type::tile(p.dtype, p.shape));
      }
      case OpKind::StorePiece: {
        nops(2);
        const Type& p = kind_of(0, TypeKind::Piece, "a piece");
        operand_is(1, Type::tile(p.dtype, p.shape));
        return nres(0);
      }
      case OpKind::Gather: {
        if (n_ops < 1) fail(op, "expected a tensor operand");
        const Type& t = kind_of(0, TypeKind::Tensor, "a tensor");
        if (t.access == Access::Piece) fail(op, "cannot gather from a tensor with piece access");
        const int r = tensor_rank(t);
        nops(1 + static_cast<std::size_t>(r));
        return result_is(Type::tile(t.dtype, indices(1, r)));
      }
      case OpKind::ScatterPiece:
      case OpKind::ScatterUnchecked: {
        if (n_ops < 1) fail(op, "expected a tensor operand");
        const Type* t;
        if (op.kind == OpKind::ScatterPiece) {
          t = &kind_of(0, TypeKind::Piece, "a piece");
        } else {
          t = &kind_of(0, TypeKind::Tensor, "a tensor");
          if (t->access != Access::Unchecked) fail(op, cat("operand has type ", type_str(*t), ", expected an unchecked tensor"));
        }
        const int r = tensor_rank(*t);
        nops(2 + static_cast<std::size_t>(r));
        operand_is(n_ops - 1, Type::tile(t->dtype, indices(1, r)));
        return nres(0);
      }
      case OpKind::AtomicRMW:
      case OpKind::AtomicCAS: {
        if (n_ops < 1) fail(op, "expected a tensor operand");
        const Type& t = kind_of(0, TypeKind::Tensor, "a tensor");
        if (t.access != Access::Atomic) fail(op, cat("operand has type ", type_str(t), ", expected an atomic tensor"));
        if (!is_atomic_dtype(t.dtype)) fail(op, cat("atomics on ", dtype_name(t.dtype), " are not supported"));
        const int r = tensor_rank(t);
        const std::size_t nv = op.kind == OpKind::AtomicRMW ? 1 : 2;
        nops(1 + static_cast<std::size_t>(r) + nv);
        const Type vt = Type::tile(t.dtype, indices(1, r));
        for (std::size_t i = n_ops - nv; i < n_ops; ++i) operand_is(i, vt);
        return result_is(vt);
      }
      case OpKind::Constant:
        nops(0);
        nres(1);
        if (!R(0).is_tile()) fail(op, cat("result has type ", type_str(R(0)), ", expected a tile"));
        return;
      case OpKind::Iota:
        nops(0);
        nres(1);
        if (!R(0).is_tile() || R(0).rank != 1 || is_bool(R(0).dtype))
          fail(op, cat("result has type ", type_str(R(0)), ", expected a 1-D numeric tile"));
        return;
      case OpKind::Broadcast: {
        nops(1);
        const Type& x = tile(0);
        nres(1);
        const Type& y = R(0);
        if (!y.is_tile() || y.dtype != x.dtype || y.rank != x.rank)
          fail(op, cat("cannot broadcast ", type_str(x), " to ", type_str(y)));
        for (std::size_t d = 0; d < x.shape.size(); ++d)
          if (x.shape[d] != y.shape[d] && x.shape[d] != 1)
            fail(op, cat("cannot broadcast ", type_str(x), " to ", type_str(y), " (axis ", d, ")"));
        return;
      }
      case OpKind::Reshape: {
        nops(1);
        const Type& x = tile(0);
        nres(1);
        const Type& y = R(0);
        if (!y.is_tile() || y.dtype != x.dtype || numel(y.shape) != numel(x.shape))
          fail(op, cat("cannot reshape ", type_str(x), " to ", type_str(y)));
        return;
      }
      case OpKind::Permute: {
        nops(1);
        const Type& x = tile(0);
        if (static_cast<int>(op.perm.size()) != x.rank) fail(op, cat("perm has ", op.perm.size(), " entries for rank ", x.rank));
        std::vector<char> seen(op.perm.size(), 0);
        Shape s(op.perm.size());
        for (std::size_t i = 0; i < op.perm.size(); ++i) {
          const int p = op.perm[i];
          if (p < 0 || p >= x.rank || seen[static_cast<std::size_t>(p)]) fail(op, "perm is not a permutation");
          seen[static_cast<std::size_t>(p)] = 1;
          s[i] = x.shape[static_cast<std::size_t>(p)];
        }
        return result_is(Type::tile(x.dtype, s));
      }
      case OpKind::Cat: {
        nops(2);
        const Type& a = tile(0);
        const Type& b = tile(1);
        if (a.dtype != b.dtype || a.rank != b.rank) fail(op, cat("cannot concatenate ", type_str(a), " and ", type_str(b)));
        axis_in(a.rank);
        Shape s = a.shape;
        for (std::size_t d = 0; d < s.size(); ++d) {
          if (static_cast<int>(d) == op.axis) s[d] += b.shape[d];
          else if (a.shape[d] != b.shape[d])
            fail(op, cat("cannot concatenate ", type_str(a), " and ", type_str(b), " along axis ", op.axis));
        }
        return result_is(Type::tile(a.dtype, s));
      }
      case OpKind::Extract: {
        nops(1);
        const Type& x = tile(0);
        nres(1);
        const Type& y = R(0);
        if (!y.is_tile() || y.dtype != x.dtype || y.rank != x.rank)
          fail(op, cat("cannot extract ", type_str(y), " from ", type_str(x)));
        if (static_cast<int>(op.offsets.size()) != x.rank)
          fail(op, cat("offsets ", shape_str(op.offsets), " do not have rank ", x.rank));
        for (std::size_t d = 0; d < op.offsets.size(); ++d)
          if (op.offsets[d] < 0 || op.offsets[d] > x.shape[d] - y.shape[d])
            fail(op, cat("extracting ", shape_str(y.shape), " at ", shape_str(op.offsets), " from ", type_str(x),
                         " is out of bounds"));
        return;
      }
      case OpKind::Unary: {
        nops(1);
        const Type& x = tile(0);
        if (!unary_ok(op.unary, x.dtype)) fail(op, cat(unary_name(op.unary), " is not defined on ", dtype_name(x.dtype)));
        return result_is(x);
      }
      case OpKind::Binary: {
        nops(2);
        const Type& a = tile(0);
        operand_is(1, a);
        if (!binary_ok(op.binary, a.dtype)) fail(op, cat(binary_name(op.binary), " is not defined on ", dtype_name(a.dtype)));
        return result_is(a);
      }
      case OpKind::Fma: {
        nops(3);
        const Type& a = tile(0);
        operand_is(1, a);
        operand_is(2, a);
        if (is_bool(a.dtype)) fail(op, "fma is not defined on bool");
        return result_is(a);
      }
      case OpKind::Cmp: {
        nops(2);
        const Type& a = tile(0);
        operand_is(1, a);
        return result_is(Type::tile(DType::b1, a.shape));
      }
      case OpKind::Select: {
        nops(3);
        const Type& a = tile(1);
        operand_is(0, Type::tile(DType::b1, a.shape));
        operand_is(2, a);
        return result_is(a);
      }
      case OpKind::Convert: {
        nops(1);
        const Type& x = tile(0);
        nres(1);
        if (!R(0).is_tile() || R(0).shape != x.shape) fail(op, cat("cannot convert ", type_str(x), " to ", type_str(R(0))));
        return;
      }
      case OpKind::Reduce: {
        nops(1);
        const Type& x = tile(0);
        axis_in(x.rank);
        const bool arith = op.reduce == ReduceKind::Sum || op.reduce == ReduceKind::Prod;
        if (arith && is_bool(x.dtype)) fail(op, cat(reduce_name(op.reduce), " is not defined on bool"));
        Shape s = x.shape;
        s.erase(s.begin() + op.axis);
        const bool arg = op.reduce == ReduceKind::ArgMax || op.reduce == ReduceKind::ArgMin;
        return result_is(Type::tile(arg ? DType::i64 : x.dtype, s));
      }
      case OpKind::Scan: {
        nops(1);
        const Type& x = tile(0);
        axis_in(x.rank);
        if (is_bool(x.dtype)) fail(op, "scan is not defined on bool");
        return result_is(x);
      }
      case OpKind::Mma: {
        nops(3);
        const Type& a = tile(0);
        const Type& b = tile(1);
        const Type& c = tile(2);
        if (a.rank != 2 || b.rank != 2 || c.rank != 2 || a.shape[1] != b.shape[0] || c.shape[0] != a.shape[0] ||
            c.shape[1] != b.shape[1])
          fail(op, cat("shapes ", type_str(a), " x ", type_str(b), " + ", type_str(c), " do not match [M,K] x [K,N] + [M,N]"));
        if (a.dtype != b.dtype || !mma_ok(a.dtype, c.dtype))
          fail(op, cat("unsupported dtypes ", dtype_name(a.dtype), " x ", dtype_name(b.dtype), " -> ", dtype_name(c.dtype)));
        return result_is(c);
      }
      case OpKind::For: {
        if (n_ops < 3) fail(op, cat("expected at least 3 operands (lb, ub, step), got ", n_ops));
        for (std::size_t i = 0; i < 3; ++i) i64_scalar(i);
        const std::size_t nc = n_ops - 3;
        nres(nc);
        std::vector<Type> carried;
        for (std::size_t i = 0; i < nc; ++i) {
          carried.push_back(T(3 + i));
          if (!(R(i) == T(3 + i)))
            fail(op, cat("result ", i, " has type ", type_str(R(i)), ", expected ", type_str(T(3 + i))));
        }
        if (op.regions.size() != 1) fail(op, cat("has ", op.regions.size(), " regions, expected 1"));
        const Region& body = op.regions[0];
        if (body.args.size() != nc + 1)
          fail(op, cat("the body has ", body.args.size(), " arguments, expected ", nc + 1, " (iv, carried...)"));
        for (std::size_t i = 0; i <= nc; ++i) {
          if (!in_range(body.args[i])) fail(op, cat("region argument ", i, " has value id %", body.args[i], " out of range"));
          const Type& want = i == 0 ? Type::scalar(DType::i64) : carried[i - 1];
          if (!(k_.type(body.args[i]) == want))
            fail(op, cat("region argument ", i, " has type ", type_str(k_.type(body.args[i])), ", expected ", type_str(want)));
        }
        return region(body, &op, 0, carried);
      }
      case OpKind::If: {
        nops(1);
        if (!is_bool_scalar(T(0))) fail(op, cat("condition has type ", type_str(T(0)), ", expected a bool scalar"));
        if (op.regions.size() != 2) fail(op, cat("has ", op.regions.size(), " regions, expected 2 (then, else)"));
        std::vector<Type> res;
        for (ValueId v : op.results) res.push_back(k_.type(v));
        for (std::size_t r = 0; r < 2; ++r) {
          if (!op.regions[r].args.empty()) fail(op, cat("region ", r, " has arguments"));
          region(op.regions[r], &op, r, res);
        }
        return;
      }
      case OpKind::While: {
        nres(n_ops);
        std::vector<Type> carried;
        for (std::size_t i = 0; i < n_ops; ++i) {
          carried.push_back(T(i));
          if (!(R(i) == T(i))) fail(op, cat("result ", i, " has type ", type_str(R(i)), ", expected ", type_str(T(i))));
        }
        if (op.regions.size() != 2) fail(op, cat("has ", op.regions.size(), " regions, expected 2 (cond, body)"));
        for (std::size_t r = 0; r < 2; ++r) {
          const Region& reg = op.regions[r];
          if (reg.args.size() != n_ops)
            fail(op, cat("region ", r, " has ", reg.args.size(), " arguments, expected ", n_ops));
          for (std::size_t i = 0; i < n_ops; ++i) {
            if (!in_range(reg.args[i])) fail(op, cat("region ", r, " argument ", i, " has value id %", reg.args[i], " out of range"));
            if (!(k_.type(reg.args[i]) == carried[i]))
              fail(op, cat("region ", r, " argument ", i, " has type ", type_str(k_.type(reg.args[i])), ", expected ",
                           type_str(carried[i])));
          }
        }
        region(op.regions[0], &op, 0, {Type::scalar(DType::b1)});
        region(op.regions[1], &op, 1, carried);
        return;
      }
      case OpKind::Yield:
        return;  // handled by region()
    }
    fail(op, "unknown op kind");
  }

  const Kernel& k_;
  std::vector<char> defined_;
  std::vector<char> visible_;
  std::vector<ValueId> scope_;
};

}  // namespace

void verify(const Kernel& k) { Verifier(k).run(); }

}  // namespace ctile::ir
