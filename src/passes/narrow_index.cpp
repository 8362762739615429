// narrow-index: a comparison of an i64 iota, offset by a scalar, with a scalar becomes a
// comparison of an i32 iota with one scalar computed once. Row kernels mask their padded columns
// with `iota<i64>(n) + col * n < extent`: as written that is a 64-bit add and a 64-bit compare for
// every element (two or more instructions each, two registers an element where the mask is kept),
// and the remat pass does not compute 64-bit tiles again after a reduction, so LayerNorm's masked
// d = where(inside, x - mean, 0) stays in f32 registers across the variance's reduction.
//
//   cmp P (reshape*(reshape*(iota_i64) [+ broadcast(s)]), broadcast(n))   (or the operands swapped;
//                                                                       n may be a constant tile)
//     -> cmp P (reshape(iota_i32), broadcast(i32(clamp(n - s, -1, L))))
//
// where L is the iota's length. For iota in [0, L), `iota + s P n` equals `iota P n - s`, and
// clamping n - s to [-1, L] changes no outcome of any predicate (every iota is above -1 and below L).
// Where the predicate is lt or ge and a power of two g divides n - s (extents divisible by 16 by
// the tensor's facts, multiples of the tile) and L, the new iota is floored to g ({floor = g}:
// element i is i - i % g): m = clamp(n - s, -1, L) is then -1 or a multiple of g, and for a
// multiple m, i < m exactly when i - i % g < m, so the outcome is unchanged. The code generator
// gives each group of g elements one comparison (a thread's vector of 8 bf16 one mask bit, as
// Triton's constancy analysis does), where per element it costs an add and a compare each time.
// The rewrite is exact only where neither `iota + s` nor `n - s` wraps (integers wrap in the IR):
// the pass proves it from the scalars' ranges (constants; block ids below 2^31 - 1, the most tile
// blocks a GPU launch runs, so this is a pass of the CUDA pipeline; extents in [0, 2^63); sums and
// products whose ranges do not overflow), and leaves the comparison alone otherwise. The old
// ops lose their use; dce removes them.
#include <limits>
#include <optional>

#include "passes.hpp"
#include "rewrite.hpp"

namespace ctile::passes {
namespace {

using ir::OpKind;
using ir::Type;
using ir::ValueId;

__extension__ typedef __int128 i128;  // ranges of i64 arithmetic, computed without overflow

struct Range {
  i128 lo, hi;
};
constexpr i128 kI64Min = std::numeric_limits<std::int64_t>::min();
constexpr i128 kI64Max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMaxBlockId = 0x7ffffffe;  // a GPU launch runs at most 2^31 - 1 tile blocks
constexpr int kMaxDepth = 8;
// The largest floor given to an iota: a thread's vector of 16-bit elements is 8 wide, 16 covers
// a vector of 8-bit ones; beyond that no group of registers shares an element's bits.
constexpr std::int64_t kMaxFloor = 16;

bool fits(const Range& r) { return r.lo >= kI64Min && r.hi <= kI64Max; }

class NarrowIndex : public Pass {
 public:
  std::string_view name() const override { return "narrow-index"; }
  void run(ir::Kernel& k, const PassContext&) override {
    k_ = &k;
    defs_.emplace(k);
    for_each_region(k.body, [&](ir::Region& r) {
      for (std::size_t i = 0; i < r.ops.size(); ++i)
        if (r.ops[i]->kind == OpKind::Cmp) i = rewrite(r, i);
    });
    defs_.reset();
  }

 private:
  ir::Kernel* k_ = nullptr;
  std::optional<Defs> defs_;

  const Type& type(ValueId v) const { return k_->type(v); }
  bool is_i64(ValueId v) const { return type(v).is_tile() && type(v).dtype == DType::i64; }

  // Follows reshapes back to the value they relabel.
  ValueId through_reshapes(ValueId v) const {
    for (const ir::Op* d = defs_->of(v); d && d->kind == OpKind::Reshape; d = defs_->of(v)) v = d->operands[0];
    return v;
  }
  // The scalar behind a one-element value (reshapes of it), or kNoValue.
  ValueId scalar_of(ValueId v) const {
    v = through_reshapes(v);
    return type(v).is_tile() && numel(type(v).shape) == 1 ? v : ir::kNoValue;
  }
  // The scalar every element of `v` equals (a broadcast of a one-element value, through reshapes),
  // or a constant of any shape (the rewrite makes a scalar of its value).
  ValueId splat_of(ValueId v) const {
    if (const ValueId s = scalar_of(v); s != ir::kNoValue) return s;
    const ir::Op* d = defs_->of(through_reshapes(v));
    if (d && d->kind == OpKind::Constant) return d->results[0];
    return d && d->kind == OpKind::Broadcast ? scalar_of(d->operands[0]) : ir::kNoValue;
  }
  const ir::Op* constant_op(ValueId v) const {
    const ir::Op* d = defs_->of(v);
    return d && d->kind == OpKind::Constant ? d : nullptr;
  }
  // A 1-D i64 iota.
  bool is_iota(ValueId v) const {
    const ir::Op* d = defs_->of(v);
    return d && d->kind == OpKind::Iota && is_i64(v) && type(v).shape.size() == 1;
  }

