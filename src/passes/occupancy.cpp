// occupancy: the kernel's occupancy target (KernelTarget::min_ctas, the __launch_bounds__ minimum
// of CTAs per SM) for straight-line kernels with reductions (row kernels: softmax, norms). ptxas,
// left alone, spends registers up to the launch bound's maximum on instruction-level parallelism:
// a 512-thread tile block of RMSNorm takes 64-74 registers (one CTA per SM, which idles through
// each reduction while nothing else loads), a 128-thread LayerNorm block 110-149 (three or four
// CTAs). Given a minimum, ptxas fits the registers to it, and spills if it cannot: so the target
// comes from an estimate, not a constant.
//
// The estimate: the most registers of tiles live across one reduction (tiles defined before a
// ct.reduce / ct.scan and used after it; thread_words in rewrite.hpp), plus 32 for the addresses,
// indices and temporaries around them; the target is the most CTAs of that budget that fit the
// SM's 64K registers and 2048 threads, set when it is at least 2. When that leaves one CTA, a
// budget of the live tiles plus 16 is tried: a second CTA per SM pays for a few bytes of spills
// on cold paths. Measured on the H100 (docs/perf/2026-12-05-h100/NOTES.md, session 15: LayerNorm with its element-wise
// chains fused, 48 registers of tiles across the variance at 32 elements a thread): 80 registers
// (6 CTAs of 128 threads, 3 of 256) beat 96 and 64, and at 512 threads 64 registers (2 CTAs, 40
// bytes of spills) run at 2.59 TB/s against 1.94 for one CTA. RMSNorm and softmax keep 32 registers
// of tiles across and fit 64. Kernels with loops or matrix products
// keep their target (their accumulators and pipelines are not in this estimate), as does a kernel
// without a reduction or whose option min_ctas_per_sm is set (1 turns the choice off).
#include <algorithm>
#include <map>
#include <set>

#include "passes.hpp"
#include "rewrite.hpp"

namespace ctile::passes {
namespace {

using ir::OpKind;
using ir::ValueId;

constexpr int kRegistersPerSm = 65536;
constexpr int kThreadsPerSm = 2048;
// Registers for the addresses, indices and temporaries around the tiles live across a reduction,
// and the tighter allowance tried when the first leaves one CTA per SM (see the file comment).
constexpr int kTemporaries = 32;
constexpr int kTemporariesTight = 16;

bool is_loop_or_product(const ir::Op& op) {
  return op.kind == OpKind::For || op.kind == OpKind::While || op.kind == OpKind::Mma;
}

class Occupancy : public Pass {
 public:
  std::string_view name() const override { return "occupancy"; }
  void run(ir::Kernel& k, const PassContext& ctx) override {
    if (!k.gpu_level() || ctx.options.min_ctas_per_sm > 0 || k.options.min_ctas_per_sm > 0) return;
    bool reduces = false, excluded = false;
    ir::walk(k.body, [&](const ir::Op& op) {
      reduces = reduces || is_reduction(op);
      excluded = excluded || is_loop_or_product(op);
    });
    if (!reduces || excluded) return;
    k_ = &k;
    double live = most_live(k.body);
    // A load block-prefetch issues for the next tile block holds a second set of registers
    // throughout the tile block (docs/compiler.md, block-prefetch).
    for (const auto& op : k.body.ops)
      if (op->prefetch_next) live += thread_words(k, op->results[0]);
    if (live <= 0) return;
    const int threads = 32 * k.target.warps * k.target.blocks_per_cta;
    auto ctas_for = [&](int extra) {
      const int budget = std::max(32, (static_cast<int>(live) + extra + 7) / 8 * 8);
      return std::min(kRegistersPerSm / (threads * budget), kThreadsPerSm / threads);
    };
    int ctas = ctas_for(kTemporaries);
    if (ctas < 2) ctas = ctas_for(kTemporariesTight);
    if (ctas >= 2) k.target.min_ctas = ctas;
  }

 private:
  ir::Kernel* k_ = nullptr;

  // The most registers of tiles live across one reduction of region `r` (the kernel's body: no
  // loops). Tiles live only between ops elsewhere are consumed as they are made (a product feeding
  // a reduction) and do not count: counted, they double the estimate of RMSNorm.
  double most_live(const ir::Region& r) const {
    std::map<ValueId, std::size_t> def;  // tiles this region defines (in registers, more than one element)
    std::map<ValueId, std::size_t> last;  // their last use in this region (a nested region's use counts at its op)
    for (std::size_t i = 0; i < r.ops.size(); ++i) {
      const ir::Op& op = *r.ops[i];
      auto use = [&](ValueId v) {
        if (def.count(v)) last[v] = i;
      };
      for (ValueId v : op.operands) use(v);
      for (const ir::Region& sub : op.regions)
        ir::walk(sub, [&](const ir::Op& inner) {
          for (ValueId v : inner.operands) use(v);
        });
      for (ValueId v : op.results)
        if (k_->type(v).kind == ir::TypeKind::Tile && in_registers(*k_, v) && thread_elements(*k_, v) > 1) def[v] = i;
    }
    double most = 0;
    for (std::size_t p = 0; p < r.ops.size(); ++p) {
      if (!is_reduction(*r.ops[p])) continue;
      double words = 0;
      for (const auto& [v, d] : def) {
        auto l = last.find(v);
        if (d < p && l != last.end() && l->second > p) words += thread_words(*k_, v);
      }
      most = std::max(most, words);
    }
    return most;
  }
};

}  // namespace

std::unique_ptr<Pass> make_occupancy() { return std::make_unique<Occupancy>(); }

}  // namespace ctile::passes
