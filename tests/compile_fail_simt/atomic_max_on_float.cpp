// expect: need an integer element type
// max, min, and, or, xor are integer atomics.
#include <ctile/simt.hpp>

CTILE_SIMT_KERNEL(k, (AtomicSpan<float> a), Contract().block(32), (), {
  a.add(0, 1.0f);
#ifdef CTILE_MISUSE
  a.fetch_max(0, 1.0f);
#endif
})

int main() { return 0; }
