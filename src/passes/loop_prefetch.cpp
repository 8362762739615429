// loop-prefetch: software pipelining of the loads of a K loop (tile-level IR, CUDA pipeline). In a
// ct.for whose body multiplies tiles (ct.mma), each top-level load of a read-only tensor whose
// indices are the induction variable or loop-invariant is issued one iteration ahead:
//
//   for k in [lb, ub) step s: a = load(p, i, k); acc = mma(a, ..., acc)
// becomes
//   a0 = load(p, i, lb)
//   for k in [lb, ub) step s, carrying a: an = load(p, i, k + s); acc = mma(a, ..., acc); yield an
//
// so the global loads of iteration k + 1 are in flight while iteration k computes. The loads read
// tensors nobody writes while the kernel runs (Ref), so moving them changes no value; the extra
// load past the last iteration (and the one before a loop that runs no iteration) reads tile
// indices whose elements outside the tensor are padding, like any other load, and its result is
// never used. Loops without a product are left alone: for them the extra live registers buy less.
#include <algorithm>
#include <set>

#include "passes.hpp"
#include "rewrite.hpp"

namespace ctile::passes {
namespace {

using ir::OpKind;
using ir::ValueId;

class LoopPrefetch : public Pass {
 public:
  std::string_view name() const override { return "loop-prefetch"; }

  void run(ir::Kernel& k, const PassContext&) override {
    if (k.gpu_level()) return;
    k_ = &k;
    region(k.body);
    k_ = nullptr;
  }

 private:
  void region(ir::Region& r) {
    for (std::size_t i = 0; i < r.ops.size(); ++i) {
      for (auto& sub : r.ops[i]->regions) region(sub);
      if (r.ops[i]->kind == OpKind::For) pipeline(r, i);
    }
  }

  // Values defined inside `r` (its arguments, op results, nested regions').
  static void defined_in(const ir::Region& r, std::set<ValueId>& out) {
    for (ValueId a : r.args) out.insert(a);
    for (const auto& op : r.ops) {
      for (ValueId v : op->results) out.insert(v);
      for (const auto& sub : op->regions) defined_in(sub, out);
    }
  }

  // True when `v` (a load's source) is a read-only tensor or a partition of one.
  bool read_only(ValueId v, const Defs& defs) const {
    const ir::Type& t = k_->type(v);
    if (t.kind == ir::TypeKind::Tensor) return t.access == ir::Access::Read;
    if (t.kind != ir::TypeKind::Partition) return false;
    const ir::Op* d = defs.of(v);
    return d && d->kind == OpKind::MakePartition && read_only(d->operands[0], defs);
  }

  void pipeline(ir::Region& r, std::size_t& i) {
    ir::Op* loop = r.ops[i].get();
    ir::Region& body = loop->regions[0];
    const ValueId iv = body.args[0];
    bool has_mma = false;
    for (const auto& op : body.ops) has_mma = has_mma || op->kind == OpKind::Mma;
    if (!has_mma) return;
    std::set<ValueId> inside;
    defined_in(body, inside);
    const Defs defs(*k_);
    std::vector<ir::Op*> loads;
    for (const auto& op : body.ops) {
      if (op->kind != OpKind::Load || inside.count(op->operands[0]) || !read_only(op->operands[0], defs)) continue;
      bool ok = true, uses_iv = false;
      for (std::size_t j = 1; j < op->operands.size(); ++j) {
        const ValueId x = op->operands[j];
        uses_iv = uses_iv || x == iv;
        ok = ok && (x == iv || !inside.count(x));
      }
      if (ok && uses_iv) loads.push_back(op.get());
    }
    if (loads.empty()) return;

    const ValueId lb = loop->operands[0], step = loop->operands[2];
    // Before the loop: each load at the first index.
    InsertPoint pre(*k_, r, i);
    std::vector<ValueId> first;
    for (ir::Op* ld : loads) {
      std::vector<ValueId> ops = ld->operands;
      std::replace(ops.begin() + 1, ops.end(), iv, lb);
      ir::Op& p = pre.build(OpKind::Load, ops, ld->loc, {k_->type(ld->results[0])}, [&](ir::Op& x) { x.value = ld->value; });
      first.push_back(p.results[0]);
    }
    i = pre.position();
    loop = r.ops[i].get();
    ir::Region& b = loop->regions[0];
    // In the body: the next index first, then the loads of the next iteration; the current tiles
    // come in as loop-carried values.
    InsertPoint head(*k_, b, 0);
    const ValueId next = head.build(OpKind::Binary, {iv, step}, loop->loc, {k_->type(iv)}, [](ir::Op& x) {
                           x.binary = ir::BinaryFn::Add;
                         }).results[0];
    ir::Builder nb(*k_);
    for (std::size_t j = 0; j < loads.size(); ++j) {
      ir::Op* ld = loads[j];
      const ValueId cur = ld->results[0];
      const ValueId arg = nb.new_value(k_->type(cur));
      const ValueId out = nb.new_value(k_->type(cur));
      replace_uses(*k_, cur, arg);  // SSA: cur is used only inside the body
      std::replace(ld->operands.begin() + 1, ld->operands.end(), iv, next);
      loop->operands.push_back(first[j]);
      b.args.push_back(arg);
      loop->results.push_back(out);
      b.ops.back()->operands.push_back(cur);  // the yield carries the next tile
    }
    // Move the loads right after `next` (their operands are the invariants and `next`).
    std::vector<std::unique_ptr<ir::Op>> moved;
    for (ir::Op* ld : loads)
      for (std::size_t j = 0; j < b.ops.size(); ++j)
        if (b.ops[j].get() == ld) {
          moved.push_back(std::move(b.ops[j]));
          b.ops.erase(b.ops.begin() + static_cast<std::ptrdiff_t>(j));
          break;
        }
    b.ops.insert(b.ops.begin() + 1, std::make_move_iterator(moved.begin()), std::make_move_iterator(moved.end()));
    if (!k_->layouts.empty()) k_->layouts.resize(k_->values.size());
  }

  ir::Kernel* k_ = nullptr;
};

}  // namespace

std::unique_ptr<Pass> make_loop_prefetch() { return std::make_unique<LoopPrefetch>(); }

}  // namespace ctile::passes
