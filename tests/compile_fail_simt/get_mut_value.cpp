// expect: has no member named .value.|no member named .value.
// There is no unchecked value() either.
#include <ctile/simt.hpp>

CTILE_SIMT_KERNEL(k, (DisjointSpan<float> out), Contract().block(32), (), {
  auto i = index_1d();
  out.get_mut(i).set(1.0f);
#ifdef CTILE_MISUSE
  out.get_mut(i).value() = 2.0f;
#endif
})

int main() { return 0; }
