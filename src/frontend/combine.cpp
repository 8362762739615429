// Tracing of reductions and scans over a user combine function (frontend/combine.hpp): the
// function is traced once into the region of a ct.reduce_with / ct.scan_with, then checked to hold
// element-wise ops on scalars of its own only (docs/ir.md). Mistakes are UserErrors at the user's
// call, or at the line inside the function that made the offending op.
#include <set>
#include <string>

#include "ctile/frontend/combine.hpp"
#include "ctile/frontend/emit.hpp"
#include "ctile/ir/op_info.hpp"

namespace ctile::detail {
namespace {

// How the user would name an op that a combine function may not hold.
std::string forbidden_what(ir::OpKind k) {
  using K = ir::OpKind;
  switch (k) {
    case K::Load: case K::LoadPiece: case K::LoadWindow: case K::Gather: case K::StorePiece: case K::StoreWindow:
    case K::ScatterPiece: case K::ScatterUnchecked: case K::AtomicRMW: case K::AtomicCAS: case K::Dim:
    case K::MakePartition: case K::PartitionCount:
      return std::string("a memory access (") + ir::op_name(k) + ")";
    case K::Reduce: case K::Scan: case K::ReduceWith: case K::ScanWith:
      return std::string("a nested reduction or scan (") + ir::op_name(k) + ")";
    case K::For: case K::If: case K::While:
      return "control flow (ctile::range, ctile::if_, ctile::while_); select with ctile::where instead";
    case K::Mma: return "a matrix product (ct.mma)";
    case K::BlockId: case K::NumBlocks: return "a grid query (block_id, num_blocks)";
    case K::Random: return "a random number (ct.random)";
    default: return std::string("a tile-shaped op (") + ir::op_name(k) + ")";
  }
}

void check_region(const ir::Region& r, const std::vector<ValueId>& ys, const SourceLoc& loc) {
  const ir::Kernel& k = TraceContext::current(loc).kernel();
  std::set<ValueId> own(r.args.begin(), r.args.end());
  for (const auto& op : r.ops) {
    if (!ir::combinable(op->kind))
      user_error(forbidden_what(op->kind) + " is not allowed in a combine function: it may use element-wise operations "
                 "on its arguments only (arithmetic, comparisons, where, conversions)",
                 op->loc);
    for (ValueId v : op->operands)
      if (!own.count(v))
        user_error("a combine function may use its arguments and literals only, not a tile from outside it (a lambda "
                   "capture of " + ir::type_str(k.type(v)) + ")",
                   op->loc);
    for (ValueId v : op->results) {
      if (!k.type(v).is_scalar())
        user_error("a combine function computes on scalars (one element of each combined tile); this makes a tile of type " +
                       ir::type_str(k.type(v)),
                   op->loc);
      own.insert(v);
    }
  }
  for (std::size_t i = 0; i < ys.size(); ++i) {
    if (!own.count(ys[i]))
      user_error("the combine function returns a tile from outside it (result " + std::to_string(i) +
                     "); it must compute its results from its arguments",
                 loc);
    if (!k.type(ys[i]).is_scalar())
      user_error("the combine function must return scalars; result " + std::to_string(i) + " has type " +
                     ir::type_str(k.type(ys[i])),
                 loc);
  }
}

}  // namespace

std::vector<ValueId> trace_combine(const CombineSpec& s, const CombineFn& fn, const SourceLoc& loc) {
  TraceContext& ctx = TraceContext::current(loc);
  ctx.raise_deferred();
  const bool scan = s.kind == ir::OpKind::ScanWith;
  const std::string what = scan ? "ctile::scan" : "ctile::reduce";
  const std::size_t nk = s.inputs.size();
  CTILE_CHECK(nk >= 1, "trace_combine without tiles");
  Shape shape;
  for (std::size_t i = 0; i < nk; ++i) {
    const ir::Type t = type_of(s.inputs[i]);
    if (!t.is_tile()) user_error(what + " expects tiles, got " + ir::type_str(t), loc);
    if (i == 0) shape = t.shape;
    else if (t.shape != shape)
      user_error(what + ": the tiles combined together must have one shape; tile " + std::to_string(i) + " is " +
                     ir::type_str(t) + ", tile 0 " + ir::type_str(type_of(s.inputs[0])) + " (broadcast it first)",
                 loc);
  }
  const int rank = static_cast<int>(shape.size());
  if (rank == 0) user_error(what + ": a scalar has no axis to combine along", loc);
  const int axis = s.axis < 0 ? s.axis + rank : s.axis;
  if (axis < 0 || axis >= rank)
    user_error(what + ": axis " + std::to_string(s.axis) + " is out of range for rank " + std::to_string(rank), loc);
  std::vector<ValueId> operands = s.inputs;
  if (scan && s.exclusive && !s.has_identity)
    user_error("ctile::scan with ctile::exclusive over a combine function needs the function's identity (the first "
               "output): ctile::scan(x, axis, fn, ctile::exclusive, identity)",
               loc);
  if (s.has_identity && !s.exclusive)
    user_error("ctile::scan: an identity is the first output of an exclusive scan; this scan is inclusive (pass "
               "ctile::exclusive, or drop the identity)",
               loc);
  if (scan && s.exclusive) {
    CTILE_CHECK(s.identity.size() == nk, "trace_combine: ", s.identity.size(), " identities for ", nk, " tiles");
    for (std::size_t i = 0; i < nk; ++i) {
      const ir::Type t = type_of(s.identity[i]);
      if (!t.is_scalar())
        user_error("ctile::scan: the identity " + std::to_string(i) + " must be a scalar, got " + ir::type_str(t), loc);
      operands.push_back(s.identity[i]);
    }
  }

  ir::Builder& b = ctx.b();
  ir::Op& op = b.build(s.kind, operands, loc, {}, [&](ir::Op& o) {
    o.axis = axis;
    o.exclusive = scan && s.exclusive;
    o.reverse = scan && s.reverse;
  });
  op.regions.emplace_back();
  ir::Region& region = op.regions[0];
  std::vector<ValueId> lhs, rhs;
  for (std::size_t i = 0; i < nk; ++i) lhs.push_back(b.new_value(ir::Type::scalar(type_of(s.inputs[i]).dtype)));
  for (std::size_t i = 0; i < nk; ++i) rhs.push_back(b.new_value(ir::Type::scalar(type_of(s.inputs[i]).dtype)));
  region.args = lhs;
  region.args.insert(region.args.end(), rhs.begin(), rhs.end());

  // The variables alive before the function: it must not assign them (its only effect is its result).
  std::vector<std::pair<TileBase*, ValueId>> outer;
  for (const auto& [serial, var] : ctx.live()) outer.push_back({var, var->value()});
  const std::uint64_t first_inner = ctx.next_serial();
  b.push(region);
  const std::size_t depth = b.depth();
  const std::vector<ValueId> ys = fn(lhs, rhs);
  ctx.raise_deferred();
  CTILE_CHECK(b.depth() == depth, "unbalanced regions in a combine function");
  if (ctx.live().lower_bound(first_inner) != ctx.live().end())
    user_error("a tile created inside a combine function is still alive after it (e.g. stored in a container declared "
               "outside)",
               loc);
  for (const auto& [var, v] : outer)
    if (var->value() != v)
      user_error("the combine function assigns a tile variable from outside it; it must only return its result", loc);
  CTILE_CHECK(ys.size() == nk, "combine function yields ", ys.size(), " values for ", nk, " tiles");
  check_region(region, ys, loc);
  b.create(ir::OpKind::Yield, ys, {}, loc);
  b.pop();

  std::vector<ValueId> results = op.results;
  if (!scan && s.keepdims) {
    Shape kept = shape;
    kept[static_cast<std::size_t>(axis)] = 1;
    for (ValueId& r : results) r = emit_reshape(r, kept, loc);
  }
  return results;
}

}  // namespace ctile::detail
