// expect: use of deleted function|deleted
// A prepared launch owns its arguments: it cannot be copied.
#include <ctile/runtime/creation.hpp>
#include <ctile/simt.hpp>

namespace ct = ctile;
namespace cs = ctile::simt;

CTILE_SIMT_KERNEL(add, (DisjointSpan<float> out, Span<float> a), Contract().block(32), (out.size() == a.size()), {
  auto i = index_1d();
  out.get_mut(i).set(a.get_or(i, 0.0f) + 1.0f);
})

int main() {
  auto a = ct::ones<float>({64}).share();
  auto out = ct::zeros<float>({64});
  auto p = cs::prepare(add, cs::cover(64), std::move(out), a);
  auto moved = std::move(p);
  (void)moved;
#ifdef CTILE_MISUSE
  auto copy = moved;
#endif
  return 0;
}
