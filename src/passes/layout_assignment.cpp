// layout-assignment: lowers the tile-level IR to the GPU-level IR. It chooses how many warps run a
// tile block and how many tile blocks share a CTA (the target), and gives every value a layout
// (layout.hpp), inserting ct.convert_layout where an op needs its operand in another layout.
//
// The canonical layout of a tile is blocked: `vec` consecutive elements of the last axis per
// register group (16 bytes of the narrowest element type the kernel moves), lanes along the last
// axis, the outer axes over the warps (so a reduction along a row stays inside a warp when rows
// are spread over warps), the rest in registers. Loads, stores, gathers, scatters and atomics use
// it; element-wise ops take the layout of their first operand that has one; a reduction's result
// is the slice of its operand's layout and a permute's result its relabelling (neither moves data);
// reshapes keep the bits. Constants, iotas and broadcasts are flexible: they take the layout their
// first user asks for (a broadcast then asks its operand for the matching source layout, which
// makes it free), and are cloned when users disagree; so are element-wise ops over flexible values
// only (masks from iotas), which are computed again in each layout asked for. An element-wise op
// prefers a layout that is not that of a loop-carried value placed only by its flexible init
// (soft_). Loop-carried values take the layout the loop body yields them in, found by trial runs
// on a copy of the kernel (hints_). One-element tiles are replicated.
//
// Tensor cores: an mma of bf16 or f16 operands (each extent a power of two, M and N at least 16,
// K a multiple of 16) on sm_80 or newer runs on the matrix units (mma.sync m16n8k16) unless the
// kernel option simt_mma says otherwise. Its accumulator and result take the fragment layout
// (ir::mma_accumulator), the op is marked tensor_core, and a loop that carries the accumulator
// carries it in that layout (so no conversion runs per iteration); the kernel's warps are chosen
// for the largest such product (4 to 8 warps, warp tiles of 64 x 32 where the tile allows).
//
// Operands in shared memory: a tensor-core mma reads A and B from shared memory. A tile that only
// such mmas read, loaded from a read-only tensor, goes there directly: its load takes a shared
// layout (row-major, ir::kMmaRowPad elements after every row) and becomes an asynchronous copy
// (cp.async), and a loop that carries such tiles for the mma (loop-prefetch's pipeline) carries them
// in that layout. No register holds them and no staging copy runs; smem-alloc gives each chain of
// carried tiles its ring of buffers.
//
// Hopper (sm_90, unless the kernel option sync_mma says otherwise): an mma whose shape the
// warpgroup instructions take (ir::wgmma_shape: an f32 accumulator, M a multiple of 16 x warps, N
// of 64, K of 16 with rows of 16, 32 or a multiple of 64 elements) and whose operands both live in
// shared memory runs on wgmma.mma_async. Its operands take the swizzled shared layout
// (ir::wgmma_swizzle) and its accumulator ir::wgmma_accumulator; the warps are chosen so that each
// warpgroup holds 64-row blocks. A tile in shared memory has one layout for all its users, so a
// chain of carried tiles that also feeds an mma.sync product keeps the padded layout, and the
// products it feeds use mma.sync.
#include <algorithm>
#include <map>
#include <set>

#include "ctile/ir/op_info.hpp"
#include "passes.hpp"
#include "rewrite.hpp"

namespace ctile::passes {
namespace {

using ir::Layout;
using ir::OpKind;
using ir::ValueId;

constexpr int kGroupsElementwise = 2;  // vector groups per thread of the largest tile
constexpr int kGroupsCrossThread = 4;  // more per thread where reductions cost per thread
constexpr int kMaxWarps = 16;
constexpr int kGroupRows = 8;

bool is_memory_op(OpKind k) {
  switch (k) {
    case OpKind::Load: case OpKind::LoadPiece: case OpKind::LoadWindow: case OpKind::StorePiece: case OpKind::StoreWindow:
    case OpKind::Gather: case OpKind::ScatterPiece: case OpKind::ScatterUnchecked: case OpKind::AtomicRMW: case OpKind::AtomicCAS:
      return true;
    default: return false;
  }
}

class LayoutAssignment : public Pass {
 public:
  std::string_view name() const override { return "layout-assignment"; }

  void run(ir::Kernel& k, const PassContext& ctx) override {
    if (k.gpu_level()) return;
    // Loop-carried layouts: a trial run on a copy records the layout each loop body yields its
    // carried values in; the next run carries them so (the body then needs no conversion per
    // iteration, only the initial values convert once, before the loop). Until it settles.
    hints_.clear();
    // (Without a loop there is nothing to settle: one run.)
    bool loops = false;
    ir::walk(k.body, [&](const ir::Op& op) { loops = loops || op.kind == OpKind::For; });
    for (int round = 0; loops && round < kHintRounds; ++round) {
      ir::Kernel trial = ir::clone(k);
      assign(trial, ctx);
      if (yielded_ == hints_) break;
      hints_ = yielded_;
    }
    assign(k, ctx);
  }

 private:
  static constexpr int kHintRounds = 4;

  void assign(ir::Kernel& k, const PassContext& ctx) {
    yielded_.clear();
    soft_.clear();
    flexible_.clear();
    k_ = &k;
    declined_.clear();  // (ops of this kernel: a trial runs on a copy)
    choose_target(k, ctx);
    banned_.clear();
    find_shared_operands(k);
    k.layouts.assign(k.values.size(), Layout{});
    k.notes.clear();
    pending_.assign(k.values.size(), 0);
    uses_.assign(k.values.size(), 0);
    ir::walk(k.body, [&](const ir::Op& op) {
      for (ValueId v : op.operands) ++uses_[static_cast<std::size_t>(v)];
    });
    for (const ir::Param& p : k.params)
      if (p.type.is_tile()) set(p.value, canon(p.type));
    region(k.body);
    // Flexible values nobody asked for a layout (unused): the canonical one, materialised from the
    // last so that the operands of a flexible op (a reshape's) take the layout it is made in.
    std::vector<ValueId> unasked;
    ir::walk(k.body, [&](const ir::Op& op) {
      for (ValueId r : op.results)
        if (is_pending(r) && !assigned(r) && flexible_.count(r)) unasked.push_back(r);
    });
    for (auto it = unasked.rbegin(); it != unasked.rend(); ++it)
      if (!assigned(*it)) materialise(*it, canon(type(*it)));
    for (std::size_t v = 0; v < k.values.size(); ++v)
      if (k.type(static_cast<ValueId>(v)).is_tile() && k.layouts[v].kind == ir::LayoutKind::None)
        k.layouts[v] = canon(k.type(static_cast<ValueId>(v)));
    k_ = nullptr;
  }

