// expect: every parameter must be a SIMT parameter type
// Scalars are Uniform<T>.
#include <ctile/simt.hpp>

#ifndef CTILE_MISUSE
CTILE_SIMT_KERNEL(k, (DisjointSpan<float> out), Contract().block(32), (), { out.get_mut(index_1d()).set(1.0f); })
#else
CTILE_SIMT_KERNEL(k, (DisjointSpan<float> out, int n), Contract().block(32), (), { out.get_mut(index_1d()).set((float)n); })
#endif

int main() { return 0; }
