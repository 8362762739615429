// expect: no matching function|cannot convert|could not convert|no viable
// A span written four elements per token takes Vec4Index tokens only: a ThreadIndex i names
// element i, which the Vec4Index of thread i / 4 also names.
#include <ctile/simt.hpp>

CTILE_SIMT_KERNEL(k, (DisjointSpan<float, Vec4Index> out), Contract().block(32), (), {
  out.get_mut(index_1d_vec4()).set(Vec4<float>{1.0f, 2.0f, 3.0f, 4.0f});
#ifdef CTILE_MISUSE
  out.get_mut(index_1d()).set(Vec4<float>{1.0f, 2.0f, 3.0f, 4.0f});
#endif
})

int main() { return 0; }
