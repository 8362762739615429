// expect: ctile::unchecked_mut
// An UncheckedPtr parameter takes an UncheckedTensor, which only ctile::unchecked makes.
#include <ctile/runtime/creation.hpp>
#include <ctile/simt.hpp>

namespace ct = ctile;
namespace cs = ctile::simt;

CTILE_SIMT_KERNEL(poke, (UncheckedPtr<int> p), Contract().block(32), (), {
  if (index_1d().get() == 0) p.at(ctile::unchecked, 0) = 1;
})

int main() {
  auto p = cs::prepare(poke, cs::grid(1), ct::unchecked_mut(ct::unchecked, ct::zeros<int>({8})));
  (void)p;
#ifdef CTILE_MISUSE
  auto q = cs::prepare(poke, cs::grid(1), ct::zeros<int>({8}));
#endif
  return 0;
}
