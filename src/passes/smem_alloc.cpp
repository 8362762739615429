// smem-alloc: gives every op that exchanges data between threads through shared memory its scratch
// (smem = [offset, bytes]) and sets the kernel's shared memory per tile block. Scratch alternates
// between two halves, so an op may write its half while the previous op's readers of the other half
// are still reading: every such op synchronises the tile block between its writes and its reads,
// and that barrier orders the op before it. Where the alternation breaks (a loop body with an odd
// number of scratch ops meets itself on the next iteration; the two branches of an if end on
// different halves), the op gets sync_after. What needs scratch (docs/compiler.md): layout
// conversions between threads, reductions across warps, float products (in index order), scans, mma operands, extract and cat,
// scatters (duplicate resolution), atomics on tiles with copies, and one-element atomics and
// shared gathers.
#include <algorithm>

#include "ctile/ir/op_info.hpp"
#include "passes.hpp"

namespace ctile::passes {
namespace {

using ir::OpKind;

std::int64_t align16(std::int64_t b) { return (b + 15) / 16 * 16; }

// Bytes of scratch `op` needs (0: none).
std::int64_t scratch_bytes(const ir::Kernel& k, const ir::Op& op) {
  auto bytes_of = [&](ir::ValueId v) {
    const ir::Type& t = k.type(v);
    return numel(t.shape) * dtype_size(t.dtype);
  };
  auto rep = [&](ir::ValueId v) { return numel(k.type(v).shape) == 1; };
  switch (op.kind) {
    case OpKind::ConvertLayout:
      if (rep(op.operands[0]) || ir::registers_only(k.layout(op.operands[0]), k.layout(op.results[0]))) return 0;
      return align16(bytes_of(op.operands[0]));
    case OpKind::Reduce: {
      if (rep(op.operands[0])) return 0;
      // Float products walk each line in index order from shared memory (like the reference).
      if (op.reduce == ir::ReduceKind::Prod && is_float(k.type(op.operands[0]).dtype)) return align16(bytes_of(op.operands[0]));
      // Slots of 16 bytes (the widest accumulator) per result element and warp along the axis.
      const ir::Layout& x = k.layout(op.operands[0]);
      const Shape& sh = k.type(op.operands[0]).shape;
      int lo = 0;
      for (std::size_t d = sh.size(); d-- > static_cast<std::size_t>(op.axis) + 1;) lo += __builtin_ctzll(static_cast<unsigned long long>(sh[d]));
      const int width = __builtin_ctzll(static_cast<unsigned long long>(sh[static_cast<std::size_t>(op.axis)]));
      int axis_warps = 0;
      for (int e : x.warp) axis_warps += (e != ir::Layout::kCopy && e >= lo && e < lo + width) ? 1 : 0;
      if (axis_warps == 0) return 0;
      return align16(numel(k.type(op.results[0]).shape) * (std::int64_t{1} << axis_warps) * 16);
    }
    case OpKind::Scan:
    case OpKind::Extract:
      return rep(op.operands[0]) ? 0 : align16(bytes_of(op.operands[0]));
    case OpKind::Mma:
      if (op.tensor_core) {
        // Rows padded by ir::kMmaRowPad elements (codegen's emit_mma and device/mma.h agree).
        const Shape& a = k.type(op.operands[0]).shape;
        const Shape& b = k.type(op.operands[1]).shape;
        const std::int64_t es = dtype_size(k.type(op.operands[0]).dtype);
        return align16(a[0] * (a[1] + ir::kMmaRowPad) * es) + align16(b[0] * (b[1] + ir::kMmaRowPad) * es);
      }
      [[fallthrough]];
    case OpKind::Cat:
      return align16(bytes_of(op.operands[0])) + align16(bytes_of(op.operands[1]));
    case OpKind::ScatterPiece:
      return rep(op.operands.back()) ? 0 : align16(numel(k.type(op.operands[0]).shape) * 4);
    case OpKind::ScatterUnchecked:
      // An offset per element and two flags (dist.h scatter_unchecked_d).
      return rep(op.operands.back()) ? 0 : align16(numel(k.type(op.operands.back()).shape) * 8 + 8);
    case OpKind::AtomicRMW:
    case OpKind::AtomicCAS: {
      const ir::ValueId v = op.results[0];
      if (rep(v)) return 16;
      const ir::Layout& l = k.layout(v);
      return (l.copy_lane_mask() | l.copy_warp_mask()) != 0 ? align16(bytes_of(v)) : 0;
    }
    case OpKind::Gather: {
      const ir::Type& t = k.type(op.operands[0]);
      return rep(op.results[0]) && t.access != ir::Access::Read ? 16 : 0;
    }
    default:
      return 0;
  }
}

class SmemAlloc : public Pass {
 public:
  std::string_view name() const override { return "smem-alloc"; }
  void run(ir::Kernel& k, const PassContext&) override {
    CTILE_CHECK(k.gpu_level(), "smem-alloc runs on the GPU-level IR");
    half_ = 0;
    ir::walk(k.body, [&](const ir::Op& op) { half_ = std::max(half_, scratch_bytes(k, op)); });
    next_ = 0;
    count_ = 0;
    region(k, k.body, /*repeats=*/true);  // the body runs once per tile block of the CTA
    k.target.smem_bytes = count_ > 1 ? 2 * half_ : half_;
    if (count_ <= 1)
      ir::walk_mut(k.body, [&](ir::Op& op) {
        if (op.smem_offset > 0) op.smem_offset = 0;
      });
  }

