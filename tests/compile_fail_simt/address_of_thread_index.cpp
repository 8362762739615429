// expect: use of deleted function|deleted
// Its address cannot be taken (a pointer to it could be handed to another thread).
#include <ctile/simt.hpp>

CTILE_SIMT_KERNEL(k, (DisjointSpan<float> out), Contract().block(32), (), {
  auto i = index_1d();
  out.get_mut(i).set(1.0f);
#ifdef CTILE_MISUSE
  const ThreadIndex* p = &i;
  (void)p;
#endif
})

int main() { return 0; }
