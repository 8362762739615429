// expect-gcc: ^no matching function for call to .ctile::Mut<float, 1>::store\(ctile::Tile<double>&\).$
// expect-clang: ^no matching member function for call to .store.$
// expect-note-clang: ^candidate function not viable: no known conversion from .Tile<double>. to .const Tile<float>. for 1st argument$
// A piece stores tiles of its own element type only: a Tile<double> into a Mut<float, 1> needs
// an explicit .to<float>().
#include <ctile/ctile.hpp>

namespace ct = ctile;

void fill(ct::Mut<float, 1> z) {
  auto t = ct::Tile<double>::full({16}, 0.5);
  z.store(t.to<float>());
#ifdef CTILE_MISUSE
  z.store(t);
#endif
}

int main() {
  auto [z] = ct::launch(fill, ct::zeros<float>({64}).partition({16})).sync();
  return std::move(z).unpartition().to_host()[0] == 0.5f ? 0 : 1;
}
