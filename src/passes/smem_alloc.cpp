// smem-alloc: gives every op that exchanges data between threads through shared memory its scratch
// (smem = [offset, bytes]) and sets the kernel's shared memory per tile block. Scratch alternates
// between two halves, so an op may write its half while the previous op's readers of the other half
// are still reading: every such op synchronises the tile block between its writes and its reads,
// and that barrier orders the op before it. Where the alternation breaks (a loop body with an odd
// number of scratch ops meets itself on the next iteration; the two branches of an if end on
// different halves), the op gets sync_after. What needs scratch (docs/compiler.md): layout
// conversions between threads, reductions across warps, float products (in index order), scans (also
// over combine functions), mma operands, extract and cat,
// scatters (duplicate resolution), atomics on tiles with copies, and one-element atomics and
// shared gathers.
//
// Tiles in shared memory (a shared layout: the operands of tensor-core mmas, layout-assignment)
// get buffers of their own after the scratch. A chain of such tiles (a load before a loop, the
// loop's carried tiles, the load in its body that loop-prefetch issues D iterations ahead) is one
// ring of D + 2 slots: the body's load writes slot (iteration + D) % (D + 2), the loop reads slot
// iteration % (D + 2) through the carried tiles, the loads before the loop fill slots 0 .. D - 1.
// The slot a load writes was last read two iterations before, and the mma of the iteration in
// between synchronised the tile block after every thread had finished that read: no barrier at the
// end of the iteration. A load in a loop body that no loop carries is a ring of two slots (ahead
// 0), a load outside loops one slot. Each load is an asynchronous copy (one commit group per load
// and thread); an mma that reads such a tile waits (async_wait) until at most as many groups are
// pending as this thread has certainly issued since the tile's own (a lower bound, so the wait
// always covers the tile), then synchronises the tile block. A loop whose body copies waits for
// every copy and synchronises after its last iteration (async_wait = 0, sync_after), so nothing
// after it, nor the next tile block's loads, meets a copy in flight or a slot still being read.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <set>

#include "ctile/ir/op_info.hpp"
#include "passes.hpp"

