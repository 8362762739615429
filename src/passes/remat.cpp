// remat: a tile that is cheap to compute again from narrower values is computed again after a
// reduction instead of being kept in registers across it. A row kernel converts its bf16 / f16
// tile to f32, reduces it, and uses the f32 tile once more after the reduction (RMSNorm's
// x * rstd, LayerNorm's (x - mean) * rstd): kept, the f32 tile costs one register per element
// across the reduction where the loaded 16-bit tile costs half of one, and the surplus decides how
// many CTAs fit on an SM (RMSNorm over 16384 bf16 columns, 512 threads: 74 registers, one CTA; 64
// with the conversion repeated, two).
//
// Per region, ops are numbered by the reductions (ct.reduce, ct.scan) before them (their epoch).
// An operand defined in an earlier epoch of the same region is replaced by a copy of the chain
// that computes it, built right before its first use in the later epoch (later uses in that epoch
// share it) when
//   - every op of the chain is cheap and element-wise (convert, add / sub / mul / min / max and
//     the bitwise ops, neg / abs / not, fma, cmp, select, iota, constant, broadcast, reshape),
//     at most kMaxDepth deep, defined in this region, and of 32 bits or less (not an i64 index
//     tile: its arithmetic is two or more instructions an element);
//   - its leaves are values that cost at most a register (scalars, replicated values) or 16-bit
//     tiles (packed two per register), the leaves the copy keeps alive across the reduction;
//   - the 16-bit leaves take fewer registers than the value itself (an f32 sum of two bf16 tiles
//     saves nothing and is left alone).
// The copied conversions of packed 16-bit tiles and copied iotas are marked `remat`: the CUDA
// emitter hides their inputs from the CUDA compiler's common-subexpression elimination (an empty
// asm), which would otherwise merge the copy with the original and keep the wide value alive.
// The copy computes the same bits as the original (the same ops on the same values).
#include <map>
#include <set>

#include "passes.hpp"
#include "rewrite.hpp"

namespace ctile::passes {
namespace {

using ir::OpKind;
using ir::ValueId;

constexpr int kMaxDepth = 8;

bool cheap_kind(const ir::Op& op) {
  switch (op.kind) {
    case OpKind::Convert:
    case OpKind::Fma:
    case OpKind::Cmp:
    case OpKind::Select:
    case OpKind::Iota:
    case OpKind::Constant:
    case OpKind::Broadcast:
    case OpKind::Reshape: return true;
    case OpKind::Binary:
    case OpKind::Unary: return !ir::calls_function(op);
    default: return false;
  }
}

class Remat : public Pass {
 public:
  std::string_view name() const override { return "remat"; }
  void run(ir::Kernel& k, const PassContext&) override {
    k_ = &k;
    for_each_region(k.body, [&](ir::Region& r) { region(r); });
  }

 private:
  ir::Kernel* k_ = nullptr;
  // Within the region being rewritten: the op defining each value, and its epoch.
  std::map<ValueId, ir::Op*> def_;
  std::map<ValueId, int> epoch_;
  std::map<std::pair<ValueId, int>, ValueId> copies_;  // (value, epoch) -> its copy in that epoch

  bool in_registers(ValueId v) const { return passes::in_registers(*k_, v); }
  double words(ValueId v) const { return thread_words(*k_, v); }
  std::int64_t per_thread(ValueId v) const { return thread_elements(*k_, v); }
  bool small(ValueId v) const { return k_->type(v).kind == ir::TypeKind::Tile && in_registers(v) && per_thread(v) <= 1; }
  bool narrow_tile(ValueId v) const {
    return k_->type(v).kind == ir::TypeKind::Tile && in_registers(v) && dtype_size(k_->type(v).dtype) == 2;
  }

  // Whether `v` can be computed again in a later epoch; collects the 16-bit leaves it keeps alive.
  bool copyable(ValueId v, int depth, std::set<ValueId>& narrow_leaves) const {
    if (small(v)) return true;
    if (narrow_tile(v)) {
      narrow_leaves.insert(v);
      return true;
    }
    auto it = def_.find(v);
    if (it == def_.end() || depth >= kMaxDepth) return false;
    const ir::Op& d = *it->second;
    if (!cheap_kind(d) || d.results.size() != 1 || !in_registers(v)) return false;
    // 64-bit integer arithmetic takes two or more instructions an element: a mask over an i64
    // iota is not made again after each reduction (LayerNorm, whose mask is one, measured 4-17%
    // slower in the first H200 run with it made again: docs/perf/2026-12-04-h200/NOTES.md).
    if (dtype_size(k_->type(v).dtype) == 8) return false;
    for (ValueId o : d.operands)
      if (!copyable(o, depth + 1, narrow_leaves)) return false;
    return true;
  }

  bool worth(ValueId v) const {
    if (small(v) || narrow_tile(v) || k_->type(v).kind != ir::TypeKind::Tile) return false;
    std::set<ValueId> leaves;
    if (!copyable(v, 0, leaves)) return false;
    double kept = 0;
    for (ValueId l : leaves) kept += words(l);
    return kept < words(v);
  }

  // The copy of `v` for epoch `e`, built before position `at` of `r` (advanced past new ops).
  ValueId copy(ir::Region& r, std::size_t& at, ValueId v, int e) {
    if (small(v) || narrow_tile(v)) return v;
    auto ep = epoch_.find(v);
    if (ep != epoch_.end() && ep->second == e) return v;
    if (auto c = copies_.find({v, e}); c != copies_.end()) return c->second;
    const ir::Op& d = *def_.at(v);
    std::vector<ValueId> operands;
    for (ValueId o : d.operands) operands.push_back(copy(r, at, o, e));
    InsertPoint ip(*k_, r, at);
    ir::Op& c = ip.build(d.kind, operands, d.loc, {k_->type(v)}, [&](ir::Op& o) { ir::copy_attributes(d, o); });
    at = ip.position();
    const ValueId nv = c.results[0];
    if (!k_->layouts.empty()) k_->layouts[static_cast<std::size_t>(nv)] = k_->layout(v);
    const bool narrow_source = d.kind == OpKind::Convert && narrow_tile(d.operands[0]);
    c.remat = narrow_source || d.kind == OpKind::Iota;
    def_[nv] = &c;
    epoch_[nv] = e;
    copies_[{v, e}] = nv;
    return nv;
  }

  void region(ir::Region& r) {
    def_.clear();
    epoch_.clear();
    copies_.clear();
    int e = 0;
    for (std::size_t i = 0; i < r.ops.size(); ++i) {
      ir::Op* op = r.ops[i].get();
      for (std::size_t j = 0; j < op->operands.size(); ++j) {
        const ValueId v = op->operands[j];
        auto ep = epoch_.find(v);
        if (ep == epoch_.end() || ep->second == e || !worth(v)) continue;
        std::size_t at = i;
        const ValueId nv = copy(r, at, v, e);
        i = at;  // the op moved down past the copies
        op = r.ops[i].get();
        op->operands[j] = nv;
      }
      for (ValueId res : op->results) {
        def_[res] = op;
        epoch_[res] = e;
      }
      if (is_reduction(*op)) ++e;
    }
  }
};

}  // namespace

std::unique_ptr<Pass> make_remat() { return std::make_unique<Remat>(); }

}  // namespace ctile::passes
