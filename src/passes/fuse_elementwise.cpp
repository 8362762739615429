// fuse-elementwise: an element-wise tile computed only for one element-wise op later in the same
// stretch of its region is marked `fused`: the CUDA emitter then computes it element by element
// inside that op's expression instead of into registers of its own. A row kernel's epilogue
// ((x - mean) * rstd * w + b, converted to bf16) is a chain of such ops over the thread's 32
// elements; emitted op by op, each into a full array of registers, the CUDA compiler keeps most
// of the chain's arrays alive at once and needs ~100 registers where the chain, computed one
// element at a time, needs the inputs and the result (ptxas, LayerNorm over 4096 bf16 columns at
// 32 elements a thread: 64 registers without spills fused, 52-356 bytes of spills at 64 without).
//
// A value is fused when
//   - its op is element-wise and cheap to compute where it is used (convert, bitcast, unary,
//     binary, fma, cmp, select, broadcast, constant, iota; reshape and permute of a fused value);
//   - it is a distributed tile of more than one element (a replicated value is a scalar already);
//   - exactly one op uses it (one or more times), in the same region, and that op reads its
//     operands element by element: one of the kinds above (a conversion of packed 16-bit pairs
//     reads whole registers: not into one of those), or a reshape / permute;
//   - no reduction or scan lies between the op and its use (moving the computation across one
//     would keep its operands alive across it: the remat pass decides that).
// Fusion never changes what is computed: the same ops on the same values, in the same rounding.
#include <map>
#include <set>
#include <vector>

#include "passes.hpp"
#include "rewrite.hpp"

namespace ctile::passes {
namespace {

using ir::OpKind;
using ir::ValueId;

// Ops whose result the emitter can write as one expression per element.
bool fusable_kind(const ir::Op& op) {
  switch (op.kind) {
    case OpKind::Convert:
    case OpKind::Bitcast:
    case OpKind::Unary:
    case OpKind::Binary:
    case OpKind::Fma:
    case OpKind::Cmp:
    case OpKind::Select:
    case OpKind::Broadcast:
    case OpKind::Constant:
    case OpKind::Iota:
    case OpKind::Reshape:
    case OpKind::Permute: return true;
    default: return false;
  }
}

class FuseElementwise : public Pass {
 public:
  std::string_view name() const override { return "fuse-elementwise"; }
  void run(ir::Kernel& k, const PassContext&) override {
    if (!k.gpu_level()) return;
    k_ = &k;
    uses_ = use_counts(k);
    for_each_region(k.body, [&](ir::Region& r) { region(r); });
  }

 private:
  ir::Kernel* k_ = nullptr;
  std::vector<int> uses_;

  bool packed_pairs(ValueId v) const {
    const ir::Type& t = k_->type(v);
    return dtype_size(t.dtype) == 2 && thread_elements(*k_, v) % 2 == 0;
  }
  // Whether `user` reads operand `v` element by element (through the emitter's per-element access).
  bool reads_elements(const ir::Op& user, ValueId v) const {
    // A reduction folds the elements as it reads them (not a float product: that one is staged
    // in shared memory, in index order).
    if (user.kind == OpKind::Reduce)
      return !(user.reduce == ir::ReduceKind::Prod && is_float(k_->type(v).dtype)) && numel(k_->type(v).shape) > 1;
    if (!fusable_kind(user) || user.results.size() != 1) return false;
    // A conversion of packed 16-bit floats to f32 reads the source's registers two elements at a time.
    if (user.kind == OpKind::Convert && packed_pairs(v) && is_float(k_->type(v).dtype) &&
        k_->type(user.results[0]).dtype == DType::f32)
      return false;
    return true;
  }

  void region(ir::Region& r) {
    // The epoch (reductions before it) of each op of this region, and each value's users here.
    std::vector<int> epoch(r.ops.size(), 0);
    std::map<ValueId, std::vector<std::size_t>> users;
    int e = 0;
    for (std::size_t i = 0; i < r.ops.size(); ++i) {
      const ir::Op& op = *r.ops[i];
      epoch[i] = e;
      for (ValueId v : op.operands) {
        auto& u = users[v];
        if (u.empty() || u.back() != i) u.push_back(i);
      }
      if (is_reduction(op)) ++e;
    }
    for (std::size_t i = 0; i < r.ops.size(); ++i) {
      ir::Op& op = *r.ops[i];
      if (!fusable_kind(op) || op.results.size() != 1 || !op.regions.empty()) continue;
      const ValueId v = op.results[0];
      const ir::Type& t = k_->type(v);
      if (!t.is_tile() || !in_registers(*k_, v) || thread_elements(*k_, v) <= 1 || numel(t.shape) <= 1) continue;
      auto u = users.find(v);
      if (u == users.end() || u->second.size() != 1) continue;
      const std::size_t j = u->second[0];
      // Every use is in that op (uses_ counts the whole kernel: none in another region).
      int here = 0;
      for (ValueId o : r.ops[j]->operands) here += o == v;
      if (here != uses_[static_cast<std::size_t>(v)] || epoch[j] != epoch[i] || !reads_elements(*r.ops[j], v)) continue;
      // Reshape and permute pass their source through: fused only over a fused source.
      if ((op.kind == OpKind::Reshape || op.kind == OpKind::Permute) && !fused_source(op)) continue;
      op.fused = true;
      fused_.insert(v);
    }
  }
  bool fused_source(const ir::Op& op) const { return fused_.count(op.operands[0]) > 0; }
  std::set<ValueId> fused_;
};

}  // namespace

std::unique_ptr<Pass> make_fuse_elementwise() { return std::make_unique<FuseElementwise>(); }

}  // namespace ctile::passes
