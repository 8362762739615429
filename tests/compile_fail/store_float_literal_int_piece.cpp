// expect-gcc: ^no matching function for call to .ctile::Mut<int, 1>::store\(double\).$
// expect-clang: ^no matching member function for call to .store.$
// expect-note-clang: ^candidate function not viable: no known conversion from .double. to .const Tile<int>. for 1st argument$
// Mut<T, N>::store of a literal follows the literal rule: 1.5 into an integer piece is rejected.
#include <cstdint>

#include <ctile/ctile.hpp>

namespace ct = ctile;

void fill(ct::Mut<std::int32_t, 1> z) {
  z.store(7);
#ifdef CTILE_MISUSE
  z.store(1.5);
#endif
}

int main() {
  auto [z] = ct::launch(fill, ct::zeros<std::int32_t>({64}).partition({16})).sync();
  return std::move(z).unpartition().to_host()[0] == 7 ? 0 : 1;
}
