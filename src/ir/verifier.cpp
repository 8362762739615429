// The IR verifier: structural and type rules of the tile IR (docs/ir.md). Any violation is a bug in
// whoever produced the IR (the tracing front end), so it throws InternalError naming the op, the
// problem and the op's source location.
#include <algorithm>
#include <string>
#include <vector>

#include "ctile/ir/ir.hpp"
#include "ctile/ir/op_info.hpp"

namespace ctile::ir {
namespace {

using detail::cat;


class Verifier {
 public:
  explicit Verifier(const Kernel& k) : k_(k), defined_(k.values.size(), 0), visible_(k.values.size(), 0) {}

  void run() {
    if (k_.grid_rank < 1 || k_.grid_rank > kMaxRank) kfail(cat("grid rank ", k_.grid_rank, " is not in [1, ", kMaxRank, "]"));
    if (k_.body.args.size() != k_.params.size())
      kfail(cat("the body has ", k_.body.args.size(), " arguments for ", k_.params.size(), " parameters"));
    for (std::size_t i = 0; i < k_.params.size(); ++i) {
      const Param& p = k_.params[i];
      if (p.value != k_.body.args[i])
        kfail(cat("parameter '", p.name, "' is value %", p.value, " but body argument ", i, " is %", k_.body.args[i]));
      if (!in_range(p.value)) kfail(cat("parameter '", p.name, "' has value id %", p.value, " out of range"));
      const bool ok_kind = p.type.kind == TypeKind::Piece || p.type.kind == TypeKind::Tensor || p.type.is_scalar();
      if (!ok_kind) kfail(cat("parameter '", p.name, "' has type ", type_str(p.type), " (not a piece, tensor or scalar)"));
      if (!(k_.type(p.value) == p.type))
        kfail(cat("parameter '", p.name, "' has type ", type_str(p.type), " but its value %", p.value, " has type ",
                  type_str(k_.type(p.value))));
      if (p.type.kind == TypeKind::Tensor && p.type.access == Access::Piece)
        kfail(cat("parameter '", p.name, "' is a tensor with piece access"));
      // Block b owns the tile at tile index (b_0, ..., b_{r-1}) of every piece parameter of rank r.
      // A piece of lower rank than the grid is disjoint from the other blocks' only because the
      // launcher gives the grid extent 1 along the further axes (merge_grid, runtime/launch.hpp).
      if (p.type.kind == TypeKind::Piece && p.type.rank > k_.grid_rank)
        kfail(cat("piece parameter '", p.name, "' has rank ", p.type.rank, " but the grid has only ", k_.grid_rank,
                  " axes"));
    }
    region(k_.body, nullptr, 0, {});
    if (k_.gpu_level()) layouts();
  }

 private:
  [[noreturn]] void fail(const Op& op, const std::string& msg) const {
    throw InternalError(cat("IR verifier: ", op_name(op.kind), ": ", msg, " at ", op.loc.str()));
  }
  [[noreturn]] void kfail(const std::string& msg) const {
    throw InternalError(cat("IR verifier: kernel '", k_.name, "': ", msg));
  }
  [[noreturn]] void fail_at(const Op* op, const std::string& msg) const {
    if (op) fail(*op, msg);
    kfail(msg);
  }

  bool in_range(ValueId v) const { return v >= 0 && static_cast<std::size_t>(v) < k_.values.size(); }

  // A well-formed type: static shapes with power-of-two extents, ranks within limits.
  void check_type(const Op* op, ValueId v) const {
    const Type& t = k_.type(v);
    const auto where = [&] { return cat("value %", v, " of type ", type_str(t), ": "); };
    if (t.rank < 0 || t.rank > kMaxRank) fail_at(op, cat(where(), "rank out of [0, ", kMaxRank, "]"));
    switch (t.kind) {
      case TypeKind::Tensor:
        if (!t.shape.empty()) fail_at(op, cat(where(), "a tensor type carries a tile shape"));
        return;
      case TypeKind::Tile:
      case TypeKind::Partition:
      case TypeKind::Piece:
        if (static_cast<int>(t.shape.size()) != t.rank) fail_at(op, cat(where(), "rank does not match the shape"));
        for (std::int64_t e : t.shape)
          if (!is_pow2(e)) fail_at(op, cat(where(), "tile extent ", e, " is not a power of two"));
        if (t.kind == TypeKind::Partition && t.access != Access::Read)
          fail_at(op, cat(where(), "a partition must have read access"));
        if (t.kind == TypeKind::Piece && t.access != Access::Piece)
          fail_at(op, cat(where(), "a piece must have piece access"));
        return;
    }
  }

