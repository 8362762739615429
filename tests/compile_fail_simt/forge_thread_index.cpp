// expect: private|protected|inaccessible
// A ThreadIndex is made only by an index space (index_1d(), grid_stride()): its constructor is private.
#include <ctile/simt.hpp>

CTILE_SIMT_KERNEL(k, (DisjointSpan<float> out), Contract().block(32), (), {
  auto i = index_1d();
  out.get_mut(i).set(1.0f);
#ifdef CTILE_MISUSE
  ThreadIndex forged(5);
  out.get_mut(forged).set(2.0f);
#endif
})

int main() { return 0; }
