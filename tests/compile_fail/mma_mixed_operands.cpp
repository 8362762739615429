// expect-gcc: ^no matching function for call to .mma\(ctile::Tile<ctile::bf16>&, ctile::Tile<float>, ctile::Tile<float>&\).$
// expect-note-gcc: no known conversion for argument 2 from .ctile::Tile<float>. to .std::type_identity_t<ctile::Tile<ctile::bf16> >&.
// expect-clang: ^no matching function for call to .mma.$
// expect-note-clang: no known conversion from .Tile<float>. to .const std::type_identity_t<Tile<bf16>>. .* for 2nd argument$
// The two multiplicands of mma have one element type (only the two fp8 formats mix); a bf16 x f32
// product needs a conversion.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void matmul(ct::Mut<float, 2> c, ct::Ref<ct::bf16, 2> a, ct::Ref<ct::bf16, 2> b) {
  auto [i, j] = c.tile_index();
  auto ta = a.tiles({16, 16}).load({i, 0});
  auto tb = b.tiles({16, 16}).load({0, j});
  auto acc = ct::mma(ta, tb, ct::Tile<float>::zeros({16, 16}));
#ifdef CTILE_MISUSE
  acc = ct::mma(ta, tb.to<float>(), acc);
#endif
  c.store(acc);
}

int main() {
  auto a = ct::ones<ct::bf16>({16, 16}).share();
  auto b = ct::ones<ct::bf16>({16, 16}).share();
  auto [c, a2, b2] = ct::launch(matmul, ct::zeros<float>({16, 16}).partition({16, 16}), a, b).sync();
  (void)a2;
  (void)b2;
  return std::move(c).unpartition().to_host()[0] == 16.0f ? 0 : 1;
}
