// warp-specialize: on sm_90, a kernel whose wgmma operand tiles all come by TMA (smem-alloc's
// rings) gets a producer warpgroup (KernelTarget::producer_warps = 4) that runs only the copies
// (ir::producer_ops: the TMA loads, the loops around them, the scalar ops of their coordinates),
// each as soon as the consumers have handed its ring slot back. The tile block's own warps become
// the consumers: they wait for each copy on its slot's barrier, multiply, and hand the slot back
// (one arrival per warp on the slot's `empty` barrier) once the products that read it are done;
// the barrier of the whole tile block before each product goes away, and the producer runs as far
// ahead as the ring has slots. Where smem-alloc laid the epilogue's scratch over the rings (a K
// loop, then its epilogue), the pass moves the rings and their barriers above the scratch when the
// CTA's shared memory holds both, so the producer copies the next tile block's operands while the
// consumers run this one's epilogue; where it does not, the consumers say at each tile block's
// end that its shared memory is free for the next one's copies (KernelTarget::scratch_over_rings).
//
// With the option pingpong = 1 and two consumer warpgroups, the loops' products take turns
// (KernelTarget::pingpong): one warpgroup's softmax runs while the other's products do.
//
// A warp-specialised kernel whose tile blocks all do the same work runs on a resident grid
// (KernelTarget::persistent) unless the option stages is 1: each CTA loops over tile blocks, its
// producer already copying the next one's operands.
//
// The pass only decides and places the producer's barriers (after everything else: one per ring
// slot, then the tile block's); the code generator writes both programs. Option warp_specialize:
// 1 or 0 (the compiler's choice) = wherever it applies, -1 = never. The default is on since the
// GEMM A/B on an H100 (docs/perf/2026-12-06-h100/NOTES.md: 1.15-1.37x the same kernel without a
// producer at every benchmark shape; docs/compiler.md, "Warp specialisation").
#include <algorithm>
#include <functional>
#include <map>
#include <vector>

#include "ctile/ir/op_info.hpp"
#include "passes.hpp"

namespace ctile::passes {
namespace {

using ir::OpKind;

class WarpSpecialize : public Pass {
 public:
  std::string_view name() const override { return "warp-specialize"; }
  void run(ir::Kernel& k, const PassContext& ctx) override {
    if (!k.gpu_level() || k.target.sm < 90 || ctx.options.warp_specialize < 0) return;
    if (k.target.blocks_per_cta != 1 || k.target.warps % 4 != 0 || k.target.warps + 4 > 32) return;
    // Every tile copied into shared memory comes by TMA (a cp.async copy needs the tile block's
    // barrier before its product), and the copies can run on their own.
    bool all_tma = true;
    ir::walk(k.body, [&](const ir::Op& op) {
      if (ir::is_tile_copy(op) && k.layout(op.results[0]).is_shared()) {
        all_tma = all_tma && op.tma_map >= 0;
      }
    });
    if (!all_tma || !ir::producer_ops(k)) return;
    k.target.producer_warps = 4;
    // With the producer a ring of two slots is safe (each slot is copied into only once its
    // products are done): rings that do not fit with the producer's barriers lose slots.
    if (!fit_rings(k)) {
      k.target.producer_warps = 0;
      return;
    }
    k.target.scratch_over_rings = !rings_apart(k, ctx.options.epilogue_overlap);
    // Rings keep smem-alloc's slots unless the option ring_slots asks for more: filling shared
    // memory measured nothing (64 x 64 tiles: 4, 8 and 13 slots within 0.5%; 128 x 128 at 4096^3
    // and 8192 x 8192 x 512 with 4 or 6 slots; docs/perf/2026-12-06-h100/NOTES.md, session 22).
    grow_rings(k, ctx.options.ring_slots, kSharedPerCtaSm90);
    place_producer_barriers(k);
    k.target.pingpong = ctx.options.pingpong == 1 && pingpong_applies(k);
    // A resident grid unless the option says otherwise (stages = 1: one tile block a CTA): each CTA
    // loops over tile blocks, so the producer copies the next one's operands while the consumers
    // run this one's epilogue, and no CTA pays the barriers' set-up and the ring's first fill once
    // a tile block (H100: GEMM 1.06-1.10x at 8192 x 8192 x 512 and 4000^3, attention 1.01-1.04x
    // without the causal mask; docs/perf/2026-12-06-h100/NOTES.md, session 20).
    // Only where every tile block does the same work (ir::uniform_tile_blocks): the grid hands them
    // out in a fixed order, and a causal attention measured 0.87-0.95x on it.
    if (ctx.options.stages == 0 && ir::uniform_tile_blocks(k)) k.target.persistent = true;
  }

