// The stable textual form of the IR (used by golden tests and CTILE_DUMP_IR). One op per line:
//   %r0, %r1 = ct.op %a, %b {attr = value, ...} : type0, type1
// followed, for ops with regions, by each region as `region(%arg: type, ...) { ... }`.
#include <sstream>
#include <unordered_map>

#include "ctile/ir/ir.hpp"

namespace ctile::ir {
namespace {

class Printer {
 public:
  explicit Printer(const Kernel& k) : k_(k) {}

  std::string run() {
    // Values are numbered densely in order of definition, so that the text does not depend on
    // ids the tracer allocated and dropped.
    for (const Param& p : k_.params) number(p.value);
    for (ValueId a : k_.body.args) number(a);
    number_region(k_.body);
    os_ << "ct.kernel @" << k_.name << " grid_rank " << k_.grid_rank << " (";
    for (std::size_t i = 0; i < k_.params.size(); ++i) {
      const Param& p = k_.params[i];
      os_ << (i ? ", " : "") << name(p.value) << ": " << type_str(p.type) << " \"" << p.name << "\"";
      if (p.facts.any()) os_ << " " << facts_str(p.facts);
    }
    os_ << ") {\n";
    region_body(k_.body, 1);
    os_ << "}\n";
    return os_.str();
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
      case OpKind::Cat: case OpKind::Scan:
        a << "axis = " << op.axis; break;
      case OpKind::MakePartition: a << "tile = " << shape_str(op.shape); break;
      case OpKind::Load: case OpKind::LoadPiece: case OpKind::Gather:
        a << "pad = " << scalar_str(op.value, dt()); break;
      case OpKind::Constant: a << "value = " << scalar_str(op.value, dt()); break;
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
      default: break;
    }
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
      for (std::size_t i = 0; i < op.results.size(); ++i) os_ << (i ? ", " : "") << type_str(k_.type(op.results[i]));
    }
    os_ << "\n";
    for (const Region& r : op.regions) {
      indent(depth + 1);
      os_ << "region(";
      for (std::size_t i = 0; i < r.args.size(); ++i)
        os_ << (i ? ", " : "") << name(r.args[i]) << ": " << type_str(k_.type(r.args[i]));
      os_ << ") {\n";
      region_body(r, depth + 2);
      indent(depth + 1);
      os_ << "}\n";
    }
  }

  const Kernel& k_;
  std::ostringstream os_;
  std::unordered_map<ValueId, int> num_;
};

}  // namespace

std::string print(const Kernel& k) { return Printer(k).run(); }

}  // namespace ctile::ir
