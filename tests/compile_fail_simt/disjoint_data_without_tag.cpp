// expect: no matching function|no viable|candidate expects 1 argument
// So does its raw pointer.
#include <ctile/simt.hpp>

CTILE_SIMT_KERNEL(k, (DisjointSpan<float> out), Contract().block(32), (), {
  float* p = out.data(ctile::unchecked);
  (void)p;
#ifdef CTILE_MISUSE
  float* q = out.data();
  (void)q;
#endif
})

int main() { return 0; }