  // ---- the target ----
  void choose_target(ir::Kernel& k, const PassContext& ctx) {
    const KernelOptions& o = ctx.options;
    int min_bytes = 0;
    std::int64_t max_n = 1;
    bool cross = false;
    auto see = [&](ValueId v) {
      if (k.type(v).is_tile()) max_n = std::max(max_n, numel(k.type(v).shape));
    };
    ir::walk(k.body, [&](const ir::Op& op) {
      for (ValueId r : op.results) see(r);
      for (const ir::Region& r : op.regions)
        for (ValueId a : r.args) see(a);
      if (is_memory_op(op.kind) && op.kind != OpKind::AtomicRMW && op.kind != OpKind::AtomicCAS) {
        const int b = dtype_size(k.type(op.operands[0]).dtype);
        min_bytes = min_bytes == 0 ? b : std::min(min_bytes, b);
      }
      cross = cross || is_reduction(op) || op.kind == OpKind::Mma;
    });
    sm_ = ctx.sm != 0 ? ctx.sm : 90;
    simt_mma_ = o.simt_mma;
    sync_mma_ = o.sync_mma;
    wgmma_on_ = sm_ == 90 && !o.sync_mma;
    // The largest tensor-core product decides the warps: a warp tile of 2048 accumulator elements
    // (64 x 32: 64 f32 registers per thread) per warp, 4 to 8 warps.
    int tc_warps = 0;
    ir::walk(k.body, [&](const ir::Op& op) {
      if (!tensor_core_shape(op)) return;
      const std::int64_t mn = numel(k.type(op.results[0]).shape);
      const std::int64_t m = k.type(op.results[0]).shape[0], n = k.type(op.results[0]).shape[1];
      const std::int64_t kk = k.type(op.operands[0]).shape[1];
      int w = static_cast<int>(std::clamp<std::int64_t>(mn / 2048, 4, 8));
      if (wgmma_types(op) && ir::wgmma_shape(m, n, kk, 4, elem_bytes(op))) {
        // Whole warpgroups over 64-row blocks, one block each where 8 warps allow (a warpgroup
        // with two blocks of a small product has ptxas serialise its wgmmas: C7520 at 128 x 64
        // over 4 warps).
        w = std::max<int>(w, static_cast<int>(std::min<std::int64_t>(8, m / 16)));
        while (w > 4 && !ir::wgmma_shape(m, n, kk, w, elem_bytes(op))) w /= 2;
      }
      else
        while (w > 1 && ir::mma_warp_grid(m, n, w).wm == 0) w /= 2;
      tc_warps = std::max(tc_warps, w);
    });
    vec_ = min_bytes == 0 ? 4 : std::min(8, 16 / min_bytes);
    int warps = 1;
    const int groups = cross ? kGroupsCrossThread : kGroupsElementwise;
    while (warps < kMaxWarps && std::int64_t{warps} * 32 * vec_ * groups < max_n) warps *= 2;
    if (tc_warps) warps = tc_warps;
    if (o.warps) warps = o.warps;
    int blocks = std::max(1, 4 / warps);  // CTAs of at least 4 warps
    if (o.blocks_per_cta) blocks = o.blocks_per_cta;
    if (warps * blocks > 32) blocks = std::max(1, 32 / warps);
    if (warps > 1 && blocks > 8) blocks = 8;  // named barriers (1..15), one per tile block of a CTA
    warps_ = warps;
    k.target.sm = sm_;
    k.target.warps = warps;
    k.target.blocks_per_cta = blocks;
    k.target.persistent = o.stages > 1;
    // A product's tile blocks in groups of 8 grid rows (Triton's default grouping): the blocks
    // running at the same time share A rows and B columns, which then stay in L2.
    k.target.group_rows = tc_warps > 0 && k.grid_rank == 2 ? kGroupRows : 0;
  }

  // ---- tensor cores ----
  // The operand types and shapes the matrix units take (any warp count).
  bool tensor_core_shape(const ir::Op& op) const {
    if (op.kind != OpKind::Mma || sm_ < 80 || simt_mma_) return false;
    const ir::Type& a = k_type(op.operands[0]);
    const ir::Type& b = k_type(op.operands[1]);
    const ir::Type& c = k_type(op.operands[2]);
    if (a.shape.size() != 2 || b.shape.size() != 2) return false;
    const std::int64_t m = a.shape[0], kk = a.shape[1], n = b.shape[1];
    // fp8 operands (e4m3, e5m2, mixed) into f32: on wgmma only (sm_90), with k32 steps; a product
    // that cannot have both operands K-major in shared memory is declined (declined_) and runs on
    // the CUDA cores, as everywhere else (the note says so).
    if (is_fp8(a.dtype) && is_fp8(b.dtype))
      return wgmma_on_ && !declined_.count(&op) && c.dtype == DType::f32 && is_pow2(m) && is_pow2(n) && m >= 16 && n >= 16 &&
             kk % ir::wgmma_k(1) == 0;
    // 16-bit operands: bf16 or f16 (the same for A and B).
    const bool half = a.dtype == DType::bf16 || a.dtype == DType::f16;
    const bool acc = c.dtype == DType::f32 || c.dtype == DType::f16 || c.dtype == DType::bf16;
    if (!half || b.dtype != a.dtype || !acc) return false;
    return is_pow2(m) && is_pow2(n) && m >= 16 && n >= 16 && kk % 16 == 0;
  }
  // The bytes of an mma's operand elements (2, or 1 for fp8).
  int elem_bytes(const ir::Op& op) const { return static_cast<int>(dtype_size(k_type(op.operands[0]).dtype)); }
  // The operand and accumulator types wgmma takes (on sm_90, sync_mma unset).
  bool wgmma_types(const ir::Op& op) const {
    return wgmma_on_ && tensor_core_shape(op) && k_type(op.operands[2]).dtype == DType::f32;
  }
  // An mma the warpgroup instructions could run over this kernel's warps (before knowing where its
  // operands live): B's rows (N-major, 16-bit) of a multiple of 128 bytes, or (fp8) any N the
  // shape allows (its B is K-major).
  bool wgmma_candidate(const ir::Op& op) const {
    if (!wgmma_types(op)) return false;
    const Shape& a = k_type(op.operands[0]).shape;
    const Shape& b = k_type(op.operands[1]).shape;
    const int es = elem_bytes(op);
    return ir::wgmma_shape(a[0], b[1], a[1], warps_, es) && (es == 1 || ir::wgmma_swizzle(b[1]) == 128);
  }
  // The accumulator layout of a tensor-core mma over this kernel's warps, or None.
  Layout tensor_core_layout(const ir::Op& op) const {
    if (!tensor_core_shape(op)) return {};
    const Shape& s = k_type(op.results[0]).shape;
    if (wg_.count(&op)) return ir::wgmma_accumulator(s[0], s[1], warps_);
    if (elem_bytes(op) == 1) return {};  // fp8: wgmma or the CUDA cores
    if (ir::mma_warp_grid(s[0], s[1], warps_).wm == 0) return {};
    return ir::mma_accumulator(s[0], s[1], warps_);
  }
  const ir::Type& k_type(ValueId v) const { return k_->type(v); }

