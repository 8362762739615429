// expect: no matching function|cannot convert|could not convert|no viable
// Nor a 2-D token a 1-D span.
#include <ctile/simt.hpp>

CTILE_SIMT_KERNEL(k, (DisjointSpan<float> out), Contract().block(32), (), {
  out.get_mut(index_1d()).set(1.0f);
#ifdef CTILE_MISUSE
  out.get_mut(index_2d()).set(2.0f);
#endif
})

int main() { return 0; }
