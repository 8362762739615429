// expect: no matching function|no viable|could not convert|cannot convert
// Shared memory is only reachable through ctile::unchecked.
#include <ctile/simt.hpp>

CTILE_SIMT_KERNEL(k, (DisjointSpan<float> out), Contract().block(32).dynamic_shared(128), (), {
  auto s = dynamic_shared<float>(ctile::unchecked);
  s[0] = 1.0f;
#ifdef CTILE_MISUSE
  auto t = dynamic_shared<float>();
  (void)t;
#endif
})

int main() { return 0; }
