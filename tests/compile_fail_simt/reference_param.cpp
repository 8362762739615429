// expect: every parameter must be a SIMT parameter type
// Parameters are passed by value (made by the launch), not by reference.
#include <ctile/simt.hpp>

#ifndef CTILE_MISUSE
CTILE_SIMT_KERNEL(k, (DisjointSpan<float> out), Contract().block(32), (), { out.get_mut(index_1d()).set(1.0f); })
#else
CTILE_SIMT_KERNEL(k, (DisjointSpan<float>& out), Contract().block(32), (), { out.get_mut(index_1d()).set(1.0f); })
#endif

int main() { return 0; }