  // ---- operands in shared memory ----
  static Layout shared_operand(const ir::Type& t, bool swizzled) {
    Layout l;
    l.kind = ir::LayoutKind::Shared;
    l.row = t.shape.back();
    if (swizzled) l.swizzle = ir::wgmma_swizzle(l.row, static_cast<int>(dtype_size(t.dtype)));
    else l.pad = ir::kMmaRowPad;
    return l;
  }
  // The values that live in shared memory (shared_): loads of read-only tensors and the tiles loops
  // carry, each read only by tensor-core mmas (as A or B), by loops that carry it in shared memory
  // too and (for wgmma) by a transpose whose result a wgmma reads as B (held K-major: the same
  // memory, a transposed layout). A fixed point: start from every candidate, drop those with
  // another use. A transpose whose tile cannot be swizzled (its source also feeds an mma.sync
  // product) is banned and the search runs again without it.
  void find_shared_operands(const ir::Kernel& k) {
    shared_.clear();
    swizzled_.clear();
    wg_.clear();
    rs_.clear();
    transposed_.clear();
    reshaped_.clear();
    if (sm_ < 80 || simt_mma_) return;
    ir::walk(k.body, [&](const ir::Op& op) {
      if (wgmma_candidate(op)) wg_.insert(&op);
    });
    struct Use {
      const ir::Op* op;
      std::size_t j;
      const ir::Op* loop;  // a yield's loop (null elsewhere)
      const ir::Region* region;
    };
    struct Carry {
      const ir::Op* loop;
      std::size_t j;
    };
    std::map<ValueId, std::vector<Use>> uses;
    std::map<ValueId, Carry> carried;  // region arguments and results of loops, with their slot
    // Where each candidate is defined: its uses must be ops of that region's top level (so the
    // mma's barrier runs whenever the tile is loaded: smem-alloc's rings rely on it).
    std::map<ValueId, const ir::Region*> where;
    const Defs defs(k);
    // 16-bit tiles (fp8 ones too where wgmma takes them) of rank 2, or of higher rank with leading
    // extents of 1 (a [1, 1, S, D] block of attention's [batch, heads, seq, dim] tensors: rows of the
    // last extent all the same).
    auto half = [&](ValueId v) {
      const ir::Type& t = k.type(v);
      const bool types = t.dtype == DType::bf16 || t.dtype == DType::f16 || (wgmma_on_ && is_fp8(t.dtype));
      if (!t.is_tile() || t.shape.size() < 2 || !types) return false;
      for (std::size_t d = 0; d + 2 < t.shape.size(); ++d)
        if (t.shape[d] != 1) return false;
      return true;
    };
    // Loop bodies nested in a region (through loops only): an mma there may read a tile loaded in
    // the region once, before the loop (attention's Q block).
    std::map<const ir::Region*, const ir::Region*> outer;
    std::function<void(const ir::Region&, const ir::Op*)> scan = [&](const ir::Region& r, const ir::Op* parent) {
      for (const auto& up : r.ops) {
        const ir::Op& op = *up;
        for (std::size_t j = 0; j < op.operands.size(); ++j)
          uses[op.operands[j]].push_back(
              {&op, j, op.kind == OpKind::Yield && parent && parent->kind == OpKind::For ? parent : nullptr, &r});
        // Loads at the top level of the kernel or of a loop body (not inside a branch).
        const bool top = !parent || parent->kind == OpKind::For;
        if (op.kind == OpKind::Load && top && half(op.results[0]) && read_only_source(k, op.operands[0], defs)) {
          shared_.insert(op.results[0]);
          where[op.results[0]] = &r;
        }
        // A reshape that drops leading extents of 1 is the same memory.
        if (op.kind == OpKind::Reshape && top && half(op.results[0]) && half(op.operands[0]) &&
            k.type(op.results[0]).shape.size() == 2 && k.type(op.results[0]).shape.back() == k.type(op.operands[0]).shape.back()) {
          shared_.insert(op.results[0]);
          where[op.results[0]] = &r;
          reshaped_[op.results[0]] = op.operands[0];
        }
        if (op.kind == OpKind::Permute && top && wgmma_on_ && half(op.results[0]) && op.perm == std::vector<int>{1, 0} &&
            !banned_.count(op.results[0])) {
          shared_.insert(op.results[0]);
          where[op.results[0]] = &r;
          transposed_[op.results[0]] = op.operands[0];
        }
        if (op.kind == OpKind::For && top)
          for (std::size_t j = 0; j < op.results.size(); ++j)
            if (half(op.results[j])) {
              shared_.insert(op.results[j]);
              shared_.insert(op.regions[0].args[1 + j]);
              carried[op.results[j]] = carried[op.regions[0].args[1 + j]] = Carry{&op, j};
              where[op.results[j]] = &r;
              where[op.regions[0].args[1 + j]] = &op.regions[0];
            }
        for (const ir::Region& sub : op.regions) {
          if (op.kind == OpKind::For) outer[&sub] = &r;
          scan(sub, &op);
        }
      }
    };
    scan(k.body, nullptr);
    auto in = [&](ValueId v) { return shared_.count(v) > 0; };
    auto nested = [&](const ir::Region* inner, const ir::Region* region) {
      for (auto it = outer.find(inner); it != outer.end(); it = outer.find(it->second))
        if (it->second == region) return true;
      return false;
    };
    auto drop_carry = [&](const Carry& c) {
      shared_.erase(c.loop->results[c.j]);
      shared_.erase(c.loop->regions[0].args[1 + c.j]);
    };
    for (bool changed = true; changed;) {
      changed = false;
      for (auto it = shared_.begin(); it != shared_.end();) {
        const ValueId v = *it++;
        bool ok = true;
        if (auto c = carried.find(v); c != carried.end()) {
          const ir::Op& f = *c->second.loop;
          const ValueId init = f.operands[3 + c->second.j], next = f.regions[0].ops.back()->operands[c->second.j];
          // The chain starts with a load next to the loop and goes on with loads of its body.
          ok = in(init) && in(next) && where[init] == where[f.results[c->second.j]] && where[next] == &f.regions[0];
        }
        const auto tr = transposed_.find(v);
        if (tr != transposed_.end()) ok = ok && in(tr->second);
        if (const auto rs = reshaped_.find(v); rs != reshaped_.end()) ok = ok && in(rs->second);
        for (const Use& u : uses[v]) {
          if (!ok) break;
          // Read in its own region, or (a tile no loop carries) by an mma in a loop nested there.
          if (u.region != where[v] && !(u.op->kind == OpKind::Mma && !carried.count(v) && nested(u.region, where[v]))) {
            ok = false;
            break;
          }
          if (u.op->kind == OpKind::Mma)
            ok = u.j < 2 && tensor_core_layout(*u.op).is_dist() && (tr == transposed_.end() || (u.j == 1 && wg_.count(u.op)));
          else if (u.op->kind == OpKind::Permute) ok = in(u.op->results[0]);
          else if (u.op->kind == OpKind::Reshape) ok = in(u.op->results[0]) && reshaped_.count(u.op->results[0]);
          else if (u.op->kind == OpKind::For) ok = u.j >= 3 && in(u.op->regions[0].args[u.j - 3 + 1]);
          else if (u.op->kind == OpKind::Yield) ok = u.loop && in(u.loop->regions[0].args[1 + u.j]);
          else ok = false;
        }
        if (ok) continue;
        if (auto c = carried.find(v); c != carried.end()) drop_carry(c->second);
        else shared_.erase(v);
        changed = true;
        break;  // the set changed under the iterator
      }
    }
    // wgmma or mma.sync: a product runs on wgmma when both its operands are in shared memory and
    // swizzled, or (register-A wgmma, rs_) when B is and A is a 16-bit tile in registers, which
    // then takes the fragment layout; a tile is swizzled when every product that reads it runs on
    // wgmma and so does every tile of its carried chain. All only ever turn false: a fixed point.
    std::vector<std::pair<ValueId, ValueId>> links;  // tiles of one carried chain
    for (const auto& [v, c] : carried) {
      const ir::Op& f = *c.loop;
      if (!in(v)) continue;
      links.push_back({v, f.operands[3 + c.j]});
      links.push_back({v, f.regions[0].ops.back()->operands[c.j]});
      links.push_back({v, f.results[c.j]});
    }
    for (const auto& [t, src] : transposed_)
      if (in(t)) links.push_back({t, src});
    for (const auto& [t, src] : reshaped_)
      if (in(t)) links.push_back({t, src});
    for (ValueId v : shared_) swizzled_.insert(v);
    auto swz = [&](ValueId v) { return swizzled_.count(v) > 0; };
    for (bool changed = true; changed;) {
      changed = false;
      for (auto it = wg_.begin(); it != wg_.end();) {
        const ir::Op& m = **it;
        // fp8: no transposed B (N-major) and no A in registers on the hardware.
        const bool fp8 = elem_bytes(m) == 1;
        if (in(m.operands[0]) && in(m.operands[1]) && swz(m.operands[0]) && swz(m.operands[1]) &&
            (!fp8 || transposed_.count(m.operands[1]))) {
          ++it;
          continue;
        }
        if (!fp8 && !in(m.operands[0]) && in(m.operands[1]) && swz(m.operands[1])) {
          rs_.insert(&m);
          ++it;
          continue;
        }
        rs_.erase(&m);
        it = wg_.erase(it);
        changed = true;
      }
      for (ValueId v : shared_)
        for (const Use& u : uses[v])
          if (u.op->kind == OpKind::Mma && !wg_.count(u.op) && swizzled_.erase(v)) changed = true;
      for (auto [x, y] : links)
        if (swz(x) != swz(y)) {
          swizzled_.erase(x);
          swizzled_.erase(y);
          changed = true;
        }
    }
    for (const auto& [t, src] : transposed_)
      if (in(t) && !swz(t)) {
        banned_.insert(t);
        return find_shared_operands(k);
      }
    // An fp8 product off wgmma has no tensor-core path left: it runs on the CUDA cores, and the
    // search runs again without it (its operands then stay in registers).
    bool declined = false;
    ir::walk(k.body, [&](const ir::Op& op) {
      if (tensor_core_shape(op) && elem_bytes(op) == 1 && !wg_.count(&op)) declined = declined || declined_.insert(&op).second;
    });
    if (declined) return find_shared_operands(k);
    for (auto it = transposed_.begin(); it != transposed_.end();)
      it = in(it->first) ? std::next(it) : transposed_.erase(it);
    for (auto it = reshaped_.begin(); it != reshaped_.end();)
      it = in(it->first) ? std::next(it) : reshaped_.erase(it);
  }
  // The op of `r` (top level) that defines v, or null.
  static const ir::Op* def_in(const ir::Region& r, ValueId v) {
    for (const auto& op : r.ops)
      for (ValueId x : op->results)
        if (x == v) return op.get();
    return nullptr;
  }

