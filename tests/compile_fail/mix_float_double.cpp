// expect-gcc: ^no match for .operator\+. \(operand types are .ctile::Tile<float>. and .ctile::Tile<double>.\)$
// expect-clang: ^invalid operands to binary expression \(.Tile<float>. and .Tile<double>.\)$
// Not even a widening conversion is implicit: Tile<float> + Tile<double> does not compile.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void add(ct::Mut<float, 1> z, ct::Ref<float, 1> x, ct::Ref<double, 1> y) {
  auto a = ct::load_like(x, z);
  auto b = y.tiles({16}).load({ct::block_id(0)});
  z.store(a + b.to<float>());
#ifdef CTILE_MISUSE
  z.store(a + b);
#endif
}

int main() {
  auto x = ct::ones<float>({64}).share();
  auto y = ct::ones<double>({64}).share();
  auto [z, x2, y2] = ct::launch(add, ct::zeros<float>({64}).partition({16}), x, y).sync();
  (void)x2;
  (void)y2;
  return std::move(z).unpartition().to_host()[0] == 2.0f ? 0 : 1;
}
