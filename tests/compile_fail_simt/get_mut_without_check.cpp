// expect: no match for .operator\*.|indirection requires
// get_mut() returns a MaybeMut: the element is reached only through set() or apply(), which check.
#include <ctile/simt.hpp>

CTILE_SIMT_KERNEL(k, (DisjointSpan<float> out), Contract().block(32), (), {
  auto i = index_1d();
  out.get_mut(i).set(1.0f);
#ifdef CTILE_MISUSE
  *out.get_mut(i) = 2.0f;
#endif
})

int main() { return 0; }
