// The block interpreter: walks a kernel's regions op by op over a per-block environment indexed by
// ValueId. Each op works on whole tiles (see ops_*.cpp).
#include "interp.hpp"

#include "numeric.hpp"

namespace ctile::backend::cpu {

using ir::OpKind;
using ir::ValueId;

BlockInterp::BlockInterp(const Launch& l) : L_(l), k_(*l.kernel), env_(l.kernel->values.size()) {
  // Scalar parameters are the same for every block: set them up once.
  for (std::size_t i = 0; i < k_.params.size(); ++i) {
    const ir::Param& p = k_.params[i];
    Slot& s = slot(p.value);
    if (p.type.kind == ir::TypeKind::Tile) {
      prepare(s.tile, k_.type(p.value));
      op_constant(L_.args[i].scalar, s.tile);
      s.param = -1;
    } else {
      s.param = static_cast<int>(i);
    }
  }
}

void BlockInterp::run(std::int64_t linear_block) {
  blk_.linear = linear_block;
  std::int64_t rem = linear_block;
  for (int d = L_.grid_rank - 1; d >= 0; --d) {
    const auto ud = static_cast<std::size_t>(d);
    blk_.c[ud] = rem % L_.grid[ud];
    rem /= L_.grid[ud];
  }
  exec(k_.body);
}

const TensorView& BlockInterp::view(ValueId v) const {
  const int p = env_[static_cast<std::size_t>(v)].param;
  CTILE_CHECK(p >= 0, "value %", v, " is not a tensor");
  return L_.views[static_cast<std::size_t>(p)];
}

const ir::Op& BlockInterp::exec(const ir::Region& r) {
  for (const auto& op : r.ops) {
    if (op->kind == OpKind::Yield) return *op;
    exec_op(*op);
  }
  throw InternalError("region without ct.yield");
}

void BlockInterp::exec_op(const ir::Op& op) {
  const auto& ops = op.operands;
  auto out = [&]() -> Tile& {
    Slot& s = slot(op.results[0]);
    s.param = -1;
    prepare(s.tile, k_.type(op.results[0]));
    return s.tile;
  };
  auto in = [&](std::size_t i) -> const Tile& { return slot(ops[i]).tile; };
  auto scalar_out = [&](std::int64_t v) { out().as<std::int64_t>()[0] = v; };
  auto tiles = [&](std::size_t first, std::size_t count) {
    std::vector<const Tile*> t(count);
    for (std::size_t i = 0; i < count; ++i) t[i] = &in(first + i);
    return t;
  };
  // Tile index of this block's piece: the block coordinates (axes past the grid: 0).
  std::array<std::int64_t, kMaxRank> piece_idx{};
  auto piece_index = [&]() {
    for (int d = 0; d < L_.grid_rank && d < kMaxRank; ++d) piece_idx[static_cast<std::size_t>(d)] = blk_.c[static_cast<std::size_t>(d)];
    return piece_idx.data();
  };

  switch (op.kind) {
    case OpKind::BlockId: return scalar_out(blk_.c[static_cast<std::size_t>(op.axis)]);
    case OpKind::NumBlocks: return scalar_out(L_.grid[static_cast<std::size_t>(op.axis)]);
    case OpKind::Dim: return scalar_out(view(ops[0]).ext[static_cast<std::size_t>(op.axis)]);
    case OpKind::MakePartition: {
      Slot& s = slot(op.results[0]);
      s.param = slot(ops[0]).param;
      return;
    }
    case OpKind::PartitionCount: {
      const std::int64_t e = view(ops[0]).ext[static_cast<std::size_t>(op.axis)];
      const std::int64_t t = k_.type(ops[0]).shape[static_cast<std::size_t>(op.axis)];
      return scalar_out(e / t + (e % t != 0 ? 1 : 0));
    }
    case OpKind::Load: {
      std::array<std::int64_t, kMaxRank> idx{};
      for (std::size_t i = 1; i < ops.size(); ++i) idx[i - 1] = i64(ops[i]);
      return op_load(view(ops[0]), idx.data(), op.value, out());
    }
    case OpKind::LoadPiece: return op_load(view(ops[0]), piece_index(), op.value, out());
    case OpKind::LoadWindow: {
      std::array<std::int64_t, kMaxRank> org{};
      for (std::size_t i = 1; i < ops.size(); ++i) org[i - 1] = i64(ops[i]);
      return op_load_window(view(ops[0]), org.data(), op.value, out());
    }
    case OpKind::StorePiece: return op_store_piece(view(ops[0]), piece_index(), in(1));
    case OpKind::StoreWindow: {
      std::array<std::int64_t, kMaxRank> off{};
      for (std::size_t i = 1; i + 1 < ops.size(); ++i) off[i - 1] = i64(ops[i]);
      if (k_.type(ops[0]).kind == ir::TypeKind::Tensor)
        return op_store_window_unchecked(view(ops[0]), off.data(), in(ops.size() - 1), L_.race, blk_.linear);
      return op_store_window(view(ops[0]), k_.type(ops[0]).shape, piece_index(), off.data(), in(ops.size() - 1));
    }
    case OpKind::Gather: return op_gather(view(ops[0]), tiles(1, ops.size() - 1), op.value, out());
    case OpKind::ScatterPiece:
      return op_scatter_piece(view(ops[0]), k_.type(ops[0]).shape, piece_index(), tiles(1, ops.size() - 2),
                              in(ops.size() - 1));
    case OpKind::ScatterUnchecked:
      return op_scatter_unchecked(view(ops[0]), tiles(1, ops.size() - 2), in(ops.size() - 1), L_.race, blk_.linear);
    case OpKind::AtomicRMW:
      return op_atomic_rmw(op.atomic, view(ops[0]), tiles(1, ops.size() - 2), in(ops.size() - 1), out());
    case OpKind::AtomicCAS:
      return op_atomic_cas(view(ops[0]), tiles(1, ops.size() - 3), in(ops.size() - 2), in(ops.size() - 1), out());
    case OpKind::Constant: return op_constant(op.value, out());
    case OpKind::Iota: return op_iota(out(), op.value.i);
    case OpKind::Broadcast: return op_broadcast(in(0), out());
    case OpKind::Reshape: return op_reshape(in(0), out());
    case OpKind::ConvertLayout: return op_reshape(in(0), out());  // layouts do not exist on the CPU: a copy
    case OpKind::Permute: return op_permute(op.perm, in(0), out());
    case OpKind::Cat: return op_cat(op.axis, in(0), in(1), out());
    case OpKind::Extract: return op_extract(op.offsets, in(0), out());
    case OpKind::Unary: return op_unary(op.unary, in(0), out());
    case OpKind::Binary: return op_binary(op.binary, in(0), in(1), out(), op.propagate_nan);
    case OpKind::Fma: return op_fma(in(0), in(1), in(2), out());
    case OpKind::Cmp: return op_cmp(op.cmp, in(0), in(1), out());
    case OpKind::Select: return op_select(in(0), in(1), in(2), out());
    case OpKind::Convert: return op_convert(in(0), out());
    case OpKind::Bitcast: return op_bitcast(in(0), out());
    case OpKind::Random: return op_random(op.random, in(0), in(1), out());
    case OpKind::Reduce: return op_reduce(op.reduce, op.axis, in(0), out(), op.propagate_nan);
    case OpKind::Scan: return op_scan(op.reduce, op.axis, op.exclusive, op.reverse, in(0), out());
    case OpKind::ReduceWith:
    case OpKind::ScanWith: return exec_combine(op);
    case OpKind::Mma: return op_mma(in(0), in(1), in(2), out());
    case OpKind::For: return exec_for(op);
    case OpKind::If: {
      const bool c = in(0).as<bool>()[0];
      const ir::Op& y = exec(op.regions[c ? 0 : 1]);
      for (std::size_t i = 0; i < op.results.size(); ++i) slot(op.results[i]).assign(slot(y.operands[i]));
      return;
    }
    case OpKind::While: return exec_while(op);
    case OpKind::Yield: break;
  }
  throw InternalError(detail::cat("cpu backend: unexpected ", ir::op_name(op.kind)));
}

void BlockInterp::copy_in(const std::vector<ValueId>& dst, std::size_t first, std::vector<Slot>& src) {
  for (std::size_t i = 0; i < src.size(); ++i) slot(dst[first + i]).swap(src[i]);
}

void BlockInterp::exec_for(const ir::Op& op) {
  const std::int64_t lb = i64(op.operands[0]), ub = i64(op.operands[1]), step = i64(op.operands[2]);
  if (step <= 0) throw UserError("ct.for step must be positive", op.loc);
  const ir::Region& body = op.regions[0];
  const std::size_t nc = op.operands.size() - 3;
  std::vector<Slot> cur(nc);
  for (std::size_t i = 0; i < nc; ++i) cur[i].assign(slot(op.operands[3 + i]));
  const ValueId iv_id = body.args[0];
  for (std::int64_t iv = lb; iv < ub;) {
    Slot& ivs = slot(iv_id);
    ivs.param = -1;
    prepare(ivs.tile, k_.type(iv_id));
    ivs.tile.as<std::int64_t>()[0] = iv;
    copy_in(body.args, 1, cur);
    const ir::Op& y = exec(body);
    for (std::size_t i = 0; i < nc; ++i) cur[i].assign(slot(y.operands[i]));
    if (__builtin_add_overflow(iv, step, &iv)) break;
  }
  for (std::size_t i = 0; i < nc; ++i) slot(op.results[i]).swap(cur[i]);
}

void BlockInterp::exec_while(const ir::Op& op) {
  const ir::Region& cond = op.regions[0];
  const ir::Region& body = op.regions[1];
  const std::size_t nc = op.operands.size();
  std::vector<Slot> cur(nc);
  for (std::size_t i = 0; i < nc; ++i) cur[i].assign(slot(op.operands[i]));
  for (;;) {
    for (std::size_t i = 0; i < nc; ++i) slot(cond.args[i]).assign(cur[i]);
    const ir::Op& yc = exec(cond);
    if (!slot(yc.operands[0]).tile.as<bool>()[0]) break;
    copy_in(body.args, 0, cur);
    const ir::Op& yb = exec(body);
    for (std::size_t i = 0; i < nc; ++i) cur[i].assign(slot(yb.operands[i]));
  }
  for (std::size_t i = 0; i < nc; ++i) slot(op.results[i]).swap(cur[i]);
}

// The reference order of a combine function: each line along the axis is walked from its first
// element to its last (a reverse scan from the last to the first), the running value being the
// left operand and the next element the right one: r = f(f(f(x0, x1), x2), ...).
void BlockInterp::exec_combine(const ir::Op& op) {
  const bool scan = op.kind == OpKind::ScanWith;
  const std::size_t nk = op.results.size();
  const ir::Region& fn = op.regions[0];
  const Shape& sh = k_.type(op.operands[0]).shape;
  std::int64_t outer = 1, len = 1, inner = 1;
  for (int d = 0; d < static_cast<int>(sh.size()); ++d) {
    const std::int64_t e = sh[static_cast<std::size_t>(d)];
    if (d < op.axis) outer *= e;
    else if (d == op.axis) len = e;
    else inner *= e;
  }
  std::vector<const std::byte*> x(nk), id(nk, nullptr);
  std::vector<std::byte*> out(nk);
  std::vector<std::size_t> es(nk);
  for (std::size_t i = 0; i < nk; ++i) {
    x[i] = slot(op.operands[i]).tile.bytes();
    if (op.exclusive) id[i] = slot(op.operands[nk + i]).tile.bytes();
    Slot& r = slot(op.results[i]);
    r.param = -1;
    prepare(r.tile, k_.type(op.results[i]));
    out[i] = r.tile.bytes();
    es[i] = static_cast<std::size_t>(dtype_size(k_.type(op.results[i]).dtype));
  }
  for (ValueId a : fn.args) {
    Slot& s = slot(a);
    s.param = -1;
    prepare(s.tile, k_.type(a));
  }
  std::vector<std::array<std::byte, 8>> acc(nk);
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t in = 0; in < inner; ++in)
      for (std::int64_t step = 0; step < len; ++step) {
        const std::int64_t kk = op.reverse ? len - 1 - step : step;
        const auto e = static_cast<std::size_t>((o * len + kk) * inner + in);
        if (scan && op.exclusive)
          for (std::size_t i = 0; i < nk; ++i) std::memcpy(out[i] + e * es[i], step == 0 ? id[i] : acc[i].data(), es[i]);
        if (step == 0) {
          for (std::size_t i = 0; i < nk; ++i) std::memcpy(acc[i].data(), x[i] + e * es[i], es[i]);
        } else {
          for (std::size_t i = 0; i < nk; ++i) {
            std::memcpy(slot(fn.args[i]).tile.bytes(), acc[i].data(), es[i]);
            std::memcpy(slot(fn.args[nk + i]).tile.bytes(), x[i] + e * es[i], es[i]);
          }
          const ir::Op& y = exec(fn);
          for (std::size_t i = 0; i < nk; ++i) std::memcpy(acc[i].data(), slot(y.operands[i]).tile.bytes(), es[i]);
        }
        if (scan && !op.exclusive)
          for (std::size_t i = 0; i < nk; ++i) std::memcpy(out[i] + e * es[i], acc[i].data(), es[i]);
        if (!scan && step == len - 1)
          for (std::size_t i = 0; i < nk; ++i) std::memcpy(out[i] + static_cast<std::size_t>(o * inner + in) * es[i], acc[i].data(), es[i]);
      }
}

}  // namespace ctile::backend::cpu