 private:
  // A ring: the loads at one offset of shared memory (smem-alloc), rotating when a loop's body
  // writes its slots in turn.
  struct Ring {
    std::vector<ir::Op*> loads;
    std::int64_t slot_bytes = 0;
    int slots = 0;
    bool rotating = false;
  };
  static std::map<std::int64_t, Ring> rings_of(ir::Kernel& k) {
    std::map<std::int64_t, Ring> rings;  // by offset
    ir::walk_mut(k.body, [&](ir::Op& op) {
      if (!ir::is_tile_copy(op) || op.smem_offset < 0 || op.smem_bytes <= 0) return;
      Ring& r = rings[op.smem_offset];
      r.loads.push_back(&op);
      r.slots = op.ring_slots;
      r.slot_bytes = op.smem_bytes / op.ring_slots;
      r.rotating = r.rotating || op.ring_slot < 0;
    });
    return rings;
  }

  // True when no ring lies over the scratch, after moving the rings (and everything smem-alloc put
  // above them: their barriers) above it where the CTA's shared memory holds both with the
  // producer's barriers. Option epilogue_overlap: -1 never moves them; 1 also takes a slot from
  // each rotating ring of three or more where both do not fit otherwise (with the producer, a ring
  // of two slots is safe: each slot is copied into only once its products are done).
  static bool rings_apart(ir::Kernel& k, int option) {
    const ir::SharedMemoryUse u = ir::shared_memory_use(k);
    if (!u.rings_over_scratch) return true;
    if (option < 0) return false;
    auto same = [](const Ring& r) { return r.slots; };
    auto fewer = [](const Ring& r) { return r.rotating && r.slots >= 3 ? r.slots - 1 : r.slots; };
    return repack(k, u.scratch_end, same, kSharedPerCtaSm90) || (option == 1 && repack(k, u.scratch_end, fewer, kSharedPerCtaSm90));
  }

  // Gives each rotating ring `want` slots where it has fewer, or as many as `limit` bytes of shared
  // memory hold (the rings keep their order and their start; the barriers follow them).
  static void grow_rings(ir::Kernel& k, int want, std::int64_t limit) {
    if (want <= 0) return;
    std::map<std::int64_t, Ring> rings = rings_of(k);
    if (rings.empty()) return;
    const std::int64_t base = rings.begin()->first;
    for (int n = want; n > 0; --n) {
      auto grown = [n](const Ring& r) { return r.rotating ? std::max(r.slots, n) : r.slots; };
      bool more = false;
      for (const auto& [off, r] : rings) more = more || grown(r) > r.slots;
      if (!more || repack(k, base, grown, limit)) return;
    }
  }

 public:
  // The producer's barriers after the rings' (one a ring slot, then the tile block's).
  static void place_producer_barriers(ir::Kernel& k) {
    // The rings' barriers: contiguous from the first, 8 bytes a slot (smem-alloc, repack).
    std::int64_t first = -1, end = 0;
    ir::walk(k.body, [&](const ir::Op& op) {
      if (op.tma_map < 0) return;
      first = first < 0 ? op.tma_bar : std::min(first, op.tma_bar);
      end = std::max(end, op.tma_bar + 8 * op.ring_slots);
    });
    k.target.producer_bar = (k.target.smem_bytes + 7) / 8 * 8;
    k.target.smem_bytes = k.target.producer_bar + (end - first) + 8;  // a barrier per slot, then the tile block's
  }
  static void grow_producer_rings(ir::Kernel& k, int want, std::int64_t reserve) {
    if (k.target.producer_warps == 0) return;
    grow_rings(k, want, kSharedPerCtaSm90 - reserve);
    place_producer_barriers(k);
  }

 private:

  // True when the rings fit the CTA's shared memory with the producer's barriers, after taking
  // slots from the rotating rings of three or more where they do not (smem-alloc gives a K loop's
  // rings the slots of a kernel without a producer: 64 x 64 tiles with K steps of 256 need four
  // slots of 64 KB there, three with the producer).
  static bool fit_rings(ir::Kernel& k) {
    std::map<std::int64_t, Ring> rings = rings_of(k);
    if (rings.empty()) return true;
    const std::int64_t base = rings.begin()->first;
    int most = 0;
    for (const auto& [off, r] : rings) most = std::max(most, r.slots);
    for (int n = most; n >= 2; --n) {
      auto fewer = [n](const Ring& r) { return r.rotating ? std::min(r.slots, n) : r.slots; };
      if (repack(k, base, fewer, kSharedPerCtaSm90)) return true;
    }
    return false;
  }