 private:
  // `repeats`: the region runs again right after itself (a loop body, the kernel body); its yield
  // gets sync_after when it ends on the half it starts on. A nested loop or branch with scratch
  // restarts the alternation after itself (the op after a loop takes the half the loop's body
  // started on), so the count of scratch ops no longer tells the half the region ends on: then the
  // yield synchronises whenever the region has scratch (a persistent CTA's next tile block, or the
  // next iteration, must not overwrite what the last op may still read).
  void region(ir::Kernel& k, ir::Region& r, bool repeats) {
    const int n0 = count_;
    bool restarted = false;
    for (auto& up : r.ops) {
      ir::Op& op = *up;
      op.smem_offset = -1;
      op.smem_bytes = 0;
      op.sync_after = false;
      const std::int64_t b = scratch_bytes(k, op);
      if (b > 0) {
        op.smem_offset = next_ * half_;
        op.smem_bytes = b;
        next_ ^= 1;
        ++count_;
      }
      const int before = next_, c0 = count_;
      switch (op.kind) {
        case OpKind::For:
          region(k, op.regions[0], true);
          restarted = restarted || count_ != c0;
          next_ = before;
          break;
        case OpKind::While:
          // The condition and the body alternate: each ends with a barrier when it has scratch.
          for (auto& sub : op.regions) {
            const int m0 = count_;
            region(k, sub, false);
            if (count_ != m0) sub.ops.back()->sync_after = true;
          }
          restarted = restarted || count_ != c0;
          next_ = before;
          break;
        case OpKind::If:
          for (auto& sub : op.regions) {
            next_ = before;
            region(k, sub, false);
          }
          if (count_ != c0) op.sync_after = true;  // the branches may end on different halves
          restarted = restarted || count_ != c0;
          next_ = before;
          break;
        default:
          break;
      }
    }
    if (repeats && count_ != n0 && ((count_ - n0) % 2 == 1 || restarted)) r.ops.back()->sync_after = true;
  }

  std::int64_t half_ = 0;
  int next_ = 0, count_ = 0;
};

}  // namespace

std::unique_ptr<Pass> make_smem_alloc() { return std::make_unique<SmemAlloc>(); }

}  // namespace ctile::passes
