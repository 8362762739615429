// expect: invalid conversion|cannot initialize|discards
// Span::data(unchecked) gives a pointer to const: even the unchecked opt-out of a Span cannot write.
#include <ctile/simt.hpp>

CTILE_SIMT_KERNEL(k, (DisjointSpan<float> out, Span<float> a), Contract().block(32), (), {
  const float* p = a.data(ctile::unchecked);
  out.get_mut(index_1d()).set(p == nullptr ? 0.0f : 1.0f);
#ifdef CTILE_MISUSE
  float* q = a.data(ctile::unchecked);
  (void)q;
#endif
})

int main() { return 0; }
