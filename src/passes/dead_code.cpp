// dce: removes ops whose results nobody uses and that have no effect besides them (pure ops, with
// their regions, and loads; op_info.hpp). Stores, atomics, control flow and yields stay. Chains die together: uses are
// counted once and decremented as ops go.
#include "passes.hpp"
#include "rewrite.hpp"

namespace ctile::passes {
namespace {

class DeadCode : public Pass {
 public:
  std::string_view name() const override { return "dce"; }
  void run(ir::Kernel& k, const PassContext&) override {
    std::vector<int> uses = use_counts(k);
    bool changed = true;
    while (changed) {
      changed = false;
      for_each_region(k.body, [&](ir::Region& r) {
        for (std::size_t i = r.ops.size(); i-- > 0;) {
          const ir::Op& op = *r.ops[i];
          // Control flow stays; a pure op with a region (a reduction over a combine function) goes
          // with its region.
          if (!ir::removable_if_unused(op) || (!op.regions.empty() && !ir::is_pure(op))) continue;
          bool used = false;
          for (ir::ValueId v : op.results) used = used || uses[static_cast<std::size_t>(v)] > 0;
          if (used) continue;
          for (ir::ValueId v : op.operands) --uses[static_cast<std::size_t>(v)];
          for (const ir::Region& sub : op.regions)
            ir::walk(sub, [&](const ir::Op& inner) {
              for (ir::ValueId v : inner.operands) --uses[static_cast<std::size_t>(v)];
            });
          r.ops.erase(r.ops.begin() + static_cast<std::ptrdiff_t>(i));
          changed = true;
        }
      });
    }
  }
};

}  // namespace

std::unique_ptr<Pass> make_dead_code() { return std::make_unique<DeadCode>(); }

}  // namespace ctile::passes
