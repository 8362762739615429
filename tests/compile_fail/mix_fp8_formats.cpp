// expect-gcc: ^no match for .operator\+. \(operand types are .ctile::Tile<ctile::f8e4m3>. and .ctile::Tile<ctile::f8e5m2>.\)$
// expect-clang: ^invalid operands to binary expression \(.Tile<ctile::f8e4m3>. and .Tile<ctile::f8e5m2>.\)$
// The two fp8 formats are different element types: e4m3 + e5m2 needs an explicit conversion of
// one side (only ct::mma takes them mixed).
#include <ctile/ctile.hpp>

namespace ct = ctile;

void add(ct::Mut<ct::f8e4m3, 1> z, ct::Ref<ct::f8e4m3, 1> x, ct::Ref<ct::f8e5m2, 1> y) {
  auto a = ct::load_like(x, z);
  auto b = y.tiles({16}).load({ct::block_id(0)});
  z.store(a + b.to<ct::f8e4m3>());
#ifdef CTILE_MISUSE
  z.store(a + b);
#endif
}

int main() {
  auto x = ct::ones<ct::f8e4m3>({64}).share();
  auto y = ct::ones<ct::f8e5m2>({64}).share();
  auto [z, x2, y2] = ct::launch(add, ct::zeros<ct::f8e4m3>({64}).partition({16}), x, y).sync();
  (void)x2;
  (void)y2;
  return static_cast<float>(std::move(z).unpartition().to_host()[0]) == 2.0f ? 0 : 1;
}
