// expect: use of deleted function|deleted
// A DisjointSpan cannot be copied: a copy would be a second writer.
#include <ctile/simt.hpp>

CTILE_SIMT_KERNEL(k, (DisjointSpan<float> out), Contract().block(32), (), {
  DisjointSpan<float>& same = out;
  same.get_mut(index_1d()).set(1.0f);
#ifdef CTILE_MISUSE
  auto copy = out;
  (void)copy;
#endif
})

int main() { return 0; }
