// expect: T must be bool, an 8- to 64-bit integer, float or double
// f16/bf16 have other host and device representations: SIMT spans do not take them.
#include <ctile/simt.hpp>

#ifndef CTILE_MISUSE
CTILE_SIMT_KERNEL(k, (DisjointSpan<float> out), Contract().block(32), (), { out.get_mut(index_1d()).set(1.0f); })
#else
CTILE_SIMT_KERNEL(k, (Span<unsigned __int128> x), Contract().block(32), (), { (void)x; })
#endif

int main() { return 0; }
