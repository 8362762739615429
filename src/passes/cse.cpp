// cse: an op identical to one that dominates it (same kind, operands, attributes, result types and
// layouts) is replaced by it. Pure ops qualify, and loads of read-only inputs (nothing writes them
// while the kernel runs); loads of memory the kernel writes, stores and atomics never do. Ops with
// regions are never merged, and an isolated region (a combine function) is a world of its own.
#include <bit>
#include <map>
#include <sstream>

#include "passes.hpp"
#include "rewrite.hpp"

namespace ctile::passes {
namespace {

std::string key_of(const ir::Kernel& k, const ir::Op& op) {
  std::ostringstream s;
  s << static_cast<int>(op.kind) << '(';
  for (ir::ValueId v : op.operands) s << v << ',';
  s << ")a" << op.axis << "u" << static_cast<int>(op.unary) << "b" << static_cast<int>(op.binary) << "c"
    << static_cast<int>(op.cmp) << "r" << static_cast<int>(op.reduce) << "t" << static_cast<int>(op.atomic) << "d" << static_cast<int>(op.random) << "m"
    << static_cast<int>(op.rounding) << op.ftz << op.propagate_nan << op.exclusive << op.reverse << op.in_bounds << op.grid_indices << op.tensor_core << op.in_flight << op.prefetch_next << op.remat;
  // Constants and paddings by bit pattern (NaN equals itself here; -0 differs from +0).
  s << "v" << op.value.is_float << ':' << std::bit_cast<std::uint64_t>(op.value.f) << ':' << op.value.i;
  s << "s";
  for (auto e : op.shape) s << e << ',';
  s << "o";
  for (auto e : op.offsets) s << e << ',';
  s << "p";
  for (int e : op.perm) s << e << ',';
  s << ":";
  for (ir::ValueId r : op.results) {
    s << ir::type_str(k.type(r));
    if (!k.layouts.empty()) s << ir::layout_str(k.layout(r));
    s << ';';
  }
  return s.str();
}

bool candidate(const ir::Kernel& k, const ir::Op& op) {
  if (!op.regions.empty() || op.results.empty()) return false;
  if (op.smem_offset >= 0) return false;  // scratch already assigned: leave the allocation alone
  if (ir::is_pure(op)) return true;
  return ir::traits(op.kind).effect == ir::Effect::ReadMemory && !ir::reads_mutable_memory(k, op);
}

class Cse : public Pass {
 public:
  std::string_view name() const override { return "cse"; }
  void run(ir::Kernel& k, const PassContext&) override {
    std::vector<std::map<std::string, std::vector<ir::ValueId>>> scopes;
    region(k, k.body, scopes);
  }

 private:
  // Scopes are the regions enclosing the op: a value of an outer region dominates the inner ones.
  void region(ir::Kernel& k, ir::Region& r, std::vector<std::map<std::string, std::vector<ir::ValueId>>>& scopes) {
    scopes.emplace_back();
    for (std::size_t i = 0; i < r.ops.size();) {
      ir::Op& op = *r.ops[i];
      for (auto& sub : op.regions) {
        if (!ir::traits(op.kind).isolated) {
          region(k, sub, scopes);
          continue;
        }
        // An isolated region (a combine function) sees none of the values around it.
        std::vector<std::map<std::string, std::vector<ir::ValueId>>> own;
        region(k, sub, own);
      }
      if (!candidate(k, op)) {
        ++i;
        continue;
      }
      const std::string key = key_of(k, op);
      const std::vector<ir::ValueId>* found = nullptr;
      for (auto s = scopes.rbegin(); s != scopes.rend() && !found; ++s) {
        auto it = s->find(key);
        if (it != s->end()) found = &it->second;
      }
      if (found) {
        // Later ops now name the earlier value (and may become identical to others in turn).
        for (std::size_t j = 0; j < op.results.size(); ++j) replace_uses(k, op.results[j], (*found)[j]);
        r.ops.erase(r.ops.begin() + static_cast<std::ptrdiff_t>(i));
        continue;
      }
      scopes.back()[key] = op.results;
      ++i;
    }
    scopes.pop_back();
  }
};

}  // namespace

std::unique_ptr<Pass> make_cse() { return std::make_unique<Cse>(); }

}  // namespace ctile::passes
