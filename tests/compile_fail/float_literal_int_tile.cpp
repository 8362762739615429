// expect-gcc: ^no match for .operator\+. \(operand types are .ctile::Tile<int>. and .double.\)$
// expect-clang: ^invalid operands to binary expression \(.Tile<int>. and .double.\)$
// A literal combines with a tile only if it is of the same kind: a floating-point literal with an
// integer tile does not compile (it would silently truncate or change the tile's type).
#include <cstdint>

#include <ctile/ctile.hpp>

namespace ct = ctile;

void bump(ct::Mut<std::int32_t, 1> z) {
  auto t = z.load();
  z.store(t + 2);
#ifdef CTILE_MISUSE
  z.store(t + 1.5);
#endif
}

int main() {
  auto [z] = ct::launch(bump, ct::zeros<std::int32_t>({64}).partition({16})).sync();
  return std::move(z).unpartition().to_host()[0] == 2 ? 0 : 1;
}
