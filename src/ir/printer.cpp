// The stable textual form of the IR (used by golden tests, pass dumps and CTILE_DUMP_IR; the parser
// reads it back). One op per line:
//   %r0, %r1 = ct.op %a, %b {attr = value, ...} : type0, type1
// followed, for ops with regions, by each region as `region(%arg: type, ...) { ... }`. In the
// GPU-level IR every tile type carries its layout (`tile<f32, [8], #d0>`); the layouts are printed
// once, as aliases before the kernel (`#d0 = #dist<...>`), numbered in order of first use.
#include <sstream>
#include <unordered_map>

#include "ctile/ir/ir.hpp"

namespace ctile::ir {
namespace {

class Printer {
 public:
  Printer(const Kernel& k, const PrintOptions& o) : k_(k), o_(o) {}

  std::string run() {
    // Values are numbered densely in order of definition, so that the text does not depend on
    // ids the tracer allocated and dropped.
    for (const Param& p : k_.params) number(p.value);
    for (ValueId a : k_.body.args) number(a);
    number_region(k_.body);
    os_ << "ct.kernel @" << k_.name << " grid_rank " << k_.grid_rank;
    if (!k_.options.str().empty()) os_ << " options {" << k_.options.str() << "}";
    if (k_.gpu_level()) {
      const KernelTarget& t = k_.target;
      os_ << " target {sm = " << t.sm << ", warps = " << t.warps << ", blocks_per_cta = " << t.blocks_per_cta
          << ", smem = " << t.smem_bytes << (t.persistent ? ", persistent" : "")
          << (t.group_rows > 0 ? ", group_rows = " + std::to_string(t.group_rows) : std::string())
          << (t.min_ctas > 0 ? ", min_ctas = " + std::to_string(t.min_ctas) : std::string())
          << (t.producer_warps > 0 ? ", producer_warps = " + std::to_string(t.producer_warps) +
                                         ", producer_bar = " + std::to_string(t.producer_bar)
                                   : std::string())
          << (t.pingpong ? ", pingpong" : "") << (t.scratch_over_rings ? ", scratch_over_rings" : "")
          << (t.k_split > 1 ? ", k_split = " + std::to_string(t.k_split) + ", k_split_scratch = " + std::to_string(t.k_split_scratch)
                            : std::string())
          << "}";
    }
    os_ << " (";
    for (std::size_t i = 0; i < k_.params.size(); ++i) {
      const Param& p = k_.params[i];
      os_ << (i ? ", " : "") << name(p.value) << ": " << type_of(p.value, p.type) << " \"" << p.name << "\"";
      if (p.arg_index != static_cast<int>(i)) os_ << " arg " << p.arg_index;
      if (p.facts.any()) os_ << " " << facts_str(p.facts);
    }
    os_ << ") {\n";
    region_body(k_.body, 1);
    os_ << "}\n";
    std::string head;
    for (const std::string& n : k_.notes) head += "// note: " + n + "\n";
    for (std::size_t i = 0; i < aliases_.size(); ++i) head += "#d" + std::to_string(i) + " = " + aliases_[i] + "\n";
    return head + os_.str();
  }

 private:
  void number(ValueId v) {
    if (v >= 0 && !num_.count(v)) {
      const int n = static_cast<int>(num_.size());
      num_[v] = n;
    }
  }
  void number_region(const Region& r) {
    for (const auto& op : r.ops) {
      for (ValueId v : op->results) number(v);
      for (const Region& sub : op->regions) {
        for (ValueId a : sub.args) number(a);
        number_region(sub);
      }
    }
  }
  std::string name(ValueId v) const {
    auto it = num_.find(v);
    return it == num_.end() ? "%?" + std::to_string(v) : "%" + std::to_string(it->second);
  }

  // A value's type, with its layout (as an alias) in the GPU-level IR.
  std::string type_of(ValueId v, const Type& t) {
    std::string s = type_str(t);
    if (!k_.gpu_level() || static_cast<std::size_t>(v) >= k_.layouts.size()) return s;
    const Layout& l = k_.layout(v);
    if (l.kind == LayoutKind::None) return s;
    const std::string text = layout_str(l);
    std::size_t i = 0;
    while (i < aliases_.size() && aliases_[i] != text) ++i;
    if (i == aliases_.size()) aliases_.push_back(text);
    const std::string alias = "#d" + std::to_string(i);
    if (t.is_scalar()) return "tile<" + std::string(dtype_name(t.dtype)) + ", [], " + alias + ">";
    s.insert(s.size() - 1, ", " + alias);
    return s;
  }

  void indent(int n) {
    for (int i = 0; i < n; ++i) os_ << "  ";
  }

  void region_body(const Region& r, int depth) {
    for (const auto& op : r.ops) print_op(*op, depth);
  }

  void values(const std::vector<ValueId>& vs) {
    for (std::size_t i = 0; i < vs.size(); ++i) os_ << (i ? ", " : "") << name(vs[i]);
  }