  // ---- layouts ----
  Layout canon(const ir::Type& t) const {
    if (!t.is_tile()) return {};
    if (numel(t.shape) == 1) return ir::replicated(t.shape, warps_);
    return ir::blocked(t.shape, vec_, warps_, /*warps_last=*/false);
  }
  const ir::Type& type(ValueId v) const { return k_->type(v); }
  const Layout& layout(ValueId v) const { return k_->layouts[static_cast<std::size_t>(v)]; }
  void set(ValueId v, Layout l) {
    auto& ls = k_->layouts;
    if (ls.size() < k_->values.size()) ls.resize(k_->values.size());
    if (pending_.size() < k_->values.size()) pending_.resize(k_->values.size(), 0);
    ls[static_cast<std::size_t>(v)] = std::move(l);
  }
  bool assigned(ValueId v) const { return layout(v).kind != ir::LayoutKind::None; }
  bool is_pending(ValueId v) const {
    return static_cast<std::size_t>(v) < pending_.size() && pending_[static_cast<std::size_t>(v)];
  }
  bool replicated_value(ValueId v) const { return type(v).is_tile() && numel(type(v).shape) == 1; }

  // Where the op defining v sits (flexible ops are found again when they are first used).
  struct Site {
    ir::Region* region = nullptr;
    ir::Op* op = nullptr;
  };
  std::size_t index_of(const Site& s) const {
    for (std::size_t i = 0; i < s.region->ops.size(); ++i)
      if (s.region->ops[i].get() == s.op) return i;
    CTILE_CHECK(false, "layout-assignment: lost an op");
    return 0;
  }

