// IR -> CUDA C++ over the device tile library (include/ctile/device). generate() runs the CUDA
// pipeline (passes/pass.hpp: the tile-level passes, layout assignment, bounds, scheduling, shared
// memory) and prints the GPU-level IR it produces: every decision (threads, layouts, conversions,
// scratch, order) is in the IR; this file only spells each op in C++. docs/compiler.md and
// docs/cuda_backend.md describe the generated code.
#include "codegen.hpp"

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "../../core/numeric.hpp"  // scalar_to, dispatch: constants and scalars cast exactly like the reference
#include "ctile/core/error.hpp"
#include "ctile/ir/op_info.hpp"
#include "ctile/passes/pass.hpp"

namespace ctile::backend::cuda {
namespace {

using ir::Layout;
using ir::OpKind;
using ir::Type;
using ir::ValueId;

constexpr int kMaxRegs = 512;  // elements per thread of one tile value
constexpr std::size_t kMaxParamBytes = 4096;
constexpr std::size_t kTensorDescBytes = 104;
constexpr std::size_t kGridBytes = 48;

// Dynamic shared memory a CTA may use on the target (opt-in above 48 KB).
std::size_t smem_limit(int sm) {
  if (sm >= 90) return 227 * 1024;
  if (sm == 80 || sm == 87) return 163 * 1024;
  if (sm >= 86) return 99 * 1024;
  if (sm >= 70) return 96 * 1024;
  return 48 * 1024;
}

std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char* f, ...) {
  char buf[256];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

const char* ctype(DType d) {
  switch (d) {
    case DType::b1: return "bool";
    case DType::i8: return "ct::i8";
    case DType::i16: return "ct::i16";
    case DType::i32: return "int";
    case DType::i64: return "long long";
    case DType::u8: return "ct::u8";
    case DType::u16: return "ct::u16";
    case DType::u32: return "unsigned";
    case DType::u64: return "unsigned long long";
    case DType::f16: return "ct::f16";
    case DType::bf16: return "ct::bf16";
    case DType::f32: return "float";
    case DType::f64: return "double";
    case DType::f8e4m3: return "ct::f8e4m3";
    case DType::f8e5m2: return "ct::f8e5m2";
  }
  throw InternalError("cuda codegen: bad dtype");
}

int log2i(std::int64_t v) {
  int l = 0;
  while ((std::int64_t{1} << l) < v) ++l;
  return l;
}

std::int64_t align16(std::int64_t b) { return (b + 15) / 16 * 16; }

// A C++ literal of dtype `d` holding `v` cast to d exactly as the reference does.
std::string literal(DType d, const ir::Scalar& v) {
  return numeric::dispatch(d, [&]<class T>(std::type_identity<T>) -> std::string {
    const T x = numeric::scalar_to<T>(v);
    if constexpr (std::is_same_v<T, bool>) {
      return x ? "true" : "false";
    } else if constexpr (std::is_same_v<T, f16>) {
      return fmt("ct::f16{0x%04x}", static_cast<unsigned>(x.bits));
    } else if constexpr (std::is_same_v<T, bf16>) {
      return fmt("ct::bf16{0x%04x}", static_cast<unsigned>(x.bits));
    } else if constexpr (std::is_same_v<T, f8e4m3>) {
      return fmt("ct::f8e4m3{0x%02x}", static_cast<unsigned>(x.bits));
    } else if constexpr (std::is_same_v<T, f8e5m2>) {
      return fmt("ct::f8e5m2{0x%02x}", static_cast<unsigned>(x.bits));
    } else if constexpr (std::is_same_v<T, float>) {
      if (std::fpclassify(x) != FP_NORMAL && x != 0.0f)
        return fmt("__uint_as_float(0x%08xu)", std::bit_cast<std::uint32_t>(x));
      std::string s = fmt("%.9g", static_cast<double>(x));
      if (s.find_first_of(".e") == std::string::npos) s += ".0";
      return s + "f";
    } else if constexpr (std::is_same_v<T, double>) {
      if (std::fpclassify(x) != FP_NORMAL && x != 0.0)
        return fmt("__longlong_as_double(0x%016" PRIx64 "LL)", std::bit_cast<std::uint64_t>(x));
      std::string s = fmt("%.17g", x);
      if (s.find_first_of(".e") == std::string::npos) s += ".0";
      return s;
    } else if constexpr (std::is_same_v<T, std::int64_t>) {
      if (x == INT64_MIN) return "(-9223372036854775807LL - 1)";
      return std::to_string(x) + "LL";
    } else if constexpr (std::is_same_v<T, std::int32_t>) {
      if (x == INT32_MIN) return "(-2147483647 - 1)";
      return std::to_string(x);
    } else if constexpr (std::is_same_v<T, std::int8_t> || std::is_same_v<T, std::int16_t>) {
      return std::string("(") + ctype(d) + ")(" + std::to_string(x) + ")";
    } else if constexpr (std::is_same_v<T, std::uint64_t>) {
      return std::to_string(x) + "ull";
    } else if constexpr (std::is_same_v<T, std::uint32_t>) {
      return std::to_string(x) + "u";
    } else {
      return std::string("(") + ctype(d) + ")" + std::to_string(x) + "u";
    }
  });
}

std::string shape_t(const Shape& s) {
  std::string r = "ct::Shape<";
  for (std::size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + ">";
}

std::string sanitize(const std::string& s) {
  std::string r;
  for (char c : s) r += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  return r;
}

// A source location for comments and messages (no newlines).
std::string loc_str(const SourceLoc& l) {
  std::string s = l.known() ? l.str() : "<unknown>";
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

std::string c_string(const std::string& s) {
  std::string r = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') r += '\\';
    r += c;
  }
  return r + "\"";
}

const char* atomic_op(ir::AtomicKind k) {
  switch (k) {
    case ir::AtomicKind::Add: return "ct::kAtomicAdd";
    case ir::AtomicKind::Max: return "ct::kAtomicMax";
    case ir::AtomicKind::Min: return "ct::kAtomicMin";
    case ir::AtomicKind::Exch: return "ct::kAtomicExch";
  }
  throw InternalError("cuda codegen: bad atomic kind");
}

// `x`'s bits k (for each k with map[k] >= 0) moved to bit map[k], as a C++ expression; runs of
// consecutive bits move together.
std::string bits_expr(const std::vector<int>& map, const std::string& x) {
  std::string e;
  for (std::size_t k = 0; k < map.size();) {
    if (map[k] == Layout::kCopy) {
      ++k;
      continue;
    }
    std::size_t j = k + 1;
    while (j < map.size() && map[j] != Layout::kCopy && map[j] == map[j - 1] + 1) ++j;
    const int len = static_cast<int>(j - k), to = map[k], from = static_cast<int>(k);
    std::string t = from ? "(" + x + " >> " + std::to_string(from) + ")" : x;
    t = "(" + t + " & " + std::to_string((1 << len) - 1) + ")";
    if (to) t = "(" + t + " << " + std::to_string(to) + ")";
    e += (e.empty() ? "" : " | ") + t;
    k = j;
  }
  return e.empty() ? "0" : e;
}

// Register bits of `l` that name element bits in [lo, lo + width) (as a mask over register indices).
int reg_mask_in(const Layout& l, int lo, int width) {
  int m = 0;
  for (std::size_t k = 0; k < l.reg.size(); ++k)
    if (l.reg[k] >= lo && l.reg[k] < lo + width) m |= 1 << k;
  return m;
}
int hw_mask_in(const std::vector<int>& bits, int lo, int width) {
  int m = 0;
  for (std::size_t k = 0; k < bits.size(); ++k)
    if (bits[k] != Layout::kCopy && bits[k] >= lo && bits[k] < lo + width) m |= 1 << k;
  return m;
}
// Where the elements along `axis` of a tile of shape `sh` in layout `l` live: their element bits
// [shift, shift + width) and the register, lane and warp bits that name them (what a reduction or
// scan along the axis combines over).
struct AxisBits {
  int shift = 0, width = 0, rmask = 0, lmask = 0, wmask = 0;
};
AxisBits axis_bits(const Layout& l, const Shape& sh, int axis) {
  AxisBits b;
  for (std::size_t dd = sh.size(); dd-- > static_cast<std::size_t>(axis) + 1;) b.shift += log2i(sh[dd]);
  b.width = log2i(sh[static_cast<std::size_t>(axis)]);
  b.rmask = reg_mask_in(l, b.shift, b.width);
  b.lmask = hw_mask_in(l.lane, b.shift, b.width);
  b.wmask = hw_mask_in(l.warp, b.shift, b.width);
  return b;
}
// Leading registers whose element bits are 0, 1, 2, ...: groups of that many consecutive elements.
int vec_of(const Layout& l) {
  int v = 0;
  while (v < static_cast<int>(l.reg.size()) && l.reg[static_cast<std::size_t>(v)] == v) ++v;
  return 1 << v;
}

class Emitter {
 public:
  Emitter(const ir::Kernel& k, int sm) : k_(k), sm_(sm) {}

  GeneratedKernel run() {
    analyze();
    GeneratedKernel g;
    g.entry = entry_;
    const ir::KernelTarget& t = k_.target;
    g.threads = 32 * (t.warps * t.blocks_per_cta * t.k_split + t.producer_warps);
    g.blocks_per_cta = t.blocks_per_cta;
    g.prefetches = t.persistent;
    g.programmatic = sm_ >= 90;
    g.notes = k_.notes;
    // Swizzled tiles (wgmma operands) need their atoms at multiples of ir::kSwizzleAlign in the
    // shared address space: each tile block's part is a multiple of it, and the kernel aligns the
    // dynamic segment's start (asking for that much more).
    for (std::size_t v = 0; v < k_.values.size(); ++v)
      swizzled_ = swizzled_ || (k_.type(static_cast<ValueId>(v)).is_tile() && k_.layouts[v].is_swizzled());
    const std::int64_t al = swizzled_ ? ir::kSwizzleAlign : 16;
    smem_per_block_ = (t.smem_bytes + al - 1) / al * al;
    emit_kernel();
    g.source = header() + funcs_.str() + out_.str();
    g.smem_bytes = static_cast<std::size_t>(smem_per_block_ * t.blocks_per_cta + (swizzled_ ? ir::kSwizzleAlign - 16 : 0));
    if (g.smem_bytes > smem_limit(sm_)) {
      const ir::Op* big = nullptr;
      ir::walk(k_.body, [&](const ir::Op& op) {
        if (!big || op.smem_bytes > big->smem_bytes) big = &op;
      });
      throw UserError(detail::cat("kernel '", k_.name, "' needs ", g.smem_bytes, " bytes of shared memory per CTA (",
                                  big ? ir::op_name(big->kind) : "?", " needs ", big ? big->smem_bytes : 0,
                                  " per tile block), more than the ", smem_limit(sm_), " a CTA may use on sm_", sm_),
                      big ? big->loc : SourceLoc{});
    }
    g.params_bytes = kGridBytes + kTensorDescBytes * static_cast<std::size_t>(n_tensors_) +
                     8 * static_cast<std::size_t>(n_scalars_);
    if (!maps_.empty()) {
      g.params_bytes = (g.params_bytes + 63) / 64 * 64;
      for (const ir::TensorMapUse& u : maps_) {
        g.maps.push_back({u, g.params_bytes});
        g.params_bytes += 128;
      }
    }
    if (g.params_bytes > kMaxParamBytes)
      throw UserError(detail::cat("kernel '", k_.name, "' has too many parameters for the CUDA backend (",
                                  g.params_bytes, " bytes of launch parameters, at most ", kMaxParamBytes, ")"));
    return g;
  }

 private:
  const ir::Kernel& k_;
  int sm_;
  int n_tensors_ = 0, n_scalars_ = 0;
  std::vector<int> tensor_;           // per value: index into p.t (tensor, partition and piece values), else -1
  std::vector<int> scalar_param_;     // per value: index into p.s, else -1
  std::vector<ir::Access> access_;    // per p.t index
  std::vector<const ir::Param*> tparam_;  // per p.t index
  std::set<int> scattered_pieces_;    // p.t indices of pieces written by ct.scatter_piece or ct.store_window
  std::vector<char> used_;            // per value: an operand somewhere
  std::map<std::string, int> layout_ids_;
  std::vector<Layout> layouts_;       // by id
  std::int64_t smem_per_block_ = 0;
  bool swizzled_ = false;  // the kernel holds swizzled tiles (wgmma operands)
  std::map<ValueId, ValueId> in_place_;  // an in-flight wgmma's result -> the region argument it aliases
  // A fused value (fuse-elementwise) -> its op, and its element `r` as an expression, written where
  // it is read.
  using ElementExpr = std::function<std::string(const std::string&)>;
  struct Fused {
    const ir::Op* op;
    ElementExpr expr;
  };
  mutable std::map<ValueId, Fused> fused_;

  // Whether fused value v's expression calls a function (ir::calls_function) anywhere in its chain.
  bool costly(ValueId v) const {
    auto it = fused_.find(v);
    if (it == fused_.end()) return false;
    const ir::Op& d = *it->second.op;
    // A remat copy reads its input through an empty volatile asm (ct::opaque), which the CUDA
    // compiler does not move out of a branch: behind `?:` every element would keep its branch.
    if (ir::calls_function(d) || d.remat) return true;
    for (ValueId x : d.operands)
      if (costly(x)) return true;
    return false;
  }
  std::vector<const ir::Op*> prefetched_;     // block-prefetch: the marked loads, in body order
  std::vector<const ir::Op*> prefetch_cone_;  // the body's ops their operands need, in order
  bool in_prefetch_ = false;                  // emitting the next tile block's loads
  std::string entry_;
  std::ostringstream out_;
  std::ostringstream funcs_;  // the combine functions of ct.reduce_with / ct.scan_with, before the kernel
  int ind_ = 0, uid_ = 0;
  std::vector<std::string> iters_;  // the iteration counters of the enclosing loops with rotating slots
  int for_depth_ = 0;               // ct.for loops around the op being emitted
  std::vector<ir::TensorMapUse> maps_;            // ir::tensor_maps: p.m[i]
  std::map<std::int64_t, const ir::Op*> tma_rings_;  // a TMA ring's barrier offset -> one of its loads
  std::map<ValueId, const ir::Op*> tma_of_;       // a value of a TMA ring's chain -> one of the ring's loads
  // Warp specialisation (KernelTarget::producer_warps): the producer's ops (ir::producer_ops), and
  // the offset of the first TMA ring barrier (the producer's barriers sit at the same distances
  // from target.producer_bar).
  std::set<const ir::Op*> producer_;
  std::set<const ir::Op*> producer_only_;  // of those, the scalar ops only the producer's copies need
  // TMA loads of one slot whose tile is read in a nested region (attention's Q, read by every
  // iteration of the loop): every thread waits for the copy once, before the first op of the
  // load's region that reads the tile (directly, through views, or in its regions), not at each
  // product; a producer gets the slot back after the last such op.
  std::set<const ir::Op*> hoisted_;
  std::int64_t first_bar_ = 0;
  bool ws() const { return k_.target.producer_warps > 0; }
  // The K split (KernelTarget::k_split): a second consumer warpgroup (`kwg` 1) takes the odd
  // iterations of the loop marked acc_split = 2; ksplit_ is set while that loop's body is emitted.
  bool ks() const { return k_.target.k_split == 2; }
  bool ksplit_ = false;
  // The barrier where the consumers hand slots of ring `bar` back, and the tile block's.
  std::string empty_bar(std::int64_t bar) const {
    return "(ct::u64*)(ct_smem + " + std::to_string(k_.target.producer_bar + bar - first_bar_) + ")";
  }
  std::string free_bar() const {
    std::int64_t end = 0;
    for (const auto& [bar, ld] : tma_rings_) end = std::max(end, bar + 8 * ld->ring_slots);
    return "(ct::u64*)(ct_smem + " + std::to_string(k_.target.producer_bar + end - first_bar_) + ")";
  }

  // ---- values ----
  const Type& type(ValueId v) const { return k_.type(v); }
  std::int64_t numel_of(ValueId v) const { return numel(type(v).shape); }
  bool rep(ValueId v) const { return numel_of(v) == 1; }
  const Layout& lay(ValueId v) const { return k_.layout(v); }
  // A tile in shared memory is copied there by the threads as this blocked layout splits it
  // (16-byte vectors along the rows).
  Layout copy_layout(ValueId v) const {
    const int es = dtype_size(type(v).dtype);
    return ir::blocked(type(v).shape, std::max(1, 16 / es), k_.target.warps, /*warps_last=*/false);
  }
  bool shared(ValueId v) const { return type(v).is_tile() && lay(v).is_shared(); }
  // A shared value's D, tp and own name its copy layout's.
  int lid(ValueId v) const { return layout_ids_.at(ir::layout_str(shared(v) ? copy_layout(v) : lay(v))); }
  std::string D(ValueId v) const { return "D" + std::to_string(lid(v)); }
  std::string tp(ValueId v) const { return "tp" + std::to_string(lid(v)); }
  std::string own(ValueId v) const { return "own" + std::to_string(lid(v)); }
  int regs(ValueId v) const { return lay(v).regs(); }
  static std::string name(ValueId v) { return "v" + std::to_string(v); }
  std::string ct(ValueId v) const { return ctype(type(v).dtype); }
  std::string decl_type(ValueId v) const {
    if (shared(v)) return ct(v) + "*";  // the tile's slot in shared memory
    if (rep(v)) return ct(v);
    return "ct::Regs<" + ct(v) + ", " + std::to_string(regs(v)) + ">";
  }
  std::string decl(ValueId v) const { return decl_type(v) + " " + name(v); }
  bool packed(ValueId v) const { return !rep(v) && dtype_size(type(v).dtype) == 2 && regs(v) % 2 == 0; }
  // Element `r` (a C++ expression) of v.
  std::string get(ValueId v, const std::string& r) const {
    if (auto f = fused_.find(v); f != fused_.end()) return "(" + f->second.expr(r) + ")";
    return rep(v) ? name(v) : name(v) + ".get(" + r + ")";
  }
  std::string td(ValueId v) const {
    const int t = tensor_.at(static_cast<std::size_t>(v));
    CTILE_CHECK(t >= 0, "cuda codegen: value %", v, " is not a tensor");
    return "p.t[" + std::to_string(t) + "]";
  }
  int tindex(ValueId v) const { return tensor_.at(static_cast<std::size_t>(v)); }
  std::string smem(const ir::Op& op, const std::string& type_name, std::int64_t extra = 0) const {
    CTILE_CHECK(op.smem_offset >= 0, "cuda codegen: ", ir::op_name(op.kind), " at ", loc_str(op.loc), " has no scratch");
    return "((" + type_name + "*)(ct_smem + " + std::to_string(op.smem_offset + extra) + "))";
  }

  // ---- output ----
  void line(const std::string& s) { out_ << std::string(static_cast<std::size_t>(ind_) * 2, ' ') << s << "\n"; }
  void open(const std::string& s) {
    line(s);
    ++ind_;
  }
  void close(const std::string& s = "}") {
    --ind_;
    line(s);
  }
  static std::string describe(const ir::Op& op) {
    std::string d = ir::op_name(op.kind);
    switch (op.kind) {
      case OpKind::Unary: d += std::string(" ") + ir::unary_name(op.unary); break;
      case OpKind::Binary: d += std::string(" ") + ir::binary_name(op.binary); break;
      case OpKind::Cmp: d += std::string(" ") + ir::cmp_name(op.cmp); break;
      case OpKind::Reduce: d += std::string(" ") + ir::reduce_name(op.reduce) + " axis " + std::to_string(op.axis); break;
      case OpKind::Scan:
        d += std::string(" ") + ir::reduce_name(op.reduce) + " axis " + std::to_string(op.axis) + (op.exclusive ? " exclusive" : "") +
             (op.reverse ? " reverse" : "");
        break;
      case OpKind::AtomicRMW: d += std::string(" ") + ir::atomic_name(op.atomic); break;
      case OpKind::ReduceWith: d += " axis " + std::to_string(op.axis); break;
      case OpKind::ScanWith:
        d += " axis " + std::to_string(op.axis) + (op.exclusive ? " exclusive" : "") + (op.reverse ? " reverse" : "");
        break;
      default: break;
    }
    if (op.rounding != ir::Rounding::Default) d += std::string(" ") + ir::rounding_name(op.rounding);
    return d;
  }
  static std::string comment(const ir::Op& op) { return "  // " + loc_str(op.loc) + " " + describe(op); }

  // ---- analysis ----
  void analyze() {
    CTILE_CHECK(k_.gpu_level(), "cuda codegen: the kernel was not lowered to the GPU-level IR");
    const std::size_t nv = k_.values.size();
    tensor_.assign(nv, -1);
    scalar_param_.assign(nv, -1);
    for (const ir::Param& p : k_.params) {
      if (p.type.kind == ir::TypeKind::Tile) {
        scalar_param_[static_cast<std::size_t>(p.value)] = n_scalars_++;
      } else {
        tensor_[static_cast<std::size_t>(p.value)] = n_tensors_++;
        access_.push_back(p.type.access);
        tparam_.push_back(&p);
      }
    }
    auto see_layout = [&](ValueId v) {
      if (!type(v).is_tile() || rep(v)) return;
      const Layout l = lay(v).is_shared() ? copy_layout(v) : lay(v);
      const std::string s = ir::layout_str(l);
      if (!layout_ids_.count(s)) {
        layout_ids_[s] = static_cast<int>(layouts_.size());
        layouts_.push_back(l);
      }
    };
    for (const ir::Param& p : k_.params) see_layout(p.value);
    find_prefetches();
    ir::walk(k_.body, [&](const ir::Op& op) {
      for (ValueId r : op.results) see_layout(r);
      for (const ir::Region& r : op.regions)
        for (ValueId a : r.args) see_layout(a);
      if (op.kind == OpKind::MakePartition) tensor_[static_cast<std::size_t>(op.results[0])] = tindex(op.operands[0]);
      if (op.kind == OpKind::ScatterPiece || (op.kind == OpKind::StoreWindow && type(op.operands[0]).kind == ir::TypeKind::Piece))
        scattered_pieces_.insert(tindex(op.operands[0]));
      for (ValueId r : op.results)
        if (type(r).is_tile() && !rep(r) && regs(r) > kMaxRegs)
          throw UserError(detail::cat("tile ", type_str(type(r)), " is too large for the CUDA backend (", regs(r),
                                      " elements per thread, at most ", kMaxRegs, "); use smaller tiles or more warps"),
                          op.loc);
    });
    used_.assign(nv, 0);
    ir::walk(k_.body, [&](const ir::Op& op) {
      for (ValueId v : op.operands) used_[static_cast<std::size_t>(v)] = 1;
    });
    // TMA rings (smem-alloc): each by its barriers' offset; every value of a ring's chain (its
    // loads, the loop arguments that carry them, their transposes) names the load that rings it.
    maps_ = ir::tensor_maps(k_);
    ir::walk(k_.body, [&](const ir::Op& op) {
      if (op.tma_map >= 0) {
        tma_rings_.emplace(op.tma_bar, &op);
        tma_of_[op.results[0]] = &op;
      }
    });
    for (bool grew = true; grew && !tma_of_.empty();) {
      grew = false;
      ir::walk(k_.body, [&](const ir::Op& op) {
        auto link = [&](ValueId from, ValueId to) {
          auto it = tma_of_.find(from);
          if (it != tma_of_.end() && !tma_of_.count(to)) {
            tma_of_[to] = it->second;
            grew = true;
          }
        };
        if (op.kind == OpKind::Permute || (op.kind == OpKind::Reshape && shared(op.results[0]))) link(op.operands[0], op.results[0]);
        if (op.kind == OpKind::For)
          for (std::size_t j = 0; j + 3 < op.operands.size(); ++j) {
            link(op.operands[3 + j], op.regions[0].args[1 + j]);
            link(yield_of(op.regions[0]).operands[j], op.regions[0].args[1 + j]);
          }
      });
    }
    // Hoisted waits: a one-slot TMA load whose chain (its views) is read inside a nested region.
    std::function<void(const ir::Region&)> find_hoisted = [&](const ir::Region& r) {
      for (const auto& op : r.ops) {
        if (op->tma_map >= 0 && op->ring_slots == 1) {
          const ir::Op* ld = op.get();
          bool nested = false;
          for (const auto& o : r.ops)
            for (const ir::Region& sub : o->regions)
              ir::walk(sub, [&](const ir::Op& x) {
                for (ValueId v : x.operands)
                  if (auto it = tma_of_.find(v); it != tma_of_.end() && it->second == ld) nested = true;
              });
          if (nested) hoisted_.insert(ld);
        }
        for (const ir::Region& sub : op->regions) find_hoisted(sub);
      }
    };
    find_hoisted(k_.body);
    if (ws()) {
      std::vector<const ir::Op*> ops;
      CTILE_CHECK(ir::producer_ops(k_, &ops) && !tma_rings_.empty(), "cuda codegen: a producer warpgroup without TMA copies of its own");
      producer_.insert(ops.begin(), ops.end());
      first_bar_ = tma_rings_.begin()->first;
      // The consumers skip the scalar ops whose results only the copies (and such ops) read.
      std::map<ValueId, std::vector<const ir::Op*>> users;
      ir::walk(k_.body, [&](const ir::Op& op) {
        for (ValueId v : op.operands) users[v].push_back(&op);
      });
      for (const ir::Op* op : producer_)
        if (op->kind != OpKind::For && op->tma_map < 0) producer_only_.insert(op);
      for (bool shrank = true; shrank;) {
        shrank = false;
        for (auto it = producer_only_.begin(); it != producer_only_.end();) {
          bool consumer_needs = false;
          for (ValueId r : (*it)->results)
            for (const ir::Op* u : users[r])
              consumer_needs = consumer_needs || (u->tma_map < 0 && !producer_only_.count(u));
          if (consumer_needs) {
            it = producer_only_.erase(it);
            shrank = true;
          } else {
            ++it;
          }
        }
      }
    }
    entry_ = "ctile_" + sanitize(k_.name.empty() ? std::string("kernel") : k_.name);
    if (entry_.size() > 80) entry_.resize(80);
  }

  // ---- the translation unit ----
  std::string header() const {
    std::ostringstream h;
    const ir::KernelTarget& t = k_.target;
    h << "// Generated by ctile's CUDA code generator from kernel '" << k_.name << "' (grid rank " << k_.grid_rank << ", "
      << t.warps << " warps per tile block, " << t.blocks_per_cta << " tile blocks per CTA). Do not edit.\n";
    for (const std::string& n : k_.notes) h << "// note: " << n << "\n";
    h << "#include \"ctile/device/tile.h\"\n\n";
    h << "struct " << entry_ << "_params {\n";
    h << "  long long grid[6];\n";
    if (n_tensors_ > 0) h << "  ct::TensorDesc t[" << n_tensors_ << "];\n";
    if (n_scalars_ > 0) h << "  unsigned long long s[" << n_scalars_ << "];\n";
    if (!maps_.empty()) h << "  ct::TensorMap m[" << maps_.size() << "];  // TMA tensor maps, encoded at launch\n";
    h << "};\n";
    for (std::size_t i = 0; i < maps_.size(); ++i) {
      const ir::TensorMapUse& u = maps_[i];
      h << "// m[" << i << "]: t[" << tensor_[static_cast<std::size_t>(k_.params[static_cast<std::size_t>(u.param)].value)]
        << "] in boxes of " << u.box_rows << "x" << u.box_cols << ", " << u.swizzle << "-byte swizzle\n";
    }
    for (const ir::Param& p : k_.params) {
      const auto v = static_cast<std::size_t>(p.value);
      h << "// " << (p.type.kind == ir::TypeKind::Tile ? "s[" + std::to_string(scalar_param_[v]) + "]"
                                                       : "t[" + std::to_string(tensor_[v]) + "]")
        << ": '" << p.name << "' (argument " << p.arg_index << "), " << type_str(p.type)
        << (p.facts.any() ? " " + ir::facts_str(p.facts) : "") << "\n";
    }
    h << "\n";
    for (std::size_t i = 0; i < layouts_.size(); ++i) {
      const Layout& l = layouts_[i];
      h << "struct D" << i << " {  // " << ir::layout_str(l) << "\n";
      h << "  static constexpr int regs = " << l.regs() << ", vec = " << vec_of(l) << ";\n";
      h << "  static constexpr int copy_lanes = " << l.copy_lane_mask() << ", copy_warps = " << l.copy_warp_mask() << ";\n";
      h << "  static CT_DEV constexpr int reg(int r) { return " << bits_expr(l.reg, "r") << "; }\n";
      h << "  static CT_DEV int thread(int lane, int warp) { return " << bits_expr(l.lane, "lane") << " | "
        << bits_expr(l.warp, "warp") << "; }\n";
      h << "};\n";
    }
    h << "\n";
    return h.str();
  }

  void emit_kernel() {
    const ir::KernelTarget& t = k_.target;
    const int W = t.warps, B = t.blocks_per_cta;
    // An occupancy target (the user's option, else the occupancy pass's): ptxas fits the registers to it.
    // A producer warpgroup's setmaxnreg needs the register count at entry: one CTA per SM.
    const int min_ctas = k_.options.min_ctas_per_sm > 0 ? k_.options.min_ctas_per_sm : t.producer_warps > 0 ? 1 : t.min_ctas;
    const int P = t.producer_warps;
    const int KS = t.k_split;
    open("extern \"C\" __global__ void __launch_bounds__(" + std::to_string(32 * (W * B * KS + P)) +
         (min_ctas > 0 ? ", " + std::to_string(min_ctas) : std::string()) + ") " + entry_ +
         "(const __grid_constant__ " + entry_ + "_params p) {");
    if (swizzled_) {
      line("CT_DYNAMIC_SMEM(ct_smem_dyn);");
      line("unsigned char* const ct_smem_cta = ct::align_smem<" + std::to_string(ir::kSwizzleAlign) + ">(ct_smem_dyn);");
    } else {
      line("CT_DYNAMIC_SMEM(ct_smem_cta);");
    }
    line("ct::Team<" + std::to_string(W) + ", " + std::to_string(B) + (P ? ", true" : "") + "> team;");
    line("team.lane = (int)threadIdx.x & 31;");
    line("team.tid = (int)threadIdx.x & " + std::to_string(32 * W - 1) + ";");
    line("team.warp = team.tid >> 5;");
    if (P) line("team.sub = 0;  // one tile block, and the producer warpgroup after its warps");
    else line("team.sub = (int)threadIdx.x >> " + std::to_string(5 + log2i(W)) + ";");
    if (ks()) line("const int kwg = (int)threadIdx.x >> 7;  // the K split: the consumer warpgroup (1 takes the odd K steps)");
    if (smem_per_block_ > 0) line("unsigned char* ct_smem = ct_smem_cta + team.sub * " + std::to_string(smem_per_block_) + ";");
    else line("(void)ct_smem_cta;");
    for (std::size_t i = 0; i < layouts_.size(); ++i) {
      const std::string s = std::to_string(i);
      line("const int tp" + s + " = D" + s + "::thread(team.lane, team.warp);");
      line("const bool own" + s + " = ((team.lane & D" + s + "::copy_lanes) | (team.warp & D" + s + "::copy_warps)) == 0;");
      line("(void)tp" + s + ";");
      line("(void)own" + s + ";");
    }
    if (!tma_rings_.empty()) {
      // The TMA rings' barriers, one per slot, initialised once; each thread tracks their phases.
      for (const auto& [bar, ld] : tma_rings_) {
        const std::string b = std::to_string(bar), n = std::to_string(ld->ring_slots);
        line("ct::u64* const tb" + b + " = (ct::u64*)(ct_smem + " + b + ");  // the barriers of a TMA ring of " + n + " slots");
        line("ct::TmaRing<" + n + "> tr" + b + ";");
        // With a producer warpgroup (and the K split's second consumers) team.tid repeats across
        // warpgroups: one thread of the CTA initialises.
        line(std::string(P ? "if (threadIdx.x == 0)" : "if (team.tid == 0)") + " for (int s = 0; s < " + n +
             "; ++s) ct::mbar_init(tb" + b + " + s, 1);");
        if (P) {
          line("ct::u64* const te" + b + " = " + empty_bar(bar) + ";  // where the consumers hand its slots back");
          line("if (threadIdx.x == 0) for (int s = 0; s < " + n + "; ++s) ct::mbar_init(te" + b + " + s, " + std::to_string(W) +
               ");");
        }
      }
      if (P && t.scratch_over_rings) {
        line("ct::u64* const tfree = " + free_bar() + ";  // the tile block's shared memory is free for the next copies");
        line("if (threadIdx.x == 0) ct::mbar_init(tfree, 1);");
      }
      line("ct::mbar_init_fence();");
      line("__syncthreads();");
    }
    if (sm_ >= 90)  // nothing above touches global memory (GeneratedKernel::programmatic)
      line("ct::grid_dependency_sync();  // launched early by a programmatic dependency: wait for that grid here");
    if (P) emit_producer();
    emit_block_count();
    if (ks()) line("bool ks_first = true;  // the K split: no accumulator handed over yet");
    if (!prefetched_.empty()) {
      for (const ir::Op* ld : prefetched_)
        line(decl(ld->results[0]) + "_n;  // block-prefetch: the next tile block's tile");
      emit_prefetch("(long long)blockIdx.x * " + std::to_string(B) + " + team.sub");
    }
    open("for (long long lin = (long long)blockIdx.x * " + std::to_string(B) + " + team.sub; lin < nblocks; lin += (long long)gridDim.x * " +
         std::to_string(B) + ") {");
    emit_tile_block_start();
    emit_region(k_.body);
    close();
    if (ks())  // one wait for each hand-back of the scratch: the last one's arrival is not left behind
      line("if (kwg == 1 && !ks_first) ct::bar_sync(" + std::to_string(ir::kKSplitBarrier + 1) + ", 256);");
    if (k_.target.pingpong)  // the last hand-over to warpgroup 0 (or the first, with no tile block): no arrival left behind
      line("if ((team.tid >> 7) == 0) ct::bar_sync(" + std::to_string(ir::kPingPongBarrier) + ", 256);  // ping-pong's last turn");
    close();
  }
  // ---- block-prefetch ----
  // The loads the block-prefetch pass marked (ops of the body, in order) and the body's ops their
  // operands come from (block ids, extents, scalar arithmetic: the pass checked), in order.
  void find_prefetches() {
    if (k_.target.producer_warps > 0) return;
    std::set<ValueId> need;
    for (auto it = k_.body.ops.rbegin(); it != k_.body.ops.rend(); ++it) {
      const ir::Op& op = **it;
      bool wanted = op.prefetch_next;
      for (ValueId r : op.results) wanted = wanted || need.count(r);
      if (!wanted) continue;
      if (op.prefetch_next) prefetched_.insert(prefetched_.begin(), &op);
      else prefetch_cone_.insert(prefetch_cone_.begin(), &op);
      for (ValueId o : op.operands) need.insert(o);
    }
  }
  // The marked loads of tile block `lin_expr` (when the CTA has it) into their `_n` registers: in
  // a scope of their own that declares the block's ids and computes the loads' operands again.
  void emit_prefetch(const std::string& lin_expr) {
    open("{  // block-prefetch: the loads of the CTA's next tile block");
    line("const long long lin_next = " + lin_expr + ";");
    open("if (lin_next < nblocks) {");
    line("const long long lin = lin_next;");
    emit_tile_block_start();
    in_prefetch_ = true;
    for (const ir::Op* op : prefetch_cone_) {
      emit_op(*op);
      for (ValueId r : op->results)  // a value only the current tile block's other ops use
        if (type(r).is_tile()) line("(void)" + name(r) + ";");
    }
    for (const ir::Op* op : prefetched_) {
      emit_load(*op);
      line(name(op->results[0]) + "_n = " + name(op->results[0]) + ";");
    }
    in_prefetch_ = false;
    close();
    close();
  }
  void emit_block_count() {
    std::string total = "p.grid[0]";
    for (int d = 1; d < k_.grid_rank; ++d) total += " * p.grid[" + std::to_string(d) + "]";
    line("const long long nblocks = " + total + ";");
  }
  // A tile block's ids (from `lin`) and the kernel's scalar parameters.
  void emit_tile_block_start() {
    emit_block_ids("lin");
    for (const ir::Param& p : k_.params) {
      if (p.type.kind != ir::TypeKind::Tile) continue;
      const ValueId v = p.value;
      line("const " + ct(v) + " " + name(v) + " = ct::from_word<" + ct(v) + ">(p.s[" +
           std::to_string(scalar_param_[static_cast<std::size_t>(v)]) + "]);  // '" + p.name + "'");
      line("(void)" + name(v) + ";");
    }
  }

  // ---- warp specialisation: the producer warpgroup ----
  // Registers per thread of the producer (it only computes coordinates) and of the consumers: the
  // rest of the CTA's registers, which are the SM's 64K shared by the CTAs an occupancy target
  // (min_ctas_per_sm) asks for, as many per thread as __launch_bounds__ lets ptxas give (at most
  // 256 a thread). setmaxnreg.inc past what the CTA holds would wait forever.
  static constexpr int kProducerRegs = 40;
  int consumer_regs() const {
    const int consumers = 32 * k_.target.warps * k_.target.blocks_per_cta * k_.target.k_split,
              producers = 32 * k_.target.producer_warps;
    const int min_ctas = std::max(1, k_.options.min_ctas_per_sm);
    const int at_entry = std::min(256, 65536 / (min_ctas * (consumers + producers)) / 8 * 8);
    return std::min(256, (at_entry * (consumers + producers) - producers * kProducerRegs) / consumers / 8 * 8);
  }
  void emit_producer() {
    const int C = 32 * k_.target.warps * k_.target.k_split;  // the consumers' threads
    open("if ((int)threadIdx.x >= " + std::to_string(C) + ") {  // the producer warpgroup: the TMA copies");
    line("ct::setmaxnreg_dec<" + std::to_string(kProducerRegs) + ">();");
    open("if ((int)threadIdx.x == " + std::to_string(C) + ") {");
    for (const auto& [bar, ld] : tma_rings_)
      line("ct::TmaProducer<" + std::to_string(ld->ring_slots) + "> tq" + std::to_string(bar) + ";");
    // Where the epilogue's scratch lies over the rings, the next tile block's copies wait for this
    // one's end; elsewhere only for their slots, so they run during the epilogue.
    const bool wait_tile = k_.target.scratch_over_rings;
    if (wait_tile) line("unsigned free_phase = 0;");
    emit_block_count();
    open("for (long long lin = blockIdx.x; lin < nblocks; lin += gridDim.x) {");
    if (wait_tile) {
      open("if (lin != blockIdx.x) {  // the previous tile block's shared memory is free");
      line("ct::mbar_wait(tfree, free_phase);");
      line("free_phase ^= 1u;");
      close();
    }
    emit_tile_block_start();
    emit_producer_region(k_.body);
    close();
    close();
    line("return;");
    close();
    line("ct::setmaxnreg_inc<" + std::to_string(consumer_regs()) + ">();  // the consumers");
    if (k_.target.pingpong)
      line("if ((team.tid >> 7) == 1) ct::bar_arrive(" + std::to_string(ir::kPingPongBarrier) +
           ", 256);  // ping-pong: warpgroup 0 takes the first turn on the tensor cores");
  }
  void emit_producer_region(const ir::Region& r) {
    for (const auto& op : r.ops) {
      if (!producer_.count(op.get())) continue;
      if (op->kind == OpKind::For) emit_producer_for(*op);
      else if (op->tma_map >= 0) emit_producer_copy(*op);
      else emit_op(*op);
    }
  }
  // A ct.for's block and its bounds lb<us>, ub<us>, st<us>.
  void open_loop(const ir::Op& op, const std::string& us) {
    open("{" + comment(op));
    line("const long long lb" + us + " = " + name(op.operands[0]) + ", ub" + us + " = " + name(op.operands[1]) + ", st" + us +
         " = " + name(op.operands[2]) + ";");
  }
  // Loads into rotating ring slots count the iterations from 0 (it<us>): true when the body has one.
  bool begin_rotation(const ir::Region& body, const std::string& us) {
    bool rotating = false;
    for (const auto& o : body.ops) rotating = rotating || (o->ring_slots > 0 && o->ring_slot < 0);
    if (rotating) {
      line("int it" + us + " = 0;");
      iters_.push_back("it" + us);
    }
    return rotating;
  }
  void emit_producer_for(const ir::Op& op) {
    const std::string us = std::to_string(uid_++);
    open_loop(op, us);
    const ir::Region& body = op.regions[0];
    const bool rotating = begin_rotation(body, us);
    // A step the consumers trap on ends the producer's loop.
    open("for (long long iv" + us + " = lb" + us + "; iv" + us + " < ub" + us + " && st" + us + " > 0;) {");
    line("const long long " + name(body.args[0]) + " = iv" + us + ";");
    line("(void)" + name(body.args[0]) + ";");
    emit_producer_region(body);
    if (rotating) line("++it" + us + ";");
    line("if (iv" + us + " > ct::kI64Max - st" + us + ") break;");
    line("iv" + us + " += st" + us + ";");
    close();
    if (rotating) iters_.pop_back();
    close();
  }
  // The copy into its slot once the consumers have handed the slot back.
  void emit_producer_copy(const ir::Op& op) {
    const ValueId r0 = op.results[0];
    const std::string b = std::to_string(op.tma_bar), sv = "s" + name(r0);
    line("const int " + sv + " = " + ring_slot(op) + ";");
    line("tq" + b + ".acquire(te" + b + ", " + sv + ");" + comment(op) + " (TMA copy)");
    line(tma_copy(op, "(" + ct(r0) + "*)(ct_smem + " + std::to_string(op.smem_offset) + " + " + sv + " * " +
                          std::to_string(op.smem_bytes / op.ring_slots) + ")", sv) + ";");
  }
  // The TMA copy of load `op` into `dst` (its slot `sv`): a [R, C] tile, or one of higher rank
  // with leading extents 1 (the leading tile indices go along).
  std::string tma_copy(const ir::Op& op, const std::string& dst, const std::string& sv) const {
    const ValueId t = op.operands[0], r0 = op.results[0];
    const Shape& sh = type(r0).shape;
    const std::size_t n = sh.size(), lead = n - 2;
    std::string c = "ct::tma_load<" + std::to_string(sh[n - 2]) + ", " + std::to_string(sh[n - 1]) + ", " +
                    std::to_string(lay(r0).swizzle) + (lead ? ", " + std::to_string(lead) : std::string()) + ">(" + dst +
                    ", &p.m[" + std::to_string(op.tma_map) + "], " + td(t) + ", ";
    if (lead) {
      c += "ct::Idx<" + std::to_string(lead) + ">{{";
      for (std::size_t i = 0; i < lead; ++i) c += (i ? ", " : "") + name(op.operands[1 + i]);
      c += "}}, ";
    }
    return c + name(op.operands[1 + lead]) + ", " + name(op.operands[2 + lead]) + ", tb" + std::to_string(op.tma_bar) + " + " + sv + ")";
  }
  // The slot a load into a ring writes (smem-alloc's ring_slot, or the rotation of its loop).
  std::string ring_slot(const ir::Op& op) const {
    if (op.ring_slot >= 0) return std::to_string(op.ring_slot);
    CTILE_CHECK(!iters_.empty(), "cuda codegen: a rotating load into shared memory outside a loop at ", loc_str(op.loc));
    return "((" + iters_.back() + " + " + std::to_string(op.ring_ahead) + ") % " + std::to_string(op.ring_slots) + ")";
  }

  void emit_block_ids(const std::string& lin) {
    const int G = k_.grid_rank;
    if (k_.target.group_rows > 0 && G == 2) {
      line("long long blk0, blk1;");
      line("ct::grouped_block(" + lin + ", p.grid[0], p.grid[1], " + std::to_string(k_.target.group_rows) + ", blk0, blk1);");
      line("const ct::Idx<2> blk = {{blk0, blk1}};");
      line("(void)blk;");
      emit_lower_rank_blocks();
      return;
    }
    line("long long rem = " + lin + ";");
    for (int d = G - 1; d >= 0; --d) {
      const std::string sd = std::to_string(d);
      if (d > 0) line("const long long blk" + sd + " = ct::split_block(rem, p.grid[" + sd + "]);");
      else line("const long long blk0 = rem;");
    }
    std::string bl = "const ct::Idx<" + std::to_string(G) + "> blk = {{";
    for (int d = 0; d < G; ++d) bl += (d ? ", blk" : "blk") + std::to_string(d);
    line(bl + "}};");
    line("(void)blk;");
    emit_lower_rank_blocks();
  }

  // Pieces of lower rank than the grid (a [rows] output beside a [rows, cols] one) take the
  // leading block coordinates: blk_r for rank r.
  void emit_lower_rank_blocks() {
    std::vector<bool> done(static_cast<std::size_t>(k_.grid_rank), false);
    for (const ir::Param& p : k_.params) {
      const int r = p.type.rank;
      if (p.type.kind != ir::TypeKind::Piece || r >= k_.grid_rank || done[static_cast<std::size_t>(r)]) continue;
      done[static_cast<std::size_t>(r)] = true;
      std::string bl = "const ct::Idx<" + std::to_string(r) + "> blk_" + std::to_string(r) + " = {{";
      for (int d = 0; d < r; ++d) bl += (d ? ", blk.v[" : "blk.v[") + std::to_string(d) + "]";
      line(bl + "}};");
      line("(void)blk_" + std::to_string(r) + ";");
    }
  }
  // The block coordinates of piece `t` (an Idx of its rank).
  std::string piece_blk(ValueId t) const {
    const int r = type(t).rank;
    return r == k_.grid_rank ? std::string("blk") : "blk_" + std::to_string(r);
  }

  // True when `op` (or an op in its regions) reads a value of the chain of TMA load `ld`.
  bool reads_chain(const ir::Op& op, const ir::Op* ld) const {
    bool hit = false;
    auto see = [&](const ir::Op& x) {
      for (ValueId v : x.operands)
        if (auto it = tma_of_.find(v); it != tma_of_.end() && it->second == ld && x.tma_map < 0) hit = true;
    };
    see(op);
    for (const ir::Region& sub : op.regions) ir::walk(sub, see);
    return hit;
  }
  // A hoisted load's slot index (from its tile's address) and ring names.
  std::string hoisted_slot(const ir::Op& ld) const {
    return "(int)(((const unsigned char*)" + name(ld.results[0]) + " - (ct_smem + " + std::to_string(ld.smem_offset) + ")) / " +
           std::to_string(ld.smem_bytes / ld.ring_slots) + ")";
  }
  void emit_region(const ir::Region& r) {
    // The hoisted loads of this region (the load is one of its ops): the first and the last op
    // that read each one's tile (the wait goes before the first, the slot back after the last).
    std::map<const ir::Op*, std::pair<const ir::Op*, const ir::Op*>> readers;
    for (const auto& op : r.ops)
      if (hoisted_.count(op.get()))
        for (const auto& reader : r.ops)
          if (reads_chain(*reader, op.get())) {
            auto& [first, last] = readers[op.get()];
            if (!first) first = reader.get();
            last = reader.get();
          }
    for (const auto& op : r.ops) {
      for (const auto& [ld, fl] : readers)
        if (fl.first == op.get()) {
          const std::string b = std::to_string(ld->tma_bar);
          line("tr" + b + ".wait(tb" + b + ", " + hoisted_slot(*ld) + ");  // the TMA copy of " + name(ld->results[0]) +
               ", read below");
        }
      if (op->kind == OpKind::Yield) {
        // The next tile block's TMA copies may land where this one wrote its scratch.
        const bool tile_wait = ws() && &r == &k_.body && k_.target.scratch_over_rings;
        if (op->sync_after && !tma_rings_.empty() && &r == &k_.body && (!ws() || tile_wait))
          line("ct::wgmma_smem_fence();  // this tile block's shared stores, before the next one's TMA copies");
        if (op->sync_after || (ws() && &r == &k_.body)) line("team.sync();  // scratch of the next iteration");
        if (tile_wait) line("if (team.tid == 0) ct::mbar_arrive(tfree);  // to the producer: this tile block is done");
        break;
      }
      if (producer_only_.count(op.get())) continue;  // the producer warpgroup computes it
      emit_op(*op);
      if (&r == &k_.body && std::find(prefetch_cone_.begin(), prefetch_cone_.end(), op.get()) != prefetch_cone_.end())
        for (ValueId v : op->results)  // its prefetched load reads the copy made the tile block before
          if (type(v).is_tile()) line("(void)" + name(v) + ";");
      if (ws())
        for (const auto& [ld, fl] : readers)
          if (fl.second == op.get()) {
            const std::string b = std::to_string(ld->tma_bar);
            line("tr" + b + ".read(" + hoisted_slot(*ld) + ");");
            line("tr" + b + ".retire_all(te" + b + ", team.lane == 0);  // " + name(ld->results[0]) + "'s slot, back to the producer");
          }
      if (op->async_wait >= 0 && (op->kind == OpKind::For || op->kind == OpKind::While))
        line("ct::cp_async_wait<" + std::to_string(op->async_wait) + ">();  // the loop's copies, before its slots are reused");
      if (op->sync_after && (op->async_wait >= 0 || (op->kind != OpKind::For && op->kind != OpKind::While))) line("team.sync();");
    }
  }
  static const ir::Op& yield_of(const ir::Region& r) {
    CTILE_CHECK(!r.ops.empty() && r.ops.back()->kind == OpKind::Yield, "cuda codegen: region without ct.yield");
    return *r.ops.back();
  }

  std::string idx_get_list(const ir::Op& op, std::size_t first, std::size_t count) const {
    std::string s;
    for (std::size_t i = 0; i < count; ++i) s += ", " + name(op.operands[first + i]);
    return s;
  }

  // ---- element-wise ----
  // Emits `result = expr(r)` for every register; `expr` gets the register index expression.
  // `expr` (element r of op's result), with each fused operand that op reads more than once
  // computed once per element: bound to a parameter of a lambda called in place (d * d of a fused
  // d computes d once).
  template <class F>
  ElementExpr with_lets(const ir::Op& op, F expr) const {
    std::vector<ValueId> again;
    for (std::size_t i = 0; i < op.operands.size(); ++i) {
      const ValueId v = op.operands[i];
      if (!fused_.count(v) || std::find(again.begin(), again.end(), v) != again.end()) continue;
      if (std::count(op.operands.begin(), op.operands.end(), v) > 1) again.push_back(v);
    }
    if (again.empty()) return expr;
    return [this, again, expr](const std::string& r) {
      std::string params, args;
      std::map<ValueId, ElementExpr> saved;
      for (ValueId v : again) {
        const std::string p = "f" + name(v) + "_";
        ElementExpr& e = fused_.at(v).expr;
        params += std::string(params.empty() ? "" : ", ") + "const auto " + p;
        args += std::string(args.empty() ? "" : ", ") + e(r);
        saved[v] = e;
        e = [p](const std::string&) { return p; };
      }
      const std::string body = expr(r);
      for (auto& [v, e] : saved) fused_.at(v).expr = e;
      return "[&](" + params + ") { return " + body + "; }(" + args + ")";
    };
  }

  // A fused result (op.fused) is not written here: its user's expression computes it, element by element.
  template <class F>
  void each(const ir::Op& op, ValueId res, F expr_once) {
    const auto expr = with_lets(op, expr_once);
    if (op.fused && !rep(res)) {
      fused_[res] = Fused{&op, expr};
      return line("// " + name(res) + ": fused into its user" + comment(op));
    }
    if (rep(res)) return line("const " + ct(res) + " " + name(res) + " = " + expr(std::string("0")) + ";" + comment(op));
    line(decl(res) + ";" + comment(op));
    const std::string R = std::to_string(regs(res));
    if (packed(res)) return line("CT_PAIRS(" + R + ") " + name(res) + ".set2(q, " + expr("2 * q") + ", " + expr("2 * q + 1") + ");");
    line("CT_REGS(" + R + ") " + name(res) + ".set(r, " + expr("r") + ");");
  }

  std::string unary_fn(const ir::Op& op) const {
    const bool approx = op.rounding == ir::Rounding::Approx;
    switch (op.unary) {
      case ir::UnaryFn::Neg: return "ct::op_neg";
      case ir::UnaryFn::Exp: return approx ? "ct::op_exp_approx" : "ct::op_exp";
      case ir::UnaryFn::Exp2: return approx ? "ct::op_exp2_approx" : "ct::op_exp2";
      case ir::UnaryFn::Log: return approx ? "ct::op_log_approx" : "ct::op_log";
      case ir::UnaryFn::Log2: return approx ? "ct::op_log2_approx" : "ct::op_log2";
      case ir::UnaryFn::Sqrt: return approx ? "ct::op_sqrt_approx" : "ct::op_sqrt";
      case ir::UnaryFn::Rsqrt: return approx ? "ct::op_rsqrt_approx" : "ct::op_rsqrt";
      case ir::UnaryFn::Tanh: return approx ? "ct::op_tanh_approx" : "ct::op_tanh";
      case ir::UnaryFn::Sin: return "ct::op_sin";
      case ir::UnaryFn::Cos: return "ct::op_cos";
      case ir::UnaryFn::Abs: return "ct::op_abs";
      case ir::UnaryFn::Floor: return "ct::op_floor";
      case ir::UnaryFn::Ceil: return "ct::op_ceil";
      case ir::UnaryFn::Not: return "ct::op_not";
      case ir::UnaryFn::Erf: return "ct::op_erf";
      case ir::UnaryFn::Erfc: return "ct::op_erfc";
      case ir::UnaryFn::Sigmoid: return "ct::op_sigmoid";
      case ir::UnaryFn::Log1p: return "ct::op_log1p";
      case ir::UnaryFn::Expm1: return "ct::op_expm1";
      case ir::UnaryFn::Popcount: return "ct::op_popcount";
      case ir::UnaryFn::Clz: return "ct::op_clz";
    }
    throw InternalError("cuda codegen: bad unary fn");
  }
  std::string binary_fn(const ir::Op& op) const {
    static const char* fns[] = {"op_add", "op_sub", "op_mul", "op_div", "op_rem", "op_min", "op_max",
                                "op_pow", "op_and", "op_or",  "op_xor", "op_shl", "op_shr", "op_atan2"};
    static_assert(sizeof(fns) / sizeof(fns[0]) == ir::kBinaryFns);
    std::string f = std::string("ct::") + fns[static_cast<int>(op.binary)];
    if (op.binary == ir::BinaryFn::Div && is_float(type(op.operands[0]).dtype)) {
      if (op.rounding == ir::Rounding::Approx) f = "ct::op_div_approx";
      else if (op.rounding == ir::Rounding::Full) f = "ct::op_div_full";
    }
    if (op.propagate_nan && op.binary == ir::BinaryFn::Max) f = "ct::op_max_nan";
    if (op.propagate_nan && op.binary == ir::BinaryFn::Min) f = "ct::op_min_nan";
    return f;
  }
  // ftz with a rounding that is not approx (the approximations flush already).
  bool extra_ftz(const ir::Op& op) const { return op.ftz && op.rounding != ir::Rounding::Approx; }

  void emit_convert(const ir::Op& op) {
    const ValueId x = op.operands[0], r0 = op.results[0];
    const DType from = type(x).dtype, to = type(r0).dtype;
    // Packed pairs of 16-bit floats: one conversion instruction per pair (bf16, f16).
    const bool half = to == DType::bf16 || to == DType::f16, half_src = from == DType::bf16 || from == DType::f16;
    if (!rep(r0) && !op.fused && packed(r0) && half && from == DType::f32) {
      const std::string fn = to == DType::bf16 ? "ct::pack_bf16x2(" : "ct::pack_f16x2(";
      line(decl(r0) + ";" + comment(op));
      return line("CT_PAIRS(" + std::to_string(regs(r0)) + ") " + name(r0) + ".w[q] = " + fn + get(x, "2 * q") + ", " +
                  get(x, "2 * q + 1") + ");");
    }
    if (!rep(r0) && packed(x) && half_src && to == DType::f32) {
      const std::string p = from == DType::bf16 ? "ct::bf16_" : "ct::f16_";
      if (op.fused)  // element r: a half of register r / 2 (read through ct::opaque for a remat copy)
        return each(op, r0, [=, this, &op](const std::string& r) {
          const std::string w = name(x) + ".w[(" + r + ") >> 1]", word = op.remat ? "ct::opaque(" + w + ")" : w;
          return "((" + r + ") & 1 ? " + p + "hi(" + word + ") : " + p + "lo(" + word + "))";
        });
      line(decl(r0) + ";" + comment(op));
      // A remat copy reads the words through ct::opaque (else the CUDA compiler merges it back).
      const std::string w = op.remat ? "w_" : name(x) + ".w[q]";
      return line("CT_PAIRS(" + std::to_string(regs(r0)) + ") { " +
                  (op.remat ? "const ct::u32 w_ = ct::opaque(" + name(x) + ".w[q]); " : std::string()) + name(r0) + ".v[2 * q] = " +
                  p + "lo(" + w + "); " + name(r0) + ".v[2 * q + 1] = " + p + "hi(" + w + "); }");
    }
    // fp8 from and to f32 in pairs: one conversion instruction per two elements on sm_89 and
    // newer (cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32, cvt.rn.f16x2.{e4m3x2,e5m2x2}; device/types.h).
    const char* f8 = to == DType::f8e4m3 || from == DType::f8e4m3 ? "e4m3" : "e5m2";
    const bool pairs = !rep(r0) && !op.fused && !op.remat && !shared(x) && regs(r0) % 2 == 0;
    if (pairs && is_fp8(to) && from == DType::f32) {
      line(decl(r0) + ";" + comment(op));
      return line("CT_PAIRS(" + std::to_string(regs(r0)) + ") { const ct::u16 w_ = ct::pack_" + f8 + "x2(" + get(x, "2 * q") +
                  ", " + get(x, "2 * q + 1") + "); " + name(r0) + ".set2(q, " + ct(r0) + "{(ct::u8)w_}, " + ct(r0) +
                  "{(ct::u8)(w_ >> 8)}); }");
    }
    if (pairs && !fused_.count(x) && is_fp8(from) && to == DType::f32) {
      line(decl(r0) + ";" + comment(op));
      return line("CT_PAIRS(" + std::to_string(regs(r0)) + ") ct::unpack_" + f8 + "x2((ct::u16)(" + name(x) + ".get(2 * q).bits | (" +
                  name(x) + ".get(2 * q + 1).bits << 8)), " + name(r0) + ".v[2 * q], " + name(r0) + ".v[2 * q + 1]);");
    }
    each(op, r0, [=, this, &op](const std::string& r) { return "ct::convert<" + ct(r0) + ">(" + get(x, r) + ")"; });
  }

  // ---- ops ----
  void emit_op(const ir::Op& op) {
    const auto& o = op.operands;
    const ValueId r0 = op.results.empty() ? ir::kNoValue : op.results[0];
    switch (op.kind) {
      case OpKind::BlockId:
        return line("const long long " + name(r0) + " = blk" + std::to_string(op.axis) + ";" + comment(op));
      case OpKind::NumBlocks:
        return line("const long long " + name(r0) + " = p.grid[" + std::to_string(op.axis) + "];" + comment(op));
      case OpKind::Dim:
        return line("const long long " + name(r0) + " = " + td(o[0]) + ".shape[" + std::to_string(op.axis) + "];" +
                    comment(op));
      case OpKind::MakePartition: return;
      case OpKind::PartitionCount: {
        const std::int64_t tile = type(o[0]).shape[static_cast<std::size_t>(op.axis)];
        return line("const long long " + name(r0) + " = ct::count_tiles(" + td(o[0]) + ".shape[" +
                    std::to_string(op.axis) + "], " + std::to_string(log2i(tile)) + ");" + comment(op));
      }
      case OpKind::Load:
      case OpKind::LoadPiece:
        if (op.prefetch_next && !in_prefetch_ && !prefetched_.empty()) {
          // Prefetched during the previous tile block (or before the loop); then the next one's.
          line(decl(r0) + " = " + name(r0) + "_n;" + comment(op));
          if (&op == prefetched_.back())
            emit_prefetch("lin + (long long)gridDim.x * " + std::to_string(k_.target.blocks_per_cta));
          return;
        }
        return emit_load(op);
      case OpKind::StorePiece: return emit_store(op);
      case OpKind::LoadWindow: return emit_load_window(op);
      case OpKind::StoreWindow: return emit_store_window(op);
      case OpKind::Gather: {
        const ValueId t = o[0];
        const bool shared = access_[static_cast<std::size_t>(tindex(t))] != ir::Access::Read;
        const std::string pad = literal(type(r0).dtype, op.value);
        const std::string ix = idx_get_list(op, 1, o.size() - 1);
        if (rep(r0)) {
          if (shared)
            return line("const " + ct(r0) + " " + name(r0) + " = ct::gather_one_shared_t(" + td(t) + ", " + pad + ", " +
                        smem(op, "unsigned char") + ", team" + ix + ");" + comment(op));
          return line("const " + ct(r0) + " " + name(r0) + " = ct::gather_one(" + td(t) + ", " + pad + ix + ");" + comment(op));
        }
        line(decl(r0) + ";" + comment(op));
        return line("ct::gather_d<" + D(r0) + ", " + (shared ? "true" : "false") + ">(" + name(r0) + ", " + td(t) + ", " +
                    pad + ix + ");");
      }
      case OpKind::ScatterPiece: {
        const ValueId val = o.back();
        const Shape& psh = type(o[0]).shape;
        const std::string ix = idx_get_list(op, 1, o.size() - 2);
        if (rep(val))
          return line("ct::scatter_piece_one_t<" + shape_t(psh) + ">(" + td(o[0]) + ", " + piece_blk(o[0]) + ", " + name(val) + ", team" + ix +
                      ");" + comment(op));
        return line("ct::scatter_piece_d<" + D(val) + ", " + shape_t(psh) + ">(" + td(o[0]) + ", " + piece_blk(o[0]) + ", " + name(val) + ", " +
                    smem(op, "int") + ", " + tp(val) + ", " + own(val) + ", team" + ix + ");" + comment(op));
      }
      case OpKind::ScatterUnchecked: {
        const ValueId val = o.back();
        const std::string ix = idx_get_list(op, 1, o.size() - 2);
        if (rep(val))
          return line("ct::scatter_unchecked_one_t(" + td(o[0]) + ", " + name(val) + ", team" + ix + ");" + comment(op));
        return line("ct::scatter_unchecked_d<" + D(val) + ", " + std::to_string(numel_of(val)) + ">(" + td(o[0]) + ", " +
                    name(val) + ", " + smem(op, "long long") + ", " + tp(val) + ", " + own(val) + ", team" + ix + ");" +
                    comment(op));
      }
      case OpKind::AtomicRMW: {
        const ValueId val = o.back();
        const std::string ix = idx_get_list(op, 1, o.size() - 2);
        if (rep(val))
          return line("const " + ct(r0) + " " + name(r0) + " = ct::atomic_one_t<" + atomic_op(op.atomic) + ">(" + td(o[0]) +
                      ", " + name(val) + ", " + smem(op, "unsigned char") + ", team" + ix + ");" + comment(op) +
                      (used(r0) ? "" : "\n" + std::string(static_cast<std::size_t>(ind_) * 2, ' ') + "(void)" + name(r0) + ";"));
        const bool share = op.smem_offset >= 0;
        line(decl(r0) + ";" + comment(op));
        if (!used(r0)) line("(void)" + name(r0) + ";");
        return line(std::string("ct::atomic_d<") + atomic_op(op.atomic) + ", " + D(r0) + ", " + (share ? "true" : "false") +
                    ">(" + name(r0) + ", " + td(o[0]) + ", " + name(val) + ", " +
                    (share ? smem(op, ct(r0)) : "(" + ct(r0) + "*)nullptr") + ", " + tp(r0) + ", " + own(r0) + ", team" + ix +
                    ");");
      }
      case OpKind::AtomicCAS: {
        const ValueId ex = o[o.size() - 2], de = o.back();
        const std::string ix = idx_get_list(op, 1, o.size() - 3);
        if (rep(de))
          return line("const " + ct(r0) + " " + name(r0) + " = ct::cas_one_t(" + td(o[0]) + ", " + name(ex) + ", " + name(de) +
                      ", " + smem(op, "unsigned char") + ", team" + ix + ");" + comment(op) +
                      (used(r0) ? "" : "\n" + std::string(static_cast<std::size_t>(ind_) * 2, ' ') + "(void)" + name(r0) + ";"));
        const bool share = op.smem_offset >= 0;
        line(decl(r0) + ";" + comment(op));
        if (!used(r0)) line("(void)" + name(r0) + ";");
        return line("ct::cas_d<" + D(r0) + ", " + (share ? "true" : "false") + ">(" + name(r0) + ", " + td(o[0]) + ", " +
                    name(ex) + ", " + name(de) + ", " + (share ? smem(op, ct(r0)) : "(" + ct(r0) + "*)nullptr") + ", " +
                    tp(r0) + ", " + own(r0) + ", team" + ix + ");");
      }
      case OpKind::Constant: {
        const std::string c = literal(type(r0).dtype, op.value);
        return each(op, r0, [=, this, &op](const std::string&) { return c; });
      }
      case OpKind::Iota:
        if (rep(r0)) return line("const " + ct(r0) + " " + name(r0) + " = ct::convert<" + ct(r0) + ">(0LL);" + comment(op));
        // A remat copy starts from an opaque copy of the thread's position (see emit_convert).
        if (op.remat) line("const int " + name(r0) + "_tp = ct::opaque(" + tp(r0) + ");");
        {
          // A floor g (narrow-index): element e = thread position + register offset, on disjoint
          // bits of e, so e - e % g clears the low bits of each part: the register bits that land
          // below g drop out of the register index, and every register of one group of g gets the
          // same expression (the CUDA compiler computes it once for the group).
          const std::int64_t g = op.value.i > 1 ? op.value.i : 1;
          long long rmask = 0;
          const Layout& R = lay(r0);
          for (std::size_t kk = 0; g > 1 && kk < R.reg.size(); ++kk)
            if (R.reg[kk] < log2i(g)) rmask |= 1LL << kk;
          return each(op, r0, [=, this, &op](const std::string& r) {
            std::string t = op.remat ? name(r0) + "_tp" : tp(r0);
            std::string ri = r;
            if (g > 1) t = "(" + t + " & ~" + std::to_string(g - 1) + ")";
            if (rmask) ri = "(" + r + ") & ~" + std::to_string(rmask);
            return "ct::convert<" + ct(r0) + ">((long long)(" + t + " + " + D(r0) + "::reg(" + ri + ")))";
          });
        }
      case OpKind::Broadcast: {
        const ValueId x = o[0];
        if (rep(x)) return each(op, r0, [=, this, &op](const std::string&) { return name(x); });
        // Result register r holds the source register of its non-stretched bits.
        const Layout& R = lay(r0);
        const Shape& from = type(x).shape;
        const Shape& to = type(r0).shape;
        int keep = 0, off = 0;
        std::vector<int> bit_dim(static_cast<std::size_t>(log2i(numel(to))), 0);
        for (std::size_t d = to.size(); d-- > 0;) {
          for (int j = 0; j < log2i(to[d]); ++j) bit_dim[static_cast<std::size_t>(off + j)] = static_cast<int>(d);
          off += log2i(to[d]);
        }
        for (std::size_t kk = 0; kk < R.reg.size(); ++kk)
          if (from[static_cast<std::size_t>(bit_dim[static_cast<std::size_t>(R.reg[kk])])] != 1) keep |= 1 << kk;
        return each(op, r0, [=, this, &op](const std::string& r) { return get(x, "ct::pext(" + r + ", " + std::to_string(keep) + ")"); });
      }
      case OpKind::Reshape:
      case OpKind::Permute:  // a relabelling of the same registers (ir::permute)
        if (fused_.count(o[0])) return each(op, r0, [=, this](const std::string& r) { return get(o[0], r); });
        return line(decl(r0) + " = " + name(o[0]) + ";" + comment(op));
      case OpKind::ConvertLayout: return emit_convert_layout(op);
      case OpKind::Extract: {
        const ValueId x = o[0];
        if (rep(x)) return line(decl(r0) + " = " + name(x) + ";" + comment(op));
        std::string e = "ct::extract_src<" + shape_t(type(x).shape) + ", " + shape_t(type(r0).shape);
        for (std::int64_t off : op.offsets) e += ", " + std::to_string(off);
        return from_smem(op, {x}, e + ">");
      }
      case OpKind::Cat: {
        const ValueId a = o[0], b = o[1];
        const std::int64_t boff = align16(numel_of(a) * dtype_size(type(a).dtype));
        const std::string e = "ct::cat_src<" + shape_t(type(a).shape) + ", " + shape_t(type(b).shape) + ", " +
                              shape_t(type(r0).shape) + ", " + std::to_string(op.axis) + ", " +
                              std::to_string(boff / dtype_size(type(a).dtype)) + ">";
        return from_smem(op, {a, b}, e);
      }
      case OpKind::Unary: {
        const std::string f = unary_fn(op);
        if (extra_ftz(op))
          return each(op, r0, [=, this, &op](const std::string& r) {
            return "ct::with_ftz<" + ct(r0) + ">([](" + ct(r0) + " a) { return " + f + "(a); }, " + get(o[0], r) + ")";
          });
        return each(op, r0, [=, this, &op](const std::string& r) { return f + "(" + get(o[0], r) + ")"; });
      }
      case OpKind::Binary: {
        const std::string f = binary_fn(op);
        if (extra_ftz(op))
          return each(op, r0, [=, this, &op](const std::string& r) {
            return "ct::with_ftz<" + ct(r0) + ">([](" + ct(r0) + " a, " + ct(r0) + " b) { return " + f + "(a, b); }, " +
                   get(o[0], r) + ", " + get(o[1], r) + ")";
          });
        return each(op, r0, [=, this, &op](const std::string& r) { return f + "(" + get(o[0], r) + ", " + get(o[1], r) + ")"; });
      }
      case OpKind::Fma:
        return each(op, r0, [=, this, &op](const std::string& r) {
          return "ct::op_fma(" + get(o[0], r) + ", " + get(o[1], r) + ", " + get(o[2], r) + ")";
        });
      case OpKind::Cmp: {
        static const char* fns[] = {"op_eq", "op_ne", "op_lt", "op_le", "op_gt", "op_ge"};
        return each(op, r0, [=, this, &op](const std::string& r) {
          return std::string("ct::") + fns[static_cast<int>(op.cmp)] + "(" + get(o[0], r) + ", " + get(o[1], r) + ")";
        });
      }
      case OpKind::Select:
        // A fused operand that calls something costly, or reads a remat copy, is evaluated
        // unconditionally (ct::op_select); C++'s `?:` would evaluate it behind a branch per element.
        if (costly(o[1]) || costly(o[2]))
          return each(op, r0, [=, this, &op](const std::string& r) {
            return "ct::op_select<" + ct(r0) + ">(" + get(o[0], r) + ", " + get(o[1], r) + ", " + get(o[2], r) + ")";
          });
        return each(op, r0, [=, this, &op](const std::string& r) {
          return "(" + get(o[0], r) + " ? " + get(o[1], r) + " : " + get(o[2], r) + ")";
        });
      case OpKind::Convert: return emit_convert(op);
      case OpKind::Bitcast:
        return each(op, r0, [=, this, &op](const std::string& r) { return "ct::op_bitcast<" + ct(r0) + ">(" + get(o[0], r) + ")"; });
      case OpKind::Random: {
        const char* f = op.random == ir::RandomDist::Bits ? "ct::philox::bits_at(" : op.random == ir::RandomDist::Uniform ? "ct::philox::uniform_at(" : "ct::philox::normal_at(";
        return each(op, r0, [=, this, &op](const std::string& r) { return f + get(o[0], r) + ", " + get(o[1], r) + ")"; });
      }
      case OpKind::Reduce: return emit_reduce(op);
      case OpKind::Scan: return emit_scan(op);
      case OpKind::ReduceWith: return emit_reduce_with(op);
      case OpKind::ScanWith: return emit_scan_with(op);
      case OpKind::Mma: return emit_mma(op);
      case OpKind::For: return emit_for(op);
      case OpKind::If: return emit_if(op);
      case OpKind::While: return emit_while(op);
      case OpKind::Yield: break;
    }
    throw InternalError(detail::cat("cuda codegen: cannot lower ", ir::op_name(op.kind), " at ", loc_str(op.loc)));
  }

  // ---- memory ----
  // The tensor parameter behind a tensor/partition/piece value.
  const ir::Param& param_of(ValueId v) const { return *tparam_.at(static_cast<std::size_t>(tindex(v))); }
  // Elements per 16-byte (or narrower) vector access of a tile value in its layout.
  int mem_vec(ValueId tile, DType d) const {
    const Shape& sh = type(tile).shape;
    const int mb = d == DType::b1 ? 1 : dtype_size(d);
    int vm = std::min<std::int64_t>({vec_of(lay(tile)), sh.empty() ? 1 : sh.back(), 16 / mb});
    if (vm * mb < 4) vm = 1;
    return vm;
  }
  // The facts prove every vector of VM elements aligned: an aligned base, unit last stride, outer
  // strides of a multiple of VM elements (16, or 8 for vectors of at most 8), a tile row of whole
  // vectors. Every outer axis counts, those the tile has extent 1 along too: tile blocks (and loads
  // at other indices) start a stride apart along them (a bf16 [16, 300] in 1 x 256 pieces: rows
  // 600 bytes apart, so the second row's vectors are not 16-byte aligned).
  bool aligned_by_facts(const ir::Param& p, const Shape& tile, int vm, int mb) const {
    if (!p.facts.aligned16 || !p.facts.contiguous_last || tile.empty()) return false;
    if ((tile.back() * mb) % (vm * mb) != 0) return false;
    for (std::size_t d = 0; d + 1 < tile.size(); ++d) {
      const bool by16 = ((p.facts.stride_div16 >> d) & 1u) != 0, by8 = ((p.facts.stride_div8 >> d) & 1u) != 0;
      if (!(by16 || (vm <= 8 && by8))) return false;
    }
    return true;
  }
  // The facts prove every window of this tile whole vectors along the last axis (dist.h, WHOLE):
  // aligned vectors, and the last extent of the tensor a multiple of 16 elements, or of 8 for
  // vectors of at most 8, so of VM. (Then the element-by-element path is not compiled.)
  bool whole_by_facts(const ir::Param& p, ValueId tensor, const Shape& tile, int vm, bool aligned) const {
    if (!aligned || vm <= 1 || 16 % vm != 0 || tile.empty()) return false;
    const int rank = type(tensor).rank;
    if (rank != static_cast<int>(tile.size())) return false;
    if ((p.facts.extent_div16 >> (rank - 1)) & 1u) return true;
    return vm <= 8 && ((p.facts.extent_div8 >> (rank - 1)) & 1u) != 0;
  }
  std::string window_of(const ir::Op& op, ValueId tensor, const Shape& sh, int vb, int mb) {
    std::string ti;
    if (op.kind == OpKind::Load) {
      ti = "ct::Idx<" + std::to_string(sh.size()) + ">{{";
      for (std::size_t i = 1; i < op.operands.size(); ++i) ti += (i > 1 ? ", " : "") + name(op.operands[i]);
      ti += "}}";
    } else {
      ti = piece_blk(tensor);
    }
    const std::string w = "w" + std::to_string(uid_++);
    const bool piece = op.kind != OpKind::Load;
    if (piece || op.grid_indices)
      line("const auto " + w + " = ct::make_win_grid<" + shape_t(sh) + ", " + std::to_string(vb) + ", " +
           (piece ? "true" : "false") + ">(" + td(tensor) + ", " + ti + ", " + std::to_string(mb) + ");");
    else
      line("const auto " + w + " = ct::make_win<" + shape_t(sh) + ", " + std::to_string(vb) + ">(" + td(tensor) + ", " + ti +
           ", " + std::to_string(mb) + ");");
    return w;
  }

  void emit_load(const ir::Op& op) {
    const ValueId t = op.operands[0], r0 = op.results[0];
    const Shape& sh = type(r0).shape;
    const DType d = type(r0).dtype;
    const std::string pad = literal(d, op.value);
    if (rep(r0)) {
      std::string ti;
      if (op.kind == OpKind::Load) {
        ti = "ct::Idx<" + std::to_string(sh.size()) + ">{{";
        for (std::size_t i = 1; i < op.operands.size(); ++i) ti += (i > 1 ? ", " : "") + name(op.operands[i]);
        ti += "}}";
      } else {
        ti = piece_blk(t);
      }
      return line("const " + ct(r0) + " " + name(r0) + " = ct::load_one<" + shape_t(sh) + ">(" + td(t) + ", ct::make_window<" +
                  shape_t(sh) + ">(" + td(t) + ", " + ti + "), " + pad + ");" + comment(op));
    }
    const int mb = d == DType::b1 ? 1 : dtype_size(d);
    if (shared(r0)) return emit_load_async(op, mb);
    const int vm = mem_vec(r0, d);
    const ir::Param& p = param_of(t);
    const bool aligned = vm > 1 && aligned_by_facts(p, sh, vm, mb);
    const bool ro = op.kind == OpKind::Load && access_[static_cast<std::size_t>(tindex(t))] == ir::Access::Read;
    line(decl(r0) + ";" + comment(op));
    const std::string w = window_of(op, t, sh, vm > 1 && !aligned ? vm * mb : 0, mb);
    line("ct::load<" + D(r0) + ", " + shape_t(sh) + ", " + (ro ? "true" : "false") + ", " + std::to_string(vm) + ", " +
         (op.in_bounds ? "true" : "false") + ", " + (aligned ? "true" : "false") + ", " + (p.facts.small ? "true" : "false") +
         (whole_by_facts(p, t, sh, vm, aligned) ? ", " + ct(r0) + ", true" : std::string()) + ">(" + name(r0) + ", " + td(t) +
         ", " + w + ", " + pad + ", " + tp(r0) + ");");
  }

  // ct.load_window / ct.store_window: windows at element coordinates, so no fact proves a window
  // full or its vectors aligned (the vector paths are chosen per tile block at run time).
  std::string idx_of(const ir::Op& op, std::size_t first, std::size_t count) const {
    std::string s = "ct::Idx<" + std::to_string(count) + ">{{";
    for (std::size_t i = 0; i < count; ++i) s += (i ? ", " : "") + name(op.operands[first + i]);
    return s + "}}";
  }
  void emit_load_window(const ir::Op& op) {
    const ValueId t = op.operands[0], r0 = op.results[0];
    const Shape& sh = type(r0).shape;
    const DType d = type(r0).dtype;
    const std::string pad = literal(d, op.value), org = idx_of(op, 1, sh.size());
    if (rep(r0))
      return line("const " + ct(r0) + " " + name(r0) + " = ct::load_one<" + shape_t(sh) + ">(" + td(t) +
                  ", ct::make_window_at<" + shape_t(sh) + ">(" + td(t) + ", " + org + "), " + pad + ");" + comment(op));
    const int mb = d == DType::b1 ? 1 : dtype_size(d);
    const int vm = mem_vec(r0, d);
    const ir::Param& p = param_of(t);
    line(decl(r0) + ";" + comment(op));
    const std::string w = "w" + std::to_string(uid_++);
    line("const auto " + w + " = ct::make_win_at<" + shape_t(sh) + ", " + std::to_string(vm > 1 ? vm * mb : 0) + ">(" + td(t) +
         ", " + org + ", " + std::to_string(mb) + ");");
    line("ct::load<" + D(r0) + ", " + shape_t(sh) + ", true, " + std::to_string(vm) + ", false, false, " +
         (p.facts.small ? "true" : "false") + ">(" + name(r0) + ", " + td(t) + ", " + w + ", " + pad + ", " + tp(r0) + ");");
  }
  // ct.store_window into a piece (offsets relative to it) or into a whole unchecked tensor (absolute
  // offsets: canonicalize's form of a scatter of consecutive positions). The window's elements lie
  // in other threads than the piece's own, or the scatter's (another tile shape and origin): the
  // tile block synchronises around it, so earlier and later accesses to the piece or tensor by
  // other threads are ordered with it (store_one_t does so for a replicated tile).
  void emit_store_window(const ir::Op& op) {
    const ValueId t = op.operands[0], x = op.operands.back();
    const Shape& sh = type(x).shape;
    const DType d = type(x).dtype;
    const std::string off = idx_of(op, 1, sh.size());
    const bool piece = type(t).kind == ir::TypeKind::Piece;
    // The window's template arguments after its shape, and its arguments after the descriptor.
    const std::string targs = piece ? ", " + shape_t(type(t).shape) : "";
    const std::string args = piece ? piece_blk(t) + ", " + off : off;
    if (rep(x))
      return line("ct::store_one_t<" + shape_t(sh) + ">(" + name(x) + ", " + td(t) + ", ct::make_window_" +
                  (piece ? "in_piece" : "at") + "<" + shape_t(sh) + targs + ">(" + td(t) + ", " + args + "), team);" + comment(op));
    line(std::string("team.sync();  // ct.store_window: ordered with the ") + (piece ? "piece's" : "tensor's") + " other accesses");
    const int mb = d == DType::b1 ? 1 : dtype_size(d);
    const int vm = mem_vec(x, d);
    const ir::Param& p = param_of(t);
    const std::string w = "w" + std::to_string(uid_++);
    line("const auto " + w + " = ct::make_win_" + (piece ? "in_piece" : "at") + "<" + shape_t(sh) + targs + ", " +
         std::to_string(vm > 1 ? vm * mb : 0) + ">(" + td(t) + ", " + args + ", " + std::to_string(mb) + ");");
    line("ct::store<" + D(x) + ", " + shape_t(sh) + ", " + std::to_string(vm) + ", false, false, " +
         (p.facts.small ? "true" : "false") + ">(" + name(x) + ", " + td(t) + ", " + w + ", " + tp(x) + ", " + own(x) + ");" +
         comment(op));
    line("team.sync();");
  }

  // Where a shared tile's elements lie (device/async.h's placements).
  std::string placement(ValueId v) const {
    const Layout& l = lay(v);
    const Shape& sh = type(v).shape;
    // Rows of the last extent (a tile of higher rank has leading extents of 1).
    const std::int64_t cols = sh.back(), rows = numel(sh) / cols;
    if (l.is_swizzled()) {
      const std::int64_t es = dtype_size(type(v).dtype);  // 16-bit elements unless said (fp8: 1)
      return "ct::Swizzled<" + std::to_string(rows) + ", " + std::to_string(cols) + ", " + std::to_string(l.swizzle) +
             (es == 2 ? std::string() : ", " + std::to_string(es)) + ">";
    }
    return "ct::RowPad<" + std::to_string(l.row) + ", " + std::to_string(l.pad) + ">";
  }

  // A tile into its ring slot in shared memory (smem-alloc), copied asynchronously (device/async.h).
  void emit_load_async(const ir::Op& op, int mb) {
    const ValueId t = op.operands[0], r0 = op.results[0];
    const Shape& sh = type(r0).shape;
    CTILE_CHECK(op.smem_offset >= 0 && op.ring_slots > 0, "cuda codegen: load into shared memory at ", loc_str(op.loc),
                " has no slot");
    const std::int64_t slot_bytes = op.smem_bytes / op.ring_slots;
    const std::string slot = ring_slot(op);
    if (op.tma_map >= 0) {
      const std::string b = std::to_string(op.tma_bar), sv = "s" + name(r0);
      line("const int " + sv + " = " + slot + ";");
      line(ct(r0) + "* const " + name(r0) + " = (" + ct(r0) + "*)(ct_smem + " + std::to_string(op.smem_offset) + " + " + sv +
           " * " + std::to_string(slot_bytes) + ");" + comment(op) + " (TMA copy)");
      line("tr" + b + ".issued(" + sv + ");");
      if (ws()) return;  // the producer warpgroup copies it
      line("if (team.tid == 0) " + tma_copy(op, name(r0), sv) + ";");
      return;
    }
    line(ct(r0) + "* const " + name(r0) + " = (" + ct(r0) + "*)(ct_smem + " + std::to_string(op.smem_offset) + " + " + slot +
         " * " + std::to_string(slot_bytes) + ");" + comment(op) + " (async copy)");
    const Layout cl = copy_layout(r0);
    const int vm = std::min<int>(vec_of(cl), 16 / mb);
    const ir::Param& p = param_of(t);
    const bool aligned = vm > 1 && aligned_by_facts(p, sh, vm, mb);
    const std::string w = window_of(op, t, sh, vm > 1 && !aligned ? vm * mb : 0, mb);
    const bool whole = whole_by_facts(p, t, sh, vm, aligned) && vm * mb >= 4;
    line("if (" + own(r0) + ") ct::load_async<" + D(r0) + ", " + shape_t(sh) + ", " + std::to_string(vm) + ", " +
         (op.in_bounds ? "true" : "false") + ", " + (aligned ? "true" : "false") + ", " + (p.facts.small ? "true" : "false") +
         ", " + placement(r0) + (whole ? ", " + ct(r0) + ", true" : std::string()) + ">(" + name(r0) + ", " + td(t) + ", " + w +
         ", " + literal(type(r0).dtype, op.value) + ", " + tp(r0) + ");");
    line("else ct::cp_async_commit();  // a copy holds these elements: an empty group keeps the counts");
  }

  void emit_store(const ir::Op& op) {
    const ValueId t = op.operands[0], x = op.operands[1];
    const Shape& sh = type(t).shape;
    const DType d = type(x).dtype;
    const bool fence = scattered_pieces_.count(tindex(t)) > 0;
    if (rep(x))
      return line("ct::store_one_t<" + shape_t(sh) + ">(" + name(x) + ", " + td(t) + ", ct::make_window<" + shape_t(sh) + ">(" +
                  td(t) + ", " + piece_blk(t) + "), team);" + comment(op));
    const int mb = d == DType::b1 ? 1 : dtype_size(d);
    const int vm = mem_vec(x, d);
    const ir::Param& p = param_of(t);
    const bool aligned = vm > 1 && aligned_by_facts(p, sh, vm, mb);
    if (fence) line("team.sync();  // the piece is also written by ct.scatter_piece");
    const std::string w = window_of(op, t, sh, vm > 1 && !aligned ? vm * mb : 0, mb);
    line("ct::store<" + D(x) + ", " + shape_t(sh) + ", " + std::to_string(vm) + ", " + (op.in_bounds ? "true" : "false") +
         ", " + (aligned ? "true" : "false") + ", " + (p.facts.small ? "true" : "false") +
         (whole_by_facts(p, t, sh, vm, aligned) ? ", " + ct(x) + ", true" : std::string()) + ">(" + name(x) + ", " + td(t) + ", " +
         w + ", " + tp(x) + ", " + own(x) + ");" + comment(op));
    if (fence) line("team.sync();");
  }

  // Stages `xs` (at 16-byte aligned offsets) in the op's scratch, synchronises, and builds the
  // result from `src<...>(element)`, an index into the staged elements.
  void from_smem(const ir::Op& op, const std::vector<ValueId>& xs, const std::string& src) {
    const ValueId r0 = op.results[0];
    line(decl(r0) + ";" + comment(op));
    open("{");
    std::int64_t off = 0;
    for (ValueId x : xs) {
      if (rep(x)) line("if (team.leader()) " + smem(op, ct(x), off) + "[0] = " + name(x) + ";");
      else line("ct::stage<" + D(x) + ">(" + smem(op, ct(x), off) + ", " + name(x) + ", " + tp(x) + ", " + own(x) + ");");
      off += align16(numel_of(x) * dtype_size(type(x).dtype));
    }
    line("team.sync();");
    const std::string s = "((const " + ct(xs[0]) + "*)" + smem(op, "unsigned char") + ")";
    if (rep(r0)) line(name(r0) + " = " + s + "[" + src + "(0)];");
    else line("ct::gen<" + D(r0) + ">(" + name(r0) + ", " + tp(r0) + ", [&](int e) { return " + s + "[" + src + "(e)]; });");
    close();
  }

  void emit_convert_layout(const ir::Op& op) {
    const ValueId x = op.operands[0], r0 = op.results[0];
    if (rep(x)) return line(decl(r0) + " = " + name(x) + ";" + comment(op));
    const Layout& A = lay(x);
    const Layout& B = lay(r0);
    if (ir::registers_only(A, B)) {
      // Result register r holds the source register that names the same element bits.
      std::string table;
      for (std::size_t r = 0; r < static_cast<std::size_t>(B.regs()); ++r) {
        const std::int64_t e = B.element(static_cast<std::int64_t>(r), 0, 0);
        std::size_t s = 0;
        while (A.element(static_cast<std::int64_t>(s), 0, 0) != e) ++s;
        table += (r ? ", " : "") + std::to_string(s);
      }
      line(decl(r0) + ";" + comment(op) + " (registers only)");
      open("{");
      line("constexpr int from[" + std::to_string(B.regs()) + "] = {" + table + "};");
      line("CT_REGS(" + std::to_string(B.regs()) + ") " + name(r0) + ".set(r, " + name(x) + ".get(from[r]));");
      return close();
    }
    line(decl(r0) + ";" + comment(op));
    // Rows of at least 128 bytes: the scratch is swizzled by 16-byte chunks (dist.h scratch_at).
    const Shape& xs = type(x).shape;
    const std::int64_t row_chunks = xs.size() >= 2 ? xs.back() * dtype_size(type(x).dtype) / 16 : 0;
    line("ct::relayout<" + D(x) + ", " + D(r0) + (row_chunks >= 8 ? ", " + std::to_string(row_chunks) : std::string()) + ">(" +
         name(r0) + ", " + name(x) + ", " + smem(op, ct(x)) + ", " + tp(x) + ", " + own(x) + ", " + tp(r0) + ", team);");
  }

  // ---- reductions, scans, mma ----
  std::string reduce_op(const ir::Op& op, DType d, bool exact) const {
    const std::string t = ctype(d);
    switch (op.reduce) {
      case ir::ReduceKind::Sum: return "ct::RArith<" + t + ", " + (exact ? "true" : "false") + ", false>";
      case ir::ReduceKind::Prod: return "ct::RArith<" + t + ", " + (exact ? "true" : "false") + ", true>";
      case ir::ReduceKind::Max: return std::string("ct::RMinMax<") + t + ", true" + (op.propagate_nan ? ", true" : "") + ">";
      case ir::ReduceKind::Min: return std::string("ct::RMinMax<") + t + ", false" + (op.propagate_nan ? ", true" : "") + ">";
      case ir::ReduceKind::ArgMax: return "ct::RArg<" + t + ", true>";
      case ir::ReduceKind::ArgMin: return "ct::RArg<" + t + ", false>";
    }
    throw InternalError("cuda codegen: bad reduce kind");
  }

  void emit_reduce(const ir::Op& op) {
    const ValueId x = op.operands[0], r = op.results[0];
    const DType d = type(x).dtype;
    if (rep(x)) {
      const std::string o = reduce_op(op, d, true);
      return line("const " + ct(r) + " " + name(r) + " = " + o + "::finish(" + o + "::lift(" + name(x) + ", 0));" + comment(op));
    }
    const Shape& sh = type(x).shape;
    if (op.reduce == ir::ReduceKind::Prod && is_float(d)) {
      // In index order, from shared memory (see dist.h's reduce_in_order).
      const std::string o = reduce_op(op, d, true);
      if (rep(r))
        return line("const " + ct(r) + " " + name(r) + " = ct::reduce_one_in_order<" + o + ", " + D(x) + ", " +
                    std::to_string(numel_of(x)) + ">(" + name(x) + ", " + smem(op, ct(x)) + ", " + tp(x) + ", " + own(x) +
                    ", team);" + comment(op));
      std::int64_t outer, len, inner;
      split(sh, op.axis, outer, len, inner);
      line(decl(r) + ";" + comment(op));
      return line("ct::reduce_in_order<" + o + ", " + D(x) + ", " + D(r) + ", " + std::to_string(outer) + ", " +
                  std::to_string(len) + ", " + std::to_string(inner) + ">(" + name(r) + ", " + name(x) + ", " + smem(op, ct(x)) +
                  ", " + tp(x) + ", " + own(x) + ", " + tp(r) + ", team);");
    }
    const AxisBits ab = axis_bits(lay(x), sh, op.axis);
    const int shift = ab.shift, rmask = ab.rmask, lmask = ab.lmask, wmask = ab.wmask;
    const std::string scratch = op.smem_offset >= 0 ? smem(op, "unsigned char") : "(unsigned char*)nullptr";
    const std::string o = reduce_op(op, d, false);
    if (fused_.count(x)) {  // the elements computed as the reduction reads them (fuse-elementwise)
      const std::string src = "[&](int r, int k_) { return " + o + "::lift(" + get(x, "r") + ", k_); }";
      if (rep(r))
        return line("const " + ct(r) + " " + name(r) + " = " + o + "::finish(ct::reduce_one_by<" + o + ", " + D(x) + ", " +
                    std::to_string(lmask) + ", " + std::to_string(wmask) + ">(" + src + ", " + scratch + ", " + tp(x) +
                    ", team));" + comment(op));
      line(decl(r) + ";" + comment(op));
      return line("ct::reduce_by<" + o + ", " + D(x) + ", " + D(r) + ", " + std::to_string(shift) + ", " +
                  std::to_string(sh[static_cast<std::size_t>(op.axis)]) + ", " + std::to_string(rmask) + ", " +
                  std::to_string(lmask) + ", " + std::to_string(wmask) + ">(" + src + ", [&](int i, const " + o +
                  "::Acc& a) { " + name(r) + ".set(i, " + o + "::finish(a)); }, " + scratch + ", " + tp(x) + ", " + tp(r) +
                  ", team);");
    }
    if (rep(r))
      return line("const " + ct(r) + " " + name(r) + " = ct::reduce_one<" + o + ", " + D(x) + ", 0, " + std::to_string(lmask) +
                  ", " + std::to_string(wmask) + ">(" + name(x) + ", " + scratch + ", " + tp(x) + ", team);" + comment(op));
    line(decl(r) + ";" + comment(op));
    line("ct::reduce<" + o + ", " + D(x) + ", " + D(r) + ", " + std::to_string(shift) + ", " +
         std::to_string(sh[static_cast<std::size_t>(op.axis)]) + ", " + std::to_string(rmask) + ", " + std::to_string(lmask) +
         ", " + std::to_string(wmask) + ">(" + name(r) + ", " + name(x) + ", " + scratch + ", " + tp(x) + ", " + tp(r) + ", team);");
  }

  static void split(const Shape& s, int axis, std::int64_t& outer, std::int64_t& len, std::int64_t& inner) {
    outer = len = inner = 1;
    for (int d = 0; d < static_cast<int>(s.size()); ++d) {
      const std::int64_t e = s[static_cast<std::size_t>(d)];
      if (d < axis) outer *= e;
      else if (d == axis) len = e;
      else inner *= e;
    }
  }

  void emit_scan(const ir::Op& op) {
    const ValueId x = op.operands[0], r = op.results[0];
    const std::string t = ct(x);
    std::string comb;
    switch (op.reduce) {
      case ir::ReduceKind::Sum: comb = "ct::ScanSum<" + t + ">"; break;
      case ir::ReduceKind::Prod: comb = "ct::ScanProd<" + t + ">"; break;
      case ir::ReduceKind::Max: comb = "ct::ScanMinMax<" + t + ", true>"; break;
      case ir::ReduceKind::Min: comb = "ct::ScanMinMax<" + t + ", false>"; break;
      default: throw InternalError("cuda codegen: bad scan kind");
    }
    if (rep(x)) {  // one element: itself, or the identity when exclusive
      if (op.exclusive) return line(decl(r) + " = " + comb + "::down(" + comb + "::identity());" + comment(op));
      return line(decl(r) + " = " + name(x) + ";" + comment(op));
    }
    std::int64_t outer, len, inner;
    split(type(x).shape, op.axis, outer, len, inner);
    line(decl(r) + ";" + comment(op));
    line("ct::scan<" + comb + ", " + D(x) + ", " + std::to_string(outer) + ", " + std::to_string(len) + ", " +
         std::to_string(inner) + ", " + (op.exclusive ? "true" : "false") + ", " + (op.reverse ? "true" : "false") + ">(" +
         name(r) + ", " + name(x) + ", " + smem(op, t) + ", " + tp(x) + ", " + own(x) + ", team);");
  }

  // ---- reductions and scans over a combine function (device/combine.h) ----
  // The member of a ct::Pack that holds value i.
  static std::string member(std::size_t i) {
    std::string m;
    for (std::size_t j = 0; j < i; ++j) m += "t.";
    return m + "h";
  }
  // The op's combine region as a struct at namespace scope, before the kernel: its Acc (a Pack of
  // one value of each combined tile) and a combine() whose body is the region's scalar ops, emitted
  // like any other op. Returns the struct's name.
  std::string emit_combine_fn(const ir::Op& op) {
    const std::string fn = "Combine" + std::to_string(uid_++);
    const std::size_t nk = op.results.size();
    const ir::Region& body = op.regions[0];
    std::string pack = "ct::Pack<";
    for (std::size_t i = 0; i < nk; ++i) pack += (i ? ", " : "") + ct(op.results[i]);
    pack += ">";
    std::ostringstream kernel_text;
    out_.swap(kernel_text);
    const int ind = ind_;
    ind_ = 0;
    open("struct " + fn + " {" + comment(op));
    line("typedef " + pack + " Acc;");
    open("static CT_DEV Acc combine(const Acc& a, const Acc& b) {");
    for (std::size_t i = 0; i < body.args.size(); ++i) {
      const ValueId a = body.args[i];
      line("const " + ct(a) + " " + name(a) + " = " + (i < nk ? "a." : "b.") + member(i % nk) + ";");
      line("(void)" + name(a) + ";");
    }
    emit_region(body);
    line("Acc r;");
    const ir::Op& y = yield_of(body);
    for (std::size_t i = 0; i < nk; ++i) line("r." + member(i) + " = " + name(y.operands[i]) + ";");
    line("return r;");
    close();
    close("};");
    funcs_ << out_.str() << "\n";
    out_.swap(kernel_text);
    ind_ = ind;
    return fn;
  }
  // A lambda building fn's Acc from element `idx` (a C++ expression) of each of `xs`: registers
  // (get) or staged arrays.
  std::string pack_of(const std::string& fn, const std::vector<std::string>& xs, const std::string& params,
                      const std::string& idx) const {
    std::string l = "[&](" + params + ") { " + fn + "::Acc a; ";
    for (std::size_t i = 0; i < xs.size(); ++i) l += "a." + member(i) + " = " + xs[i] + idx + "; ";
    return l + "return a; }";
  }

  void emit_reduce_with(const ir::Op& op) {
    const std::size_t nk = op.results.size();
    const ValueId x = op.operands[0], r0 = op.results[0];
    if (rep(x)) {  // one element along the axis and everywhere: the elements themselves
      for (std::size_t i = 0; i < nk; ++i) line(decl(op.results[i]) + " = " + name(op.operands[i]) + ";" + comment(op));
      return;
    }
    const std::string fn = emit_combine_fn(op);
    const Shape& sh = type(x).shape;
    const AxisBits ab = axis_bits(lay(x), sh, op.axis);
    const int shift = ab.shift, rmask = ab.rmask, lmask = ab.lmask, wmask = ab.wmask;
    const std::string scratch = op.smem_offset >= 0 ? smem(op, "unsigned char") : "(unsigned char*)nullptr";
    std::vector<std::string> gets;
    for (std::size_t i = 0; i < nk; ++i) gets.push_back(name(op.operands[i]) + ".get");
    const std::string src = pack_of(fn, gets, "int r, int", "(r)");
    if (rep(r0)) {
      const std::string a = "acc" + std::to_string(uid_++);
      line("const " + fn + "::Acc " + a + " = ct::reduce_one_by<" + fn + ", " + D(x) + ", " + std::to_string(lmask) + ", " +
           std::to_string(wmask) + ">(" + src + ", " + scratch + ", " + tp(x) + ", team);" + comment(op));
      for (std::size_t i = 0; i < nk; ++i)
        line("const " + ct(op.results[i]) + " " + name(op.results[i]) + " = " + a + "." + member(i) + ";");
      return;
    }
    for (std::size_t i = 0; i < nk; ++i) line(decl(op.results[i]) + ";" + (i == 0 ? comment(op) : std::string()));
    std::string sink = "[&](int i, const " + fn + "::Acc& a) { ";
    for (std::size_t i = 0; i < nk; ++i) sink += name(op.results[i]) + ".set(i, a." + member(i) + "); ";
    sink += "}";
    line("ct::reduce_by<" + fn + ", " + D(x) + ", " + D(r0) + ", " + std::to_string(shift) + ", " +
         std::to_string(sh[static_cast<std::size_t>(op.axis)]) + ", " + std::to_string(rmask) + ", " + std::to_string(lmask) +
         ", " + std::to_string(wmask) + ">(" + src + ", " + sink + ", " + scratch + ", " + tp(x) + ", " + tp(r0) + ", team);");
  }

  void emit_scan_with(const ir::Op& op) {
    const std::size_t nk = op.results.size();
    const ValueId x = op.operands[0];
    if (rep(x)) {  // one element: itself, or the identity when exclusive
      for (std::size_t i = 0; i < nk; ++i)
        line(decl(op.results[i]) + " = " + name(op.operands[op.exclusive ? nk + i : i]) + ";" + comment(op));
      return;
    }
    const std::string fn = emit_combine_fn(op);
    std::int64_t outer, len, inner;
    split(type(x).shape, op.axis, outer, len, inner);
    for (std::size_t i = 0; i < nk; ++i) line(decl(op.results[i]) + ";" + (i == 0 ? comment(op) : std::string()));
    open("{");
    // Each tile staged at a 16-byte aligned offset of the scratch (smem-alloc's size).
    const std::string u = std::to_string(uid_++);
    std::vector<std::string> staged;
    std::int64_t off = 0;
    for (std::size_t i = 0; i < nk; ++i) {
      const ValueId xi = op.operands[i];
      staged.push_back("s" + u + "_" + std::to_string(i));
      line(ct(xi) + "* const " + staged.back() + " = " + smem(op, ct(xi), off) + ";");
      line("ct::stage<" + D(xi) + ">(" + staged.back() + ", " + name(xi) + ", " + tp(xi) + ", " + own(xi) + ");");
      off += align16(numel_of(xi) * dtype_size(type(xi).dtype));
    }
    line("team.sync();");
    line(fn + "::Acc id" + u + " = " + fn + "::Acc();");
    if (op.exclusive)
      for (std::size_t i = 0; i < nk; ++i) line("id" + u + "." + member(i) + " = " + name(op.operands[nk + i]) + ";");
    std::string put = "[&](int e, const " + fn + "::Acc& a) { ";
    for (std::size_t i = 0; i < nk; ++i) put += staged[i] + "[e] = a." + member(i) + "; ";
    put += "}";
    line("ct::scan_lines<" + fn + ", " + std::to_string(outer) + ", " + std::to_string(len) + ", " + std::to_string(inner) +
         ", " + (op.exclusive ? "true" : "false") + ", " + (op.reverse ? "true" : "false") + ">(" +
         pack_of(fn, staged, "int e", "[e]") + ", " + put + ", id" + u + ", team);");
    line("team.sync();");
    for (std::size_t i = 0; i < nk; ++i)
      line("ct::gen<" + D(op.results[i]) + ">(" + name(op.results[i]) + ", " + tp(op.results[i]) + ", [&](int e) { return " +
           staged[i] + "[e]; });");
    close();
  }

  void emit_mma(const ir::Op& op) {
    const ValueId a = op.operands[0], b = op.operands[1], c = op.operands[2], r = op.results[0];
    const std::int64_t M = type(a).shape[0], K = type(a).shape[1], N = type(b).shape[1];
    const std::int64_t boff = align16(numel_of(a) * dtype_size(type(a).dtype));
    if (op.tensor_core) return emit_mma_tc(op);
    const std::string sa = smem(op, ct(a)), sb = smem(op, ct(b), boff);
    line(decl(r) + ";" + comment(op));
    open("{");
    for (auto [v, s] : {std::pair{a, sa}, std::pair{b, sb}}) {
      if (rep(v)) line("if (team.leader()) " + s + "[0] = " + name(v) + ";");
      else line("ct::stage<" + D(v) + ">(" + s + ", " + name(v) + ", " + tp(v) + ", " + own(v) + ");");
    }
    line("team.sync();");
    if (rep(r))
      line(name(r) + " = ct::mma_elem<" + std::to_string(N) + ", " + std::to_string(K) + ">(" + name(c) + ", " + sa + ", " + sb +
           ", 0, 0);");
    else
      line("ct::mma<" + D(r) + ", " + std::to_string(M) + ", " + std::to_string(N) + ", " + std::to_string(K) + ">(" + name(r) +
           ", " + name(c) + ", " + sa + ", " + sb + ", " + tp(r) + ");");
    close();
  }

  // On the tensor cores (device/mma.h): both operands staged with padded rows, one barrier, then
  // each warp's ldmatrix + mma.sync over its warp tile of the accumulator.
  void emit_mma_tc(const ir::Op& op) {
    const ValueId a = op.operands[0], b = op.operands[1], c = op.operands[2], r = op.results[0];
    const std::int64_t M = type(a).shape[0], K = type(a).shape[1], N = type(b).shape[1];
    const int W = k_.target.warps;
    if (lay(a).is_swizzled() || lay(b).is_swizzled()) return emit_mma_wg(op);
    const ir::MmaWarpGrid g = ir::mma_warp_grid(M, N, W);
    CTILE_CHECK(g.wm > 0 && lay(r) == ir::mma_accumulator(M, N, W) && lay(c) == lay(r),
                "cuda codegen: tensor-core mma at ", loc_str(op.loc), " without its accumulator layout");
    CTILE_CHECK(!rep(a) && !rep(b), "cuda codegen: tensor-core mma of one-element operands");
    const int pad = ir::kMmaRowPad;
    const std::int64_t es = dtype_size(type(a).dtype);
    // Operands in shared memory are read in place (their copies waited for); the others are staged
    // in the scratch with padded rows.
    for (ValueId v : {a, b})
      CTILE_CHECK(!shared(v) || lay(v).pad == pad, "cuda codegen: tensor-core operand in shared memory with padding ",
                  lay(v).pad);
    const bool both = shared(a) && shared(b);
    const std::int64_t boff = shared(a) ? 0 : align16(M * (K + pad) * es);
    const std::string sa = shared(a) ? name(a) : smem(op, ct(a)), sb = shared(b) ? name(b) : both ? "" : smem(op, ct(b), boff);
    line(decl(r) + ";" + comment(op) + " (tensor cores)");
    open("{");
    if (!shared(a))
      line("ct::stage_rows<" + D(a) + ", " + std::to_string(K) + ", " + std::to_string(pad) + ">(" + sa + ", " + name(a) + ", " +
           tp(a) + ", " + own(a) + ");");
    if (!shared(b))
      line("ct::stage_rows<" + D(b) + ", " + std::to_string(N) + ", " + std::to_string(pad) + ">(" + sb + ", " + name(b) + ", " +
           tp(b) + ", " + own(b) + ");");
    if (op.async_wait >= 0) line("ct::cp_async_wait<" + std::to_string(op.async_wait) + ">();");
    line("team.sync();");
    line("ct::mma_tc<" + D(r) + ", " + std::to_string(M) + ", " + std::to_string(N) + ", " + std::to_string(K) + ", " +
         std::to_string(g.wm) + ", " + std::to_string(g.wn) + ", " + std::to_string(pad) + ">(" + name(r) + ", " + name(c) +
         ", " + sa + ", " + sb + ", team.lane, team.warp);");
    close();
  }

  // On Hopper's warpgroup instructions (device/wgmma.h): both operands swizzled in shared memory
  // (their copies waited for, fenced for the async proxy, one barrier), then each warpgroup's
  // wgmma.mma_async over its 64-row blocks of the accumulator.
  void emit_mma_wg(const ir::Op& op) {
    const ValueId a = op.operands[0], b = op.operands[1], c = op.operands[2], r = op.results[0];
    const std::int64_t M = type(a).shape[0], K = type(a).shape[1], N = type(b).shape[1];
    const int W = k_.target.warps;
    const bool tb = !lay(b).trans;  // B N-major (a row-major [K, N] tile), else K-major (a transposed [N, K] one)
    const bool ra = !shared(a);     // register-A: A in registers, in the fragment layout
    const int es = static_cast<int>(dtype_size(type(a).dtype));  // 2, or 1 for fp8 (both operands K-major in shared memory)
    CTILE_CHECK(sm_ == 90 && shared(b) && (ra ? lay(a) == ir::wgmma_a_fragment(M, K, W) : !lay(a).trans) &&
                    lay(b).swizzle == (tb ? 128 : ir::wgmma_swizzle(K, es)) && lay(r) == ir::wgmma_accumulator(M, N, W) &&
                    lay(c) == lay(r) && type(r).dtype == DType::f32 && (es == 2 || (!ra && !tb)),
                "cuda codegen: wgmma product at ", loc_str(op.loc), " without swizzled operands and its accumulator layout");
    const std::string targs = D(r) + ", " + std::to_string(M) + ", " + std::to_string(N) + ", " + std::to_string(K) + ", " +
                              std::to_string(W) + ", " + std::to_string(ra ? lay(b).swizzle : lay(a).swizzle) + ", " +
                              (tb ? "1" : "0") + (ra ? ", " + ct(a) + ", " + D(a) : std::string());
    const std::string fn = ra ? "ct::mma_wg_rs<" : "ct::mma_wg<", issue = ra ? "ct::mma_wg_issue_rs<" : "ct::mma_wg_issue<";
    if (op.in_flight) {
      // The accumulator is the loop's state (c, a region argument bound to it by reference): the
      // products accumulate into it in place and stay in flight; the yield leaves the slot alone.
      line(decl_type(r) + "& " + name(r) + " = " + name(c) + ";" + comment(op) + " (wgmma, in flight)");
      in_place_[r] = c;
    } else {
      line(decl(r) + ";" + comment(op) + " (wgmma)");
    }
    open("{");
    if (op.async_wait >= 0) line("ct::cp_async_wait<" + std::to_string(op.async_wait) + ">();");
    bool async_copies = false;
    std::vector<std::string> read, retire;  // warp specialisation: the slots this product reads, handed back when done
    std::vector<std::string> skip;          // the K split: the other warpgroup's step keeps the slots' phases in step
    const bool split = ksplit_ && op.in_flight;
    CTILE_CHECK(!split || !iters_.empty(), "cuda codegen: the K split's product at ", loc_str(op.loc),
                " is not in a loop over ring slots");
    std::vector<std::string> waits;
    for (ValueId v : {a, b}) {
      if (!shared(v)) continue;
      const auto it = tma_of_.find(v);
      if (it == tma_of_.end()) {
        async_copies = true;
        continue;
      }
      const ir::Op& ld = *it->second;
      if (hoisted_.count(&ld)) continue;  // waited for once, before the op that holds this product
      const std::string bar = std::to_string(ld.tma_bar), q = "q" + name(v);
      // The slot from the tile's address: 32-bit unsigned arithmetic (a shift where a slot's bytes
      // are a power of two), not a 64-bit signed pointer division in every iteration.
      line("const int " + q + " = (int)((unsigned)((const unsigned char*)" + name(v) + " - (ct_smem + " +
           std::to_string(ld.smem_offset) + ")) / " + std::to_string(ld.smem_bytes / ld.ring_slots) + "u);");
      waits.push_back("tr" + bar + ".wait(tb" + bar + ", " + q + ");  // its TMA copy");
      skip.push_back("tr" + bar + ".skip(" + q + ");");
      if (ws()) read.push_back("tr" + bar + ".read(" + q + ");");
      if (ws()) retire.push_back("tr" + bar + ".retire" + std::string(op.in_flight ? "" : "_all") + "(te" + bar +
                                 ", team.lane == 0);  // slots whose products are done, back to the producer");
    }
    if (split) open("if ((" + iters_.back() + " & 1) == kwg) {  // the K split: this warpgroup's step");
    for (const std::string& s : waits) line(s);
    if (async_copies) line("ct::wgmma_smem_fence();  // the copies, visible to the async proxy");
    // Without a producer the barrier keeps the copies of the next iterations off the slots the
    // other warpgroups' products may still read; with one, the slots' empty barriers do.
    if (!ws() || async_copies) line("team.sync();");
    if (op.in_flight) {
      line(issue + targs + ">(" + name(r) + ", " + name(a) + ", " + name(b) + ", team.tid);");
      line("ct::wgmma_wait<1>();  // the previous iteration's products are done");
    } else if (k_.target.pingpong && for_depth_ > 0) {
      // Ping-pong: this warpgroup's turn to issue, the other's as soon as the products are issued
      // (the tensor cores run them in issue order), then the wait.
      const std::string pp = std::to_string(ir::kPingPongBarrier);
      line(name(r) + " = " + name(c) + ";");
      line("ct::bar_sync(" + pp + " + (team.tid >> 7), 256);  // this warpgroup's turn (ping-pong)");
      line(issue + targs + ">(" + name(r) + ", " + name(a) + ", " + name(b) + ", team.tid);");
      line("ct::bar_arrive(" + pp + " + ((team.tid >> 7) ^ 1), 256);  // the other warpgroup's turn");
      line("ct::wgmma_wait<0>();");
    } else {
      line(fn + targs + ">(" + name(r) + ", " + name(c) + ", " + name(a) + ", " + name(b) + ", team.tid);");
    }
    for (const std::string& s : read) line(s);
    for (const std::string& s : retire) line(s);
    if (split) {
      close();
      open("else {  // the other warpgroup's step");
      for (const std::string& s : skip) line(s);
      close();
    }
    close();
  }

  // ---- control flow ----
  void bind_args(const ir::Region& reg, std::size_t first, const std::vector<std::string>& state) {
    for (std::size_t i = first; i < reg.args.size(); ++i) {
      const ValueId a = reg.args[i];
      line(decl_type(a) + "& " + name(a) + " = " + state[i - first] + ";");
      line("(void)" + name(a) + ";");
    }
  }
  void yield_into(const ir::Region& reg, const std::vector<std::string>& state, const std::vector<ValueId>& types) {
    const ir::Op& y = yield_of(reg);
    const int u = uid_++;
    // A value that is the slot's own state (an in-flight wgmma accumulator) is not copied.
    auto own_state = [&](std::size_t i) {
      const auto it = in_place_.find(y.operands[i]);
      return it != in_place_.end() && reg.args.size() >= state.size() && it->second == reg.args[reg.args.size() - state.size() + i];
    };
    for (std::size_t i = 0; i < y.operands.size(); ++i)
      if (!own_state(i)) line((shared(types[i]) ? decl_type(types[i]) + " const" : "const " + decl_type(types[i])) + " y" + std::to_string(u) + "_" +
           std::to_string(i) + " = " + name(y.operands[i]) + ";");
    for (std::size_t i = 0; i < y.operands.size(); ++i)
      if (!own_state(i)) line(state[i] + " = y" + std::to_string(u) + "_" + std::to_string(i) + ";");
  }

  bool used(ValueId v) const { return used_[static_cast<std::size_t>(v)] != 0; }
  // Control-flow results nobody reads are neither declared nor assigned.
  void declare_results(const ir::Op& op) {
    for (ValueId r : op.results)
      if (used(r)) line(decl(r) + ";");
  }

  void emit_for(const ir::Op& op) {
    const int u = uid_++;
    const std::string us = std::to_string(u);
    const std::size_t nc = op.results.size();
    declare_results(op);
    open_loop(op, us);
    line("if (st" + us + " <= 0) ct::trap_step_t(" + c_string(loc_str(op.loc)) + ", st" + us + ", team.leader());");
    std::vector<std::string> state;
    std::vector<ValueId> types;
    for (std::size_t i = 0; i < nc; ++i) {
      state.push_back("c" + us + "_" + std::to_string(i));
      types.push_back(op.results[i]);
      line(decl_type(op.results[i]) + " " + state.back() + " = " + name(op.operands[3 + i]) + ";");
    }
    const ir::Region& body = op.regions[0];
    // acc-split: the iterations go in pairs, the second of each into a second accumulator; with
    // the K split the second consumer warpgroup runs the odd ones into its own.
    const int marked = acc_split_slot(op);
    const bool kspl = marked >= 0 && ks();
    const int split = kspl ? -1 : marked;
    if (kspl)
      line("if (kwg == 1) ct::regs_zero(" + state[static_cast<std::size_t>(marked)] + ");  // the K split: its own accumulator");
    std::vector<std::string> state2 = state;
    const std::string acc = split >= 0 ? state[static_cast<std::size_t>(split)] : "";
    const std::string acc2 = acc + "b";
    if (split >= 0) {
      state2[static_cast<std::size_t>(split)] = acc2;
      line(decl_type(op.results[static_cast<std::size_t>(split)]) + " " + acc2 + ";");
      line("ct::regs_zero(" + acc2 + ");  // acc-split: the odd iterations' accumulator");
    }
    const bool rotating = begin_rotation(body, us);
    open("for (long long iv" + us + " = lb" + us + "; iv" + us + " < ub" + us + ";) {");
    for (int half = 0; half < (split >= 0 ? 2 : 1); ++half) {
      if (half == 1) {
        line("if (iv" + us + " >= ub" + us + ") break;");
        open("{  // acc-split: the pair's second iteration, into the second accumulator");
      }
      line("const long long " + name(body.args[0]) + " = iv" + us + ";");
      line("(void)" + name(body.args[0]) + ";");
      bind_args(body, 1, half ? state2 : state);
      ++for_depth_;
      ksplit_ = kspl;
      emit_region(body);
      ksplit_ = false;
      --for_depth_;
      yield_into(body, half ? state2 : state, types);
      if (rotating) line("++it" + us + ";");
      line("if (iv" + us + " > ct::kI64Max - st" + us + ") break;");
      line("iv" + us + " += st" + us + ";");
      if (half == 1) close();
    }
    close();
    if (rotating) iters_.pop_back();
    for (const auto& o : body.ops)
      if (o->tma_map >= 0 && o->ring_slot < 0) {
        const std::string b = std::to_string(o->tma_bar);
        if (ws())
          line("tr" + b + ".drain_release(tb" + b + ", te" + b + (kspl ? ", team.lane == 0 && kwg == 0);" : ", team.lane == 0);") +
               "  // the copies issued ahead past the last iteration");
        else line("tr" + b + ".drain(tb" + b + ");  // the TMA copies issued ahead past the last iteration");
      }
    for (const auto& o : body.ops)
      if (o->in_flight) {
        line("ct::wgmma_wait<0>();  // the last iteration's products");
        if (ws()) {
          std::set<std::int64_t> rings;
          for (int j = 0; j < 2; ++j)
            if (auto it = tma_of_.find(o->operands[static_cast<std::size_t>(j)]); it != tma_of_.end() && !hoisted_.count(it->second))
              rings.insert(it->second->tma_bar);
          for (std::int64_t bar : rings)
            line("tr" + std::to_string(bar) + ".retire_all(te" + std::to_string(bar) + ", team.lane == 0);");
        }
        break;
      }
    if (split >= 0)
      line("ct::regs_add(" + acc + ", " + acc2 + ");  // acc-split: the two accumulators' sum");
    if (kspl) {
      // The second warpgroup leaves its accumulator in shared memory (once the first has added the
      // previous tile block's) and goes on to the next tile block; the first adds it.
      const std::string acc_s = state[static_cast<std::size_t>(marked)], scratch = std::to_string(k_.target.k_split_scratch);
      const std::string ready = std::to_string(ir::kKSplitBarrier), free = std::to_string(ir::kKSplitBarrier + 1);
      open("if (kwg == 1) {  // the K split: the odd K steps' accumulator, to the tile block's warpgroup");
      line("if (!ks_first) ct::bar_sync(" + free + ", 256);  // the previous one added");
      line("ct::regs_put_split(" + acc_s + ", (float*)(ct_smem + " + scratch + "), team.tid);");
      line("ct::bar_arrive(" + ready + ", 256);");
      line("ks_first = false;");
      line("continue;");
      close();
      line("ct::bar_sync(" + ready + ", 256);  // the K split: the odd K steps' accumulator is in shared memory");
      line("ct::regs_add_split(" + acc_s + ", (const float*)(ct_smem + " + scratch + "), team.tid);");
      line("ct::bar_arrive(" + free + ", 256);");
    }
    for (std::size_t i = 0; i < nc; ++i)
      if (used(op.results[i])) line(name(op.results[i]) + " = " + state[i] + ";");
    close();
  }
  // The carried slot of a loop marked acc_split = 2 (acc-split): the accumulator of its in-flight
  // product; -1 when unmarked.
  int acc_split_slot(const ir::Op& f) const {
    if (f.acc_split != 2) return -1;
    const ir::Region& body = f.regions[0];
    for (const auto& o : body.ops)
      if (o->kind == OpKind::Mma && o->in_flight)
        for (std::size_t j = 1; j < body.args.size(); ++j)
          if (body.args[j] == o->operands[2]) return static_cast<int>(j - 1);
    CTILE_CHECK(false, "cuda codegen: a loop marked acc_split at ", loc_str(f.loc), " carries no in-flight accumulator");
    return -1;
  }

  void emit_if(const ir::Op& op) {
    declare_results(op);
    open("if (" + name(op.operands[0]) + ") {" + comment(op));
    for (int reg = 0; reg < 2; ++reg) {
      const ir::Region& R = op.regions[static_cast<std::size_t>(reg)];
      emit_region(R);
      const ir::Op& y = yield_of(R);
      for (std::size_t i = 0; i < op.results.size(); ++i)
        if (used(op.results[i])) line(name(op.results[i]) + " = " + name(y.operands[i]) + ";");
      if (reg == 0) {
        --ind_;
        open("} else {");
      }
    }
    close();
  }

  void emit_while(const ir::Op& op) {
    const int u = uid_++;
    const std::string us = std::to_string(u);
    declare_results(op);
    open("{" + comment(op));
    std::vector<std::string> state;
    std::vector<ValueId> types;
    for (std::size_t i = 0; i < op.results.size(); ++i) {
      state.push_back("c" + us + "_" + std::to_string(i));
      types.push_back(op.results[i]);
      line(decl_type(op.results[i]) + " " + state.back() + " = " + name(op.operands[i]) + ";");
    }
    open("while (true) {");
    line("bool go" + us + ";");
    open("{");
    const ir::Region& cond = op.regions[0];
    bind_args(cond, 0, state);
    emit_region(cond);
    line("go" + us + " = " + name(yield_of(cond).operands[0]) + ";");
    close();
    line("if (!go" + us + ") break;");
    open("{");
    const ir::Region& body = op.regions[1];
    bind_args(body, 0, state);
    emit_region(body);
    yield_into(body, state, types);
    close();
    close();
    for (std::size_t i = 0; i < op.results.size(); ++i)
      if (used(op.results[i])) line(name(op.results[i]) + " = " + state[i] + ";");
    close();
  }
};

}  // namespace

CodegenOptions codegen_options_from_env(int sm) {
  CodegenOptions o;
  o.sm = sm;
  // Older spellings of the experiment knobs (CTILE_THREADS: threads per tile block; CTILE_PREFETCH:
  // loads one tile block ahead), then the current ones (core/options.hpp).
  if (const char* v = std::getenv("CTILE_THREADS"); v && *v) {
    char* end = nullptr;
    const long n = std::strtol(v, &end, 10);
    if (*end != '\0' || n < 32 || n > 1024 || (n & (n - 1)) != 0)
      throw UserError(detail::cat("CTILE_THREADS='", v, "' is not a power of two from 32 to 1024 (threads per tile block)"));
    o.options.warps = static_cast<int>(n / 32);
  }
  if (const char* v = std::getenv("CTILE_PREFETCH"); v && *v && std::strcmp(v, "0") != 0) o.options.stages = 2;
  o.options = o.options.with_env_overrides();
  return o;
}

ir::Kernel lower(const ir::Kernel& k, const CodegenOptions& opt) {
  ir::verify(k);
  // The kernel's own options (from its launch), each overridden by one set in `opt` (the
  // environment's experiments, or a caller's explicit choice).
  KernelOptions o = k.options;
  if (opt.options.warps) o.warps = opt.options.warps;
  if (opt.options.stages) o.stages = opt.options.stages;
  if (opt.options.blocks_per_cta) o.blocks_per_cta = opt.options.blocks_per_cta;
  if (opt.options.loop_prefetch) o.loop_prefetch = opt.options.loop_prefetch;
  if (opt.options.min_ctas_per_sm) o.min_ctas_per_sm = opt.options.min_ctas_per_sm;
  if (opt.options.tma) o.tma = opt.options.tma;
  if (opt.options.warp_specialize) o.warp_specialize = opt.options.warp_specialize;
  if (opt.options.pingpong) o.pingpong = opt.options.pingpong;
  o.fast_math = o.fast_math || opt.options.fast_math;
  o.simt_mma = o.simt_mma || opt.options.simt_mma;
  o.sync_mma = o.sync_mma || opt.options.sync_mma;
  o.validate(k.name);
  ir::Kernel g = ir::clone(k);
  g.options = o;
  passes::PassContext ctx;
  ctx.options = o;
  ctx.sm = opt.sm;
  passes::cuda_pipeline().run(g, ctx);
  return g;
}

GeneratedKernel generate(const ir::Kernel& k, const CodegenOptions& opt) {
  const ir::Kernel g = lower(k, opt);
  return Emitter(g, opt.sm).run();
}

std::int64_t launch_blocks(const GeneratedKernel& g, std::int64_t tile_blocks) {
  const std::int64_t b = std::max(1, g.blocks_per_cta);
  return (tile_blocks + b - 1) / b;
}

std::vector<std::byte> pack_params(const ir::Kernel& k, const LaunchConfig& cfg, std::span<const ArgValue> args,
                                   const GeneratedKernel* g, const TensorMapWriter& write_map) {
  const std::string kname = cfg.kernel_name.empty() ? k.name : cfg.kernel_name;
  if (static_cast<int>(cfg.grid.size()) != k.grid_rank)
    throw UserError(detail::cat("kernel '", kname, "' has a ", k.grid_rank, "-D grid, launched with ", shape_str(cfg.grid)));
  if (args.size() != k.params.size())
    throw UserError(detail::cat("kernel '", kname, "' takes ", k.params.size(), " arguments, got ", args.size()));
  std::size_t nt = 0, ns = 0;
  for (const ir::Param& p : k.params) (p.type.kind == ir::TypeKind::Tile ? ns : nt)++;
  const bool maps = g && !g->maps.empty();
  CTILE_CHECK(!maps || write_map, "cuda codegen: kernel '", kname, "' copies with TMA: its tensor maps need an encoder");
  std::vector<std::byte> buf(maps ? g->params_bytes : kGridBytes + kTensorDescBytes * nt + 8 * ns);
  auto put = [&](std::size_t off, auto v) { std::memcpy(buf.data() + off, &v, sizeof v); };
  for (std::size_t d = 0; d < 6; ++d) put(8 * d, d < cfg.grid.size() ? std::int64_t{cfg.grid[d]} : std::int64_t{1});
  std::size_t ti = 0, si = 0;
  for (std::size_t i = 0; i < k.params.size(); ++i) {
    const ir::Param& p = k.params[i];
    if (p.type.kind == ir::TypeKind::Tile) {
      const std::uint64_t w = numeric::dispatch(p.type.dtype, [&]<class T>(std::type_identity<T>) -> std::uint64_t {
        const T x = numeric::scalar_to<T>(args[i].scalar);
        if constexpr (std::is_same_v<T, bool>) return x ? 1u : 0u;
        else if constexpr (is_narrow_float_element<T>) return x.bits;
        else if constexpr (std::is_same_v<T, float>) return std::bit_cast<std::uint32_t>(x);
        else if constexpr (std::is_same_v<T, double>) return std::bit_cast<std::uint64_t>(x);
        else return static_cast<std::uint64_t>(static_cast<std::make_unsigned_t<T>>(x));
      });
      put(kGridBytes + kTensorDescBytes * nt + 8 * si++, w);
      continue;
    }
    const TensorArg& ta = args[i].tensor;
    if (static_cast<int>(ta.shape.size()) != p.type.rank || ta.strides.size() != ta.shape.size() || p.type.rank > kMaxRank)
      throw UserError(detail::cat("kernel '", kname, "': argument ", p.arg_index, " ('", p.name, "') has shape ",
                                  shape_str(ta.shape), " and strides ", shape_str(ta.strides), ", expected rank ",
                                  p.type.rank));
    const std::size_t base = kGridBytes + kTensorDescBytes * ti++;
    put(base, ta.data);
    for (std::size_t d = 0; d < 6; ++d) {
      const bool used = d < ta.shape.size();
      put(base + 8 + 8 * d, used ? std::int64_t{ta.shape[d]} : std::int64_t{1});
      put(base + 56 + 8 * d, used ? std::int64_t{ta.strides[d]} : std::int64_t{0});
    }
  }
  if (maps)
    for (const GeneratedKernel::Map& m : g->maps) write_map(buf.data() + m.offset, m, args[static_cast<std::size_t>(m.use.param)].tensor);
  return buf;
}

}  // namespace ctile::backend::cuda
