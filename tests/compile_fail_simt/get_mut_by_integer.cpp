// expect: no matching function|cannot convert|could not convert|no viable
// get_mut takes a token, not a number: a number could be any thread's element.
#include <ctile/simt.hpp>

CTILE_SIMT_KERNEL(k, (DisjointSpan<float> out), Contract().block(32), (), {
  out.get_mut(index_1d()).set(1.0f);
#ifdef CTILE_MISUSE
  out.get_mut(5).set(2.0f);
#endif
})

int main() { return 0; }
