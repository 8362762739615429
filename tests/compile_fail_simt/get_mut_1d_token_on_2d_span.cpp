// expect: no matching function|cannot convert|could not convert|no viable
// Nor a 1-D token a 2-D span: another thread's linear index could name this thread's (row, col).
#include <ctile/simt.hpp>

CTILE_SIMT_KERNEL(k, (DisjointSpan2D<float> out), Contract().block(32, 8), (), {
  out.get_mut(index_2d()).set(1.0f);
#ifdef CTILE_MISUSE
  out.get_mut(index_1d()).set(2.0f);
#endif
})

int main() { return 0; }
