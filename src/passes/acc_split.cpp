// acc-split: on sm_90, a K loop whose only product is an in-flight wgmma (smem-alloc's in_flight)
// accumulating into a carried f32 tile gets `acc_split = 2`: the code generator then runs the
// loop's iterations in pairs, the first of each pair into the carried tile and the second into a
// second accumulator that starts at zero, and adds the two after the loop. A wgmma waits for the
// products before it on the same accumulator (each one's f32 sums feed the next), so with one
// accumulator the tensor cores run a K loop's products one after another, each paying the full
// latency of the unit; the loop's wgmma.wait_group 1 then lets the products of two consecutive
// iterations, on different accumulators, run side by side. That should matter where one
// iteration's products are short (the decode-shape GEMMs' 64 x 64 and 64 x 128 tiles), and costs
// the registers of a second accumulator.
//
// The ops do not change (the IR stays one iteration per K step; the producer warpgroup's program
// and every ring's rotation are the same); only the sum's order does: sum(even K steps) +
// sum(odd K steps), each in the tensor cores' order, then one f32 add, within the tolerance the
// tensor cores already have against the sequential sum (docs/ir.md, "Numerics").
//
// Option acc_split = 2 asks for the K split instead: in a warp-specialised kernel of one consumer
// warpgroup a second consumer warpgroup takes the odd iterations into its own accumulator
// (KernelTarget::k_split, k_split_scratch; docs/compiler.md, "The K split"). Measured on an H100
// beside one warpgroup it moved nothing at the decode shapes (session 25), so only the option
// asks for it.
//
// Option acc_split: 1 = wherever it applies; -1 or 0 (the compiler's choice) = never: measured on
// an H100 beside one accumulator it moved nothing, to 0.5%, at the decode shapes nor at 4096^3
// (docs/compiler.md, "Accumulator split"; docs/perf/2026-12-06-h100/NOTES.md, session 23).
#include "ctile/ir/op_info.hpp"
#include "passes.hpp"

namespace ctile::passes {
namespace {

using ir::OpKind;

class AccSplit : public Pass {
 public:
  static constexpr int kKSplitSlots = 6;
  std::string_view name() const override { return "acc-split"; }
  void run(ir::Kernel& k, const PassContext& ctx) override {
    if (!k.gpu_level() || k.target.sm < 90 || ctx.options.acc_split <= 0) return;
    if (ctx.options.acc_split == 2) {
      k_split(k, ctx.options.ring_slots);
      return;
    }
    ir::walk_mut(k.body, [&](ir::Op& f) {
      if (f.kind != OpKind::For) return;
      if (split_product(k, f)) f.acc_split = 2;
    });
  }

 private:
  // The K split (option acc_split = 2): a warp-specialised kernel of one consumer warpgroup (a
  // 64-row tile, no ping-pong) whose K loop is a top-level op of the kernel, its only product
  // split_product's, with nothing before it or in it but the product and its TMA copies that
  // writes memory or exchanges data between threads
  // (the second warpgroup runs the kernel's ops up to the loop's end, then hands its accumulator
  // over through shared memory and skips the rest of the tile block).
  static void k_split(ir::Kernel& k, int ring_slots_option) {
    const ir::KernelTarget& t = k.target;
    if (t.producer_warps != 4 || t.warps != 4 || t.blocks_per_cta != 1 || t.pingpong) return;
    ir::Op* loop = nullptr;
    for (auto& up : k.body.ops) {
      ir::Op& op = *up;
      if (op.kind == OpKind::For && split_product(k, op)) {
        loop = &op;
        break;
      }
      if (!both_run(op)) return;
    }
    if (!loop) return;
    // Both warpgroups run every op of the body but the product (and the yield).
    for (const auto& up : loop->regions[0].ops)
      if (up->kind != OpKind::Mma && up->kind != OpKind::Yield && !both_run(*up)) return;
    if (count_products(k.body) != 1) return;
    std::int64_t bytes = 0;
    for (const auto& op : loop->regions[0].ops)
      if (op->kind == OpKind::Mma) bytes = 4 * ctile::numel(k.type(op->results[0]).shape);
    if (bytes <= 0 || (k.target.smem_bytes + 15) / 16 * 16 + bytes > kSharedPerCtaSm90) return;
    // Each consumer warpgroup holds two slots of each ring (its product in flight and the one it
    // issues): the rings grow to kKSplitSlots where they fit beside the scratch, so that the
    // producer has slots to run ahead into (unless the option ring_slots sets them).
    if (ring_slots_option <= 0) grow_producer_rings(k, kKSplitSlots, bytes + 16);
    const std::int64_t at = (k.target.smem_bytes + 15) / 16 * 16;
    loop->acc_split = 2;
    k.target.k_split = 2;
    k.target.k_split_scratch = at;
    k.target.smem_bytes = at + bytes;
  }
  // An op both consumer warpgroups of the K split may run: it writes no memory, neither
  // synchronises the tile block nor exchanges data through shared memory (the second warpgroup is
  // not in the tile block's barriers); a TMA copy only records its slot on the consumers' side.
  static bool both_run(const ir::Op& op) {
    const bool tma_copy = ir::is_tile_copy(op) && op.tma_map >= 0;
    return ir::removable_if_unused(op) && !ir::traits(op.kind).crosses_threads && op.regions.empty() && !op.sync_after &&
           op.async_wait < 0 && (op.smem_bytes == 0 || tma_copy);
  }

  // True when the loop's body holds exactly one mma (its nested regions included: a GEMM's K
  // loop, as against attention's loop of two chained products), at the body's top level, an
  // in-flight tensor-core product whose accumulator is a carried f32 tile of rank 2 that the body
  // yields back in the same slot.
  static bool split_product(const ir::Kernel& k, const ir::Op& f) {
    const ir::Region& body = f.regions[0];
    if (count_products(body) != 1) return false;
    const ir::Op* mma = nullptr;
    for (const auto& op : body.ops)
      if (op->kind == OpKind::Mma) mma = op.get();
    if (!mma || !mma->tensor_core || !mma->in_flight || mma->operands.size() < 3) return false;
    const ir::ValueId acc = mma->operands[2];
    const ir::Type& t = k.type(acc);
    if (!t.is_tile() || t.dtype != DType::f32 || t.shape.size() != 2) return false;
    const ir::Op& y = *body.ops.back();
    for (std::size_t j = 1; j < body.args.size(); ++j)
      if (body.args[j] == acc) return j - 1 < y.operands.size() && y.operands[j - 1] == mma->results[0];
    return false;
  }
};

}  // namespace

std::unique_ptr<Pass> make_acc_split() { return std::make_unique<AccSplit>(); }

}  // namespace ctile::passes
