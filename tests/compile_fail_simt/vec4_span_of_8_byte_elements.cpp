// expect: vector stores need a 4-byte element type
// Vector stores are 16 bytes of four 4-byte elements: a Vec4Index span of doubles does not exist.
#include <ctile/simt.hpp>

CTILE_SIMT_KERNEL(k, (DisjointSpan<float, Vec4Index> out), Contract().block(32), (), {
  out.get_mut(index_1d_vec4()).set(Vec4<float>{0.0f, 0.0f, 0.0f, 0.0f});
})

#ifdef CTILE_MISUSE
CTILE_SIMT_KERNEL(k8, (DisjointSpan<double, Vec4Index> out), Contract().block(32), (), {
  (void)out.size();
})
#endif

int main() { return 0; }
