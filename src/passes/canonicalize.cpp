// canonicalize: local rewrites that give the same bits for every input (docs/compiler.md lists
// them). Identity shape ops and conversions disappear, chains of reshapes and exact conversions
// collapse, and arithmetic with a neutral constant is dropped (x * 1, x - 0, integer x + 0, ...).
// Division by a power of two becomes a multiplication by its exact inverse. Nothing here changes
// rounding: x + 0.0 stays for floats (-0 + 0 = +0), x / c stays unless 1/c is exact.
#include <cmath>

#include "../core/numeric.hpp"
#include "passes.hpp"
#include "rewrite.hpp"

namespace ctile::passes {
namespace {

using ir::BinaryFn;
using ir::OpKind;

// Converting `from` -> `to` keeps every value of `from` exactly (so a later conversion may start
// from the original instead).
bool exact_conversion(DType from, DType to) {
  if (from == to || is_bool(from)) return true;
  auto bits = [](DType d) { return dtype_size(d) * 8; };
  if (is_integer(from) && is_integer(to)) {
    if (is_signed_int(from) == is_signed_int(to)) return bits(to) >= bits(from);
    return !is_signed_int(from) && is_signed_int(to) && bits(to) > bits(from);
  }
  if (is_integer(from) && is_float(to)) {
    // (No integer type is exact in fp8: 4 and 3 significant bits.)
    const int mant = to == DType::f64 ? 53 : to == DType::f32 ? 24 : to == DType::f16 ? 11 : to == DType::bf16 ? 8 : 0;
    return bits(from) - (is_signed_int(from) ? 1 : 0) <= mant;
  }
  if (is_float(from) && is_float(to)) {
    if (to == DType::f64) return true;
    if (to == DType::f32) return from == DType::f16 || from == DType::bf16 || is_fp8(from);
    // Every fp8 value is an f16 and a bf16 (e5m2 is the top byte of an f16; e4m3 spans 2^-9 .. 448).
    if (to == DType::f16 || to == DType::bf16) return is_fp8(from);
    return false;
  }
  return false;
}

// The uniform value of a ct.constant operand, as a double (floats) or int64.
struct ConstView {
  const ir::Op* op = nullptr;
  bool is(double f, std::int64_t i, DType d) const {
    if (!op) return false;
    const ir::Scalar v = ir::scalar_cast(op->value, d);
    if (is_float(d)) return v.f == f && std::signbit(v.f) == std::signbit(f);
    return v.i == i;
  }
};

class Canonicalize : public Pass {
 public:
  std::string_view name() const override { return "canonicalize"; }
  void run(ir::Kernel& k, const PassContext&) override {
    bool changed = true;
    for (int round = 0; changed && round < 8; ++round) {
      changed = false;
      Defs defs(k);
      for_each_region(k.body, [&](ir::Region& r) {
        for (std::size_t i = 0; i < r.ops.size(); ++i) {
          ir::Op& op = *r.ops[i];
          if (op.kind == OpKind::ScatterUnchecked && window_scatter(k, r, i, op, defs)) {
            changed = true;
            continue;
          }
          if (op.results.size() != 1) continue;
          const ir::ValueId res = op.results[0];
          const ir::ValueId rep = rewrite(k, r, i, op, defs);
          if (rep != ir::kNoValue && rep != res) {
            replace_uses(k, res, rep);
            changed = true;
          }
        }
      });
    }
  }

 private:
  bool same_type(const ir::Kernel& k, ir::ValueId a, ir::ValueId b) const {
    if (!(k.type(a) == k.type(b))) return false;
    return k.layouts.empty() || k.layout(a) == k.layout(b);
  }

  // A value to use instead of op's result, or kNoValue. May insert ops before position i.
  ir::ValueId rewrite(ir::Kernel& k, ir::Region& r, std::size_t& i, ir::Op& op, Defs& defs) {
    const ir::ValueId res = op.results[0];
    const auto& o = op.operands;
    switch (op.kind) {
      case OpKind::Reshape:
      case OpKind::Broadcast:
      case OpKind::Convert:
      case OpKind::ConvertLayout:
      case OpKind::Extract: {
        if (same_type(k, o[0], res)) return o[0];
        const ir::Op* d = defs.of(o[0]);
        if (!d) return ir::kNoValue;
        // reshape(reshape(x)) -> reshape(x); convert_layout(convert_layout(x)) -> convert_layout(x)
        if ((op.kind == OpKind::Reshape || op.kind == OpKind::ConvertLayout) && d->kind == op.kind) {
          if (same_type(k, d->operands[0], res)) return d->operands[0];
          op.operands[0] = d->operands[0];
          return ir::kNoValue;
        }
        // convert(convert(x)) -> convert(x) when the first conversion is exact.
        if (op.kind == OpKind::Convert && d->kind == OpKind::Convert &&
            exact_conversion(k.type(d->operands[0]).dtype, k.type(o[0]).dtype)) {
          if (same_type(k, d->operands[0], res)) return d->operands[0];
          op.operands[0] = d->operands[0];
          return ir::kNoValue;
        }
        return ir::kNoValue;
      }
      case OpKind::Permute: {
        bool identity = true;
        for (std::size_t a = 0; a < op.perm.size(); ++a) identity = identity && op.perm[a] == static_cast<int>(a);
        if (identity && same_type(k, o[0], res)) return o[0];
        return ir::kNoValue;
      }
      case OpKind::Select: {
        if (o[1] == o[2]) return o[1];
        if (const ir::Op* c = defs.constant(o[0])) return numeric::scalar_to<bool>(c->value) ? o[1] : o[2];
        return ir::kNoValue;
      }
      case OpKind::Binary: return binary(k, r, i, op, defs);
      default: return ir::kNoValue;
    }
  }

