// expect-gcc: ^no matching function for call to .mma\(ctile::Tile<ctile::f8e4m3>&, ctile::Tile<ctile::bf16>&, ctile::Tile<float>&\).$
// expect-clang: ^no matching function for call to .mma.$
// Only the two fp8 formats mix in a product (e4m3 x e5m2); an fp8 x bf16 product needs the fp8
// side converted.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void matmul(ct::Mut<float, 2> c, ct::Ref<ct::f8e4m3, 2> a, ct::Ref<ct::bf16, 2> b) {
  auto [i, j] = c.tile_index();
  auto ta = a.tiles({16, 16}).load({i, 0});
  auto tb = b.tiles({16, 16}).load({0, j});
  auto acc = ct::mma(ta.to<ct::bf16>(), tb, ct::Tile<float>::zeros({16, 16}));
#ifdef CTILE_MISUSE
  acc = ct::mma(ta, tb, acc);
#endif
  c.store(acc);
}

int main() {
  auto a = ct::ones<ct::f8e4m3>({16, 16}).share();
  auto b = ct::ones<ct::bf16>({16, 16}).share();
  auto [c, a2, b2] = ct::launch(matmul, ct::zeros<float>({16, 16}).partition({16, 16}), a, b).sync();
  (void)a2;
  (void)b2;
  return std::move(c).unpartition().to_host()[0] == 16.0f ? 0 : 1;
}