  // A value equal to v in layout `want`. Flexible values are materialised in it (cloned if they
  // already are in another layout); others get a ct.convert_layout inserted in `r` before `at`.
  ValueId demand(ValueId v, const Layout& want, ir::Region& r, std::size_t& at) {
    if (is_pending(v)) return materialise(v, want);
    CTILE_CHECK(assigned(v), "layout-assignment: value %", v, " has no layout before its use");
    if (layout(v) == want) return v;
    // A replicated value is what every layout of one element is.
    if (replicated_value(v)) return v;
    InsertPoint ip(*k_, r, at);
    // The conversion is reported at the op that needs it.
    const SourceLoc loc = at < r.ops.size() ? r.ops[at]->loc : SourceLoc{};
    ir::Op& c = ip.build(OpKind::ConvertLayout, {v}, loc, {});
    at = ip.position();
    set(c.results[0], want);
    return c.results[0];
  }

  ValueId materialise(ValueId v, const Layout& want) {
    auto it = flexible_.find(v);
    CTILE_CHECK(it != flexible_.end(), "layout-assignment: pending value %", v, " has no site");
    Site site = it->second;
    ir::Op* op = site.op;
    ValueId target = v;
    if (assigned(v)) {
      if (layout(v) == want) return v;
      // Clone the flexible op right after the original, for the other layout.
      std::size_t at = index_of(site) + 1;
      InsertPoint ip(*k_, *site.region, at);
      std::vector<ir::Type> declared{type(v)};
      ir::Op& c = ip.build(op->kind, op->operands, op->loc, declared, [&](ir::Op& x) { ir::copy_attributes(*op, x); });
      target = c.results[0];
      op = &c;
      site.op = &c;
    }
    set(target, want);
    // Operand j of the materialised op in layout l (a flexible one materialised too).
    auto operand_in = [&](std::size_t j, const Layout& l) {
      const ValueId src = op->operands[j];
      std::size_t at = index_of(site);
      op->operands[j] = is_pending(src) ? materialise(src, l) : demand(src, l, *site.region, at);
    };
    if (elementwise(op->kind)) {  // a rematerialised element-wise op: its operands in the same layout
      for (std::size_t j = 0; j < op->operands.size(); ++j) operand_in(j, want);
    } else if (op->kind == OpKind::Broadcast) {
      operand_in(0, ir::broadcast_source(want, type(op->operands[0]).shape, type(target).shape));
    } else if (op->kind == OpKind::Reshape || op->kind == OpKind::Convert) {
      operand_in(0, want);
    }
    return target;
  }

  // ---- ops ----
  static bool elementwise(OpKind k) {
    return k == OpKind::Unary || k == OpKind::Binary || k == OpKind::Fma || k == OpKind::Cmp || k == OpKind::Select;
  }
  // An op that may be computed again in another layout: element-wise (or a reshape or conversion)
  // with every operand that is not one element flexible, and at least one such.
  bool rematerialisable(const ir::Op& o) const {
    if (!elementwise(o.kind) && o.kind != OpKind::Reshape && o.kind != OpKind::Convert) return false;
    bool any = false;
    for (ValueId v : o.operands) {
      if (replicated_value(v) && !is_pending(v)) continue;
      if (!is_pending(v)) return false;
      any = true;
    }
    return any && !replicated_value(o.results[0]);
  }

  // Processing an op may insert ops anywhere before it (conversions; clones of flexible values
  // that a loop body materialises in a new layout go after their originals, outside the loop), so
  // the next op is found from this one.
  void region(ir::Region& r) {
    for (std::size_t i = 0; i < r.ops.size(); ++i) {
      const ir::Op* me = r.ops[i].get();
      op(r, i);
      i = reindex(r, me);
    }
  }

