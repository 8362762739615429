// expect: 4- or 8-byte
// Shuffles move 4- or 8-byte values.
#include <ctile/simt.hpp>

CTILE_SIMT_KERNEL(k, (DisjointSpan<int> out), Contract().block(32), (), {
  out.get_mut(index_1d()).set(warp::shfl(1, 0u));
#ifdef CTILE_MISUSE
  (void)warp::shfl(true, 0u);
#endif
})

int main() { return 0; }
