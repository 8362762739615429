// expect-gcc: ^no match for .operator\+. \(operand types are .ctile::Tile<float>. and .const ctile::Tile<ctile::bf16>.\)$
// expect-clang: ^invalid operands to binary expression \(.ctile::Tile<float>. and .const ctile::Tile<ctile::bf16>.\)$
// Compound assignment follows the same rule: acc += Tile<bf16> into a Tile<float> does not compile.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void accumulate(ct::Mut<float, 1> z, ct::Ref<ct::bf16, 1> y) {
  auto acc = ct::Tile<float>::zeros({16});
  auto b = y.tiles({16}).load({ct::block_id(0)});
  acc += b.to<float>();
#ifdef CTILE_MISUSE
  acc += b;
#endif
  z.store(acc);
}

int main() {
  auto y = ct::ones<ct::bf16>({64}).share();
  auto [z, y2] = ct::launch(accumulate, ct::zeros<float>({64}).partition({16}), y).sync();
  (void)y2;
  return std::move(z).unpartition().to_host()[0] == 1.0f ? 0 : 1;
}