  // Ops may be inserted anywhere before an op while it is processed (conversions right before it,
  // clones of flexible ops after their originals): find it again.
  static std::size_t reindex(const ir::Region& r, const ir::Op* me) {
    for (std::size_t i = 0; i < r.ops.size(); ++i)
      if (r.ops[i].get() == me) return i;
    CTILE_CHECK(false, "layout-assignment: lost the op being processed");
    return 0;
  }
  // Operand j of the op at r.ops[i] in layout `want` (conversions go right before the op).
  void require(ir::Region& r, std::size_t& i, std::size_t j, const Layout& want) {
    ir::Op* me = r.ops[i].get();
    const ValueId v = me->operands[j];
    ValueId nv = v;
    if (is_pending(v)) {
      nv = materialise(v, want);
    } else {
      i = reindex(r, me);
      nv = demand(v, want, r, i);
    }
    me->operands[j] = nv;
    i = reindex(r, me);
  }
  // The layout an operand has, materialising a flexible one in the canonical layout.
  Layout settle(ir::Region& r, std::size_t& i, std::size_t j) {
    ir::Op* me = r.ops[i].get();
    const ValueId v = me->operands[j];
    if (is_pending(v) && !assigned(v)) me->operands[j] = materialise(v, canon(type(v)));
    i = reindex(r, me);
    return layout(me->operands[j]);
  }
  void flexible(ir::Region& r, std::size_t i) {
    ir::Op& o = *r.ops[i];
    const ValueId v = o.results[0];
    if (replicated_value(v)) {
      set(v, canon(type(v)));
      if (o.kind == OpKind::Broadcast || o.kind == OpKind::Reshape || o.kind == OpKind::Convert) require(r, i, 0, canon(type(o.operands[0])));
      return;
    }
    set(v, Layout{});
    pending_[static_cast<std::size_t>(v)] = 1;
    flexible_[v] = Site{&r, &o};
  }