  void define(const Op* op, ValueId v, const char* what) {
    if (!in_range(v)) fail_at(op, cat(what, " value id %", v, " out of range [0, ", k_.values.size(), ")"));
    auto& d = defined_[static_cast<std::size_t>(v)];
    if (d) fail_at(op, cat(what, " %", v, " is defined more than once"));
    d = 1;
    visible_[static_cast<std::size_t>(v)] = 1;
    scope_.push_back(v);
    check_type(op, v);
  }

  // Checks region r (owned by `owner`, region number `index`; null for the kernel body) whose Yield
  // must carry `yields`. Region arguments are checked by the owner before.
  void region(const Region& r, const Op* owner, std::size_t index, const std::vector<Type>& yields) {
    const std::size_t mark = scope_.size();
    for (ValueId a : r.args) define(owner, a, "region argument");
    if (r.ops.empty() || !r.ops.back() || r.ops.back()->kind != OpKind::Yield)
      fail_at(owner, cat("region ", index, " does not end with ct.yield"));
    for (std::size_t i = 0; i < r.ops.size(); ++i) {
      if (!r.ops[i]) fail_at(owner, cat("region ", index, " holds a null op"));
      const Op& op = *r.ops[i];
      if (op.kind == OpKind::Yield && i + 1 != r.ops.size()) fail(op, "ct.yield is not the last op of its region");
      for (std::size_t j = 0; j < op.operands.size(); ++j) {
        const ValueId v = op.operands[j];
        if (!in_range(v)) fail(op, cat("operand ", j, " has value id %", v, " out of range [0, ", k_.values.size(), ")"));
        if (!visible_[static_cast<std::size_t>(v)])
          fail(op, cat("operand ", j, " (%", v, ") is not defined before this use (dominance)"));
      }
      for (std::size_t j = 0; j < op.results.size(); ++j)
        if (!in_range(op.results[j]))
          fail(op, cat("result ", j, " has value id %", op.results[j], " out of range [0, ", k_.values.size(), ")"));
      if (op.kind == OpKind::Yield) {
        if (!op.results.empty()) fail(op, "ct.yield has results");
        if (!op.regions.empty()) fail(op, "ct.yield has regions");
        if (op.operands.size() != yields.size())
          fail(op, cat("yields ", op.operands.size(), " values, expected ", yields.size()));
        for (std::size_t j = 0; j < yields.size(); ++j)
          if (!(k_.type(op.operands[j]) == yields[j]))
            fail(op, cat("yielded value ", j, " has type ", type_str(k_.type(op.operands[j])), ", expected ",
                         type_str(yields[j])));
        continue;
      }
      check_op(op);
      for (ValueId v : op.results) define(&op, v, "result");
    }
    while (scope_.size() > mark) {
      visible_[static_cast<std::size_t>(scope_.back())] = 0;
      scope_.pop_back();
    }
  }

