// expect: private|protected|inaccessible
// Nor a BlockIndex (only block_leader() makes one, valid in the block's first thread).
#include <ctile/simt.hpp>

CTILE_SIMT_KERNEL(k, (DisjointSpan<float, BlockIndex> out), Contract().block(32), (), {
  out.get_mut(block_leader()).set(1.0f);
#ifdef CTILE_MISUSE
  out.get_mut(BlockIndex(0, true)).set(2.0f);
#endif
})

int main() { return 0; }
