// expect: a 2-D index needs DisjointSpan2D
// A 1-D span is disjoint over a 1-D index space.
#include <ctile/simt.hpp>

#ifndef CTILE_MISUSE
CTILE_SIMT_KERNEL(k, (DisjointSpan<float> out), Contract().block(32), (), { out.get_mut(index_1d()).set(1.0f); })
#else
CTILE_SIMT_KERNEL(k, (DisjointSpan<float, ThreadIndex2D> out), Contract().block(32), (), { (void)out; })
#endif

int main() { return 0; }
