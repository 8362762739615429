// bounds: what the tensor facts and the grid prove about the tile windows of loads and stores.
// - in_bounds: a load or store of the kernel's own piece is full in every tile block (the code
//   generator drops its bounds tests): along each axis the tile's extent is 1, or the tensor's
//   extent is a multiple of 16 (the div16 fact) and the tile's extent divides 16.
// - grid_indices: a load whose tile indices are all block ids: they lie in [0, 2^31), so the
//   window needs no overflow or negative-origin tests.
// Other accesses keep their tests (one uniform test per tile block on the GPU: docs/compiler.md).
#include "passes.hpp"
#include "rewrite.hpp"

namespace ctile::passes {
namespace {

bool piece_always_full(const ir::Kernel& k, ir::ValueId piece) {
  const ir::Param* p = nullptr;
  for (const ir::Param& q : k.params)
    if (q.value == piece) p = &q;
  if (!p) return false;
  const Shape& t = p->type.shape;
  for (std::size_t d = 0; d < t.size(); ++d) {
    const bool div16 = (p->facts.extent_div16 >> d) & 1u;
    if (!(t[d] == 1 || (div16 && 16 % t[d] == 0))) return false;
  }
  return true;
}

class Bounds : public Pass {
 public:
  std::string_view name() const override { return "bounds"; }
  void run(ir::Kernel& k, const PassContext&) override {
    const Defs defs(k);
    ir::walk_mut(k.body, [&](ir::Op& op) {
      if (op.kind == ir::OpKind::LoadPiece || op.kind == ir::OpKind::StorePiece)
        op.in_bounds = piece_always_full(k, op.operands[0]);
      if (op.kind == ir::OpKind::Load) {
        bool grid = true;
        for (std::size_t i = 1; i < op.operands.size(); ++i) {
          const ir::Op* d = defs.of(op.operands[i]);
          grid = grid && d && d->kind == ir::OpKind::BlockId;
        }
        op.grid_indices = grid;
      }
    });
  }
};

}  // namespace

std::unique_ptr<Pass> make_bounds() { return std::make_unique<Bounds>(); }

}  // namespace ctile::passes
