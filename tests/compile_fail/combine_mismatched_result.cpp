// expect-gcc: ^static assertion failed: ctile::reduce / ctile::scan: the combine function must return a tile of the element type it combines$
// expect-clang: ^static_assert failed due to requirement .* .ctile::reduce / ctile::scan: the combine function must return a tile of the element type it combines.$
// A combine function returns what it combines: a comparison (a Tile<bool>) does not reduce floats.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void kernel(ct::Mut<float, 1> z, ct::Ref<float, 1> x) {
  auto t = x.tiles({16}).load({0});
  z.store(ct::reduce(t, 0, [](auto a, auto b) { return ct::maximum(a, b); }, true));
#ifdef CTILE_MISUSE
  z.store(ct::reduce(t, 0, [](auto a, auto b) { return a < b; }, true));
#endif
}

int main() { return 0; }