  // The op's type rule (op_info.hpp) gives its result types; control flow also gets its regions
  // checked here.
  void check_op(const Op& op) {
    const auto& ops = op.operands;
    const std::size_t n_ops = ops.size();
    auto T = [&](std::size_t i) -> const Type& { return k_.type(ops[i]); };
    auto R = [&](std::size_t i) -> const Type& { return k_.type(op.results[i]); };
    auto nres = [&](std::size_t n) {
      if (op.results.size() != n) fail(op, cat("expected ", n, " results, got ", op.results.size()));
    };

    const OpTraits& tr = traits(op.kind);
    if (static_cast<int>(op.regions.size()) != tr.regions)
      fail(op, cat("has ", op.regions.size(), " regions, expected ", tr.regions == 0 ? std::string("none") : std::to_string(tr.regions)));
    std::vector<Type> declared;
    for (ValueId r : op.results) declared.push_back(k_.type(r));
    std::vector<Type> want;
    try {
      want = infer_types(k_, op, declared);
    } catch (const TypeError& e) {
      fail(op, e.what());
    }
    nres(want.size());
    for (std::size_t i = 0; i < want.size(); ++i)
      if (!(R(i) == want[i]))
        fail(op, cat(want.size() == 1 ? std::string("result") : cat("result ", i), " has type ", type_str(R(i)),
                     ", expected ", type_str(want[i])));

    switch (op.kind) {
      case OpKind::For: {
        const std::size_t nc = n_ops - 3;
        std::vector<Type> carried(want.begin(), want.end());
        const Region& body = op.regions[0];
        if (body.args.size() != nc + 1)
          fail(op, cat("the body has ", body.args.size(), " arguments, expected ", nc + 1, " (iv, carried...)"));
        for (std::size_t i = 0; i <= nc; ++i) {
          if (!in_range(body.args[i])) fail(op, cat("region argument ", i, " has value id %", body.args[i], " out of range"));
          const Type& w = i == 0 ? Type::scalar(DType::i64) : carried[i - 1];
          if (!(k_.type(body.args[i]) == w))
            fail(op, cat("region argument ", i, " has type ", type_str(k_.type(body.args[i])), ", expected ", type_str(w)));
        }
        return region(body, &op, 0, carried);
      }
      case OpKind::If: {
        std::vector<Type> res;
        for (ValueId v : op.results) res.push_back(k_.type(v));
        for (std::size_t r = 0; r < 2; ++r) {
          if (!op.regions[r].args.empty()) fail(op, cat("region ", r, " has arguments"));
          region(op.regions[r], &op, r, res);
        }
        return;
      }
      case OpKind::While: {
        std::vector<Type> carried;
        for (std::size_t i = 0; i < n_ops; ++i) carried.push_back(T(i));
        for (std::size_t r = 0; r < 2; ++r) {
          const Region& reg = op.regions[r];
          if (reg.args.size() != n_ops)
            fail(op, cat("region ", r, " has ", reg.args.size(), " arguments, expected ", n_ops));
          for (std::size_t i = 0; i < n_ops; ++i) {
            if (!in_range(reg.args[i])) fail(op, cat("region ", r, " argument ", i, " has value id %", reg.args[i], " out of range"));
            if (!(k_.type(reg.args[i]) == carried[i]))
              fail(op, cat("region ", r, " argument ", i, " has type ", type_str(k_.type(reg.args[i])), ", expected ",
                           type_str(carried[i])));
          }
        }
        region(op.regions[0], &op, 0, {Type::scalar(DType::b1)});
        region(op.regions[1], &op, 1, carried);
        return;
      }
      case OpKind::ReduceWith:
      case OpKind::ScanWith: return combine_region(op);
      default:
        return;
    }
  }

  // The combine function of ct.reduce_with / ct.scan_with: 2k scalar arguments (the left values,
  // then the right ones), element-wise ops on scalars only, k scalars yielded, and nothing used
  // from outside the region (it is isolated: the CUDA backend emits it as a function of its own).
  void combine_region(const Op& op) {
    const std::size_t nk = op.results.size();
    const Region& body = op.regions[0];
    std::vector<Type> elems;
    for (ValueId r : op.results) elems.push_back(Type::scalar(k_.type(r).dtype));
    if (body.args.size() != 2 * nk)
      fail(op, cat("the combine region has ", body.args.size(), " arguments, expected ", 2 * nk, " (two per combined tile)"));
    for (std::size_t i = 0; i < body.args.size(); ++i) {
      if (!in_range(body.args[i])) fail(op, cat("region argument ", i, " has value id %", body.args[i], " out of range"));
      if (!(k_.type(body.args[i]) == elems[i % nk]))
        fail(op, cat("region argument ", i, " has type ", type_str(k_.type(body.args[i])), ", expected ", type_str(elems[i % nk])));
    }
    for (const auto& inner : body.ops) {
      if (!inner || inner->kind == OpKind::Yield) continue;
      if (!combinable(inner->kind)) fail(*inner, "a combine region holds element-wise ops only");
      for (ValueId r : inner->results)
        if (in_range(r) && !k_.type(r).is_scalar())
          fail(*inner, cat("a combine region computes on scalars, not on ", type_str(k_.type(r))));
    }
    // Values of the enclosing regions are out of sight inside.
    const std::vector<char> outer = visible_;
    std::fill(visible_.begin(), visible_.end(), 0);
    region(body, &op, 0, elems);
    visible_ = outer;
  }

