// expect: must be of the parameter's kind
// A Uniform<int> takes an integer: 2.5 would be truncated silently.
#include <ctile/runtime/creation.hpp>
#include <ctile/simt.hpp>

namespace ct = ctile;
namespace cs = ctile::simt;

CTILE_SIMT_KERNEL(fill, (DisjointSpan<int> out, Uniform<int> v), Contract().block(32), (), {
  out.get_mut(index_1d()).set(v);
})

int main() {
  auto p = cs::prepare(fill, cs::cover(8), ct::zeros<int>({8}), 3);
  (void)p;
#ifdef CTILE_MISUSE
  auto q = cs::prepare(fill, cs::cover(8), ct::zeros<int>({8}), 2.5);
#endif
  return 0;
}