  void op(ir::Region& r, std::size_t& i) {
    ir::Op& o = *r.ops[i];
    switch (o.kind) {
      case OpKind::BlockId: case OpKind::NumBlocks: case OpKind::Dim: case OpKind::PartitionCount:
        return set(o.results[0], canon(type(o.results[0])));
      case OpKind::MakePartition:
        return;
      case OpKind::Load: case OpKind::LoadPiece:
        if (shared_.count(o.results[0])) return set(o.results[0], shared_operand(type(o.results[0]), swizzled_.count(o.results[0]) > 0));
        // A load with one user is flexible: it takes the layout its user asks for, so a tile that
        // is broadcast (a vector over the rows of a matrix) is loaded straight into the layout that
        // makes the broadcast free (threads that hold copies read the same addresses, from L1), and
        // a loaded accumulator straight into the tensor cores' fragments, with no conversion
        // through shared memory. An element-wise user asks for the canonical layout as before.
        if (o.kind == OpKind::Load && uses_[static_cast<std::size_t>(o.results[0])] == 1) return flexible(r, i);
        return set(o.results[0], canon(type(o.results[0])));
      case OpKind::LoadWindow:  // like a load with several users: never in shared memory
        if (uses_[static_cast<std::size_t>(o.results[0])] == 1) return flexible(r, i);
        return set(o.results[0], canon(type(o.results[0])));
      case OpKind::Gather: {
        const Layout l = canon(type(o.results[0]));
        for (std::size_t j = 1; j < o.operands.size(); ++j) require(r, i, j, l);
        return set(r.ops[i]->results[0], l);
      }
      case OpKind::StorePiece:
        return require(r, i, 1, canon(type(o.operands[1])));
      case OpKind::StoreWindow:
        return require(r, i, o.operands.size() - 1, canon(type(o.operands.back())));
      case OpKind::ScatterPiece: case OpKind::ScatterUnchecked: case OpKind::AtomicRMW: case OpKind::AtomicCAS: {
        const Layout l = canon(type(o.operands.back()));
        for (std::size_t j = 1; j < o.operands.size(); ++j) require(r, i, j, l);
        if (!r.ops[i]->results.empty()) set(r.ops[i]->results[0], l);
        return;
      }
      case OpKind::Constant: case OpKind::Iota: case OpKind::Broadcast:
        return flexible(r, i);
      case OpKind::Reshape: case OpKind::Convert: case OpKind::Bitcast: case OpKind::Random: case OpKind::Unary: case OpKind::Binary: case OpKind::Fma:
      case OpKind::Cmp: case OpKind::Select: {
        // A reshape of a tile in shared memory (leading extents of 1 dropped): the same memory.
        if (o.kind == OpKind::Reshape && reshaped_.count(o.results[0])) return set(o.results[0], layout(o.operands[0]));
        // Element-wise ops over flexible values only (index arithmetic over iotas and constants,
        // masks built from them) stay flexible: they are computed in the layout their user asks
        // for, so a mask meets the tile it selects from in that tile's layout. One-element
        // operands do not count (every layout holds them).
        if (rematerialisable(o)) return flexible(r, i);
        const ValueId res = o.results[0];
        // The layout of the first operand that has one, preferring those that are not loop-carried
        // values whose layout nobody chose yet (soft_).
        Layout want;
        for (int pass = 0; pass < 2 && want.kind == ir::LayoutKind::None; ++pass)
          for (ValueId v : o.operands)
            if (!is_pending(v) && assigned(v) && !replicated_value(v) && (pass == 1 || !soft_.count(v))) {
              want = layout(v);
              break;
            }
        if (want.kind == ir::LayoutKind::None) want = canon(type(o.operands[0]));
        if (replicated_value(res)) want = canon(type(res));
        // A reshape keeps the element bits: the operand's layout is the result's.
        for (std::size_t j = 0; j < r.ops[i]->operands.size(); ++j) require(r, i, j, want);
        return set(res, want);
      }
      case OpKind::Reduce: {
        const Layout& x = settle(r, i, 0);
        ir::Op& cur = *r.ops[i];
        return set(cur.results[0], replicated_value(cur.results[0]) ? canon(type(cur.results[0]))
                                                                     : ir::slice(x, type(cur.operands[0]).shape, cur.axis));
      }
      case OpKind::Scan: {
        const Layout x = settle(r, i, 0);
        return set(r.ops[i]->results[0], x);
      }
      case OpKind::ReduceWith:
      case OpKind::ScanWith: {
        // Like ct.reduce / ct.scan, the tiles combined together in the first one's layout (a scan's
        // identities are one-element values). The combine region holds scalars only: its values
        // take the replicated layout (assign's last step), and it is not walked.
        const Layout x = settle(r, i, 0);
        const std::size_t nk = r.ops[i]->results.size();
        for (std::size_t j = 1; j < nk; ++j) require(r, i, j, x);
        for (std::size_t j = nk; j < r.ops[i]->operands.size(); ++j) settle(r, i, j);
        ir::Op& cur = *r.ops[i];
        const Shape& sh = type(cur.operands[0]).shape;
        for (ValueId res : cur.results)
          set(res, cur.kind == OpKind::ScanWith ? x
                   : replicated_value(res)      ? canon(type(res))
                                                : ir::slice(x, sh, cur.axis));
        return;
      }
      case OpKind::Permute: {
        const Layout x = settle(r, i, 0);
        ir::Op& cur = *r.ops[i];
        if (transposed_.count(cur.results[0])) {  // the same shared memory, read transposed
          Layout t = x;
          t.trans = !t.trans;
          return set(cur.results[0], t);
        }
        return set(cur.results[0], replicated_value(cur.results[0]) ? x : ir::permute(x, type(cur.operands[0]).shape, cur.perm));
      }
      case OpKind::Extract: case OpKind::Cat: {
        for (std::size_t j = 0; j < o.operands.size(); ++j) settle(r, i, j);
        return set(r.ops[i]->results[0], canon(type(r.ops[i]->results[0])));
      }
      case OpKind::Mma: {
        if (rs_.count(r.ops[i].get())) {  // register-A wgmma: A in the fragment layout
          const Shape& a = type(r.ops[i]->operands[0]).shape;
          require(r, i, 0, ir::wgmma_a_fragment(a[0], a[1], warps_));
        } else {
          settle(r, i, 0);
        }
        settle(r, i, 1);
        note_mma(*r.ops[i]);
        const Layout tc = tensor_core_layout(*r.ops[i]);
        if (tc.is_dist()) {
          require(r, i, 2, tc);
          r.ops[i]->tensor_core = true;
          return set(r.ops[i]->results[0], tc);
        }
        const Layout c = settle(r, i, 2);
        return set(r.ops[i]->results[0], c);
      }
      case OpKind::ConvertLayout:
        settle(r, i, 0);
        if (!assigned(r.ops[i]->results[0])) set(r.ops[i]->results[0], canon(type(r.ops[i]->results[0])));
        return;
      case OpKind::For: {
        const std::size_t nc = o.operands.size() - 3;
        std::vector<Layout> carried;
        std::vector<std::size_t> soft;  // carried values whose initial value had no layout yet
        for (std::size_t j = 0; j < nc; ++j) {
          // An accumulator the body feeds to a tensor-core mma and yields from it: its fragment layout.
          const ir::Region& b = r.ops[i]->regions[0];
          const ir::Op* m = def_in(b, yield_of(b).operands[j]);
          const Layout tc = m && m->kind == OpKind::Mma && m->operands[2] == b.args[1 + j] ? tensor_core_layout(*m) : Layout{};
          const ValueId res = r.ops[i]->results[j];
          const auto hint = hints_.find(res);
          if (tc.is_dist()) {
            require(r, i, 3 + j, tc);
            carried.push_back(tc);
          } else if (hint != hints_.end() && !shared_.count(res)) {
            require(r, i, 3 + j, hint->second);  // the layout the body yields it in (a trial run)
            carried.push_back(hint->second);
          } else {
            const bool free_init = is_pending(r.ops[i]->operands[3 + j]);
            carried.push_back(settle(r, i, 3 + j));
            if (free_init) soft.push_back(j);
          }
        }
        ir::Op& cur = *r.ops[i];
        ir::Region& body = cur.regions[0];
        set(body.args[0], canon(type(body.args[0])));
        for (std::size_t j = 0; j < nc; ++j) set(body.args[1 + j], carried[j]);
        for (std::size_t j : soft) soft_.insert(body.args[1 + j]);
        region(body);
        // What the body yields, in the layouts it computed them in (for the next trial).
        for (std::size_t j = 0; j < nc; ++j) {
          const ValueId y = yield_of(body).operands[j];
          if (!is_pending(y) && assigned(y) && !replicated_value(y) && !layout(y).is_shared())
            yielded_[cur.results[j]] = layout(y);
        }
        yield(body, carried);
        for (std::size_t j = 0; j < nc; ++j) set(cur.results[j], carried[j]);
        return;
      }
      case OpKind::While: {
        std::vector<Layout> carried;
        for (std::size_t j = 0; j < o.operands.size(); ++j) carried.push_back(settle(r, i, j));
        ir::Op& cur = *r.ops[i];
        for (int g = 0; g < 2; ++g)
          for (std::size_t j = 0; j < carried.size(); ++j) set(cur.regions[static_cast<std::size_t>(g)].args[j], carried[j]);
        region(cur.regions[0]);
        yield(cur.regions[0], {canon(ir::Type::scalar(DType::b1))});
        region(cur.regions[1]);
        yield(cur.regions[1], carried);
        for (std::size_t j = 0; j < carried.size(); ++j) set(cur.results[j], carried[j]);
        return;
      }
      case OpKind::If: {
        ir::Op& cur = *r.ops[i];
        region(cur.regions[0]);
        // The then-branch decides the results' layouts; the else-branch converts to them.
        ir::Region& then_r = cur.regions[0];
        std::vector<Layout> res;
        {
          std::size_t yi = then_r.ops.size() - 1;
          for (std::size_t j = 0; j < then_r.ops[yi]->operands.size(); ++j) {
            const Layout& l = settle(then_r, yi, j);
            res.push_back(l);
          }
        }
        region(cur.regions[1]);
        yield(cur.regions[1], res);
        for (std::size_t j = 0; j < res.size(); ++j) set(cur.results[j], res[j]);
        return;
      }
      case OpKind::Yield:
        return;
    }
  }