  // The range of an i64 scalar, when the pass can bound it.
  std::optional<Range> range(ValueId v, int depth = 0) const {
    if (!is_i64(v) || depth > kMaxDepth) return std::nullopt;
    if (const ir::Op* c = constant_op(v)) return Range{c->value.i, c->value.i};
    if (numel(type(v).shape) != 1) return std::nullopt;
    const ir::Op* d = defs_->of(v);
    if (!d) return std::nullopt;
    switch (d->kind) {
      case OpKind::BlockId: return Range{0, kMaxBlockId};
      case OpKind::NumBlocks: return Range{1, kMaxBlockId + 1};
      case OpKind::Dim: return Range{0, kI64Max};
      case OpKind::Reshape:
      case OpKind::Broadcast: return range(d->operands[0], depth + 1);
      case OpKind::Binary: {
        const auto a = range(d->operands[0], depth + 1), b = range(d->operands[1], depth + 1);
        if (!a || !b) return std::nullopt;
        Range r{};
        switch (d->binary) {
          case ir::BinaryFn::Add: r = {a->lo + b->lo, a->hi + b->hi}; break;
          case ir::BinaryFn::Sub: r = {a->lo - b->hi, a->hi - b->lo}; break;
          case ir::BinaryFn::Mul: {
            // Products of the ends bound the product (each end below 2^63: no __int128 overflow).
            const i128 p[] = {a->lo * b->lo, a->lo * b->hi, a->hi * b->lo, a->hi * b->hi};
            r = {p[0], p[0]};
            for (i128 x : p) r = {std::min(r.lo, x), std::max(r.hi, x)};
            break;
          }
          default: return std::nullopt;
        }
        if (!fits(r)) return std::nullopt;  // the IR's arithmetic would wrap: no bound
        return r;
      }
      default: return std::nullopt;
    }
  }

  // A power of two (at most kMaxDivisor) that divides every value the i64 scalar `v` takes: 1 when
  // the pass knows none. Extents divide by 16 or 8 where the tensor's facts say so.
  static constexpr std::int64_t kMaxDivisor = std::int64_t{1} << 20;
  std::int64_t divisor(ValueId v, int depth = 0) const {
    if (!is_i64(v) || depth > kMaxDepth) return 1;
    if (const ir::Op* c = constant_op(v)) {
      const std::uint64_t x = static_cast<std::uint64_t>(c->value.i);
      return x == 0 ? kMaxDivisor : static_cast<std::int64_t>(std::min<std::uint64_t>(x & (~x + 1), kMaxDivisor));
    }
    if (numel(type(v).shape) != 1) return 1;
    const ir::Op* d = defs_->of(v);
    if (!d) return 1;
    switch (d->kind) {
      case OpKind::Dim:
        for (const ir::Param& p : k_->params)
          if (p.value == d->operands[0]) {
            const std::uint32_t bit = 1u << d->axis;
            return (p.facts.extent_div16 & bit) ? 16 : (p.facts.extent_div8 & bit) ? 8 : 1;
          }
        return 1;
      case OpKind::Reshape:
      case OpKind::Broadcast: return divisor(d->operands[0], depth + 1);
      case OpKind::Binary: {
        const std::int64_t a = divisor(d->operands[0], depth + 1), b = divisor(d->operands[1], depth + 1);
        switch (d->binary) {
          case ir::BinaryFn::Add:
          case ir::BinaryFn::Sub:
          case ir::BinaryFn::Max:
          case ir::BinaryFn::Min: return std::min(a, b);
          case ir::BinaryFn::Mul: return std::min(a * b, kMaxDivisor);  // each at most 2^20: no overflow
          default: return 1;
        }
      }
      default: return 1;
    }
  }

  // An index `a` = reshape*(iota [+ broadcast(s)]): the iota, the offset scalar (kNoValue: none).
  bool index_of(ValueId a, ValueId& iota, ValueId& offset) const {
    const ValueId base = through_reshapes(a);
    if (is_iota(base)) {
      iota = base;
      offset = ir::kNoValue;
      return true;
    }
    const ir::Op* d = defs_->of(base);
    if (!d || d->kind != OpKind::Binary || d->binary != ir::BinaryFn::Add || !is_i64(base)) return false;
    for (int side = 0; side < 2; ++side) {
      // The iota, reshaped or not: element e of the sum is e + s in row-major order either way.
      const ValueId x = through_reshapes(d->operands[static_cast<std::size_t>(side)]);
      const ValueId y = d->operands[static_cast<std::size_t>(1 - side)];
      if (!is_iota(x) || numel(type(x).shape) != numel(type(base).shape)) continue;
      const ValueId s = splat_of(y);
      if (s == ir::kNoValue) continue;
      iota = x;
      offset = s;
      return true;
    }
    return false;
  }

