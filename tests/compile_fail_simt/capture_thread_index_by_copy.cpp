// expect: use of deleted function|deleted
// A lambda cannot capture it by copy (by reference it stays in this thread).
#include <ctile/simt.hpp>

CTILE_SIMT_KERNEL(k, (DisjointSpan<float> out), Contract().block(32), (), {
  auto i = index_1d();
  [&] { out.get_mut(i).set(1.0f); }();
#ifdef CTILE_MISUSE
  [=] { (void)i.get(); }();
#endif
})

int main() { return 0; }
