// IR -> CUDA C++ over the device tile library (include/ctile/device). docs/cuda_backend.md describes
// the thread/element mapping, when shared memory is used and the vectorisation rules.
//
// One CUDA block runs one tile block (a grid-stride loop over linear block ids); each IR op becomes
// one statement (or a short block) commented with the user's source location.
#include "codegen.hpp"

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cstdarg>
#include <cmath>
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

namespace ctile::backend::cuda {
namespace {

using ir::OpKind;
using ir::Type;
using ir::ValueId;

constexpr int kMaxThreads = 1024;         // CodegenOptions::threads may ask for up to this many
constexpr int kMaxChosenThreads = 256;    // the generator's own choice (x2 for element-wise kernels)
constexpr int kGroupsPerThread = 2;       // vector groups per thread of the largest tile (see analyze)
constexpr int kMinThreads = 32;
constexpr int kMaxSlots = 512;          // registers per thread for one tile value
constexpr std::size_t kMaxParamBytes = 4096;
constexpr std::size_t kTensorDescBytes = 104;
constexpr std::size_t kGridBytes = 48;

// Dynamic shared memory a block may use on the target (opt-in above 48 KB).
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
  }
  throw InternalError("cuda codegen: bad dtype");
}

int log2i(std::int64_t v) {
  int l = 0;
  while ((std::int64_t{1} << l) < v) ++l;
  return l;
}

std::size_t align16(std::size_t b) { return (b + 15) / 16 * 16; }

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

// A source location for comments and messages (no newlines; '*/' harmless in // comments).
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