  // Looks through ct.broadcast and ct.reshape to the value they were made from.
  ir::ValueId through_shapes(ir::ValueId v, const Defs& defs) const {
    for (const ir::Op* d = defs.of(v); d && (d->kind == OpKind::Broadcast || d->kind == OpKind::Reshape); d = defs.of(v))
      v = d->operands[0];
    return v;
  }

  // The start s of an index tile of shape `shape` that holds s + e_axis at every element e (a
  // rank-1 ct.iota of the axis' extent, plus a scalar s, reshaped onto the axis and broadcast; along
  // an axis of extent 1, a scalar s broadcast), or kNoValue (with `zero` true when the start is 0:
  // an iota alone).
  ir::ValueId consecutive_start(const ir::Kernel& k, ir::ValueId idx, const Shape& shape, std::size_t axis,
                                const Defs& defs, bool& zero) const {
    zero = false;
    const ir::Type& t = k.type(idx);
    if (!t.is_tile() || t.dtype != DType::i64 || t.shape != shape) return ir::kNoValue;
    // Broadcasts first: what they start from must vary along `axis` alone (extents of 1 elsewhere).
    ir::ValueId v = idx;
    for (const ir::Op* d = defs.of(v); d && d->kind == OpKind::Broadcast; d = defs.of(v)) v = d->operands[0];
    if (shape[axis] == 1) {  // a scalar start along an axis of extent 1 (a batch or head index)
      const ir::ValueId sv = through_shapes(v, defs);
      const ir::Type& st = k.type(sv);
      if (st.is_tile() && st.rank == 0 && st.dtype == DType::i64) return sv;
    }
    const Shape& vs = k.type(v).shape;
    if (vs.size() != shape.size()) return ir::kNoValue;
    for (std::size_t a = 0; a < vs.size(); ++a)
      if (vs[a] != (a == axis ? shape[a] : 1)) return ir::kNoValue;
    v = through_shapes(v, defs);
    const ir::Type& line = k.type(v);
    if (line.rank != 1 || line.shape[0] != shape[axis]) return ir::kNoValue;
    const ir::Op* d = defs.of(v);
    if (!d) return ir::kNoValue;
    auto is_iota = [&](ir::ValueId x) {
      const ir::Op* o = defs.of(x);
      return o && o->kind == OpKind::Iota && k.type(x).rank == 1 && k.type(x).shape[0] == shape[axis];
    };
    if (is_iota(v)) {
      zero = true;
      return ir::kNoValue;
    }
    if (d->kind != OpKind::Binary || d->binary != BinaryFn::Add) return ir::kNoValue;
    for (int side = 0; side < 2; ++side) {
      if (!is_iota(d->operands[static_cast<std::size_t>(side)])) continue;
      const ir::ValueId s = through_shapes(d->operands[static_cast<std::size_t>(1 - side)], defs);
      const ir::Type& st = k.type(s);
      if (st.is_tile() && st.rank == 0 && st.dtype == DType::i64) return s;
    }
    return ir::kNoValue;
  }

  // ct.scatter_unchecked whose index tiles are a block of consecutive positions (index d = s_d +
  // e_d at element e: iotas plus scalars, as a tile block writes its own tile of a whole tensor)
  // -> ct.store_window of the tensor at (s_0, ...): the same elements written (distinct indices,
  // those outside the tensor dropped by both), with no de-duplication across threads.
  bool window_scatter(ir::Kernel& k, ir::Region& r, std::size_t& i, ir::Op& op, const Defs& defs) {
    const std::size_t rank = op.operands.size() - 2;
    const ir::ValueId value = op.operands.back();
    const Shape shape = k.type(value).shape;
    if (shape.size() != rank) return false;
    std::vector<ir::ValueId> starts(rank, ir::kNoValue);
    std::vector<bool> zeros(rank, false);
    for (std::size_t a = 0; a < rank; ++a) {
      bool zero = false;
      starts[a] = consecutive_start(k, op.operands[1 + a], shape, a, defs, zero);
      zeros[a] = zero;
      if (starts[a] == ir::kNoValue && !zero) return false;
    }
    InsertPoint at(k, r, i);
    for (std::size_t a = 0; a < rank; ++a)
      if (zeros[a])
        starts[a] = at.build(OpKind::Constant, {}, op.loc, {ir::Type::scalar(DType::i64)}, [](ir::Op& c) {
                          c.value = ir::Scalar::of_int(0);
                        }).results[0];
    i = at.position();
    ir::Op& s = *r.ops[i];
    std::vector<ir::ValueId> operands{s.operands[0]};
    operands.insert(operands.end(), starts.begin(), starts.end());
    operands.push_back(value);
    s.kind = OpKind::StoreWindow;
    s.operands = std::move(operands);
    return true;
  }