namespace ctile::passes {
namespace {

using ir::OpKind;

std::int64_t align16(std::int64_t b) { return (b + 15) / 16 * 16; }

// The compiler's choice of TMA copies (option tma = 0): products of at least this many elements
// (128 x 64: attention's Q K^T at 128 query rows; attention's 64-row products stay on cp.async),
// or of 64 rows in a kernel whose only tensor-core candidate is that product (a GEMM's K loop).
constexpr int kTmaMinProduct = 128 * 64;
constexpr int kTmaMinRows = 128;
constexpr int kTmaMinGemmRows = 64;

// The warp bits of a reduction's operand layout that lie along its axis (0: it stays in warps).
int axis_warp_bits(const ir::Kernel& k, const ir::Op& op) {
  const ir::Layout& x = k.layout(op.operands[0]);
  const Shape& sh = k.type(op.operands[0]).shape;
  int lo = 0;
  for (std::size_t d = sh.size(); d-- > static_cast<std::size_t>(op.axis) + 1;) lo += __builtin_ctzll(static_cast<unsigned long long>(sh[d]));
  const int width = __builtin_ctzll(static_cast<unsigned long long>(sh[static_cast<std::size_t>(op.axis)]));
  int bits = 0;
  for (int e : x.warp) bits += (e != ir::Layout::kCopy && e >= lo && e < lo + width) ? 1 : 0;
  return bits;
}

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
      const int w = axis_warp_bits(k, op);
      if (w == 0) return 0;
      return align16(numel(k.type(op.results[0]).shape) * (std::int64_t{1} << w) * 16);
    }
    case OpKind::ReduceWith: {
      // As ct.reduce: a slot per result element and warp along the axis, of the combined values
      // together (device/combine.h's Pack: at most 8 bytes a value).
      if (rep(op.operands[0])) return 0;
      const int w = axis_warp_bits(k, op);
      if (w == 0) return 0;
      const auto pack = static_cast<std::int64_t>(8 * op.results.size());
      return align16(numel(k.type(op.results[0]).shape) * (std::int64_t{1} << w) * pack);
    }
    case OpKind::ScanWith: {
      // Each combined tile staged at a 16-byte aligned offset of its own.
      if (rep(op.operands[0])) return 0;
      std::int64_t b = 0;
      for (std::size_t i = 0; i < op.results.size(); ++i) b += align16(bytes_of(op.operands[i]));
      return b;
    }
    case OpKind::Scan:
    case OpKind::Extract:
      return rep(op.operands[0]) ? 0 : align16(bytes_of(op.operands[0]));
    case OpKind::Mma:
      if (op.tensor_core) {
        // Rows padded by ir::kMmaRowPad elements (codegen's emit_mma and device/mma.h agree); an
        // operand already in shared memory needs no staging (its slot stays reserved for it).
        const std::int64_t es = dtype_size(k.type(op.operands[0]).dtype);
        std::int64_t b = 0;
        for (int j = 0; j < 2; ++j) {
          const Shape& x = k.type(op.operands[static_cast<std::size_t>(j)]).shape;
          const std::int64_t bytes = align16(x[0] * (x[1] + ir::kMmaRowPad) * es);
          if (j == 0 || !k.layout(op.operands[0]).is_shared() || !k.layout(op.operands[1]).is_shared()) b += bytes;
        }
        // wgmma (B swizzled) reads A from shared memory or from registers (register-A): no staging.
        if (k.layout(op.operands[1]).is_swizzled()) return 0;
        return k.layout(op.operands[0]).is_shared() && k.layout(op.operands[1]).is_shared() ? 0 : b;
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
  void run(ir::Kernel& k, const PassContext& ctx) override {
    tma_ = k.target.sm >= 90 ? ctx.options.tma : -1;
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
    rings(k);
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

  // ---- tiles in shared memory ----
  static bool shared_value(const ir::Kernel& k, ir::ValueId v) { return k.type(v).is_tile() && k.layout(v).is_shared(); }
  static bool shared_load(const ir::Kernel& k, const ir::Op& op) {
    return ir::is_tile_copy(op) && shared_value(k, op.results[0]);
  }
  // A shared load copied with cp.async (one commit group per thread).
  static bool async_copy(const ir::Kernel& k, const ir::Op& op) { return shared_load(k, op) && op.tma_map < 0; }
  static std::int64_t tile_bytes(const ir::Kernel& k, ir::ValueId v) {
    const ir::Type& t = k.type(v);
    const ir::Layout& l = k.layout(v);
    if (l.is_swizzled()) return align_to(numel(t.shape) * dtype_size(t.dtype), ir::kSwizzleAlign);
    return align16(numel(t.shape) / l.row * (l.row + l.pad) * dtype_size(t.dtype));
  }
  // Where a ring of `v` may start: a swizzled tile's atoms at multiples of ir::kSwizzleAlign (the
  // code generator aligns the tile block's shared memory so).
  static std::int64_t ring_start(const ir::Kernel& k, ir::ValueId v, std::int64_t at) {
    return k.layout(v).is_swizzled() ? align_to(at, ir::kSwizzleAlign) : at;
  }
  static std::int64_t align_to(std::int64_t x, std::int64_t a) { return (x + a - 1) / a * a; }

  // Where a shared tile comes from: the load that made it and, for a loop's carried tile, the loop
  // and its level in the loop's chain (level d holds the tile of iteration + d).
  struct Origin {
    ir::Op* load = nullptr;
    ir::Op* loop = nullptr;  // the loop whose body issues `load` every iteration (null: none)
    int level = 0, depth = 0;
  };

  void rings(ir::Kernel& k) {
    origin_.assign(k.values.size(), Origin{});
    // The rings go after the scratch, or over it when every op with scratch comes after the last
    // loop or load of a ring at the kernel body's top level (a K loop, then its epilogue): that
    // loop waits for its copies and synchronises when it ends, and nothing reads a ring after it.
    const std::int64_t scratch = k.target.smem_bytes;
    std::int64_t at = overlap_ok(k) ? 0 : align16(scratch);
    bool any = false;
    // Loops first: each carried chain ends at a load of the body (the yield of the deepest level).
    ir::walk_mut(k.body, [&](ir::Op& f) {
      if (f.kind != OpKind::For) return;
      // A product left in flight past the iteration's end reads its slot until the next
      // iteration's wait. One iteration ahead (D = 1), the body's loads stay before the product
      // (issued as early as possible) and each ring gets one slot more (D + 3): the slot a load
      // writes was read three iterations before, and the barrier of the iteration in between
      // follows every warpgroup's wait for that read. Deeper (D >= 2), the ring loads move after
      // the product (sink_loads) and the rings keep D + 2 slots: the slot a load writes,
      // (i + D) % (D + 2), was last read by the product of iteration i - 2, which every thread
      // waited for before the barrier of iteration i that precedes the load. (On the H200 the
      // default D = 1 with D + 3 slots measured best, docs/perf/2026-12-01-h200/NOTES.md.)
      const bool in_flight = mark_in_flight(k, f);
      const bool deep = chain_depth(k, f) >= 2;
      if (in_flight && deep) sink_loads(k, f);
      const int extra = in_flight && !deep ? 1 : 0;
      ir::Region& body = f.regions[0];
      ir::Op& y = *body.ops.back();
      std::map<ir::ValueId, ir::Op*> def;
      for (auto& o : body.ops)
        for (ir::ValueId r : o->results) def[r] = o.get();
      for (std::size_t j = 0; j < f.results.size(); ++j) {
        if (!shared_value(k, f.results[j])) continue;
        // Follow the yields from slot j to the load: the number of steps is D - 1 - level.
        std::size_t s = j;
        int steps = 0;
        ir::Op* ld = nullptr;
        while (true) {
          const ir::ValueId v = y.operands[s];
          auto d = def.find(v);
          if (d != def.end()) {
            ld = d->second;
            break;
          }
          const auto a = std::find(body.args.begin() + 1, body.args.end(), v);
          CTILE_CHECK(a != body.args.end() && steps < static_cast<int>(f.results.size()),
                      "smem-alloc: a loop carries a shared tile that no load of its body makes");
          s = static_cast<std::size_t>(a - body.args.begin()) - 1;
          ++steps;
        }
        CTILE_CHECK(shared_load(k, *ld), "smem-alloc: a loop carries a shared tile that no load of its body makes");
        Origin o{ld, &f, 0, 0};
        origin_[static_cast<std::size_t>(body.args[1 + j])] = o;
        chain_[ld].push_back({j, steps});
      }
      for (auto& op : body.ops) {  // in the body's order (deterministic offsets)
        ir::Op* ld = op.get();
        auto c = chain_.find(ld);
        if (c == chain_.end() || origin_[static_cast<std::size_t>(ld->results[0])].loop) continue;
        const auto& slots = c->second;
        const int depth = static_cast<int>(slots.size());
        const int n = depth + 2 + extra;
        const std::int64_t bytes = tile_bytes(k, ld->results[0]);
        at = ring_start(k, ld->results[0], at);
        ld->smem_offset = at;
        ld->smem_bytes = n * bytes;
        ld->ring_slots = n;
        ld->ring_slot = -1;
        ld->ring_ahead = depth;
        origin_[static_cast<std::size_t>(ld->results[0])] = Origin{ld, &f, depth, depth};
        for (auto [j, steps] : slots) {
          const int level = depth - 1 - steps;
          CTILE_CHECK(level >= 0, "smem-alloc: a carried chain of shared tiles is not a shift");
          Origin& a = origin_[static_cast<std::size_t>(body.args[1 + j])];
          a.level = level;
          a.depth = depth;
          // The load before the loop fills the slot of its level.
          ir::Op* pre = defs_of(k, f.operands[3 + j]);
          CTILE_CHECK(pre && shared_load(k, *pre), "smem-alloc: a carried shared tile does not start with a load");
          pre->smem_offset = at;
          pre->smem_bytes = n * bytes;
          pre->ring_slots = n;
          pre->ring_slot = level;
          pre->ring_ahead = 0;
          done_.insert(pre);
        }
        done_.insert(ld);
        at += n * bytes;
        f.async_wait = 0;
        f.sync_after = true;
        any = true;
      }
    });
    // Loads that no loop carries: one slot, or two in a loop body (ahead 0).
    walk_regions(k.body, nullptr, [&](ir::Region& r, ir::Op* parent) {
      for (auto& up : r.ops) {
        ir::Op& ld = *up;
        if (!shared_load(k, ld) || done_.count(&ld)) continue;
        const bool in_loop = parent && (parent->kind == OpKind::For || parent->kind == OpKind::While);
        const int n = in_loop ? 2 + (has_in_flight(*parent) ? 1 : 0) : 1;
        const std::int64_t bytes = tile_bytes(k, ld.results[0]);
        at = ring_start(k, ld.results[0], at);
        ld.smem_offset = at;
        ld.smem_bytes = n * bytes;
        ld.ring_slots = n;
        ld.ring_slot = in_loop ? -1 : 0;
        ld.ring_ahead = 0;
        at += n * bytes;
        origin_[static_cast<std::size_t>(ld.results[0])] = Origin{&ld, nullptr, 0, 0};
        if (in_loop) {
          parent->async_wait = 0;
          parent->sync_after = true;
        }
        any = true;
      }
    });
    if (!any) return;
    k.target.smem_bytes = std::max(at, scratch);
    if (tma_ >= 0) tma_rings(k);
    // The kernel body runs again for the CTA's next tile block: its loads must not overwrite a slot
    // an mma of this one may still read.
    k.body.ops.back()->sync_after = true;
    // The waits of the mmas. A transposed or reshaped tile is its source's memory: wait for the
    // source's copy.
    std::map<ir::ValueId, ir::ValueId> alias;
    ir::walk(k.body, [&](const ir::Op& op) {
      if ((op.kind == OpKind::Permute || op.kind == OpKind::Reshape) && shared_value(k, op.results[0]))
        alias[op.results[0]] = op.operands[0];
    });
    walk_regions(k.body, nullptr, [&](ir::Region& r, ir::Op* parent) {
      for (std::size_t i = 0; i < r.ops.size(); ++i) {
        ir::Op& m = *r.ops[i];
        if (m.kind != OpKind::Mma || !m.tensor_core) continue;
        int wait = -1;
        for (int j = 0; j < 2; ++j) {
          ir::ValueId x = m.operands[static_cast<std::size_t>(j)];
          if (!shared_value(k, x)) continue;
          for (auto a = alias.find(x); a != alias.end(); a = alias.find(x)) x = a->second;
          const Origin& o = origin_[static_cast<std::size_t>(x)];
          if (o.load && o.load->tma_map >= 0) continue;  // waits on its slot's barrier instead
          const int w = pending_after(k, r, parent, i, x);
          wait = wait < 0 ? w : std::min(wait, w);
        }
        m.async_wait = wait;
      }
    });
    chain_.clear();
    done_.clear();
  }

  // ---- TMA copies (option tma = 1 on sm_90) ----
  // A ring (the loads at one smem_offset) copies with TMA when every load of it reads a read-only
  // tensor parameter of rank 2 (or of rank 3 to 5 in blocks with leading extents 1) whose facts
  // prove what a tensor map needs (16-byte aligned base and strides, unit inner stride) into a
  // swizzled tile, pads with +0 (TMA fills zeros), and every tile
  // of the ring is read by exactly one mma of its own region (each copy is waited for once: a
  // thread flips its slot's phase at each wait). The ring's barriers go after everything else
  // (they live as long as the kernel), one per slot; tensor maps are shared by the loads of one
  // parameter with one box.
  void tma_rings(ir::Kernel& k) {
    std::map<std::int64_t, std::vector<ir::Op*>> rings;
    ir::walk_mut(k.body, [&](ir::Op& op) {
      if (shared_load(k, op) && op.ring_slots > 0) rings[op.smem_offset].push_back(&op);
    });
    std::int64_t at = (k.target.smem_bytes + 7) / 8 * 8;
    std::vector<ir::TensorMapUse> maps;
    const int products = count_products(k.body);
    for (auto& [off, loads] : rings) {
      (void)off;
      bool ok = true;
      for (const ir::Op* ld : loads) ok = ok && tma_load_ok(k, *ld);
      int numel = 0, rows = 0;
      if (!ok || !single_use_chain(k, loads, numel, rows)) continue;
      // The compiler's choice (tma = 0): TMA for the rings of products of 128 rows or more over
      // 128-byte rows, where one copy per tile frees the most issue slots and registers. Measured:
      // GEMM 128 x 256 x 64 tiles 13-16% faster (H200, before the producer warpgroup; smaller
      // tiles or 64-byte rows up to 15% slower with one thread issuing every copy and every thread
      // waiting, docs/perf/2026-12-01-h200/NOTES.md); with the producer warpgroup, attention's
      // 128 x 64 and 128 x 128 products 1.33x faster, its 64-row products (head dim 64) 0.73x
      // (docs/perf/2026-12-06-h100/NOTES.md, session 18).
      // A GEMM's 64-row K loop (the decode shapes): TMA and the producer warpgroup beside
      // cp.async, H100 (docs/perf/2026-12-07/NOTES.md, session 24): 14.8 against 19.5 us at
      // 128x2560x4096 (64 x 64 x 128), 14.8 against 43.5 at 16x2560x4096, 15.5 against 19.2 at
      // 128x6144x2560 (64 x 128 x 128), 47.3 against 64.2 at 128x4096x12288.
      const bool gemm64 = products == 1 && rows >= kTmaMinGemmRows;
      if (tma_ == 0 && (k.layout(loads.front()->results[0]).swizzle != 128 ||
                        ((numel < kTmaMinProduct || rows < kTmaMinRows) && !gemm64)))
        continue;
      for (ir::Op* ld : loads) {
        const ir::TensorMapUse u = ir::tensor_map_use(k, *ld);
        auto m = std::find(maps.begin(), maps.end(), u);
        if (m == maps.end()) m = maps.insert(maps.end(), u);
        ld->tma_map = static_cast<int>(m - maps.begin());
        ld->tma_bar = at;
      }
      at += 8 * loads.front()->ring_slots;
    }
    k.target.smem_bytes = std::max(k.target.smem_bytes, at);
  }
  static bool tma_load_ok(const ir::Kernel& k, const ir::Op& ld) {
    if (ld.kind != OpKind::Load || !k.layout(ld.results[0]).is_swizzled()) return false;
    const int pi = ir::tensor_param_of(k, ld.operands[0]);
    const ir::Param* p = pi >= 0 ? &k.params[static_cast<std::size_t>(pi)] : nullptr;
    // A rank-2 tensor, or one of rank 3 to 5 read in blocks with extent 1 along the leading axes
    // (attention's [1, 1, S, D] blocks of [B, H, S, D]); every stride but the last in 16 elements.
    const int rank = p ? p->type.rank : 0;
    if (!p || p->type.access != ir::Access::Read || rank < 2 || rank > 5) return false;
    const Shape& sh = k.type(ld.results[0]).shape;
    if (static_cast<int>(sh.size()) != rank) return false;
    for (int d = 0; d + 2 < rank; ++d)
      if (sh[static_cast<std::size_t>(d)] != 1) return false;
    const ir::TensorFacts& f = p->facts;
    const std::uint32_t strides = (1u << (rank - 1)) - 1;
    if (!f.aligned16 || !f.contiguous_last || (f.stride_div16 & strides) != strides) return false;
    return ld.value.i == 0 && ld.value.f == 0.0 && !std::signbit(ld.value.f);
  }
  // Every value of the ring's chain (the loads' results and the loop arguments that carry them) is
  // read by at most one mma (directly or through a transpose) of the region it lives in, and by
  // nothing else but the loop that carries it and the yield.
  // (numel and rows: the elements and the rows of the largest product that reads the chain.)
  static bool single_use_chain(const ir::Kernel& k, const std::vector<ir::Op*>& loads, int& numel, int& rows) {
    auto product = [&](const Shape& c) {
      numel = std::max(numel, static_cast<int>(ctile::numel(c)));
      if (c.size() >= 2) rows = std::max(rows, static_cast<int>(c[c.size() - 2]));
    };
    std::set<ir::ValueId> chain;
    for (const ir::Op* ld : loads) chain.insert(ld->results[0]);
    // The loop arguments bound to a chain value (the carried tiles), to a fixed point.
    for (bool grew = true; grew;) {
      grew = false;
      ir::walk(k.body, [&](const ir::Op& f) {
        if (f.kind != OpKind::For) return;
        const ir::Region& body = f.regions[0];
        const ir::Op& y = *body.ops.back();
        for (std::size_t j = 0; j + 3 < f.operands.size(); ++j)
          if ((chain.count(f.operands[3 + j]) || chain.count(y.operands[j])) && !chain.count(body.args[1 + j])) {
            chain.insert(body.args[1 + j]);
            grew = true;
          }
      });
    }
    bool ok = true;
    // Reads of view v (a transpose or reshape of a chain value: the same memory) by mmas of r,
    // directly or through further views (`nested`: also in r's nested regions, for the tile of a
    // load whose wait is hoisted); -1 when anything else uses it.
    std::function<int(const ir::Region&, ir::ValueId, bool)> view_reads = [&](const ir::Region& r, ir::ValueId v, bool nested) {
      int n = 0, seen = 0;
      std::function<bool(const ir::Region&)> scan = [&](const ir::Region& reg) {
        for (const auto& m : reg.ops) {
          for (std::size_t j = 0; j < m->operands.size(); ++j) {
            if (m->operands[j] != v) continue;
            ++seen;
            if (m->kind == OpKind::Mma && j < 2) {
              ++n;
              product(k.type(m->results[0]).shape);
            } else if (m->kind == OpKind::Permute || m->kind == OpKind::Reshape) {
              const int x = view_reads(reg, m->results[0], nested);
              if (x < 0) return false;
              n += x;
            } else {
              return false;
            }
          }
          if (nested)
            for (const ir::Region& sub : m->regions)
              if (!scan(sub)) return false;
        }
        return true;
      };
      if (!scan(r)) return -1;
      return seen == uses_in(r, v) ? n : -1;
    };
    std::set<ir::ValueId> outer_ok;
    for (const ir::Op* ld : loads)
      if (ld->ring_slots == 1 && ld->ring_slot == 0) outer_ok.insert(ld->results[0]);
    std::function<void(const ir::Region&)> check = [&](const ir::Region& r) {
      std::set<ir::ValueId> here(r.args.begin(), r.args.end());
      for (const auto& op : r.ops) here.insert(op->results.begin(), op->results.end());
      std::map<ir::ValueId, int> mmas;
      for (const auto& op : r.ops)
        for (std::size_t j = 0; j < op->operands.size(); ++j) {
          const ir::ValueId v = op->operands[j];
          if (!chain.count(v)) continue;
          // Read in a nested region: once per fill no more, unless it is the tile of a load outside
          // loops (one slot), which every thread waits for once, before the first op that reads it
          // (the code generator hoists that wait: attention's Q, read by every iteration).
          if (!here.count(v) && !outer_ok.count(v)) ok = false;
          if (op->kind == OpKind::Mma && j < 2) {
            ++mmas[v];
            product(k.type(op->results[0]).shape);
          } else if (op->kind == OpKind::Permute || op->kind == OpKind::Reshape) {
            const int n = view_reads(r, op->results[0], outer_ok.count(v) > 0);
            if (n < 0) ok = false;
            else mmas[v] += n;
          } else if (!(op->kind == OpKind::For && j >= 3) && op->kind != OpKind::Yield) ok = false;
        }
      for (const auto& [v, n] : mmas) ok = ok && n <= 1;
      for (const auto& op : r.ops)
        for (const ir::Region& sub : op->regions) check(sub);
    };
    check(k.body);
    // A loop's carried tile read after the loop was waited for by its drain: no TMA then.
    ir::walk(k.body, [&](const ir::Op& f) {
      if (f.kind != OpKind::For) return;
      for (std::size_t j = 0; j < f.results.size(); ++j)
        if (chain.count(f.regions[0].args[1 + j]) && uses_in(k.body, f.results[j]) > 0) ok = false;
    });
    return ok;
  }

  // The wgmma products of f's body that carry their accumulator from a region argument of the
  // loop straight to the same slot of its yield, neither used by anything else: each is marked
  // in_flight (its products stay in flight into the next iteration; the loop waits at its end).
  static bool mark_in_flight(ir::Kernel& k, ir::Op& f) {
    ir::Region& body = f.regions[0];
    const ir::Op& y = *body.ops.back();
    bool any = false;
    for (auto& up : body.ops) {
      ir::Op& m = *up;
      if (m.kind != OpKind::Mma || !m.tensor_core || !k.layout(m.operands[0]).is_swizzled()) continue;
      const auto a = std::find(body.args.begin() + 1, body.args.end(), m.operands[2]);
      if (a == body.args.end()) continue;
      const std::size_t j = static_cast<std::size_t>(a - body.args.begin()) - 1;
      if (y.operands[j] != m.results[0] || uses_in(body, *a) != 1 || uses_in(body, m.results[0]) != 1) continue;
      m.in_flight = true;
      any = true;
    }
    return any;
  }
  // In a loop with a product in flight: the loads of the body whose tile only the yield carries
  // (the loop-prefetch chain) move right after the last in-flight product, in their order. Their
  // operands are the index computed at the body's head and loop invariants, so the move changes
  // no value; it lets a load reuse the slot of two iterations before (see rings()).
  static void sink_loads(const ir::Kernel& k, ir::Op& f) {
    ir::Region& body = f.regions[0];
    std::size_t last = 0;
    for (std::size_t q = 0; q < body.ops.size(); ++q)
      if (body.ops[q]->in_flight) last = q;
    const ir::Op& y = *body.ops.back();
    std::vector<std::unique_ptr<ir::Op>> moved;
    for (std::size_t q = 0; q < last;) {
      ir::Op& ld = *body.ops[q];
      const bool chained = shared_load(k, ld) && uses_in(body, ld.results[0]) == 1 &&
                           std::find(y.operands.begin(), y.operands.end(), ld.results[0]) != y.operands.end();
      if (!chained) {
        ++q;
        continue;
      }
      moved.push_back(std::move(body.ops[q]));
      body.ops.erase(body.ops.begin() + static_cast<std::ptrdiff_t>(q));
      --last;
    }
    body.ops.insert(body.ops.begin() + static_cast<std::ptrdiff_t>(last + 1), std::make_move_iterator(moved.begin()),
                    std::make_move_iterator(moved.end()));
  }
  // The deepest chain of carried shared tiles of loop f: how many iterations ahead its loads run.
  static int chain_depth(const ir::Kernel& k, const ir::Op& f) {
    const ir::Region& body = f.regions[0];
    int shared = 0, loads = 0;
    for (std::size_t j = 0; j < f.results.size(); ++j) shared += shared_value(k, f.results[j]) ? 1 : 0;
    const ir::Op& y = *body.ops.back();
    for (const auto& o : body.ops)
      if (shared_load(k, *o) && std::find(y.operands.begin(), y.operands.end(), o->results[0]) != y.operands.end()) ++loads;
    return loads > 0 ? shared / loads : 0;
  }
  static bool has_in_flight(const ir::Op& f) {
    if (f.kind != OpKind::For) return false;
    for (const auto& o : f.regions[0].ops)
      if (o->in_flight) return true;
    return false;
  }
  static int uses_in(const ir::Region& r, ir::ValueId v) {
    int n = 0;
    for (const auto& o : r.ops) {
      for (ir::ValueId x : o->operands) n += x == v ? 1 : 0;
      for (const ir::Region& sub : o->regions) n += uses_in(sub, v);
    }
    return n;
  }

  template <class P>
  static bool any_op(const ir::Op& op, P&& p) {
    if (p(op)) return true;
    for (const ir::Region& r : op.regions)
      for (const auto& o : r.ops)
        if (any_op(*o, p)) return true;
    return false;
  }
  // Scratch, not ring slots: rings() has not placed any load yet when this runs.
  static bool has_scratch(const ir::Op& op) {
    return any_op(op, [](const ir::Op& o) { return o.smem_offset >= 0; });
  }
  static bool has_shared_load(const ir::Kernel& k, const ir::Op& op) {
    return any_op(op, [&](const ir::Op& o) { return shared_load(k, o); });
  }
  static bool overlap_ok(const ir::Kernel& k) {
    const auto& ops = k.body.ops;
    std::size_t last_ring = 0, first_scratch = ops.size();
    bool rings = false;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (has_shared_load(k, *ops[i])) {
        last_ring = i;
        rings = true;
        // A ring's loop may itself hold scratch, and only a loop waits for its copies at its end.
        if (has_scratch(*ops[i]) || (ops[i]->kind != OpKind::For && !ir::is_tile_copy(*ops[i])))
          return false;
      }
      if (has_scratch(*ops[i]) && first_scratch == ops.size()) first_scratch = i;
    }
    return rings && first_scratch > last_ring && ops[last_ring]->kind == OpKind::For;
  }

  // A lower bound on the copies this thread has issued after the one of `x`, at the op r.ops[i]
  // (cp.async copies: a TMA copy commits no group).
  int pending_after(const ir::Kernel& k, const ir::Region& r, const ir::Op* parent, std::size_t i, ir::ValueId x) const {
    auto top_loads = [&](std::size_t from, std::size_t to) {
      int n = 0;
      for (std::size_t q = from; q < to; ++q) n += async_copy(k, *r.ops[q]) ? 1 : 0;
      return n;
    };
    const Origin& o = origin_[static_cast<std::size_t>(x)];
    // A tile the enclosing loop carries at level d: loaded D - d iterations ago by a load of this
    // body; the D - d - 1 iterations in between each issued every top-level load of the body.
    if (parent && o.loop == parent && o.load && std::find(r.args.begin(), r.args.end(), x) != r.args.end()) {
      int per_iteration = 0;
      for (const auto& q : r.ops) per_iteration += async_copy(k, *q) ? 1 : 0;
      return (o.depth - o.level - 1) * per_iteration + top_loads(0, i);
    }
    // A tile loaded earlier in this region.
    for (std::size_t q = 0; q < i; ++q)
      if (r.ops[q]->kind != OpKind::For && !r.ops[q]->results.empty() && r.ops[q]->results[0] == x) return top_loads(q + 1, i);
    // A tile loaded before the loop this region is the body of (or further out), which reads it
    // every iteration: every copy of this iteration so far came after it.
    if (parent && std::find(r.args.begin(), r.args.end(), x) == r.args.end() && !defined_in(r, x)) return top_loads(0, i);
    return 0;
  }

  static bool defined_in(const ir::Region& r, ir::ValueId v) {
    for (const auto& o : r.ops) {
      if (std::find(o->results.begin(), o->results.end(), v) != o->results.end()) return true;
      for (const ir::Region& sub : o->regions)
        if (std::find(sub.args.begin(), sub.args.end(), v) != sub.args.end() || defined_in(sub, v)) return true;
    }
    return false;
  }
  static ir::Op* defs_of(ir::Kernel& k, ir::ValueId v) {
    ir::Op* d = nullptr;
    ir::walk_mut(k.body, [&](ir::Op& op) {
      for (ir::ValueId r : op.results)
        if (r == v) d = &op;
    });
    return d;
  }
  template <class F>
  static void walk_regions(ir::Region& r, ir::Op* parent, F&& f) {
    f(r, parent);
    for (auto& op : r.ops)
      for (auto& sub : op->regions) walk_regions(sub, op.get(), f);
  }

  int tma_ = -1;  // the option tma on sm_90 (1: TMA where it applies, 0: the compiler's choice), else -1
  std::int64_t half_ = 0;
  int next_ = 0, count_ = 0;
  std::vector<Origin> origin_;
  std::map<ir::Op*, std::vector<std::pair<std::size_t, int>>> chain_;  // body load -> (slot, steps to it)
  std::set<ir::Op*> done_;
};

}  // namespace

std::unique_ptr<Pass> make_smem_alloc() { return std::make_unique<SmemAlloc>(); }

}  // namespace ctile::passes
