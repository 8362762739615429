// expect: every parameter must be a SIMT parameter type
// A raw pointer is not a kernel parameter (UncheckedPtr<T> is the tagged opt-out).
#include <ctile/simt.hpp>

#ifndef CTILE_MISUSE
CTILE_SIMT_KERNEL(k, (DisjointSpan<float> out), Contract().block(32), (), { out.get_mut(index_1d()).set(1.0f); })
#else
CTILE_SIMT_KERNEL(k, (float* p), Contract().block(32), (), { p[0] = 1.0f; })
#endif

int main() { return 0; }
