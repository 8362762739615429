// bounds: marks the loads and stores of a kernel's own piece that the tensor facts prove in bounds
// for every tile block (in_bounds: the code generator drops their bounds tests). A piece's tile
// along an axis is always full when its extent there is 1, or when the tensor's extent is a
// multiple of 16 (the div16 fact) and the tile's extent divides 16. Other accesses keep their
// tests (one uniform test per tile block on the GPU: docs/compiler.md).
#include "passes.hpp"

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
    ir::walk_mut(k.body, [&](ir::Op& op) {
      if (op.kind == ir::OpKind::LoadPiece || op.kind == ir::OpKind::StorePiece)
        op.in_bounds = piece_always_full(k, op.operands[0]);
    });
  }
};

}  // namespace

std::unique_ptr<Pass> make_bounds() { return std::make_unique<Bounds>(); }

}  // namespace ctile::passes