// Must be emitted even when its results are unused (stores, atomics, control flow, yields).
bool has_side_effects(OpKind k) {
  const ir::Effect e = ir::traits(k).effect;
  return e == ir::Effect::WriteMemory || e == ir::Effect::Control || e == ir::Effect::Terminator;
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

class Gen {
 public:
  Gen(const ir::Kernel& k, const CodegenOptions& o) : k_(k), opt_(o) {}

  GeneratedKernel run() {
    analyze();
    GeneratedKernel g;
    g.entry = entry_;
    g.threads = nt_;
    g.prefetches = !prefetch_.empty();
    emit_kernel();
    g.source = header() + out_.str();
    g.smem_bytes = align16(smem_);
    if (g.smem_bytes > smem_limit(opt_.sm))
      throw UserError(detail::cat("kernel '", k_.name, "' needs ", g.smem_bytes, " bytes of shared memory (", smem_op_,
                                  "), more than the ", smem_limit(opt_.sm), " a block may use on sm_", opt_.sm),
                      smem_loc_);
    g.params_bytes = kGridBytes + kTensorDescBytes * static_cast<std::size_t>(n_tensors_) +
                     8 * static_cast<std::size_t>(n_scalars_);
    if (g.params_bytes > kMaxParamBytes)
      throw UserError(detail::cat("kernel '", k_.name, "' has too many parameters for the CUDA backend (",
                                  g.params_bytes, " bytes of launch parameters, at most ", kMaxParamBytes, ")"));
    return g;
  }

 private:
  const ir::Kernel& k_;
  CodegenOptions opt_;
  int nt_ = 128, v_ = 4;
  int n_tensors_ = 0, n_scalars_ = 0;
  std::vector<int> tensor_;       // per value: index into p.t (tensor, partition and piece values), else -1
  std::vector<int> scalar_param_; // per value: index into p.s, else -1
  std::vector<ir::Access> access_;  // per p.t index
  std::vector<bool> live_;
  std::set<int> scattered_pieces_;  // p.t indices of pieces written by ct.scatter_piece
  // Loads of the body issued one tile block ahead (see plan_prefetch), and the ops their
  // indices need, in body order.
  std::vector<const ir::Op*> prefetch_, prefetch_cone_;
  std::size_t smem_ = 0;
  std::string smem_op_;
  SourceLoc smem_loc_;
  std::string entry_;
  std::ostringstream out_;
  int ind_ = 0;
  int uid_ = 0;

  // ---- values ----
  const Type& type(ValueId v) const { return k_.type(v); }
  std::int64_t numel_of(ValueId v) const { return numel(type(v).shape); }
  bool rep(ValueId v) const { return numel_of(v) == 1; }
  int slots_for(std::int64_t n) const {
    const std::int64_t span = static_cast<std::int64_t>(nt_) * v_;
    return static_cast<int>((n + span - 1) / span) * v_;
  }
  int slots(ValueId v) const { return slots_for(numel_of(v)); }
  static std::string name(ValueId v) { return "v" + std::to_string(v); }
  std::string ct(ValueId v) const { return ctype(type(v).dtype); }
  std::string decl_type(ValueId v) const {
    if (rep(v)) return ct(v);
    return "ct::Regs<" + ct(v) + ", " + std::to_string(slots(v)) + ">";
  }
  std::string decl(ValueId v) const { return decl_type(v) + " " + name(v); }
  std::string el(ValueId v) const { return rep(v) ? name(v) : name(v) + ".v[s]"; }
  std::string td(ValueId v) const {
    const int t = tensor_.at(static_cast<std::size_t>(v));
    CTILE_CHECK(t >= 0, "cuda codegen: value %", v, " is not a tensor");
    return "p.t[" + std::to_string(t) + "]";
  }
  int tindex(ValueId v) const { return tensor_.at(static_cast<std::size_t>(v)); }

  void need_smem(std::size_t bytes, const ir::Op& op) {
    if (bytes > smem_) {
      smem_ = bytes;
      smem_op_ = ir::op_name(op.kind);
      smem_loc_ = op.loc;
    }
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
      case OpKind::Scan: d += " axis " + std::to_string(op.axis); break;
      case OpKind::AtomicRMW: d += std::string(" ") + ir::atomic_name(op.atomic); break;
      default: break;
    }
    return d;
  }
  static std::string comment(const ir::Op& op) { return "  // " + loc_str(op.loc) + " " + describe(op); }

  // ---- analysis ----
  void analyze() {
    const std::size_t nv = k_.values.size();
    tensor_.assign(nv, -1);
    scalar_param_.assign(nv, -1);
    for (const ir::Param& p : k_.params) {
      if (p.type.kind == ir::TypeKind::Tile) {
        scalar_param_[static_cast<std::size_t>(p.value)] = n_scalars_++;
      } else {
        tensor_[static_cast<std::size_t>(p.value)] = n_tensors_++;
        access_.push_back(p.type.access);
      }
    }
    int min_bytes = 0;
    std::int64_t max_n = 1;
    auto see_tile = [&](ValueId v) {
      const Type& t = type(v);
      if (t.is_tile()) max_n = std::max(max_n, numel(t.shape));
    };
    ir::walk(k_.body, [&](const ir::Op& op) {
      for (ValueId r : op.results) see_tile(r);
      for (const ir::Region& r : op.regions)
        for (ValueId a : r.args) see_tile(a);
      switch (op.kind) {
        case OpKind::MakePartition:
          tensor_[static_cast<std::size_t>(op.results[0])] = tindex(op.operands[0]);
          break;
        case OpKind::Load:
        case OpKind::LoadPiece:
        case OpKind::StorePiece: {
          const int b = dtype_size(type(op.operands[0]).dtype);
          min_bytes = min_bytes == 0 ? b : std::min(min_bytes, b);
          break;
        }
        case OpKind::ScatterPiece: scattered_pieces_.insert(tindex(op.operands[0])); break;
        default: break;
      }
    });
    v_ = min_bytes == 0 ? 4 : std::min(8, 16 / min_bytes);
    // Threads: enough that the largest tile takes about two vector groups per thread (few
    // registers per thread, so several blocks fit on an SM and keep loads in flight).
    nt_ = kMinThreads;
    // Blocks of more than 256 threads were slower in every benchmark on the H200 (the per-thread
    // cost of the reductions and tile windows is paid by more threads per tile; see docs/perf).
    // Kernels without reductions, scans or mma (element-wise) may take 512: there the extra
    // warps only add bytes in flight (bf16 saxpy 3.4 vs 2.3 TB/s under ncu).
    bool cross_thread = false;
    ir::walk(k_.body, [&](const ir::Op& op) {
      cross_thread = cross_thread || op.kind == OpKind::Reduce || op.kind == OpKind::Scan || op.kind == OpKind::Mma;
    });
    const int cap = cross_thread ? kMaxChosenThreads : 2 * kMaxChosenThreads;
    while (nt_ < cap && static_cast<std::int64_t>(nt_) * kGroupsPerThread * v_ < max_n) nt_ *= 2;
    if (opt_.threads != 0) {
      if (opt_.threads < kMinThreads || opt_.threads > kMaxThreads || (opt_.threads & (opt_.threads - 1)) != 0)
        throw UserError(detail::cat("cuda backend: ", opt_.threads, " threads per block requested for kernel '", k_.name,
                                    "'; give a power of two from ", kMinThreads, " to ", kMaxThreads));
      nt_ = opt_.threads;
    }
    // Register budget: every tile value must fit.
    ir::walk(k_.body, [&](const ir::Op& op) {
      for (ValueId r : op.results)
        if (type(r).is_tile() && slots(r) > kMaxSlots)
          throw UserError(detail::cat("tile ", type_str(type(r)), " is too large for the CUDA backend (", slots(r),
                                      " registers per thread, at most ", kMaxSlots, "); use smaller tiles"),
                          op.loc);
    });
    live_.assign(nv, false);
    mark_live(k_.body);
    if (opt_.prefetch) {
      plan_prefetch();
      // The body no longer computes the prefetched loads' indices (the prefetch scope does).
      if (!prefetch_.empty()) {
        live_.assign(nv, false);
        mark_live(k_.body);
      }
    }
    entry_ = "ctile_" + sanitize(k_.name.empty() ? std::string("kernel") : k_.name);
    if (entry_.size() > 80) entry_.resize(80);
  }

  // Pure ops whose results nobody uses are not emitted (one reverse pass: uses follow definitions).
  void mark_live(const ir::Region& r) {
    for (auto it = r.ops.rbegin(); it != r.ops.rend(); ++it) {
      const ir::Op& op = **it;
      bool live = has_side_effects(op.kind);
      for (ValueId v : op.results) live = live || live_[static_cast<std::size_t>(v)];
      if (!live || (&r == &k_.body && prefetched(op))) continue;
      for (auto rit = op.regions.rbegin(); rit != op.regions.rend(); ++rit) mark_live(*rit);
      for (ValueId v : op.operands) live_[static_cast<std::size_t>(v)] = true;
    }
  }
  // Software pipelining over tile blocks: a tile load at the top level of the body whose indices
  // come from block ids, dims and scalar arithmetic is issued for the block's next tile block
  // (lin + gridDim.x) before the current one is processed, so that loads are in flight while the
  // block reduces, computes and stores. Loads of Read tensors may move freely (nothing writes them
  // while the kernel runs); a load of the block's own piece only when no side effect precedes it
  // (the next tile block's piece is written by nobody else). Kernels with run-time loops are left
  // alone (their registers belong to the loop).
  void plan_prefetch() {
    std::set<ValueId> cone_values;
    std::vector<const ir::Op*> cone;
    std::map<ValueId, const ir::Op*> def;
    bool effect_seen = false;
    for (const auto& up : k_.body.ops) {
      const ir::Op& op = *up;
      if (op.kind == OpKind::For || op.kind == OpKind::While) return;
      for (ValueId v : op.results) def[v] = &op;
    }
    auto cheap = [&](const ir::Op& op) {
      switch (op.kind) {
        case OpKind::BlockId: case OpKind::NumBlocks: case OpKind::Dim: case OpKind::PartitionCount:
        case OpKind::Constant: case OpKind::Unary: case OpKind::Binary: case OpKind::Fma: case OpKind::Cmp:
        case OpKind::Select: case OpKind::Convert: case OpKind::Broadcast: case OpKind::Reshape:
          for (ValueId r : op.results)
            if (!rep(r)) return false;
          return true;
        case OpKind::MakePartition: return true;
        default: return false;
      }
    };
    // The top-level ops a value needs (false if one of them is not cheap).
    std::function<bool(ValueId, std::set<const ir::Op*>&)> needs = [&](ValueId v, std::set<const ir::Op*>& acc) {
      auto it = def.find(v);
      if (it == def.end()) return true;  // a parameter
      const ir::Op& d = *it->second;
      if (acc.count(&d)) return true;
      if (!cheap(d)) return false;
      acc.insert(&d);
      for (ValueId o : d.operands)
        if (!needs(o, acc)) return false;
      return true;
    };
    std::set<const ir::Op*> chosen_cone;
    for (const auto& up : k_.body.ops) {
      const ir::Op& op = *up;
      if (op.kind == OpKind::Yield) break;
      if (!op_live(op)) continue;
      const bool candidate = (op.kind == OpKind::Load || (op.kind == OpKind::LoadPiece && !effect_seen)) &&
                             !rep(op.results[0]);
      if (candidate) {
        std::set<const ir::Op*> acc;
        bool ok = true;
        for (ValueId o : op.operands) ok = ok && needs(o, acc);
        if (ok) {
          prefetch_.push_back(&op);
          chosen_cone.insert(acc.begin(), acc.end());
        }
      }
      if (has_side_effects(op.kind)) effect_seen = true;
    }
    for (const auto& up : k_.body.ops)
      if (chosen_cone.count(up.get())) prefetch_cone_.push_back(up.get());
  }
  bool prefetched(const ir::Op& op) const {
    return std::find(prefetch_.begin(), prefetch_.end(), &op) != prefetch_.end();
  }
  static std::string pf_name(ValueId v) { return "pf" + std::to_string(v); }

  bool op_live(const ir::Op& op) const {
    if (has_side_effects(op.kind)) return true;
    for (ValueId v : op.results)
      if (live_[static_cast<std::size_t>(v)]) return true;
    return false;
  }

  // ---- the translation unit ----
  std::string header() const {
    std::ostringstream h;
    h << "// Generated by ctile's CUDA code generator from kernel '" << k_.name << "' (grid rank " << k_.grid_rank
      << ", " << nt_ << " threads, vector width " << v_ << "). Do not edit.\n";
    h << "#include \"ctile/device/tile.h\"\n\n";
    h << "struct " << entry_ << "_params {\n";
    h << "  long long grid[6];\n";
    if (n_tensors_ > 0) h << "  ct::TensorDesc t[" << n_tensors_ << "];\n";
    if (n_scalars_ > 0) h << "  unsigned long long s[" << n_scalars_ << "];\n";
    h << "};\n";
    for (const ir::Param& p : k_.params) {
      const auto v = static_cast<std::size_t>(p.value);
      h << "// " << (p.type.kind == ir::TypeKind::Tile ? "s[" + std::to_string(scalar_param_[v]) + "]"
                                                       : "t[" + std::to_string(tensor_[v]) + "]")
        << ": '" << p.name << "' (argument " << p.arg_index << "), " << type_str(p.type) << "\n";
    }
    h << "\ntypedef ct::Layout<" << nt_ << ", " << v_ << "> L;\n\n";
    return h.str();
  }

  void emit_kernel() {
    const int G = k_.grid_rank;
    open("extern \"C\" __global__ void __launch_bounds__(" + std::to_string(nt_) + ") " + entry_ + "(const __grid_constant__ " +
         entry_ + "_params p) {");
    line("CT_DYNAMIC_SMEM(ct_smem);");
    line("const int tid = threadIdx.x;");
    line("(void)ct_smem;");
    line("(void)tid;");
    std::string total = "p.grid[0]";
    for (int d = 1; d < G; ++d) total += " * p.grid[" + std::to_string(d) + "]";
    line("const long long nblocks = " + total + ";");
    if (!prefetch_.empty()) {
      line("// loads issued one tile block ahead (software pipelining over the grid-stride loop)");
      for (const ir::Op* op : prefetch_) {
        const ValueId v = op->results[0];
        line("ct::Packed<" + ct(v) + ", " + std::to_string(slots(v)) + "> " + pf_name(v) + ";");
      }
      emit_prefetch("(long long)blockIdx.x");
    }
    open("for (long long lin = blockIdx.x; lin < nblocks; lin += gridDim.x) {");
    emit_block_ids("lin");
    if (!prefetch_.empty()) {
      for (const ir::Op* op : prefetch_)
        line(decl(op->results[0]) + " = ct::unpack(" + pf_name(op->results[0]) + ");" + comment(*op) + " (prefetched)");
      emit_prefetch("lin + gridDim.x");
    }
    for (const ir::Param& p : k_.params) {
      if (p.type.kind != ir::TypeKind::Tile) continue;
      const ValueId v = p.value;
      if (!live_[static_cast<std::size_t>(v)]) continue;
      line("const " + ct(v) + " " + name(v) + " = ct::from_word<" + ct(v) + ">(p.s[" +
           std::to_string(scalar_param_[static_cast<std::size_t>(v)]) + "]);  // '" + p.name + "'");
    }
    emit_region(k_.body);
    close();
    close();
  }

  // blk0.. and blk: the tile-block coordinates of the linear block id `lin`.
  void emit_block_ids(const std::string& lin) {
    const int G = k_.grid_rank;
    line("long long rem = " + lin + ";");
    for (int d = G - 1; d >= 0; --d) {
      const std::string sd = std::to_string(d);
      // Axes of one tile block (a row kernel's columns) cost no division; others divide in 32 bits
      // when the numbers fit (a 64-bit division is a long software sequence).
      if (d > 0)
        line("const long long blk" + sd + " = ct::split_block(rem, p.grid[" + sd + "]);");
      else line("const long long blk0 = rem;");
    }
    std::string bl = "const ct::Idx<" + std::to_string(G) + "> blk = {{";
    for (int d = 0; d < G; ++d) bl += (d ? ", blk" : "blk") + std::to_string(d);
    line(bl + "}};");
    line("(void)blk;");
  }

  // The prefetched loads of tile block `lin` (when it exists) into the pf buffers; an inner scope
  // re-emits the block ids and the loads' index computations under the usual names.
  void emit_prefetch(const std::string& lin) {
    open("{");
    line("const long long nlin = " + lin + ";");
    open("if (nlin < nblocks) {");
    emit_block_ids("nlin");
    std::set<ValueId> used;
    for (const auto* list : {&prefetch_cone_, &prefetch_})
      for (const ir::Op* op : *list) used.insert(op->operands.begin(), op->operands.end());
    for (const ir::Param& p : k_.params) {
      if (p.type.kind != ir::TypeKind::Tile) continue;
      const ValueId v = p.value;
      if (!used.count(v)) continue;
      line("const " + ct(v) + " " + name(v) + " = ct::from_word<" + ct(v) + ">(p.s[" +
           std::to_string(scalar_param_[static_cast<std::size_t>(v)]) + "]);");
    }
    for (const ir::Op* op : prefetch_cone_) emit_op(*op);
    for (const ir::Op* op : prefetch_) {
      emit_op(*op);
      line(pf_name(op->results[0]) + " = ct::pack(" + name(op->results[0]) + ");");
    }
    close();
    close();
  }

  void emit_region(const ir::Region& r) {
    for (const ir::Op* op : schedule(r)) emit_op(*op);
  }

  // Does `op` read global memory that a store of this kernel may change (its own piece, an atomic
  // or unchecked tensor)? Loads of Read parameters see memory that nothing changes while the
  // kernel runs.
  bool reads_mutable(const ir::Op& op) const {
    switch (op.kind) {
      case OpKind::LoadPiece: return true;
      case OpKind::Gather: return access_[static_cast<std::size_t>(tindex(op.operands[0]))] != ir::Access::Read;
      default: return false;
    }
  }
  static bool is_load(OpKind k) { return k == OpKind::Load || k == OpKind::LoadPiece || k == OpKind::Gather; }

  // The order in which a region's live ops are emitted: a list schedule that emits loads, and
  // the ops their indices need, as early as their operands allow, so that every load of a tile
  // block is in flight before the first instruction that waits for one (a conversion of the
  // first loaded tile would otherwise stall the thread before the second load is issued).
  // Side effects (stores, scatters, atomics, control flow) keep their order, and a load of
  // mutable memory stays on its side of every side effect.
  std::vector<const ir::Op*> schedule(const ir::Region& r) const {
    std::vector<const ir::Op*> ops;
    for (const auto& op : r.ops) {
      if (op->kind == OpKind::Yield) break;
      if (op_live(*op) && !(&r == &k_.body && prefetched(*op))) ops.push_back(op.get());
    }
    const std::size_t n = ops.size();
    std::map<ValueId, std::size_t> def;  // value -> op index in `ops`
    for (std::size_t i = 0; i < n; ++i)
      for (ValueId v : ops[i]->results) def[v] = i;
    std::vector<std::vector<std::size_t>> deps(n);
    auto use = [&](std::size_t i, ValueId v) {
      auto it = def.find(v);
      if (it != def.end() && it->second != i) deps[i].push_back(it->second);
    };
    std::size_t last_effect = n;  // none yet
    std::vector<std::size_t> mutable_loads_since;  // loads of mutable memory after last_effect
    for (std::size_t i = 0; i < n; ++i) {
      const ir::Op& op = *ops[i];
      for (ValueId v : op.operands) use(i, v);
      for (const ir::Region& sub : op.regions)
        ir::walk(sub, [&](const ir::Op& inner) {
          for (ValueId v : inner.operands) use(i, v);
        });
      const bool effect = has_side_effects(op.kind);
      if (effect || reads_mutable(op)) {
        if (last_effect != n) deps[i].push_back(last_effect);
      }
      if (effect) {
        for (std::size_t l : mutable_loads_since) deps[i].push_back(l);
        mutable_loads_since.clear();
        last_effect = i;
      } else if (reads_mutable(op)) {
        mutable_loads_since.push_back(i);
      }
    }
    // Ops that some load depends on (the loads themselves included) go first.
    std::vector<bool> feeds_load(n, false);
    for (std::size_t i = n; i-- > 0;) {
      if (is_load(ops[i]->kind)) feeds_load[i] = true;
      if (feeds_load[i])
        for (std::size_t d : deps[i]) feeds_load[d] = true;
    }
    std::vector<int> waiting(n, 0);
    std::vector<std::vector<std::size_t>> users(n);
    for (std::size_t i = 0; i < n; ++i) {
      std::sort(deps[i].begin(), deps[i].end());
      deps[i].erase(std::unique(deps[i].begin(), deps[i].end()), deps[i].end());
      waiting[i] = static_cast<int>(deps[i].size());
      for (std::size_t d : deps[i]) users[d].push_back(i);
    }
    // Ready ops by (not feeding a load, original position): the smallest first.
    std::set<std::pair<bool, std::size_t>> ready;
    for (std::size_t i = 0; i < n; ++i)
      if (waiting[i] == 0) ready.insert({!feeds_load[i], i});
    std::vector<const ir::Op*> order;
    order.reserve(n);
    while (!ready.empty()) {
      const std::size_t i = ready.begin()->second;
      ready.erase(ready.begin());
      order.push_back(ops[i]);
      for (std::size_t u : users[i])
        if (--waiting[u] == 0) ready.insert({!feeds_load[u], u});
    }
    CTILE_CHECK(order.size() == n, "cuda codegen: cyclic dependencies while scheduling a region");
    return order;
  }
  static const ir::Op& yield_of(const ir::Region& r) {
    CTILE_CHECK(!r.ops.empty() && r.ops.back()->kind == OpKind::Yield, "cuda codegen: region without ct.yield");
    return *r.ops.back();
  }

  // ---- staging helpers ----
  std::string stage(ValueId v, std::size_t byte_off) const {
    const std::string ptr = "(" + ct(v) + "*)(ct_smem + " + std::to_string(byte_off) + ")";
    if (rep(v)) return "ct::stage_one(" + ptr + ", " + name(v) + ", tid);";
    return "ct::stage<L>(" + ptr + ", " + name(v) + ", " + std::to_string(numel_of(v)) + ", tid);";
  }
  std::size_t bytes_of(ValueId v) const {
    return static_cast<std::size_t>(numel_of(v)) * static_cast<std::size_t>(dtype_size(type(v).dtype));
  }
  // Emits `decl; { stage x; sync; result from sx via index expression idx(i); sync }`.
  void gather_from_smem(const ir::Op& op, ValueId x, const std::string& index_expr) {
    const ValueId r = op.results[0];
    need_smem(align16(bytes_of(x)), op);
    const std::string sx = "((const " + ct(x) + "*)ct_smem)";
    if (rep(r)) {
      line(decl(r) + ";" + comment(op));
      open("{");
      line(stage(x, 0));
      line("__syncthreads();");
      std::string e = index_expr;
      line(name(r) + " = " + sx + "[" + replace_i(e, "0") + "];");
    } else {
      line(decl(r) + ";" + comment(op));
      open("{");
      line(stage(x, 0));
      line("__syncthreads();");
      line("ct::gen<L>(" + name(r) + ", " + std::to_string(numel_of(r)) + ", tid, [&](int i) { return " + sx + "[" +
           index_expr + "]; });");
    }
    line("__syncthreads();");
    close();
  }
  static std::string replace_i(std::string e, const std::string& with) {
    const std::string key = "(i)";
    for (std::size_t p = e.find(key); p != std::string::npos; p = e.find(key, p + with.size() + 2))
      e.replace(p, key.size(), "(" + with + ")");
    return e;
  }

  std::string idx_list(const ir::Op& op, std::size_t first, std::size_t count) const {
    std::string s;
    for (std::size_t i = 0; i < count; ++i) s += ", " + name(op.operands[first + i]);
    return s;
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
      case OpKind::LoadPiece: {
        const Shape& sh = type(r0).shape;
        std::string ti;
        if (op.kind == OpKind::Load) {
          ti = "ct::Idx<" + std::to_string(sh.size()) + ">{{";
          for (std::size_t i = 1; i < o.size(); ++i) ti += (i > 1 ? ", " : "") + name(o[i]);
          ti += "}}";
        } else {
          ti = "blk";
        }
        const std::string win = "ct::make_window<" + shape_t(sh) + ">(" + td(o[0]) + ", " + ti + ")";
        const std::string pad = literal(type(r0).dtype, op.value);
        if (rep(r0))
          return line("const " + ct(r0) + " " + name(r0) + " = ct::load_one<" + shape_t(sh) + ">(" + td(o[0]) + ", " + win +
                      ", " + pad + ");" + comment(op));
        line(decl(r0) + ";" + comment(op));
        return line("ct::load_tile<L, " + shape_t(sh) + ", " + (op.kind == OpKind::Load ? "true" : "false") + ">(" +
                    name(r0) + ", " + td(o[0]) + ", " + win + ", " + pad + ", tid);");
      }
      case OpKind::StorePiece: {
        const Shape& sh = type(o[0]).shape;
        const std::string win = "ct::make_window<" + shape_t(sh) + ">(" + td(o[0]) + ", blk)";
        if (rep(o[1])) {
          line("__syncthreads();" + comment(op));
          line("ct::store_one<" + shape_t(sh) + ">(" + name(o[1]) + ", " + td(o[0]) + ", " + win + ", tid);");
          return line("__syncthreads();");
        }
        const bool fence = scattered_pieces_.count(tindex(o[0])) > 0;
        if (fence) line("__syncthreads();  // the piece is also written by ct.scatter_piece");
        line("ct::store_tile<L, " + shape_t(sh) + ">(" + name(o[1]) + ", " + td(o[0]) + ", " + win + ", tid);" +
             comment(op));
        if (fence) line("__syncthreads();");
        return;
      }
      case OpKind::Gather: {
        const ValueId t = o[0];
        const bool shared = access_[static_cast<std::size_t>(tindex(t))] != ir::Access::Read;
        const std::string pad = literal(type(r0).dtype, op.value);
        const std::string ix = idx_list(op, 1, o.size() - 1);
        if (rep(r0)) {
          if (shared) {
            need_smem(16, op);
            return line("const " + ct(r0) + " " + name(r0) + " = ct::gather_one_shared(" + td(t) + ", " + pad +
                        ", ct_smem, tid" + ix + ");" + comment(op));
          }
          return line("const " + ct(r0) + " " + name(r0) + " = ct::gather_one(" + td(t) + ", " + pad + ix + ");" +
                      comment(op));
        }
        line(decl(r0) + ";" + comment(op));
        return line("ct::gather<L, " + std::to_string(numel_of(r0)) + ", " + (shared ? "true" : "false") + ">(" +
                    name(r0) + ", " + td(t) + ", " + pad + ", tid" + ix + ");");
      }
      case OpKind::ScatterPiece: {
        const ValueId val = o.back();
        const Shape& psh = type(o[0]).shape;
        const std::string ix = idx_list(op, 1, o.size() - 2);
        if (rep(val))
          return line("ct::scatter_piece_one<" + shape_t(psh) + ">(" + td(o[0]) + ", blk, " + name(val) + ", tid" + ix +
                      ");" + comment(op));
        need_smem(align16(static_cast<std::size_t>(numel(psh)) * 4), op);
        return line("ct::scatter_piece<L, " + shape_t(psh) + ", " + std::to_string(numel_of(val)) + ">(" + td(o[0]) +
                    ", blk, " + name(val) + ", (int*)ct_smem, tid" + ix + ");" + comment(op));
      }
      case OpKind::ScatterUnchecked: {
        const ValueId val = o.back();
        const std::string ix = idx_list(op, 1, o.size() - 2);
        if (rep(val))
          return line("ct::scatter_unchecked_one(" + td(o[0]) + ", " + name(val) + ", tid" + ix + ");" + comment(op));
        need_smem(align16(static_cast<std::size_t>(numel_of(val)) * 8), op);
        return line("ct::scatter_unchecked<L, " + std::to_string(numel_of(val)) + ">(" + td(o[0]) + ", " + name(val) +
                    ", (long long*)ct_smem, tid" + ix + ");" + comment(op));
      }
      case OpKind::AtomicRMW: {
        const ValueId val = o.back();
        const std::string ix = idx_list(op, 1, o.size() - 2);
        if (rep(val)) {
          need_smem(16, op);
          line("const " + ct(r0) + " " + name(r0) + " = ct::atomic_one<" + atomic_op(op.atomic) + ">(" + td(o[0]) + ", " +
               name(val) + ", ct_smem, tid" + ix + ");" + comment(op));
        } else {
          line(decl(r0) + ";" + comment(op));
          line(std::string("ct::atomic_tile<") + atomic_op(op.atomic) + ", L, " + std::to_string(numel_of(val)) + ">(" +
               name(r0) + ", " + td(o[0]) + ", " + name(val) + ", tid" + ix + ");");
        }
        if (!live_[static_cast<std::size_t>(r0)]) line("(void)" + name(r0) + ";");
        return;
      }
      case OpKind::AtomicCAS: {
        const ValueId ex = o[o.size() - 2], de = o.back();
        const std::string ix = idx_list(op, 1, o.size() - 3);
        if (rep(de)) {
          need_smem(16, op);
          line("const " + ct(r0) + " " + name(r0) + " = ct::cas_one(" + td(o[0]) + ", " + name(ex) + ", " + name(de) +
               ", ct_smem, tid" + ix + ");" + comment(op));
        } else {
          line(decl(r0) + ";" + comment(op));
          line("ct::cas_tile<L, " + std::to_string(numel_of(de)) + ">(" + name(r0) + ", " + td(o[0]) + ", " + name(ex) +
               ", " + name(de) + ", tid" + ix + ");");
        }
        if (!live_[static_cast<std::size_t>(r0)]) line("(void)" + name(r0) + ";");
        return;
      }
      case OpKind::Constant: {
        const std::string c = literal(type(r0).dtype, op.value);
        if (rep(r0)) return line("const " + ct(r0) + " " + name(r0) + " = " + c + ";" + comment(op));
        line(decl(r0) + ";" + comment(op));
        return line("CT_SLOTS(" + std::to_string(slots(r0)) + ") " + el(r0) + " = " + c + ";");
      }
      case OpKind::Iota: {
        if (rep(r0))
          return line("const " + ct(r0) + " " + name(r0) + " = ct::convert<" + ct(r0) + ">(0LL);" + comment(op));
        line(decl(r0) + ";" + comment(op));
        return line("CT_SLOTS(" + std::to_string(slots(r0)) + ") " + el(r0) + " = ct::convert<" + ct(r0) +
                    ">((long long)L::elem(tid, s));");
      }
      case OpKind::Broadcast: {
        const ValueId x = o[0];
        if (numel_of(x) == numel_of(r0)) return line(decl(r0) + " = " + name(x) + ";" + comment(op));
        if (rep(x)) {
          line(decl(r0) + ";" + comment(op));
          return line("CT_SLOTS(" + std::to_string(slots(r0)) + ") " + el(r0) + " = " + name(x) + ";");
        }
        return gather_from_smem(op, x,
                                "ct::broadcast_src<" + shape_t(type(x).shape) + ", " + shape_t(type(r0).shape) + ">(i)");
      }
      case OpKind::Reshape: return line(decl(r0) + " = " + name(o[0]) + ";" + comment(op));
      case OpKind::Permute: {
        const ValueId x = o[0];
        if (rep(x)) return line(decl(r0) + " = " + name(x) + ";" + comment(op));
        std::string e = "ct::permute_src<" + shape_t(type(x).shape) + ", " + shape_t(type(r0).shape);
        for (int p : op.perm) e += ", " + std::to_string(p);
        return gather_from_smem(op, x, e + ">(i)");
      }
      case OpKind::Extract: {
        const ValueId x = o[0];
        if (rep(x)) return line(decl(r0) + " = " + name(x) + ";" + comment(op));
        std::string e = "ct::extract_src<" + shape_t(type(x).shape) + ", " + shape_t(type(r0).shape);
        for (std::int64_t off : op.offsets) e += ", " + std::to_string(off);
        return gather_from_smem(op, x, e + ">(i)");
      }
      case OpKind::Cat: {
        const ValueId a = o[0], b = o[1];
        const std::size_t boff = align16(bytes_of(a));
        const std::size_t es = static_cast<std::size_t>(dtype_size(type(a).dtype));
        need_smem(boff + align16(bytes_of(b)), op);
        line(decl(r0) + ";" + comment(op));
        open("{");
        line(stage(a, 0));
        line(stage(b, boff));
        line("__syncthreads();");
        line("ct::gen<L>(" + name(r0) + ", " + std::to_string(numel_of(r0)) + ", tid, [&](int i) { return ((const " + ct(a) +
             "*)ct_smem)[ct::cat_src<" + shape_t(type(a).shape) + ", " + shape_t(type(b).shape) + ", " +
             shape_t(type(r0).shape) + ", " + std::to_string(op.axis) + ", " + std::to_string(boff / es) + ">(i)]; });");
        line("__syncthreads();");
        return close();
      }
      case OpKind::Unary: {
        static const char* fns[] = {"op_neg", "op_exp", "op_exp2", "op_log", "op_log2", "op_sqrt", "op_rsqrt",
                                    "op_tanh", "op_sin", "op_cos", "op_abs", "op_floor", "op_ceil", "op_not"};
        return elementwise(op, std::string("ct::") + fns[static_cast<int>(op.unary)] + "(" + el(o[0]) + ")");
      }
      case OpKind::Binary: {
        static const char* fns[] = {"op_add", "op_sub", "op_mul", "op_div", "op_rem", "op_min", "op_max",
                                    "op_pow", "op_and", "op_or",  "op_xor", "op_shl", "op_shr"};
        return elementwise(op, std::string("ct::") + fns[static_cast<int>(op.binary)] + "(" + el(o[0]) + ", " + el(o[1]) + ")");
      }
      case OpKind::Fma:
        return elementwise(op, "ct::op_fma(" + el(o[0]) + ", " + el(o[1]) + ", " + el(o[2]) + ")");
      case OpKind::Cmp: {
        static const char* fns[] = {"op_eq", "op_ne", "op_lt", "op_le", "op_gt", "op_ge"};
        return elementwise(op, std::string("ct::") + fns[static_cast<int>(op.cmp)] + "(" + el(o[0]) + ", " + el(o[1]) + ")");
      }
      case OpKind::Select: return elementwise(op, "(" + el(o[0]) + " ? " + el(o[1]) + " : " + el(o[2]) + ")");
      case OpKind::Convert: return elementwise(op, "ct::convert<" + ct(r0) + ">(" + el(o[0]) + ")");
      case OpKind::Reduce: return emit_reduce(op);
      case OpKind::Scan: return emit_scan(op);
      case OpKind::Mma: return emit_mma(op);
      case OpKind::For: return emit_for(op);
      case OpKind::If: return emit_if(op);
      case OpKind::While: return emit_while(op);
      case OpKind::ConvertLayout:
      case OpKind::Yield: break;
    }
    throw InternalError(detail::cat("cuda codegen: cannot lower ", ir::op_name(op.kind), " at ", loc_str(op.loc)));
  }

  // Control-flow results nobody reads are neither declared nor assigned.
  bool used(ValueId v) const { return live_[static_cast<std::size_t>(v)]; }
  void declare_results(const ir::Op& op) {
    for (ValueId r : op.results)
      if (used(r)) line(decl(r) + ";");
  }

  void elementwise(const ir::Op& op, const std::string& expr) {
    const ValueId r = op.results[0];
    if (rep(r)) return line("const " + ct(r) + " " + name(r) + " = " + expr + ";" + comment(op));
    line(decl(r) + ";" + comment(op));
    line("CT_SLOTS(" + std::to_string(slots(r)) + ") " + el(r) + " = " + expr + ";");
  }

  std::string reduce_op(const ir::Op& op, DType d, bool exact) const {
    const std::string t = ctype(d);
    switch (op.reduce) {
      case ir::ReduceKind::Sum: return "ct::RArith<" + t + ", " + (exact ? "true" : "false") + ", false>";
      case ir::ReduceKind::Prod: return "ct::RArith<" + t + ", " + (exact ? "true" : "false") + ", true>";
      case ir::ReduceKind::Max: return "ct::RMinMax<" + t + ", true>";
      case ir::ReduceKind::Min: return "ct::RMinMax<" + t + ", false>";
      case ir::ReduceKind::ArgMax: return "ct::RArg<" + t + ", true>";
      case ir::ReduceKind::ArgMin: return "ct::RArg<" + t + ", false>";
    }
    throw InternalError("cuda codegen: bad reduce kind");
  }

  // [outer, len, inner] around `axis`
  static void split(const Shape& s, int axis, std::int64_t& outer, std::int64_t& len, std::int64_t& inner) {
    outer = len = inner = 1;
    for (int d = 0; d < static_cast<int>(s.size()); ++d) {
      const std::int64_t e = s[static_cast<std::size_t>(d)];
      if (d < axis) outer *= e;
      else if (d == axis) len = e;
      else inner *= e;
    }
  }

  void emit_reduce(const ir::Op& op) {
    const ValueId x = op.operands[0], r = op.results[0];
    const DType d = type(x).dtype;
    if (rep(x)) {
      const std::string o = reduce_op(op, d, true);
      return line("const " + ct(r) + " " + name(r) + " = " + o + "::finish(" + o + "::lift(" + name(x) + ", 0));" +
                  comment(op));
    }
    if (rep(r)) {
      if (nt_ > 32) need_smem(static_cast<std::size_t>(nt_ / 32) * 16, op);
      return line("const " + ct(r) + " " + name(r) + " = ct::reduce_all<L, " + reduce_op(op, d, false) + ", " +
                  std::to_string(numel_of(x)) + ">(" + name(x) + ", ct_smem, tid);" + comment(op));
    }
    std::int64_t outer, len, inner;
    split(type(x).shape, op.axis, outer, len, inner);
    need_smem(align16(bytes_of(x)), op);
    line(decl(r) + ";" + comment(op));
    open("{");
    line(stage(x, 0));
    line("__syncthreads();");
    line("ct::reduce_axis<L, " + reduce_op(op, d, true) + ", " + std::to_string(outer) + ", " + std::to_string(len) + ", " +
         std::to_string(inner) + ">(" + name(r) + ", (const " + ct(x) + "*)ct_smem, tid);");
    line("__syncthreads();");
    close();
  }

  void emit_scan(const ir::Op& op) {
    const ValueId x = op.operands[0], r = op.results[0];
    if (rep(x)) return line(decl(r) + " = " + name(x) + ";" + comment(op));
    std::int64_t outer, len, inner;
    split(type(x).shape, op.axis, outer, len, inner);
    need_smem(align16(bytes_of(x)), op);
    line(decl(r) + ";" + comment(op));
    open("{");
    line(stage(x, 0));
    line("__syncthreads();");
    line("ct::scan_lines<L, " + std::to_string(outer) + ", " + std::to_string(len) + ", " + std::to_string(inner) + ">((" +
         ct(x) + "*)ct_smem, tid);");
    line("__syncthreads();");
    line("ct::gen<L>(" + name(r) + ", " + std::to_string(numel_of(r)) + ", tid, [&](int i) { return ((const " + ct(x) +
         "*)ct_smem)[i]; });");
    line("__syncthreads();");
    close();
  }

  void emit_mma(const ir::Op& op) {
    const ValueId a = op.operands[0], b = op.operands[1], c = op.operands[2], r = op.results[0];
    const Shape& as = type(a).shape;
    const Shape& bs = type(b).shape;
    const std::int64_t M = as[0], K = as[1], N = bs[1];
    const std::size_t boff = align16(bytes_of(a));
    need_smem(boff + align16(bytes_of(b)), op);
    const std::string sa = "(const " + ct(a) + "*)ct_smem", sb = "(const " + ct(b) + "*)(ct_smem + " + std::to_string(boff) + ")";
    line(decl(r) + ";" + comment(op));
    open("{");
    line(stage(a, 0));
    line(stage(b, boff));
    line("__syncthreads();");
    if (rep(r))
      line(name(r) + " = ct::mma_elem<" + std::to_string(N) + ", " + std::to_string(K) + ">(" + name(c) + ", " + sa + ", " + sb +
           ", 0, 0);");
    else
      line("ct::mma<L, " + std::to_string(M) + ", " + std::to_string(N) + ", " + std::to_string(K) + ">(" + name(r) + ", " +
           name(c) + ", " + sa + ", " + sb + ", tid);");
    line("__syncthreads();");
    close();
  }

  // Region arguments bound to the carried state (references), marked used.
  void bind_args(const ir::Region& reg, std::size_t first, const std::vector<std::string>& state) {
    for (std::size_t i = first; i < reg.args.size(); ++i) {
      const ValueId a = reg.args[i];
      line(decl_type(a) + "& " + name(a) + " = " + state[i - first] + ";");
      line("(void)" + name(a) + ";");
    }
  }
  // state[i] = yielded values (through temporaries: a yield may permute the carried values).
  void yield_into(const ir::Region& reg, const std::vector<std::string>& state, const std::vector<ValueId>& types) {
    const ir::Op& y = yield_of(reg);
    const int u = uid_++;
    for (std::size_t i = 0; i < y.operands.size(); ++i)
      line("const " + decl_type(types[i]) + " y" + std::to_string(u) + "_" + std::to_string(i) + " = " + name(y.operands[i]) + ";");
    for (std::size_t i = 0; i < y.operands.size(); ++i)
      line(state[i] + " = y" + std::to_string(u) + "_" + std::to_string(i) + ";");
  }

  void emit_for(const ir::Op& op) {
    const int u = uid_++;
    const std::string us = std::to_string(u);
    const std::size_t nc = op.results.size();
    declare_results(op);
    open("{" + comment(op));
    line("const long long lb" + us + " = " + name(op.operands[0]) + ", ub" + us + " = " + name(op.operands[1]) + ", st" + us +
         " = " + name(op.operands[2]) + ";");
    line("if (st" + us + " <= 0) ct::trap_step(" + c_string(loc_str(op.loc)) + ", st" + us + ", tid);");
    std::vector<std::string> state;
    std::vector<ValueId> types;
    for (std::size_t i = 0; i < nc; ++i) {
      state.push_back("c" + us + "_" + std::to_string(i));
      types.push_back(op.results[i]);
      line(decl_type(op.results[i]) + " " + state.back() + " = " + name(op.operands[3 + i]) + ";");
    }
    const ir::Region& body = op.regions[0];
    open("for (long long iv" + us + " = lb" + us + "; iv" + us + " < ub" + us + ";) {");
    line("const long long " + name(body.args[0]) + " = iv" + us + ";");
    line("(void)" + name(body.args[0]) + ";");
    bind_args(body, 1, state);
    emit_region(body);
    yield_into(body, state, types);
    line("if (iv" + us + " > ct::kI64Max - st" + us + ") break;");
    line("iv" + us + " += st" + us + ";");
    close();
    for (std::size_t i = 0; i < nc; ++i)
      if (used(op.results[i])) line(name(op.results[i]) + " = " + state[i] + ";");
    close();
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
  if (const char* v = std::getenv("CTILE_PREFETCH"); v && *v) o.prefetch = std::strcmp(v, "0") != 0;
  if (const char* v = std::getenv("CTILE_THREADS"); v && *v) {
    char* end = nullptr;
    const long n = std::strtol(v, &end, 10);
    if (*end != '\0' || n <= 0 || n > 1024)
      throw UserError(detail::cat("CTILE_THREADS='", v, "' is not a number of threads per block (32 to 1024)"));
    o.threads = static_cast<int>(n);
  }
  return o;
}

