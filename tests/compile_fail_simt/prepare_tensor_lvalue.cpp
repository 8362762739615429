// expect: use of deleted function|deleted
// A DisjointSpan's tensor is moved into the launch (it owns it exclusively until the work completes).
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
  (void)p;
#ifdef CTILE_MISUSE
  auto t = ct::zeros<float>({64});
  auto q = cs::prepare(add, cs::cover(64), t, a);
#endif
  return 0;
}