  static ir::CmpPred swapped(ir::CmpPred p) {
    switch (p) {
      case ir::CmpPred::Lt: return ir::CmpPred::Gt;
      case ir::CmpPred::Le: return ir::CmpPred::Ge;
      case ir::CmpPred::Gt: return ir::CmpPred::Lt;
      case ir::CmpPred::Ge: return ir::CmpPred::Le;
      default: return p;
    }
  }

  // Rewrites the ct.cmp at r.ops[i] when it has the form; returns the index of the (new) ct.cmp.
  std::size_t rewrite(ir::Region& r, std::size_t i) {
    ir::Op& cmp = *r.ops[i];
    if (!is_i64(cmp.operands[0]) || type(cmp.operands[0]).shape.empty()) return i;
    ValueId iota = ir::kNoValue, offset = ir::kNoValue, bound = ir::kNoValue;
    ir::CmpPred pred = cmp.cmp;
    if (index_of(cmp.operands[0], iota, offset) && (bound = splat_of(cmp.operands[1])) != ir::kNoValue) {
    } else if (index_of(cmp.operands[1], iota, offset) && (bound = splat_of(cmp.operands[0])) != ir::kNoValue) {
      pred = swapped(pred);
    } else {
      return i;
    }
    const std::int64_t len = type(iota).shape[0];
    if (len > std::numeric_limits<std::int32_t>::max() - 1) return i;
    // No wrap in iota + s nor in n - s.
    const auto n = range(bound);
    if (!n) return i;
    Range s{0, 0};
    if (offset != ir::kNoValue) {
      const auto so = range(offset);
      if (!so) return i;
      s = *so;
    }
    if (!fits({s.lo, s.hi + len - 1}) || !fits({n->lo - s.hi, n->hi - s.lo})) return i;

    const SourceLoc loc = cmp.loc;
    const Shape shape = type(cmp.operands[0]).shape;
    const Type i64 = Type::scalar(DType::i64), i32 = Type::scalar(DType::i32);
    InsertPoint at(*k_, r, i);
    auto constant = [&](std::int64_t v) {
      return at.build(OpKind::Constant, {}, loc, {i64}, [&](ir::Op& o) { o.value = ir::Scalar::of_int(v); }).results[0];
    };
    auto binary = [&](ir::BinaryFn fn, ValueId a, ValueId b) {
      return at.build(OpKind::Binary, {a, b}, loc, {i64}, [&](ir::Op& o) { o.binary = fn; }).results[0];
    };
    auto as_scalar = [&](ValueId v) {  // one-element tiles of any rank, or a constant, as the i64 scalar
      if (type(v).shape.empty()) return v;
      if (const ir::Op* c = constant_op(v); c && numel(type(v).shape) != 1) return constant(c->value.i);
      return at.build(OpKind::Reshape, {v}, loc, {i64}).results[0];
    };
    ValueId t = as_scalar(bound);
    if (offset != ir::kNoValue) t = binary(ir::BinaryFn::Sub, t, as_scalar(offset));
    t = binary(ir::BinaryFn::Max, t, constant(-1));
    t = binary(ir::BinaryFn::Min, t, constant(len));
    const ValueId t32 = at.build(OpKind::Convert, {t}, loc, {i32}).results[0];
    const ValueId ones = at.build(OpKind::Reshape, {t32}, loc, {Type::tile(DType::i32, Shape(shape.size(), 1))}).results[0];
    const ValueId limit = at.build(OpKind::Broadcast, {ones}, loc, {Type::tile(DType::i32, shape)}).results[0];
    // The floor: for P in {lt, ge} and n - s a multiple of g (as are -1's neighbours 0 and L: see
    // the file comment), iota P m and floor_g(iota) P m agree, so the iota may be floored.
    std::int64_t g = 1;
    if (pred == ir::CmpPred::Lt || pred == ir::CmpPred::Ge) {
      g = std::min<std::int64_t>(divisor(bound), kMaxFloor);
      if (offset != ir::kNoValue) g = std::min(g, divisor(offset));
      while (g > 1 && len % g != 0) g /= 2;
    }
    ValueId idx = at.build(OpKind::Iota, {}, loc, {Type::tile(DType::i32, {len})}, [&](ir::Op& o) {
                    if (g > 1) o.value = ir::Scalar::of_int(g);
                  }).results[0];
    if (shape.size() != 1) idx = at.build(OpKind::Reshape, {idx}, loc, {Type::tile(DType::i32, shape)}).results[0];
    for (std::size_t p = i; p < at.position(); ++p) defs_->note(*r.ops[p]);  // the new ops
    i = at.position();
    ir::Op& c = *r.ops[i];  // the ct.cmp, moved down past the new ops
    c.operands = {idx, limit};
    c.cmp = pred;
    return i;
  }
};

}  // namespace

std::unique_ptr<Pass> make_narrow_index() { return std::make_unique<NarrowIndex>(); }

}  // namespace ctile::passes