  // A product off this target's fast path (wgmma on sm_90, mma.sync on sm_80 to sm_89) gets a note
  // saying where it runs instead and why (ir::Kernel::notes).
  void note_mma(const ir::Op& op) {
    const ir::Type& a = type(op.operands[0]);
    const ir::Type& b = type(op.operands[1]);
    const ir::Type& c = type(op.operands[2]);
    std::string mnk;
    if (a.shape.size() == 2 && b.shape.size() == 2)
      mnk = std::to_string(a.shape[0]) + " x " + std::to_string(b.shape[1]) + " x " + std::to_string(a.shape[1]);
    const auto dn = [](DType d) { return std::string(dtype_name(d)); };
    std::string why;
    if (!tensor_core_layout(op).is_dist()) {
      const bool half = (a.dtype == DType::bf16 || a.dtype == DType::f16) && b.dtype == a.dtype;
      const bool acc = c.dtype == DType::f32 || c.dtype == DType::f16 || c.dtype == DType::bf16;
      const bool fp8 = is_fp8(a.dtype) && is_fp8(b.dtype);
      if (simt_mma_) why = "on the CUDA cores (the kernel option simt_mma)";
      else if (fp8 && !wgmma_on_)
        why = "on the CUDA cores (fp8 products run on the tensor cores through sm_90's wgmma only" +
              std::string(sm_ == 90 ? ", which the kernel option sync_mma turns off)" : ")");
      else if (fp8 && c.dtype != DType::f32)
        why = "on the CUDA cores (fp8 products on the tensor cores accumulate into f32; this one is " + dn(c.dtype) + ")";
      else if (fp8 && declined_.count(&op))
        why = "on the CUDA cores (fp8 products on wgmma need A [M, K] and B K-major, a transposed [N, K] tile, both loaded "
              "from read-only tensors and read only by products, M a multiple of 16 x " + std::to_string(warps_) +
              " warps, N of 64 and K of 32; this one is " + mnk + ")";
      else if (fp8)
        why = "on the CUDA cores (fp8 products on wgmma need M and N powers of two of at least 16 and K a multiple of 32; this "
              "one is " + mnk + ")";
      else if (!half || !acc)
        why = "on the CUDA cores (the tensor-core path takes bf16 or f16 operands into f32, f16 or bf16; this one is " +
              dn(a.dtype) + " x " + dn(b.dtype) + " -> " + dn(c.dtype) + ")";
      else if (sm_ < 80) why = "on the CUDA cores (sm_" + std::to_string(sm_) + " has no 16-bit tensor-core mma)";
      else if (!tensor_core_shape(op))
        why = "on the CUDA cores (the tensor cores need M and N powers of two of at least 16 and K a multiple of 16; this one is " +
              mnk + ")";
      else why = "on the CUDA cores (its accumulator cannot be spread over " + std::to_string(warps_) + " warps as warp tiles of 16 x 16)";
    } else if (sm_ == 90 && !wg_.count(&op)) {
      if (sync_mma_) why = "on mma.sync, not wgmma (the kernel option sync_mma)";
      else if (c.dtype != DType::f32) why = "on mma.sync, not wgmma (wgmma here takes an f32 accumulator; this one is " + dn(c.dtype) + ")";
      else if (!wgmma_candidate(op))
        why = "on mma.sync, not wgmma (wgmma needs M a multiple of 16 x " + std::to_string(warps_) +
              " warps, N of 64 and K of 16 with rows of 16, 32 or a multiple of 64 elements; this one is " + mnk + ")";
      else {
        for (int j = 0; j < 2 && why.empty(); ++j) {
          const ValueId v = op.operands[static_cast<std::size_t>(j)];
          const std::string name = j == 0 ? "A" : "B";
          if (!shared_.count(v))
            why = "on mma.sync, not wgmma (operand " + name +
                  " is not a tile loaded from a read-only tensor and read only by products, next to them: it is staged "
                  "through registers)";
          else if (!swizzled_.count(v))
            why = "on mma.sync, not wgmma (operand " + name + " also feeds a product on mma.sync, which reads it padded)";
        }
        if (why.empty()) why = "on mma.sync, not wgmma";
      }
    }
    if (!why.empty()) k_->notes.push_back("mma at " + (op.loc.known() ? op.loc.str() : std::string("<unknown>")) + " runs " + why);
  }

  void yield(ir::Region& body, const std::vector<Layout>& want) {
    std::size_t yi = body.ops.size() - 1;
    for (std::size_t j = 0; j < want.size(); ++j) require(body, yi, j, want[j]);
  }

  static const ir::Op& yield_of(const ir::Region& r) { return *r.ops.back(); }

  ir::Kernel* k_ = nullptr;
  int warps_ = 1, vec_ = 4, sm_ = 90;
  bool simt_mma_ = false, sync_mma_ = false, wgmma_on_ = false;
  std::vector<char> pending_;
  std::vector<int> uses_;  // uses of each value in the tile-level IR (flexible loads)
  std::map<ValueId, Site> flexible_;
  std::set<ValueId> soft_;  // loop-body arguments carried in a layout chosen only by their flexible initial value
  std::map<ValueId, Layout> hints_;    // a loop result -> the layout its body yields it in (previous trial)
  std::map<ValueId, Layout> yielded_;  // ... as found by this run
  std::set<ValueId> shared_;    // values in shared memory (find_shared_operands)
  std::set<ValueId> swizzled_;  // ... of them in the swizzled layout (wgmma operands)
  std::set<const ir::Op*> wg_;  // the mmas that run on wgmma
  std::set<const ir::Op*> rs_;  // ... of them with A in registers
  std::map<ValueId, ValueId> transposed_;  // transposes held in shared memory -> their source
  std::map<ValueId, ValueId> reshaped_;    // reshapes of tiles in shared memory -> their source
  std::set<ValueId> banned_;               // transposes that cannot be (find_shared_operands)
  std::set<const ir::Op*> declined_;       // fp8 products whose operands cannot be wgmma's (find_shared_operands)
};

}  // namespace

std::unique_ptr<Pass> make_layout_assignment() { return std::make_unique<LayoutAssignment>(); }

}  // namespace ctile::passes
