// expect: use of deleted function|deleted
// ... nor passed to a helper by value (by reference is fine).
#include <ctile/simt.hpp>

CTILE_SIMT_KERNEL(k, (DisjointSpan<float> out), Contract().block(32), (), {
  auto by_ref = [](DisjointSpan<float>& o) { o.get_mut(index_1d()).set(1.0f); };
  by_ref(out);
#ifdef CTILE_MISUSE
  auto by_value = [](DisjointSpan<float> o) { (void)o; };
  by_value(out);
#endif
})

int main() { return 0; }
