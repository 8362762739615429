// expect: block-scoped atomic on global memory
// A block-scoped atomic on global memory races with other blocks: the type does not exist.
#include <ctile/simt.hpp>

CTILE_SIMT_KERNEL(k, (AtomicSpan<int, scope::Device> a), Contract().block(32), (), {
  a.add(0, 1);
#ifdef CTILE_MISUSE
  AtomicSpan<int, scope::Block>* b = nullptr;
  b->add(0, 1);
#endif
})

int main() { return 0; }