  static std::int64_t align(std::int64_t x, std::int64_t a) { return (x + a - 1) / a * a; }

  // Places the rings from `base` on (each at a multiple of ir::kSwizzleAlign, in their order) with
  // slots(ring) slots each and their barriers after them (8 bytes a slot, in their order); false
  // (and nothing changed) when that and the producer's barriers (one per ring slot and one for the
  // tile block) do not fit `limit` bytes (the CTA's shared memory, less what is kept for later).
  template <class Slots>
  static bool repack(ir::Kernel& k, std::int64_t base, Slots&& slots_of, std::int64_t limit) {
    std::map<std::int64_t, Ring> rings = rings_of(k);
    std::int64_t at = align(base, ir::kSwizzleAlign);
    std::map<std::int64_t, std::int64_t> offset;  // old offset -> new
    std::map<std::int64_t, int> slots;
    for (auto& [off, r] : rings) {
      slots[off] = slots_of(r);
      offset[off] = align(at, ir::kSwizzleAlign);
      at = offset[off] + slots[off] * r.slot_bytes;
    }
    // The barriers, in the order smem-alloc gave them.
    std::map<std::int64_t, std::int64_t> bars;  // old barrier offset -> ring offset
    for (auto& [off, r] : rings)
      if (r.loads.front()->tma_bar >= 0) bars[r.loads.front()->tma_bar] = off;
    const std::int64_t b0 = align(at, 8);
    std::int64_t b = b0;
    std::map<std::int64_t, std::int64_t> bar_at;
    for (auto& [old, off] : bars) {
      bar_at[old] = b;
      b += 8 * slots[off];
    }
    if (align(b, 8) + (b - b0) + 8 > limit) return false;
    for (auto& [off, r] : rings)
      for (ir::Op* op : r.loads) {
        op->smem_offset = offset[off];
        op->ring_slots = slots[off];
        op->smem_bytes = slots[off] * r.slot_bytes;
        if (op->tma_bar >= 0) op->tma_bar = bar_at[op->tma_bar];
      }
    k.target.smem_bytes = b;
    return true;
  }

  // Ping-pong (option pingpong = 1): two consumer warpgroups, and loops whose tensor-core products
  // each warpgroup runs on its own rows with nothing in the loop that waits for the whole tile
  // block (scratch exchanged through shared memory, a barrier at a region's end, an in-flight K
  // loop, a cp.async wait): a warpgroup waiting for its turn while the other waits at the tile
  // block's barrier would never get it.
  static bool pingpong_applies(const ir::Kernel& k) {
    if (k.target.warps != 8) return false;
    bool any = false, ok = true;
    std::function<bool(const ir::Region&)> has_product = [&](const ir::Region& r) {
      for (const auto& op : r.ops) {
        if (op->kind == OpKind::Mma && op->tensor_core) return true;
        for (const ir::Region& sub : op->regions)
          if (has_product(sub)) return true;
      }
      return false;
    };
    ir::walk(k.body, [&](const ir::Op& f) {
      if (f.kind != OpKind::For || !has_product(f.regions[0])) return;
      any = true;
      ir::walk(f.regions[0], [&](const ir::Op& op) {
        const bool copy = ir::is_tile_copy(op);
        if ((op.smem_bytes > 0 && !copy) || op.sync_after || op.in_flight || op.async_wait >= 0) ok = false;
        // Each product a wgmma (a swizzled operand in shared memory: mma.sync waits for the tile
        // block) over 128 rows, 64 a warpgroup.
        if (op.kind == OpKind::Mma && op.tensor_core &&
            (k.type(op.results[0]).shape[0] != 128 ||
             !(k.layout(op.operands[0]).is_swizzled() || k.layout(op.operands[1]).is_swizzled())))
          ok = false;
      });
    });
    return any && ok;
  }
};

}  // namespace

std::unique_ptr<Pass> make_warp_specialize() { return std::make_unique<WarpSpecialize>(); }

void grow_producer_rings(ir::Kernel& k, int want, std::int64_t reserve) { WarpSpecialize::grow_producer_rings(k, want, reserve); }

}  // namespace ctile::passes
