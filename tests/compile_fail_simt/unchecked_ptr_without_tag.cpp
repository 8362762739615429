// expect: no matching function|no viable|candidate expects 2 arguments
// UncheckedPtr accesses take the tag, every one.
#include <ctile/simt.hpp>

CTILE_SIMT_KERNEL(k, (UncheckedPtr<float> p), Contract().block(32), (), {
  p.at(ctile::unchecked, 0) = 1.0f;
#ifdef CTILE_MISUSE
  p.at(0) = 2.0f;
#endif
})

int main() { return 0; }
