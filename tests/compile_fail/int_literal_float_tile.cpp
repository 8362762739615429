// expect-gcc: ^no match for .operator\*. \(operand types are .ctile::Tile<float>. and .int.\)$
// expect-clang: ^invalid operands to binary expression \(.Tile<float>. and .int.\)$
// The other direction too: an integer literal with a float tile is rejected; write 2.0f.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void twice(ct::Mut<float, 1> z, ct::Ref<float, 1> x) {
  auto t = ct::load_like(x, z);
  z.store(t * 2.0f);
#ifdef CTILE_MISUSE
  z.store(t * 2);
#endif
}

int main() {
  auto x = ct::ones<float>({64}).share();
  auto [z, x2] = ct::launch(twice, ct::zeros<float>({64}).partition({16}), x).sync();
  (void)x2;
  return std::move(z).unpartition().to_host()[0] == 2.0f ? 0 : 1;
}
