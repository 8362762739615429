// expect: no member named .get_mut.|has no member
// A Span<T> is a read-only input: it has no get_mut (nor any other writing member).
#include <ctile/simt.hpp>

CTILE_SIMT_KERNEL(k, (DisjointSpan<float> out, Span<float> a), Contract().block(32), (), {
  auto i = index_1d();
  out.get_mut(i).set(a.get_or(i, 0.0f));
#ifdef CTILE_MISUSE
  a.get_mut(i).set(1.0f);
#endif
})

int main() { return 0; }
