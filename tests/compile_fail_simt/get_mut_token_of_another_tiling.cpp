// expect: no matching function|cannot convert|could not convert|no viable
// Tile tokens carry their tiling: a transposed span does not take tokens of the plain tiling.
#include <ctile/simt.hpp>

CTILE_SIMT_KERNEL(k, (DisjointSpan2D<float, TileIndex<32, 32, true>> out), Contract().block(32, 8), (), {
  for (auto o : tile_2d_transposed<32, 32>()) out.get_mut(o).set(1.0f);
#ifdef CTILE_MISUSE
  for (auto o : tile_2d<32, 32>()) out.get_mut(o).set(2.0f);
#endif
})

int main() { return 0; }
