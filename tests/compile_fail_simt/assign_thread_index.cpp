// expect: use of deleted function|deleted
// Nor assigned.
#include <ctile/simt.hpp>

CTILE_SIMT_KERNEL(k, (DisjointSpan<float> out), Contract().block(32), (), {
  auto i = index_1d();
  auto j = index_1d();
  out.get_mut(i).set(1.0f);
#ifdef CTILE_MISUSE
  j = i;
#endif
})

int main() { return 0; }
