// expect: private|protected|inaccessible
// Only the launch makes a Uniform (its value is the same in every thread).
#include <ctile/simt.hpp>

CTILE_SIMT_KERNEL(k, (DisjointSpan<float> out, Uniform<float> x), Contract().block(32), (), {
  out.get_mut(index_1d()).set(x.get());
#ifdef CTILE_MISUSE
  Uniform<float> y(detail::ValueDesc<float>{1.0f});
  (void)y;
#endif
})

int main() { return 0; }
