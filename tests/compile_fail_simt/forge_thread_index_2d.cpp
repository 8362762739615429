// expect: private|protected|inaccessible
// Nor can a 2-D token be made from numbers.
#include <ctile/simt.hpp>

CTILE_SIMT_KERNEL(k, (DisjointSpan2D<float> out), Contract().block(32), (), {
  out.get_mut(index_2d()).set(1.0f);
#ifdef CTILE_MISUSE
  out.get_mut(ThreadIndex2D(1, 2)).set(2.0f);
#endif
})

int main() { return 0; }
