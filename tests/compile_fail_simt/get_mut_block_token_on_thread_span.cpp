// expect: no matching function|cannot convert|could not convert|no viable
// A span is disjoint over its own index space: a BlockIndex cannot write a per-thread span (block 1 and thread 1 would both own element 1).
#include <ctile/simt.hpp>

CTILE_SIMT_KERNEL(k, (DisjointSpan<float> out), Contract().block(32), (), {
  out.get_mut(index_1d()).set(1.0f);
#ifdef CTILE_MISUSE
  out.get_mut(block_leader()).set(2.0f);
#endif
})

int main() { return 0; }
