// schedule: reorders each region so that every load of a tile block, and the index arithmetic it
// needs, is issued before the first op that waits for a loaded value (in trace order the
// conversion of a first bf16 tile stalls a thread before the second tile's load is issued: two
// memory round trips per tile block instead of one). A list schedule over the region's
// dependencies: uses of values (also inside nested regions), side effects in their order (stores,
// scatters, atomics, control flow), and loads of memory the kernel writes kept on their side of
// every side effect (loads of read-only inputs move freely). Ready ops that feed a load (through
// the values it uses) go first, otherwise the original order decides.
#include <algorithm>
#include <map>
#include <set>

#include "ctile/ir/op_info.hpp"
#include "passes.hpp"
#include "rewrite.hpp"

namespace ctile::passes {
namespace {

bool is_load(ir::OpKind k) {
  return k == ir::OpKind::Load || k == ir::OpKind::LoadPiece || k == ir::OpKind::LoadWindow || k == ir::OpKind::Gather;
}
bool has_effect(const ir::Op& op) {
  const ir::Effect e = ir::traits(op.kind).effect;
  return e == ir::Effect::WriteMemory || e == ir::Effect::Control;
}

void schedule(const ir::Kernel& k, ir::Region& r) {
  if (r.ops.empty()) return;
  std::unique_ptr<ir::Op> yield = std::move(r.ops.back());
  r.ops.pop_back();
  const std::size_t n = r.ops.size();
  std::map<ir::ValueId, std::size_t> def;
  for (std::size_t i = 0; i < n; ++i)
    for (ir::ValueId v : r.ops[i]->results) def[v] = i;
  std::vector<std::vector<std::size_t>> deps(n);       // every edge: values and the order of effects
  std::vector<std::vector<std::size_t>> data_deps(n);  // values only
  auto use = [&](std::size_t i, ir::ValueId v) {
    auto it = def.find(v);
    if (it != def.end() && it->second != i) {
      deps[i].push_back(it->second);
      data_deps[i].push_back(it->second);
    }
  };
  std::size_t last_effect = n;
  std::vector<std::size_t> mutable_loads_since;
  for (std::size_t i = 0; i < n; ++i) {
    const ir::Op& op = *r.ops[i];
    for (ir::ValueId v : op.operands) use(i, v);
    for (const ir::Region& sub : op.regions)
      ir::walk(sub, [&](const ir::Op& inner) {
        for (ir::ValueId v : inner.operands) use(i, v);
      });
    const bool effect = has_effect(op);
    const bool mut_load = ir::reads_mutable_memory(k, op);
    if ((effect || mut_load) && last_effect != n) deps[i].push_back(last_effect);
    if (effect) {
      for (std::size_t l : mutable_loads_since) deps[i].push_back(l);
      mutable_loads_since.clear();
      last_effect = i;
    } else if (mut_load) {
      mutable_loads_since.push_back(i);
    }
  }
  // The ops whose values a load needs. Ordering edges do not count: a store that must precede a
  // load of the memory it writes is not urgent itself (else everything before the first store
  // would be, and nothing would move).
  std::vector<bool> feeds_load(n, false);
  for (std::size_t i = n; i-- > 0;) {
    if (is_load(r.ops[i]->kind)) feeds_load[i] = true;
    if (feeds_load[i])
      for (std::size_t d : data_deps[i]) feeds_load[d] = true;
  }
  std::vector<int> waiting(n, 0);
  std::vector<std::vector<std::size_t>> users(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::sort(deps[i].begin(), deps[i].end());
    deps[i].erase(std::unique(deps[i].begin(), deps[i].end()), deps[i].end());
    waiting[i] = static_cast<int>(deps[i].size());
    for (std::size_t d : deps[i]) users[d].push_back(i);
  }
  std::set<std::pair<bool, std::size_t>> ready;
  for (std::size_t i = 0; i < n; ++i)
    if (waiting[i] == 0) ready.insert({!feeds_load[i], i});
  std::vector<std::unique_ptr<ir::Op>> order;
  order.reserve(n + 1);
  while (!ready.empty()) {
    const std::size_t i = ready.begin()->second;
    ready.erase(ready.begin());
    order.push_back(std::move(r.ops[i]));
    for (std::size_t u : users[i])
      if (--waiting[u] == 0) ready.insert({!feeds_load[u], u});
  }
  CTILE_CHECK(order.size() == n, "schedule: cyclic dependencies in a region");
  order.push_back(std::move(yield));
  r.ops = std::move(order);
}

class Schedule : public Pass {
 public:
  std::string_view name() const override { return "schedule"; }
  void run(ir::Kernel& k, const PassContext&) override {
    for_each_region(k.body, [&](ir::Region& r) { schedule(k, r); });
  }
};

}  // namespace

std::unique_ptr<Pass> make_schedule() { return std::make_unique<Schedule>(); }

}  // namespace ctile::passes
