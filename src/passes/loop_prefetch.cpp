// loop-prefetch: software pipelining of the loads of a K loop (tile-level IR, CUDA pipeline). In a
// ct.for whose body multiplies tiles (ct.mma), each top-level load of a read-only tensor whose
// indices are the induction variable or loop-invariant is issued one iteration ahead:
//
//   for k in [lb, ub) step s: a = load(p, i, k); acc = mma(a, ..., acc)
// becomes
//   a0 = load(p, i, lb)
//   for k in [lb, ub) step s, carrying a: an = load(p, i, k + s); acc = mma(a, ..., acc); yield an
//
// so the global loads of iteration k + 1 are in flight while iteration k computes. With the kernel
// option loop_prefetch = D (1..3; default 1) the loads run D iterations ahead: D tiles per load
// are loaded before the loop (at lb, lb + s, ...) and carried, the body loads at k + D s, and the
// yield shifts the carried tiles by one. The loads read
// tensors nobody writes while the kernel runs (Ref), so moving them changes no value; the extra
// load past the last iteration (and the one before a loop that runs no iteration) reads tile
// indices whose elements outside the tensor are padding, like any other load, and its result is
// never used. With the option set, a loop without a product is pipelined too when its loads are small
// (kStreamElements): a streaming loop such as GEMV's then has the next tile's loads in flight while
// it multiplies, for a few registers; larger ones are left alone. Only its largest loads (the
// stream) move: a small vector broadcast over the stream stays at its use.
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

  void run(ir::Kernel& k, const PassContext& ctx) override {
    if (k.gpu_level()) return;
    k_ = &k;
    option_ = ctx.options.loop_prefetch;
    depth_ = option_ > 0 ? option_ : 1;
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


  void pipeline(ir::Region& r, std::size_t& i) {
    ir::Op* loop = r.ops[i].get();
    ir::Region& body = loop->regions[0];
    const ValueId iv = body.args[0];
    bool has_mma = false;
    for (const auto& op : body.ops) has_mma = has_mma || op->kind == OpKind::Mma;
    std::set<ValueId> inside;
    defined_in(body, inside);
    const Defs defs(*k_);
    std::vector<ir::Op*> loads;
    for (const auto& op : body.ops) {
      if (op->kind != OpKind::Load || inside.count(op->operands[0]) || !read_only_source(*k_, op->operands[0], defs)) continue;
      bool ok = true, uses_iv = false;
      for (std::size_t j = 1; j < op->operands.size(); ++j) {
        const ValueId x = op->operands[j];
        uses_iv = uses_iv || x == iv;
        ok = ok && (x == iv || !inside.count(x));
      }
      if (ok && uses_iv) loads.push_back(op.get());
    }
    if (loads.empty()) return;
    if (!has_mma) {
      if (option_ == 0) return;
      // The stream is the largest tile: smaller ones (a vector broadcast over the stream's rows,
      // loaded straight into the layout of its use, layout-assignment) stay where they are.
      std::int64_t most = 0, elems = 0;
      for (ir::Op* ld : loads) most = std::max(most, numel(k_->type(ld->results[0]).shape));
      std::erase_if(loads, [&](ir::Op* ld) { return numel(k_->type(ld->results[0]).shape) < most; });
      for (ir::Op* ld : loads) elems += numel(k_->type(ld->results[0]).shape);
      if (elems > kStreamElements) return;
    }

    const ValueId lb = loop->operands[0], step = loop->operands[2];
    auto add = [&](InsertPoint& at, ValueId x) {
      return at.build(OpKind::Binary, {x, step}, loop->loc, {k_->type(iv)}, [](ir::Op& o) { o.binary = ir::BinaryFn::Add; })
          .results[0];
    };
    // Before the loop: each load at the first depth_ indices (first[d][j]: load j at lb + d * step).
    InsertPoint pre(*k_, r, i);
    std::vector<std::vector<ValueId>> first(static_cast<std::size_t>(depth_));
    ValueId at = lb;
    for (int d = 0; d < depth_; ++d) {
      if (d > 0) at = add(pre, at);
      for (ir::Op* ld : loads) {
        std::vector<ValueId> ops = ld->operands;
        std::replace(ops.begin() + 1, ops.end(), iv, at);
        ir::Op& p = pre.build(OpKind::Load, ops, ld->loc, {k_->type(ld->results[0])}, [&](ir::Op& x) { x.value = ld->value; });
        first[static_cast<std::size_t>(d)].push_back(p.results[0]);
      }
    }
    i = pre.position();
    loop = r.ops[i].get();
    ir::Region& b = loop->regions[0];
    // In the body: the index depth_ iterations ahead first, then the loads at it; the tiles of this
    // iteration and the next depth_ - 1 come in as loop-carried values.
    InsertPoint head(*k_, b, 0);
    ValueId next = iv;
    for (int d = 0; d < depth_; ++d) next = add(head, next);
    ir::Builder nb(*k_);
    for (std::size_t j = 0; j < loads.size(); ++j) {
      ir::Op* ld = loads[j];
      const ValueId cur = ld->results[0];
      std::vector<ValueId> args;
      for (int d = 0; d < depth_; ++d) {
        args.push_back(nb.new_value(k_->type(cur)));
        loop->operands.push_back(first[static_cast<std::size_t>(d)][j]);
        b.args.push_back(args.back());
        loop->results.push_back(nb.new_value(k_->type(cur)));
      }
      replace_uses(*k_, cur, args[0]);  // SSA: cur is used only inside the body
      std::replace(ld->operands.begin() + 1, ld->operands.end(), iv, next);
      // The yield shifts: level d + 1 becomes level d, the new tile the last level.
      for (int d = 1; d < depth_; ++d) b.ops.back()->operands.push_back(args[static_cast<std::size_t>(d)]);
      b.ops.back()->operands.push_back(cur);
    }
    // Move the loads right after the index computation (their operands are the invariants and `next`).
    std::vector<std::unique_ptr<ir::Op>> moved;
    for (ir::Op* ld : loads)
      for (std::size_t j = 0; j < b.ops.size(); ++j)
        if (b.ops[j].get() == ld) {
          moved.push_back(std::move(b.ops[j]));
          b.ops.erase(b.ops.begin() + static_cast<std::ptrdiff_t>(j));
          break;
        }
    b.ops.insert(b.ops.begin() + depth_, std::make_move_iterator(moved.begin()), std::make_move_iterator(moved.end()));
    if (!k_->layouts.empty()) k_->layouts.resize(k_->values.size());
  }

  // With the option set, a loop without a product is pipelined too when its loads hold at most
  // this many elements per iteration (a stream such as GEMV's [R, BK] tile of W: about 8 registers
  // per thread more). Opt-in until measured side by side with the default.
  static constexpr std::int64_t kStreamElements = 4096;

  ir::Kernel* k_ = nullptr;
  // The option's depth, else 1. (A depth chosen from the shared memory the rings fit in, 2 for
  // 128 x 256 x 64 wgmma tiles on sm_90, measured 8% slower than 1 on the H200 at 4096^3 and 23% at
  // K = 512: docs/perf/2026-12-01-h200/NOTES.md, session 6.)
  int depth_ = 1;
  int option_ = 0;
};

}  // namespace

std::unique_ptr<Pass> make_loop_prefetch() { return std::make_unique<LoopPrefetch>(); }

}  // namespace ctile::passes
