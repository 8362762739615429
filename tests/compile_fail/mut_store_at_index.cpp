// expect-gcc: ^.class ctile::Mut<float, 1>. has no member named .store_at.
// expect-clang: ^no member named .store_at. in .ctile::Mut<float, 1>.$
// A Mut<T, N> piece is stored without an index: a block cannot address another block's piece.
// Stores at arbitrary indices exist only on UncheckedMut, tagged ctile::unchecked.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void fill(ct::Mut<float, 1> z) {
  auto t = ct::Tile<float>::full({16}, 1.0f);
  z.store(t);
#ifdef CTILE_MISUSE
  z.store_at(ct::unchecked, {0}, t);
#endif
}

int main() {
  auto [z] = ct::launch(fill, ct::zeros<float>({64}).partition({16})).sync();
  return std::move(z).unpartition().to_host()[63] == 1.0f ? 0 : 1;
}
