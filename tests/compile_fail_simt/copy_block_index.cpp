// expect: use of deleted function|deleted
// The per-block and per-warp tokens follow the same rules.
#include <ctile/simt.hpp>

CTILE_SIMT_KERNEL(k, (DisjointSpan<float, BlockIndex> out), Contract().block(32), (), {
  auto b = block_leader();
  out.get_mut(b).set(1.0f);
#ifdef CTILE_MISUSE
  auto c = b;
  (void)c;
#endif
})

int main() { return 0; }
