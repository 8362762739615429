// Names of IR entities, type spelling and constant handling.
#include <charconv>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include "../core/numeric.hpp"  // float_from_double: one rounding of a constant to an fp8 type
#include "ctile/ir/ir.hpp"
#include "ctile/ir/op_info.hpp"

namespace ctile::ir {

const char* unary_name(UnaryFn f) {
  constexpr const char* n[] = {"neg", "exp", "exp2", "log", "log2", "sqrt", "rsqrt",
                               "tanh", "sin", "cos", "abs", "floor", "ceil", "not",
                               "erf", "erfc", "sigmoid", "log1p", "expm1", "popcount", "clz"};
  static_assert(sizeof(n) / sizeof(n[0]) == kUnaryFns);
  return n[static_cast<int>(f)];
}
const char* binary_name(BinaryFn f) {
  constexpr const char* n[] = {"add", "sub", "mul", "div", "rem", "min", "max",
                               "pow", "and", "or", "xor", "shl", "shr", "atan2"};
  static_assert(sizeof(n) / sizeof(n[0]) == kBinaryFns);
  return n[static_cast<int>(f)];
}
const char* cmp_name(CmpPred p) {
  constexpr const char* n[] = {"eq", "ne", "lt", "le", "gt", "ge"};
  return n[static_cast<int>(p)];
}
const char* reduce_name(ReduceKind k) {
  constexpr const char* n[] = {"sum", "max", "min", "prod", "argmax", "argmin"};
  return n[static_cast<int>(k)];
}
const char* atomic_name(AtomicKind k) {
  constexpr const char* n[] = {"add", "max", "min", "exch"};
  return n[static_cast<int>(k)];
}
const char* random_name(RandomDist d) {
  constexpr const char* n[] = {"bits", "uniform", "normal"};
  return n[static_cast<int>(d)];
}
const char* rounding_name(Rounding r) {
  constexpr const char* n[] = {"default", "rn", "full", "approx"};
  return n[static_cast<int>(r)];
}

static const char* access_name(Access a) {
  switch (a) {
    case Access::Read: return "read";
    case Access::Piece: return "piece";
    case Access::Atomic: return "atomic";
    case Access::Unchecked: return "unchecked";
  }
  return "?";
}

// A field added to ir::Op must be copied here (and printed and parsed where it is an attribute).
// The size check runs where CI builds (libstdc++ on a 64-bit target); other standard libraries
// lay out Op's strings and vectors differently.
#if defined(__GLIBCXX__) && defined(__x86_64__)
static_assert(sizeof(Op) == 304, "ir::Op changed: copy the new field in copy_attributes");
#endif

void copy_attributes(const Op& from, Op& to) {
  to.axis = from.axis;
  to.shape = from.shape;
  to.offsets = from.offsets;
  to.perm = from.perm;
  to.value = from.value;
  to.unary = from.unary;
  to.binary = from.binary;
  to.cmp = from.cmp;
  to.reduce = from.reduce;
  to.exclusive = from.exclusive;
  to.reverse = from.reverse;
  to.atomic = from.atomic;
  to.random = from.random;
  to.rounding = from.rounding;
  to.ftz = from.ftz;
  to.propagate_nan = from.propagate_nan;
  to.smem_offset = from.smem_offset;
  to.smem_bytes = from.smem_bytes;
  to.in_bounds = from.in_bounds;
  to.sync_after = from.sync_after;
  to.grid_indices = from.grid_indices;
  to.tensor_core = from.tensor_core;
  to.ring_slots = from.ring_slots;
  to.ring_slot = from.ring_slot;
  to.ring_ahead = from.ring_ahead;
  to.tma_map = from.tma_map;
  to.tma_bar = from.tma_bar;
  to.async_wait = from.async_wait;
  to.in_flight = from.in_flight;
  to.prefetch_next = from.prefetch_next;
  to.acc_split = from.acc_split;
  to.remat = from.remat;
  to.fused = from.fused;
}

namespace {
void clone_region(const Region& from, Region& to) {
  to.args = from.args;
  to.ops.clear();
  for (const auto& op : from.ops) {
    auto c = std::make_unique<Op>();
    c->kind = op->kind;
    c->operands = op->operands;
    c->results = op->results;
    c->loc = op->loc;
    copy_attributes(*op, *c);
    c->regions.resize(op->regions.size());
    for (std::size_t i = 0; i < op->regions.size(); ++i) clone_region(op->regions[i], c->regions[i]);
    to.ops.push_back(std::move(c));
  }
}
}  // namespace

int tensor_param_of(const Kernel& k, ValueId v) {
  // A partition's tensor: the operand of the make_partition that made it.
  ValueId t = v;
  walk(k.body, [&](const Op& op) {
    if (op.kind == OpKind::MakePartition && op.results[0] == v) t = op.operands[0];
  });
  v = t;
  for (std::size_t i = 0; i < k.params.size(); ++i)
    if (k.params[i].value == v) return static_cast<int>(i);
  return -1;
}

SharedMemoryUse shared_memory_use(const Kernel& k) {
  SharedMemoryUse u;
  std::vector<std::pair<std::int64_t, std::int64_t>> rings, scratch;
  walk(k.body, [&](const Op& op) {
    if (op.smem_offset < 0 || op.smem_bytes <= 0) return;
    const std::pair<std::int64_t, std::int64_t> r{op.smem_offset, op.smem_offset + op.smem_bytes};
    if (is_tile_copy(op)) {
      rings.push_back(r);
      u.ring_lo = u.ring_lo < 0 ? r.first : std::min(u.ring_lo, r.first);
    } else {
      scratch.push_back(r);
      u.scratch_end = std::max(u.scratch_end, r.second);
    }
  });
  for (const auto& a : rings)
    for (const auto& b : scratch) u.rings_over_scratch = u.rings_over_scratch || (a.first < b.second && b.first < a.second);
  return u;
}

TensorMapUse tensor_map_use(const Kernel& k, const Op& load) {
  TensorMapUse u;
  u.param = tensor_param_of(k, load.operands[0]);
  const Type& t = k.type(load.results[0]);
  const Layout& l = k.layout(load.results[0]);
  const std::size_t r = t.shape.size();
  bool lead_ones = r >= 2 && r <= 5;
  for (std::size_t d = 0; d + 2 < r; ++d) lead_ones = lead_ones && t.shape[d] == 1;
  CTILE_CHECK(u.param >= 0 && lead_ones && l.is_swizzled() &&
                  k.params[static_cast<std::size_t>(u.param)].type.rank == static_cast<int>(r),
              "ir: a TMA copy at ", load.loc.str(), " does not load a parameter's tensor into a swizzled tile");
  u.dtype = t.dtype;
  u.rank = static_cast<int>(r);
  u.box_rows = t.shape[r - 2];
  u.box_cols = l.swizzle / dtype_size(t.dtype);
  u.swizzle = l.swizzle;
  return u;
}

std::vector<TensorMapUse> tensor_maps(const Kernel& k) {
  std::vector<TensorMapUse> maps;
  std::vector<bool> seen;
  walk(k.body, [&](const Op& op) {
    if (op.tma_map < 0) return;
    const TensorMapUse u = tensor_map_use(k, op);
    const auto m = static_cast<std::size_t>(op.tma_map);
    if (maps.size() <= m) {
      maps.resize(m + 1);
      seen.resize(m + 1, false);
    }
    CTILE_CHECK(!seen[m] || maps[m] == u, "ir: the TMA copies of tensor map ", m, " disagree on the box");
    maps[m] = u;
    seen[m] = true;
  });
  for (std::size_t m = 0; m < seen.size(); ++m) CTILE_CHECK(seen[m], "ir: tensor map ", m, " has no copy");
  return maps;
}

bool producer_ops(const Kernel& k, std::vector<const Op*>* ops) {
  std::map<ValueId, const Op*> def;          // value -> the op that makes it
  std::map<ValueId, const Op*> arg_of;       // region argument -> the op owning the region
  std::map<const Op*, const Op*> parent;     // op -> the op whose region holds it (nullptr: the body)
  std::vector<const Op*> copies;
  std::function<void(const Region&, const Op*)> index = [&](const Region& r, const Op* owner) {
    for (const auto& op : r.ops) {
      parent[op.get()] = owner;
      for (ValueId v : op->results) def[v] = op.get();
      if (op->tma_map >= 0) copies.push_back(op.get());
      for (const Region& sub : op->regions) {
        for (ValueId a : sub.args) arg_of[a] = op.get();
        index(sub, op.get());
      }
    }
  };
  index(k.body, nullptr);
  if (copies.empty()) return false;
  std::set<const Op*> in;
  std::vector<const Op*> work;
  auto add = [&](const Op* op) {
    if (in.insert(op).second) work.push_back(op);
  };
  for (const Op* c : copies) {
    add(c);
    for (const Op* p = parent[c]; p; p = parent[p]) {
      if (p->kind != OpKind::For) return false;
      add(p);
    }
  }
  // A value the producer needs: a parameter, the induction variable of a loop it runs, or the
  // result of a pure op without tiles of more than one element.
  auto need = [&](ValueId v) {
    if (auto a = arg_of.find(v); a != arg_of.end())
      return a->second->kind == OpKind::For && a->second->regions[0].args[0] == v && in.count(a->second) > 0;
    auto d = def.find(v);
    if (d == def.end()) return true;  // a kernel parameter
    const Op& op = *d->second;
    if (op.kind != OpKind::MakePartition && !is_pure(op)) return false;
    if (!op.regions.empty()) return false;
    for (ValueId r : op.results)
      if (k.type(r).is_tile() && numel(k.type(r).shape) != 1) return false;
    add(&op);
    return true;
  };
  while (!work.empty()) {
    const Op* op = work.back();
    work.pop_back();
    const std::size_t n = op->kind == OpKind::For ? 3 : op->operands.size();
    for (std::size_t i = 0; i < n; ++i)
      if (!need(op->operands[i])) return false;
  }
  if (ops) {
    ops->clear();
    walk(k.body, [&](const Op& op) {
      if (in.count(&op)) ops->push_back(&op);
    });
  }
  return true;
}

bool uniform_tile_blocks(const Kernel& k) {
  std::map<ValueId, const Op*> def;     // value -> the op that makes it
  std::map<ValueId, const Op*> arg_of;  // region argument -> the op owning the region
  bool uniform = true;
  walk(k.body, [&](const Op& op) {
    for (ValueId v : op.results) def[v] = &op;
    for (const Region& r : op.regions)
      for (ValueId a : r.args) arg_of[a] = &op;
    if (op.kind == OpKind::While) uniform = false;
  });
  if (!uniform) return false;
  std::map<ValueId, bool> memo;
  std::function<bool(ValueId)> same = [&](ValueId v) -> bool {
    if (auto m = memo.find(v); m != memo.end()) return m->second;
    bool r = false;
    if (auto a = arg_of.find(v); a != arg_of.end()) {
      // A loop's induction variable is the same in every tile block when its bounds are; a
      // carried value need not be.
      const Op& loop = *a->second;
      r = loop.kind == OpKind::For && loop.regions[0].args[0] == v && same(loop.operands[0]) && same(loop.operands[1]) &&
          same(loop.operands[2]);
    } else if (auto d = def.find(v); d == def.end()) {
      r = true;  // a kernel parameter
    } else {
      const Op& op = *d->second;
      r = op.kind != OpKind::BlockId && op.regions.empty() && (is_pure(op) || op.kind == OpKind::MakePartition);
      for (ValueId t : op.results) r = r && !(k.type(t).is_tile() && numel(k.type(t).shape) != 1);
      for (std::size_t i = 0; r && i < op.operands.size(); ++i) r = same(op.operands[i]);
    }
    memo[v] = r;
    return r;
  };
  walk(k.body, [&](const Op& op) {
    if (op.kind == OpKind::For)
      for (std::size_t i = 0; i < 3; ++i) uniform = uniform && same(op.operands[i]);
    if (op.kind == OpKind::If) uniform = uniform && same(op.operands[0]);
  });
  return uniform;
}

Kernel clone(const Kernel& k) {
  Kernel c;
  c.name = k.name;
  c.grid_rank = k.grid_rank;
  c.params = k.params;
  c.values = k.values;
  c.layouts = k.layouts;
  c.target = k.target;
  c.notes = k.notes;
  c.options = k.options;
  clone_region(k.body, c.body);
  return c;
}

std::string type_str(const Type& t) {
  const std::string d(dtype_name(t.dtype));
  switch (t.kind) {
    case TypeKind::Tile: return t.shape.empty() ? d : "tile<" + d + ", " + shape_str(t.shape) + ">";
    case TypeKind::Tensor:
      return "tensor<" + d + ", rank " + std::to_string(t.rank) + ", " + access_name(t.access) + ">";
    case TypeKind::Partition:
      return "partition<" + d + ", rank " + std::to_string(t.rank) + ", tile " + shape_str(t.shape) + ">";
    case TypeKind::Piece: return "piece<" + d + ", " + shape_str(t.shape) + ">";
  }
  return "?";
}

std::string facts_str(const TensorFacts& f) {
  if (!f.any()) return {};
  std::string r;
  auto item = [&](const std::string& s) { r += (r.empty() ? "{" : ", ") + s; };
  auto axes = [](std::uint32_t bits) {
    std::string a = "[";
    for (int d = 0; d < 32; ++d)
      if (bits & (std::uint32_t{1} << d)) a += (a.size() > 1 ? "," : "") + std::to_string(d);
    return a + "]";
  };
  if (f.aligned16) item("align16");
  if (f.contiguous_last) item("contig");
  if (f.extent_div16) item("div16=" + axes(f.extent_div16));
  if (const std::uint32_t d8 = f.extent_div8 & ~f.extent_div16) item("div8=" + axes(d8));
  if (f.stride_div16) item("stride16=" + axes(f.stride_div16));
  if (const std::uint32_t s8 = f.stride_div8 & ~f.stride_div16) item("stride8=" + axes(s8));
  if (f.small) item("small");
  return r + "}";
}

static std::int64_t wrap_int(std::int64_t v, DType d) {
  switch (d) {
    case DType::i8: return static_cast<std::int8_t>(v);
    case DType::i16: return static_cast<std::int16_t>(v);
    case DType::i32: return static_cast<std::int32_t>(v);
    case DType::u8: return static_cast<std::uint8_t>(v);
    case DType::u16: return static_cast<std::uint16_t>(v);
    case DType::u32: return static_cast<std::uint32_t>(v);
    default: return v;  // i64, u64 (bit pattern)
  }
}

static std::int64_t saturate_to_int(double v, DType d) {
  if (std::isnan(v)) return 0;
  const double t = std::trunc(v);
  auto clampd = [&](double lo, double hi) -> double { return t < lo ? lo : (t > hi ? hi : t); };
  switch (d) {
    case DType::i8: return static_cast<std::int64_t>(clampd(-128, 127));
    case DType::i16: return static_cast<std::int64_t>(clampd(-32768, 32767));
    case DType::i32: return static_cast<std::int64_t>(clampd(-2147483648.0, 2147483647.0));
    case DType::u8: return static_cast<std::int64_t>(clampd(0, 255));
    case DType::u16: return static_cast<std::int64_t>(clampd(0, 65535));
    case DType::u32: return static_cast<std::int64_t>(clampd(0, 4294967295.0));
    case DType::i64:
      if (t >= 9223372036854775808.0) return std::numeric_limits<std::int64_t>::max();
      if (t < -9223372036854775808.0) return std::numeric_limits<std::int64_t>::min();
      return static_cast<std::int64_t>(t);
    case DType::u64:
      if (t <= 0) return 0;
      if (t >= 18446744073709551616.0) return -1;  // all ones
      return static_cast<std::int64_t>(static_cast<std::uint64_t>(t));
    default: return static_cast<std::int64_t>(t);
  }
}

Scalar scalar_cast(Scalar v, DType d) {
  if (is_float(d)) {
    double x = v.is_float ? v.f : static_cast<double>(v.i);
    switch (d) {
      case DType::f32: x = static_cast<float>(x); break;
      case DType::f16: x = static_cast<float>(f16(static_cast<float>(x))); break;
      case DType::bf16: x = static_cast<float>(bf16(static_cast<float>(x))); break;
      // One rounding from the double (round to nearest even, saturating: dtype.hpp).
      case DType::f8e4m3: x = numeric::to_double(numeric::float_from_double<f8e4m3>(x)); break;
      case DType::f8e5m2: x = numeric::to_double(numeric::float_from_double<f8e5m2>(x)); break;
      default: break;
    }
    return Scalar::of_float(x);
  }
  if (is_bool(d)) return Scalar::of_int(v.is_float ? (v.f != 0.0) : (v.i != 0));
  if (v.is_float) return Scalar::of_int(saturate_to_int(v.f, d));
  return Scalar::of_int(wrap_int(v.i, d));
}

std::string scalar_str(const Scalar& v, DType d) {
  if (is_bool(d)) return v.i ? "true" : "false";
  if (is_float(d)) {
    if (std::isnan(v.f)) return "nan";
    if (std::isinf(v.f)) return v.f > 0 ? "inf" : "-inf";
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, v.f);
    return std::string(buf, r.ptr);
  }
  if (d == DType::u64) return std::to_string(static_cast<std::uint64_t>(v.i));
  return std::to_string(v.i);
}

}  // namespace ctile::ir
