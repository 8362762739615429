// expect: no match for .operator=.|no viable overloaded|passing
// An unchecked element access is a temporary: naming it would copy on the GPU but alias on the CPU, so it does not compile on the host.
#include <ctile/simt.hpp>

CTILE_SIMT_KERNEL(k, (DisjointSpan<float> out), Contract().block(32).dynamic_shared(128), (), {
  auto s = dynamic_shared<float>(ctile::unchecked);
  s[0] = 1.0f;
  float v = s[0];
  (void)v;
#ifdef CTILE_MISUSE
  auto r = s[1];
  r = 2.0f;
#endif
})

int main() { return 0; }
