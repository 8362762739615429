// Builder: creates values and ops in a Kernel at an insertion point (the innermost open region).
// Used by the tracing front end and by tests that build IR by hand.
#pragma once

#include <vector>

#include "ctile/ir/ir.hpp"
#include "ctile/ir/op_info.hpp"

namespace ctile::ir {

class Builder {
 public:
  explicit Builder(Kernel& k) : k_(k) { regions_.push_back(&k_.body); }

  Kernel& kernel() { return k_; }
  ValueId new_value(Type t) {
    k_.values.push_back(std::move(t));
    return static_cast<ValueId>(k_.values.size() - 1);
  }
  const Type& type(ValueId v) const { return k_.type(v); }

  // Appends an op with fresh results of the given types to the current region.
  Op& create(OpKind kind, std::vector<ValueId> operands, const std::vector<Type>& result_types, SourceLoc loc = {}) {
    auto op = std::make_unique<Op>();
    op->kind = kind;
    op->operands = std::move(operands);
    for (const Type& t : result_types) op->results.push_back(new_value(t));
    op->loc = std::move(loc);
    Op& ref = *op;
    current().ops.push_back(std::move(op));
    return ref;
  }

  // Appends an op whose result types come from its type rule (op_info.hpp): `attrs(op)` sets its
  // attributes first; `declared` gives the result type of ops that declare it (constant, iota,
  // broadcast, reshape, extract, convert). A type error here is a bug in the caller, which must
  // have checked the user's code with a clear message before.
  template <class F>
  Op& build(OpKind kind, std::vector<ValueId> operands, SourceLoc loc, std::vector<Type> declared, F&& attrs) {
    auto op = std::make_unique<Op>();
    op->kind = kind;
    op->operands = std::move(operands);
    op->loc = std::move(loc);
    attrs(*op);
    std::vector<Type> types;
    try {
      types = infer_types(k_, *op, declared);
    } catch (const TypeError& e) {
      throw InternalError(detail::cat(op_name(kind), ": ", e.what(), " at ", op->loc.str()));
    }
    for (const Type& t : types) op->results.push_back(new_value(t));
    Op& ref = *op;
    current().ops.push_back(std::move(op));
    return ref;
  }
  Op& build(OpKind kind, std::vector<ValueId> operands, SourceLoc loc, std::vector<Type> declared = {}) {
    return build(kind, std::move(operands), std::move(loc), std::move(declared), [](Op&) {});
  }

  // Regions: ops created between push and pop go into `r`.
  void push(Region& r) { regions_.push_back(&r); }
  void pop() { CTILE_CHECK(regions_.size() > 1, "unbalanced region pop"); regions_.pop_back(); }
  Region& current() { return *regions_.back(); }
  std::size_t depth() const { return regions_.size(); }

  // Replaces every use of `from` as an operand anywhere in the kernel by `to`.
  void replace_all_uses(ValueId from, ValueId to) {
    walk_mut(k_.body, [&](Op& op) {
      for (ValueId& v : op.operands)
        if (v == from) v = to;
    });
  }

 private:
  Kernel& k_;
  std::vector<Region*> regions_;
};

}  // namespace ctile::ir