  std::string attrs(const Op& op) {
    std::ostringstream a;
    auto dt = [&]() { return op.results.empty() ? DType::f32 : k_.type(op.results[0]).dtype; };
    switch (op.kind) {
      case OpKind::BlockId: case OpKind::NumBlocks: case OpKind::Dim: case OpKind::PartitionCount:
      case OpKind::Cat: case OpKind::ReduceWith:
        a << "axis = " << op.axis; break;
      case OpKind::ScanWith:
        a << "axis = " << op.axis;
        if (op.exclusive) a << ", exclusive";
        if (op.reverse) a << ", reverse";
        break;
      case OpKind::Scan:  // kind defaults to sum (cumsum)
        if (op.reduce != ReduceKind::Sum) a << "kind = " << reduce_name(op.reduce) << ", ";
        a << "axis = " << op.axis;
        if (op.exclusive) a << ", exclusive";
        if (op.reverse) a << ", reverse";
        break;
      case OpKind::MakePartition: a << "tile = " << shape_str(op.shape); break;
      case OpKind::Load: case OpKind::LoadPiece: case OpKind::LoadWindow: case OpKind::Gather:
        a << "pad = " << scalar_str(scalar_cast(op.value, dt()), dt()); break;
      case OpKind::Constant: a << "value = " << scalar_str(scalar_cast(op.value, dt()), dt()); break;
      case OpKind::Iota:
        if (op.value.i > 1) a << "floor = " << op.value.i;
        break;
      case OpKind::Permute: {
        a << "perm = [";
        for (std::size_t i = 0; i < op.perm.size(); ++i) a << (i ? ", " : "") << op.perm[i];
        a << "]";
        break;
      }
      case OpKind::Extract: a << "offsets = " << shape_str(op.offsets); break;
      case OpKind::Unary: a << "fn = " << unary_name(op.unary); break;
      case OpKind::Binary: a << "fn = " << binary_name(op.binary); break;
      case OpKind::Cmp: a << "pred = " << cmp_name(op.cmp); break;
      case OpKind::Reduce: a << "kind = " << reduce_name(op.reduce) << ", axis = " << op.axis; break;
      case OpKind::AtomicRMW: a << "kind = " << atomic_name(op.atomic); break;
      case OpKind::Random: a << "dist = " << random_name(op.random); break;
      default: break;
    }
    auto more = [&](const std::string& x) {
      if (a.tellp() > 0) a << ", ";
      a << x;
    };
    if (op.rounding != Rounding::Default) more(std::string("rounding = ") + rounding_name(op.rounding));
    if (op.ftz) more("ftz");
    if (op.propagate_nan) more("propagate_nan");
    if (op.in_bounds) more("in_bounds");
    if (op.sync_after) more("sync_after");
    if (op.grid_indices) more("grid_indices");
    if (op.tensor_core) more("tensor_core");
    if (op.smem_offset >= 0) more("smem = [" + std::to_string(op.smem_offset) + ", " + std::to_string(op.smem_bytes) + "]");
    if (op.ring_slots > 0)
      more("ring = [" + std::to_string(op.ring_slots) + ", " +
           (op.ring_slot >= 0 ? std::to_string(op.ring_slot) : "+" + std::to_string(op.ring_ahead)) + "]");
    if (op.tma_map >= 0) more("tma = [" + std::to_string(op.tma_map) + ", " + std::to_string(op.tma_bar) + "]");
    if (op.async_wait >= 0) more("async_wait = " + std::to_string(op.async_wait));
    if (op.in_flight) more("in_flight");
    if (op.prefetch_next) more("prefetch_next");
    if (op.acc_split) more("acc_split = " + std::to_string(op.acc_split));
    if (op.remat) more("remat");
    if (op.fused) more("fused");
    return a.str();
  }

  void print_op(const Op& op, int depth) {
    indent(depth);
    if (!op.results.empty()) {
      values(op.results);
      os_ << " = ";
    }
    os_ << op_name(op.kind);
    if (!op.operands.empty()) {
      os_ << " ";
      values(op.operands);
    }
    const std::string a = attrs(op);
    if (!a.empty()) os_ << " {" << a << "}";
    if (!op.results.empty()) {
      os_ << " : ";
      for (std::size_t i = 0; i < op.results.size(); ++i) os_ << (i ? ", " : "") << type_of(op.results[i], k_.type(op.results[i]));
    }
    if (o_.locations && op.loc.known()) os_ << " loc(\"" << op.loc.file << "\":" << op.loc.line << ")";
    os_ << "\n";
    for (const Region& r : op.regions) {
      indent(depth + 1);
      os_ << "region(";
      for (std::size_t i = 0; i < r.args.size(); ++i)
        os_ << (i ? ", " : "") << name(r.args[i]) << ": " << type_of(r.args[i], k_.type(r.args[i]));
      os_ << ") {\n";
      region_body(r, depth + 2);
      indent(depth + 1);
      os_ << "}\n";
    }
  }

  const Kernel& k_;
  PrintOptions o_;
  std::ostringstream os_;
  std::unordered_map<ValueId, int> num_;
  std::vector<std::string> aliases_;
};

}  // namespace

std::string print(const Kernel& k, const PrintOptions& o) { return Printer(k, o).run(); }

}  // namespace ctile::ir