  // ---- the GPU-level IR: every tile value has a distributed layout, and ops agree with them ----
  void layouts() const {
    const KernelTarget& t = k_.target;
    if (t.warps < 1 || t.warps > 32 || (t.warps & (t.warps - 1)) != 0) kfail(cat("target warps ", t.warps, " is not a power of two in 1..32"));
    if (t.blocks_per_cta < 1 || t.warps * t.blocks_per_cta > 32)
      kfail(cat("target blocks_per_cta ", t.blocks_per_cta, " with ", t.warps, " warps does not fit a CTA"));
    if (t.min_ctas < 0 || t.min_ctas > 32) kfail(cat("target min_ctas ", t.min_ctas, " is not in 0..32"));
    if (t.producer_warps != 0) {
      if (t.producer_warps != 4 || t.warps % 4 != 0 || t.blocks_per_cta != 1 || t.warps + t.producer_warps > 32)
        kfail(cat("target producer_warps ", t.producer_warps, " with ", t.warps, " warps and ", t.blocks_per_cta,
                  " tile blocks per CTA: a producer is one warpgroup beside whole consumer warpgroups of one tile block"));
      if (t.producer_bar <= 0 || t.producer_bar % 8 != 0 || t.producer_bar >= t.smem_bytes)
        kfail(cat("target producer_bar ", t.producer_bar, " is not an 8-byte aligned offset in the tile block's ",
                  t.smem_bytes, " bytes of shared memory"));
      if (!producer_ops(k_)) kfail("target producer_warps is set, but the TMA copies cannot run on a producer of their own");
    }
    if (t.scratch_over_rings && t.producer_warps == 0)
      kfail("target scratch_over_rings needs a producer warpgroup (it says the producer waits for each tile block's end)");
    if (t.producer_warps > 0 && !t.scratch_over_rings) {
      // The producer copies the next tile block's operands during this one's epilogue: no ring may
      // lie over the scratch.
      const SharedMemoryUse u = shared_memory_use(k_);
      if (u.rings_over_scratch)
        kfail(cat("the rings (from byte ", u.ring_lo, ") lie over the scratch (", u.scratch_end,
                  " bytes), but the target does not say scratch_over_rings: the producer would copy over the epilogue's scratch"));
    }
    if (t.k_split != 1) {
      if (t.k_split != 2 || t.producer_warps == 0 || t.warps != 4 || t.pingpong)
        kfail(cat("target k_split ", t.k_split, " needs 2, a producer warpgroup and one consumer warpgroup (4 warps) without pingpong"));
      int split_loops = 0;
      std::int64_t bytes = 0;  // the second warpgroup's f32 accumulator
      walk(k_.body, [&](const Op& op) {
        if (op.acc_split != 2) return;
        ++split_loops;
        for (const auto& o : op.regions[0].ops)
          if (o->kind == OpKind::Mma) bytes = 4 * ctile::numel(k_.type(o->results[0]).shape);
      });
      if (split_loops != 1) kfail(cat("target k_split needs exactly one loop marked acc_split = 2; the kernel has ", split_loops));
      if (t.k_split_scratch <= 0 || t.k_split_scratch % 16 != 0 || t.k_split_scratch + bytes > t.smem_bytes)
        kfail(cat("target k_split_scratch ", t.k_split_scratch, " is not a 16-byte aligned offset of ", bytes,
                  " bytes in the tile block's ", t.smem_bytes, " bytes of shared memory"));
    }
    if (t.pingpong && (t.producer_warps == 0 || t.warps != 8))
      kfail(cat("target pingpong needs a producer warpgroup and two consumer warpgroups (8 warps); this target has ",
                t.warps, " warps", t.producer_warps ? "" : " and no producer"));
    if (t.group_rows < 0 || (t.group_rows > 0 && k_.grid_rank != 2))
      kfail(cat("target group_rows ", t.group_rows, " needs a grid of rank 2 (this one has rank ", k_.grid_rank, ")"));
    if (k_.layouts.size() != k_.values.size())
      kfail(cat(k_.layouts.size(), " layouts for ", k_.values.size(), " values"));
    for (std::size_t v = 0; v < k_.values.size(); ++v) {
      const Type& ty = k_.values[v];
      const Layout& l = k_.layouts[v];
      if (!ty.is_tile()) {
        if (l.kind != LayoutKind::None) kfail(cat("value %", v, " of type ", type_str(ty), " has a layout"));
        continue;
      }
      if (!defined_[v]) continue;  // left over by a pass (no op defines it)
      if (l.is_shared()) {
        // A tile in shared memory (the operand of a tensor-core mma): row-major rows of the last
        // extent; of rank 2, or higher with leading extents of 1 (not transposed).
        bool lead_ones = ty.shape.size() >= 2 && (ty.shape.size() == 2 || !l.trans);
        for (std::size_t d = 0; lead_ones && d + 2 < ty.shape.size(); ++d) lead_ones = ty.shape[d] == 1;
        const std::int64_t rows = lead_ones ? (l.trans ? ty.shape[1] : numel(ty.shape) / ty.shape.back()) : 0;
        if (!lead_ones || l.row != (l.trans ? ty.shape[0] : ty.shape.back()) || l.pad < 0 || (l.trans && !l.swizzle))
          kfail(cat("value %", v, " of type ", type_str(ty), " has layout ", layout_str(l), ": a shared layout needs rows of the last extent"));
        const int es = static_cast<int>(dtype_size(ty.dtype));
        if (l.swizzle && (l.pad != 0 || (es != 1 && es != 2) || wgmma_swizzle(l.row, es) != l.swizzle || rows % 8 != 0 ||
                          t.sm != 90))
          kfail(cat("value %", v, " of type ", type_str(ty), " has layout ", layout_str(l),
                    ": a swizzled layout holds 8- or 16-bit rows of ", l.swizzle == 128 ? "a multiple of 128" : std::to_string(l.swizzle),
                    " bytes, a multiple of 8 rows, for sm_90's wgmma"));
        continue;
      }
      const std::string m = check_dist(l, numel(ty.shape), t.warps);
      if (!m.empty()) kfail(cat("value %", v, " of type ", type_str(ty), " has layout ", layout_str(l), ": ", m));
    }
    walk(k_.body, [&](const Op& op) { op_layouts(op); });
  }
  void op_layouts(const Op& op) const {
    auto L = [&](ValueId v) -> const Layout& { return k_.layout(v); };
    auto same = [&](ValueId a, ValueId b, const char* what) {
      if (!(L(a) == L(b)))
        fail(op, cat(what, " %", a, " has layout ", layout_str(L(a)), " but %", b, " has ", layout_str(L(b))));
    };
    // Shared-layout values are made by loads (asynchronous copies) and loops that carry them, and
    // read only by tensor-core mmas (as A or B) and the loops that carry them.
    auto shared = [&](ValueId v) { return k_.type(v).is_tile() && L(v).is_shared(); };
    for (std::size_t j = 0; j < op.operands.size(); ++j)
      if (shared(op.operands[j]) && !((op.kind == OpKind::Mma && op.tensor_core && j < 2) ||
                                      (op.kind == OpKind::For && j >= 3) || op.kind == OpKind::Yield ||
                                      op.kind == OpKind::Permute || (op.kind == OpKind::Reshape && shared(op.results[0]))))
        fail(op, cat("operand %", op.operands[j], " has the shared layout ", layout_str(L(op.operands[j])),
                     ": only a tensor-core mma, a transpose, a reshape or a loop may use it"));
    for (ValueId r : op.results)
      if (shared(r) && !is_tile_copy(op) && op.kind != OpKind::For &&
          op.kind != OpKind::Permute && !(op.kind == OpKind::Reshape && shared(op.operands[0])))
        fail(op, cat("result %", r, " has a shared layout: only a load, a transpose, a reshape or a loop may make one"));
    if (op.acc_split != 0 && (op.kind != OpKind::For || op.acc_split != 2))
      fail(op, "acc_split = 2 marks a ct.for (its iterations alternate between two accumulators)");
    if (op.tma_map >= 0) {
      // A rank-2 tile, or one of rank 3 to 5 with leading extents 1, of a read-only tensor of its rank.
      const Shape& ts = k_.type(op.results[0]).shape;
      bool lead_ones = ts.size() >= 2 && ts.size() <= 5;
      for (std::size_t d = 0; d + 2 < ts.size(); ++d) lead_ones = lead_ones && ts[d] == 1;
      if (op.kind != OpKind::Load || !shared(op.results[0]) || !L(op.results[0]).is_swizzled() || op.ring_slots <= 0 ||
          op.tma_bar < 0 || op.tma_bar % 8 != 0 || !lead_ones ||
          k_.type(op.operands[0]).rank != static_cast<int>(ts.size()) || k_.type(op.operands[0]).access != Access::Read)
        fail(op, "a TMA copy (tma = [map, barrier]) is a load of a read-only tensor into a swizzled ring slot (a tile of "
                 "rank 2, or of rank 3 to 5 with leading extents 1), its barriers at a multiple of 8 bytes");
    }
    // A transpose of a tile in shared memory (a swizzled one) reads the same memory: the layout says so.
    if (op.kind == OpKind::Permute && (shared(op.operands[0]) || shared(op.results[0]))) {
      Layout want = L(op.operands[0]);
      want.trans = !want.trans;
      if (!shared(op.operands[0]) || !L(op.operands[0]).is_swizzled() || !(L(op.results[0]) == want))
        fail(op, cat("a transpose in shared memory takes a swizzled tile to the same layout transposed, not ",
                     layout_str(L(op.operands[0])), " to ", layout_str(L(op.results[0]))));
      return;
    }
    if (op.kind == OpKind::If || op.kind == OpKind::While)
      for (ValueId r : op.results)
        if (shared(r)) fail(op, cat("result %", r, " has a shared layout: a branch or a while loop may not carry one"));
    switch (op.kind) {
      case OpKind::Unary: case OpKind::Binary: case OpKind::Fma: case OpKind::Cmp: case OpKind::Select:
      case OpKind::Convert: case OpKind::Bitcast: case OpKind::Random: case OpKind::Reshape: case OpKind::Scan:
        for (ValueId v : op.operands) same(v, op.results[0], "operand");
        return;
      case OpKind::Broadcast: {
        const Layout want = broadcast_source(L(op.results[0]), k_.type(op.operands[0]).shape, k_.type(op.results[0]).shape);
        if (!(L(op.operands[0]) == want))
          fail(op, cat("operand has layout ", layout_str(L(op.operands[0])), ", the broadcast needs ", layout_str(want)));
        return;
      }
      case OpKind::Reduce: {
        const Layout want = slice(L(op.operands[0]), k_.type(op.operands[0]).shape, op.axis);
        if (!(L(op.results[0]) == want))
          fail(op, cat("result has layout ", layout_str(L(op.results[0])), ", expected the slice ", layout_str(want)));
        return;
      }
      case OpKind::ReduceWith: {
        const Layout want = slice(L(op.operands[0]), k_.type(op.operands[0]).shape, op.axis);
        for (std::size_t j = 0; j < op.results.size(); ++j) {
          same(op.operands[j], op.operands[0], "operand");
          if (!(L(op.results[j]) == want))
            fail(op, cat("result ", j, " has layout ", layout_str(L(op.results[j])), ", expected the slice ", layout_str(want)));
        }
        return;
      }
      case OpKind::ScanWith:  // the identities (exclusive) are one-element values: every layout holds them
        for (std::size_t j = 0; j < op.results.size(); ++j) same(op.operands[j], op.results[j], "operand");
        return;
      case OpKind::Permute: {
        const Layout want = permute(L(op.operands[0]), k_.type(op.operands[0]).shape, op.perm);
        if (!(L(op.results[0]) == want))
          fail(op, cat("result has layout ", layout_str(L(op.results[0])), ", expected ", layout_str(want)));
        return;
      }
      case OpKind::Mma: {
        if (k_.type(op.results[0]).rank != 2)
          fail(op, "a batched (rank-3) product in GPU-level IR: the batch-mma pass splits it before layout assignment");
        same(op.operands[2], op.results[0], "accumulator");
        // wgmma: both operands swizzled (A's rows of K, B's of N with 128-byte swizzle), or B
        // swizzled and A a 16-bit register tile in the fragment layout (register-A wgmma); the
        // accumulator in its warpgroup layout.
        const bool sa = L(op.operands[0]).is_swizzled(), sb = L(op.operands[1]).is_swizzled();
        if (sa || sb) {
          const Shape& a = k_.type(op.operands[0]).shape;
          const Shape& b = k_.type(op.operands[1]).shape;
          const Layout& lb = L(op.operands[1]);
          const bool ra = !sa && sb && !shared(op.operands[0]);
          // 8-bit operands (fp8): both in shared memory and K-major (B held transposed), k32 steps.
          const int es = static_cast<int>(dtype_size(k_.type(op.operands[0]).dtype));
          const bool fp8 = es == 1;
          if (ra && wgmma_shape(a[0], b[1], a[1], k_.target.warps) && !(L(op.operands[0]) == wgmma_a_fragment(a[0], a[1], k_.target.warps)))
            fail(op, cat("a register-A wgmma product's A has layout ", layout_str(L(op.operands[0])), ", expected ",
                         layout_str(wgmma_a_fragment(a[0], a[1], k_.target.warps))));
          if ((!sa && !ra) || !sb || !op.tensor_core || L(op.operands[0]).trans ||
              lb.swizzle != (lb.trans ? wgmma_swizzle(a[1], es) : 128) ||
              k_.type(op.operands[2]).dtype != DType::f32 || !wgmma_shape(a[0], b[1], a[1], k_.target.warps, es) ||
              dtype_size(k_.type(op.operands[1]).dtype) != es)
            fail(op, "a wgmma product needs B swizzled (with 128 bytes when N-major) and A swizzled or in registers, an f32 "
                     "accumulator and a wgmma shape");
          if (fp8 && (ra || !lb.trans))
            fail(op, "an 8-bit wgmma product needs both operands K-major in shared memory (A swizzled, B a transposed tile)");
          if (!(L(op.results[0]) == wgmma_accumulator(a[0], b[1], k_.target.warps)))
            fail(op, cat("a wgmma product's accumulator has layout ", layout_str(L(op.results[0])), ", expected ",
                         layout_str(wgmma_accumulator(a[0], b[1], k_.target.warps))));
        }
        return;
      }
      case OpKind::For: {
        const Region& body = op.regions[0];
        const Op& y = *body.ops.back();
        for (std::size_t j = 0; j < op.results.size(); ++j) {
          same(op.operands[3 + j], op.results[j], "carried init");
          same(body.args[1 + j], op.results[j], "region argument");
          same(y.operands[j], op.results[j], "yielded value");
        }
        return;
      }
      case OpKind::While: {
        const Op& y = *op.regions[1].ops.back();
        for (std::size_t j = 0; j < op.results.size(); ++j) {
          same(op.operands[j], op.results[j], "carried init");
          same(op.regions[0].args[j], op.results[j], "region argument");
          same(op.regions[1].args[j], op.results[j], "region argument");
          same(y.operands[j], op.results[j], "yielded value");
        }
        return;
      }
      case OpKind::If:
        for (const Region& reg : op.regions)
          for (std::size_t j = 0; j < op.results.size(); ++j) same(reg.ops.back()->operands[j], op.results[j], "yielded value");
        return;
      default:
        return;
    }
  }

  const Kernel& k_;
  std::vector<char> defined_;
  std::vector<char> visible_;
  std::vector<ValueId> scope_;
};

}  // namespace

void verify(const Kernel& k) { Verifier(k).run(); }

}  // namespace ctile::ir
