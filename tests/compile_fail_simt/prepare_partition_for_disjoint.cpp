// expect: takes the whole Tensor<T>
// A tile Partition is not a SIMT output: unpartition() it.
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
  auto q = cs::prepare(add, cs::cover(64), ct::zeros<float>({64}).partition({16}), a);
#endif
  return 0;
}
