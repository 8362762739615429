// expect-gcc: ^no matching function for call to .ctile::Mut<float, 1>::store\(ctile::Tile<double>&\).$
// expect-clang: ^no matching member function for call to .store.$
// harness-rejects: does not match the expected regex
// SELF-TEST: a broken copy of store_wrong_element_type that the harness must reject: an unrelated
// error comes first in the misuse block, the real misuse second. Only the first error counts (the
// compiler stops after one), so the second cannot vouch for the case.
#include <algorithm>

#include <ctile/ctile.hpp>

namespace ct = ctile;

void fill(ct::Mut<float, 1> z) {
  auto t = ct::Tile<double>::full({16}, 0.5);
  z.store(t.to<float>());
#ifdef CTILE_MISUSE
  (void)std::max(1, 2.0);
  z.store(t);
#endif
}

int main() {
  auto [z] = ct::launch(fill, ct::zeros<float>({64}).partition({16})).sync();
  return std::move(z).unpartition().to_host()[0] == 0.5f ? 0 : 1;
}