  ir::ValueId binary(ir::Kernel& k, ir::Region& r, std::size_t& i, ir::Op& op, Defs& defs) {
    const ir::ValueId a = op.operands[0], b = op.operands[1];
    const DType d = k.type(a).dtype;
    const ConstView ca{defs.constant(a)}, cb{defs.constant(b)};
    if (is_integer(d)) {
      switch (op.binary) {
        case BinaryFn::Add: return cb.is(0, 0, d) ? a : ca.is(0, 0, d) ? b : ir::kNoValue;
        case BinaryFn::Sub: return cb.is(0, 0, d) ? a : ir::kNoValue;
        case BinaryFn::Mul: return cb.is(1, 1, d) ? a : ca.is(1, 1, d) ? b : ir::kNoValue;
        case BinaryFn::Div: return cb.is(1, 1, d) ? a : ir::kNoValue;
        case BinaryFn::Or:
        case BinaryFn::Xor: return cb.is(0, 0, d) ? a : ca.is(0, 0, d) ? b : ir::kNoValue;
        case BinaryFn::And: return cb.is(0, -1, d) ? a : ca.is(0, -1, d) ? b : ir::kNoValue;
        case BinaryFn::Shl:
        case BinaryFn::Shr: return cb.is(0, 0, d) ? a : ir::kNoValue;
        case BinaryFn::Min:
        case BinaryFn::Max: return a == b ? a : ir::kNoValue;
        default: return ir::kNoValue;
      }
    }
    if (!is_float(d)) return ir::kNoValue;
    switch (op.binary) {
      case BinaryFn::Mul: return cb.is(1.0, 0, d) ? a : ca.is(1.0, 0, d) ? b : ir::kNoValue;
      case BinaryFn::Sub: return cb.is(0.0, 0, d) ? a : ir::kNoValue;    // x - (+0) == x, also for x = -0
      case BinaryFn::Add: return cb.is(-0.0, 0, d) ? a : ca.is(-0.0, 0, d) ? b : ir::kNoValue;  // x + (-0) == x
      case BinaryFn::Div: {
        if (cb.is(1.0, 0, d)) return a;
        if (!cb.op || op.rounding == ir::Rounding::Approx || op.ftz) return ir::kNoValue;
        // x / 2^e == x * 2^-e exactly when 2^-e is a normal number of the compute type: one
        // correctly rounded operation of the same exact value.
        const double c = ir::scalar_cast(cb.op->value, d).f;
        int e = 0;
        if (!std::isfinite(c) || c == 0.0 || std::frexp(std::fabs(c), &e) != 0.5) return ir::kNoValue;
        const double inv = 1.0 / c;
        const int min_exp = d == DType::f64 ? -1021 : -125;  // the narrow floats compute in f32
        const int max_exp = d == DType::f64 ? 1024 : 128;
        int ei = 0;
        std::frexp(std::fabs(inv), &ei);
        if (ei < min_exp || ei > max_exp) return ir::kNoValue;
        // The constant is an element of d: 2^-e must be one (e4m3 holds 2^-9 .. 2^8, so x / 2^-9
        // keeps its division; so does an f16 x / 2^-20).
        if (ir::scalar_cast(ir::Scalar::of_float(inv), d).f != inv) return ir::kNoValue;
        InsertPoint at(k, r, i);
        const ir::Type ct = ir::Type::tile(d, k.type(b).shape);
        ir::Op& cop = at.build(OpKind::Constant, {}, op.loc, {ct}, [&](ir::Op& x) { x.value = ir::Scalar::of_float(inv); });
        if (!k.layouts.empty()) k.layouts[static_cast<std::size_t>(cop.results[0])] = k.layout(b);
        defs.note(cop);
        i = at.position();
        op.binary = BinaryFn::Mul;
        op.rounding = ir::Rounding::Default;
        op.operands[1] = cop.results[0];
        return ir::kNoValue;
      }
      default: return ir::kNoValue;
    }
  }
};

}  // namespace

std::unique_ptr<Pass> make_canonicalize() { return std::make_unique<Canonicalize>(); }

}  // namespace ctile::passes
