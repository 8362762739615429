// expect: no match for .operator\[\].|no viable overloaded|has no member
// An AtomicSpan is written only through atomics: no plain element access.
#include <ctile/simt.hpp>

CTILE_SIMT_KERNEL(k, (AtomicSpan<int> a), Contract().block(32), (), {
  a.add(0, 1);
#ifdef CTILE_MISUSE
  a[0] = 1;
#endif
})

int main() { return 0; }
