// block-prefetch: on a resident grid (KernelTarget::persistent: the option stages = 2), the loads
// of a straight-line kernel (a row kernel: no loop, no matrix product) are issued one tile block
// ahead. Each CTA runs its tile blocks in a loop; a marked load ({prefetch_next}) reads the CTA's
// next tile block while this one computes, into a second set of registers that becomes the
// current set when the loop moves on (the code generator's part, docs/compiler.md). A row kernel
// otherwise has nothing in flight from its loads' issue to its reductions' end: at 8192x5120
// LayerNorm holds 3 CTAs an SM and each waits a DRAM round trip per row.
//
// A load qualifies when it is an op of the kernel's body (not of a nested region), reads a
// tile of its own tile block along every grid axis (its indices read every axis's block id: a
// row's x, not LayerNorm's weights, which all rows read from L2), reads a
// read-only tensor into registers (a distributed layout of more than one element a thread; not a
// shared-memory ring, not a replicated scalar), and its operands come only from ops the code
// generator can compute for another tile block: block ids, constants, extents, partitions,
// parameters and scalar arithmetic over them (no load, no reduction, no effect). Each marked load
// keeps its registers live over the whole tile block: the occupancy pass counts them.
#include <optional>

#include "passes.hpp"
#include "rewrite.hpp"

namespace ctile::passes {
namespace {

using ir::OpKind;
using ir::ValueId;

bool straight_line(const ir::Kernel& k) {
  bool ok = true;
  ir::walk(k.body, [&](const ir::Op& op) {
    ok = ok && op.kind != OpKind::For && op.kind != OpKind::While && op.kind != OpKind::If && op.kind != OpKind::Mma;
  });
  return ok;
}

class BlockPrefetch : public Pass {
 public:
  std::string_view name() const override { return "block-prefetch"; }
  void run(ir::Kernel& k, const PassContext&) override {
    if (!k.gpu_level() || !k.target.persistent || k.target.producer_warps > 0 || !straight_line(k)) return;
    k_ = &k;
    defs_.emplace(k);
    for (auto& op : k.body.ops) {
      if (op->kind != OpKind::Load || ir::reads_mutable_memory(k, *op)) continue;
      const ValueId r = op->results[0];
      if (!k.layout(r).is_dist() || thread_elements(k, r) <= 1 || op->ring_slots > 0 || op->tma_map >= 0) continue;
      bool ok = true;
      axes_ = 0;
      for (ValueId v : op->operands) ok = ok && computable(v, 0);
      // Only a tile that is the tile block's own along every grid axis (LayerNorm's rows, not its
      // weights, which every row reads and L2 keeps): the rest would hold registers for little.
      if (ok && axes_ == (1u << k.grid_rank) - 1) op->prefetch_next = true;
    }
    defs_.reset();
  }

 private:
  ir::Kernel* k_ = nullptr;
  std::optional<Defs> defs_;
  unsigned axes_ = 0;  // the grid axes whose block ids the operands read (computable)

  // Whether `v` is a parameter or comes from ops the code generator can emit for another tile
  // block: scalars and partitions from block ids, constants, extents and scalar arithmetic.
  bool computable(ValueId v, int depth) {
    if (depth > 16) return false;
    const ir::Op* d = defs_->of(v);
    if (!d) return true;  // a parameter
    if (d->kind == OpKind::BlockId) axes_ |= 1u << d->axis;
    const ir::Type& t = k_->type(v);
    if (t.kind == ir::TypeKind::Tile && (numel(t.shape) != 1 || d->fused)) return false;
    switch (d->kind) {
      case OpKind::BlockId: case OpKind::NumBlocks: case OpKind::Dim: case OpKind::Constant:
      case OpKind::MakePartition: case OpKind::PartitionCount: case OpKind::Binary: case OpKind::Unary:
      case OpKind::Convert: case OpKind::Reshape: case OpKind::Broadcast: case OpKind::Cmp: case OpKind::Select:
        break;
      default: return false;
    }
    if (!d->regions.empty()) return false;
    for (ValueId o : d->operands)
      if (!computable(o, depth + 1)) return false;
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> make_block_prefetch() { return std::make_unique<BlockPrefetch>(); }

}  // namespace ctile::passes
