// expect: no matching function|cannot convert|could not convert|no viable
// Nor a ThreadIndex a per-block span.
#include <ctile/simt.hpp>

CTILE_SIMT_KERNEL(k, (DisjointSpan<float, BlockIndex> out), Contract().block(32), (), {
  out.get_mut(block_leader()).set(1.0f);
#ifdef CTILE_MISUSE
  out.get_mut(index_1d()).set(2.0f);
#endif
})

int main() { return 0; }
