// Small tools the passes share: who defines a value, how often it is used, replacing uses, and
// building new ops in the middle of a region.
#pragma once

#include <functional>
#include <unordered_map>
#include <vector>

#include "ctile/ir/builder.hpp"
#include "ctile/ir/ir.hpp"
#include "ctile/ir/op_info.hpp"

namespace ctile::passes {

// The op that defines each op result (region arguments and parameters have none).
class Defs {
 public:
  explicit Defs(const ir::Kernel& k) { refresh(k); }
  void refresh(const ir::Kernel& k) {
    def_.assign(k.values.size(), nullptr);
    ir::walk(k.body, [&](const ir::Op& op) { note(op); });
  }
  void note(const ir::Op& op) {
    for (ir::ValueId r : op.results) {
      if (static_cast<std::size_t>(r) >= def_.size()) def_.resize(static_cast<std::size_t>(r) + 1, nullptr);
      def_[static_cast<std::size_t>(r)] = &op;
    }
  }
  const ir::Op* of(ir::ValueId v) const {
    return v >= 0 && static_cast<std::size_t>(v) < def_.size() ? def_[static_cast<std::size_t>(v)] : nullptr;
  }
  // The defining op if it is a ct.constant.
  const ir::Op* constant(ir::ValueId v) const {
    const ir::Op* d = of(v);
    return d && d->kind == ir::OpKind::Constant ? d : nullptr;
  }

 private:
  std::vector<const ir::Op*> def_;
};

// True when `v` (a load's source) is a tensor nobody writes while the kernel runs (Ref), or a
// partition of one.
inline bool read_only_source(const ir::Kernel& k, ir::ValueId v, const Defs& defs) {
  const ir::Type& t = k.type(v);
  if (t.kind == ir::TypeKind::Tensor) return t.access == ir::Access::Read;
  if (t.kind != ir::TypeKind::Partition) return false;
  const ir::Op* d = defs.of(v);
  return d && d->kind == ir::OpKind::MakePartition && read_only_source(k, d->operands[0], defs);
}

// Uses of each value as an operand anywhere in the kernel.
inline std::vector<int> use_counts(const ir::Kernel& k) {
  std::vector<int> n(k.values.size(), 0);
  ir::walk(k.body, [&](const ir::Op& op) {
    for (ir::ValueId v : op.operands) ++n[static_cast<std::size_t>(v)];
  });
  return n;
}

// Replaces every use of `from` by `to` (whole kernel).
inline void replace_uses(ir::Kernel& k, ir::ValueId from, ir::ValueId to) {
  ir::walk_mut(k.body, [&](ir::Op& op) {
    for (ir::ValueId& v : op.operands)
      if (v == from) v = to;
  });
}

// Builds ops right before position `at` of `region` (shifting `at` past each new op).
class InsertPoint {
 public:
  InsertPoint(ir::Kernel& k, ir::Region& region, std::size_t at) : k_(k), region_(region), at_(at) {}
  template <class F>
  ir::Op& build(ir::OpKind kind, std::vector<ir::ValueId> operands, const SourceLoc& loc, std::vector<ir::Type> declared,
                F&& attrs) {
    ir::Region tmp;  // the Builder appends: build into a temporary region, then move the op
    ir::Builder b(k_);
    b.push(tmp);
    ir::Op& op = b.build(kind, std::move(operands), loc, std::move(declared), std::forward<F>(attrs));
    (void)op;
    b.pop();
    if (!k_.layouts.empty()) k_.layouts.resize(k_.values.size());
    auto owned = std::move(tmp.ops.back());
    ir::Op& ref = *owned;
    region_.ops.insert(region_.ops.begin() + static_cast<std::ptrdiff_t>(at_++), std::move(owned));
    return ref;
  }
  ir::Op& build(ir::OpKind kind, std::vector<ir::ValueId> operands, const SourceLoc& loc, std::vector<ir::Type> declared = {}) {
    return build(kind, std::move(operands), loc, std::move(declared), [](ir::Op&) {});
  }
  std::size_t position() const { return at_; }

 private:
  ir::Kernel& k_;
  ir::Region& region_;
  std::size_t at_;
};

// A reduction or scan: the tile block synchronises and, before it, holds every tile the rest of
// the block still needs (where the remat and occupancy passes count registers).
inline bool is_reduction(const ir::Op& op) {
  return op.kind == ir::OpKind::Reduce || op.kind == ir::OpKind::Scan || op.kind == ir::OpKind::ReduceWith ||
         op.kind == ir::OpKind::ScanWith;
}

// Registers of a thread: whether tile `v` is held in them (a distributed layout; before layout
// assignment every tile is), how many of its elements one thread holds (the layout's registers;
// without layouts the whole tile), and how many 32-bit registers those take (16-bit elements two
// to a register, 64-bit ones two registers each, bools one each).
inline bool in_registers(const ir::Kernel& k, ir::ValueId v) { return k.layouts.empty() || k.layout(v).is_dist(); }
inline std::int64_t thread_elements(const ir::Kernel& k, ir::ValueId v) {
  if (!k.layouts.empty() && k.layout(v).is_dist()) return k.layout(v).regs();
  return numel(k.type(v).shape);
}
inline double thread_words(const ir::Kernel& k, ir::ValueId v) {
  const int size = dtype_size(k.type(v).dtype);
  return static_cast<double>(thread_elements(k, v)) * (size >= 4 ? size / 4.0 : (size == 2 ? 0.5 : 1.0));
}

// Visits every region of the kernel (the body first, then nested regions, pre-order).
inline void for_each_region(ir::Region& r, const std::function<void(ir::Region&)>& f) {
  f(r);
  for (auto& op : r.ops)
    for (auto& sub : op->regions) for_each_region(sub, f);
}

}  // namespace ctile::passes
