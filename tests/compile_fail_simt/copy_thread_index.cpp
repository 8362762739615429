// expect: use of deleted function|deleted
// A ThreadIndex cannot be copied (a copy could reach another thread, through shared memory say).
#include <ctile/simt.hpp>

CTILE_SIMT_KERNEL(k, (DisjointSpan<float> out), Contract().block(32), (), {
  auto i = index_1d();
  out.get_mut(i).set(1.0f);
#ifdef CTILE_MISUSE
  auto j = i;
  out.get_mut(j).set(2.0f);
#endif
})

int main() { return 0; }