GeneratedKernel generate(const ir::Kernel& k, const CodegenOptions& opt) {
  ir::verify(k);
  return Gen(k, opt).run();
}

std::vector<std::byte> pack_params(const ir::Kernel& k, const LaunchConfig& cfg, std::span<const ArgValue> args) {
  const std::string kname = cfg.kernel_name.empty() ? k.name : cfg.kernel_name;
  if (static_cast<int>(cfg.grid.size()) != k.grid_rank)
    throw UserError(detail::cat("kernel '", kname, "' has a ", k.grid_rank, "-D grid, launched with ", shape_str(cfg.grid)));
  if (args.size() != k.params.size())
    throw UserError(detail::cat("kernel '", kname, "' takes ", k.params.size(), " arguments, got ", args.size()));
  std::size_t nt = 0, ns = 0;
  for (const ir::Param& p : k.params) (p.type.kind == ir::TypeKind::Tile ? ns : nt)++;
  std::vector<std::byte> buf(kGridBytes + kTensorDescBytes * nt + 8 * ns);
  auto put = [&](std::size_t off, auto v) { std::memcpy(buf.data() + off, &v, sizeof v); };
  for (std::size_t d = 0; d < 6; ++d) put(8 * d, d < cfg.grid.size() ? std::int64_t{cfg.grid[d]} : std::int64_t{1});
  std::size_t ti = 0, si = 0;
  for (std::size_t i = 0; i < k.params.size(); ++i) {
    const ir::Param& p = k.params[i];
    if (p.type.kind == ir::TypeKind::Tile) {
      const std::uint64_t w = numeric::dispatch(p.type.dtype, [&]<class T>(std::type_identity<T>) -> std::uint64_t {
        const T x = numeric::scalar_to<T>(args[i].scalar);
        if constexpr (std::is_same_v<T, bool>) return x ? 1u : 0u;
        else if constexpr (std::is_same_v<T, f16> || std::is_same_v<T, bf16>) return x.bits;
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
  return buf;
}

}  // namespace ctile::backend::cuda
