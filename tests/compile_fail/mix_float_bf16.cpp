// expect-gcc: ^no match for .operator\+. \(operand types are .ctile::Tile<float>. and .ctile::Tile<ctile::bf16>.\)$
// expect-clang: ^invalid operands to binary expression \(.Tile<float>. and .Tile<ctile::bf16>.\)$
// Tile arithmetic never converts element types implicitly: Tile<float> + Tile<bf16> needs an
// explicit .to<float>() (or .to<bf16>()) on one side.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void add(ct::Mut<float, 1> z, ct::Ref<float, 1> x, ct::Ref<ct::bf16, 1> y) {
  auto a = ct::load_like(x, z);
  auto b = y.tiles({16}).load({ct::block_id(0)});
  z.store(a + b.to<float>());
#ifdef CTILE_MISUSE
  z.store(a + b);
#endif
}

int main() {
  auto x = ct::ones<float>({64}).share();
  auto y = ct::ones<ct::bf16>({64}).share();
  auto [z, x2, y2] = ct::launch(add, ct::zeros<float>({64}).partition({16}), x, y).sync();
  (void)x2;
  (void)y2;
  return std::move(z).unpartition().to_host()[0] == 2.0f ? 0 : 1;
}
