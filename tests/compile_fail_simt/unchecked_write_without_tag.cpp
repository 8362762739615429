// expect: no matching function|no viable|candidate expects 2 arguments
// Writing any element of a DisjointSpan needs ctile::unchecked.
#include <ctile/simt.hpp>

CTILE_SIMT_KERNEL(k, (DisjointSpan<float> out), Contract().block(32), (), {
  out.get_unchecked_mut(ctile::unchecked, 0) = 1.0f;
#ifdef CTILE_MISUSE
  out.get_unchecked_mut(0) = 2.0f;
#endif
})

int main() { return 0; }
