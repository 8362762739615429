// expect-gcc: ^cannot convert .<brace-enclosed initializer list>. to .const std::array<ctile::IndexArg, 2>&.$
// expect-clang: ^excess elements in struct initializer$
// expect-note-gcc: ^initializing argument 1 of .ctile::Tile<U> ctile::PartitionView<T, N>::load\(
// expect-note-clang: ^in initialization of temporary of type .const std::array<IndexArg, 2>.
// A rank-2 partition view takes exactly two tile indices; three do not compile.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void copy(ct::Mut<float, 2> z, ct::Ref<float, 2> x) {
  auto view = x.tiles({4, 4});
  auto [i, j] = z.tile_index();
  z.store(view.load({i, j}));
#ifdef CTILE_MISUSE
  z.store(view.load({i, j, 0}));
#endif
}

int main() {
  auto x = ct::ones<float>({16, 16}).share();
  auto [z, x2] = ct::launch(copy, ct::zeros<float>({16, 16}).partition({4, 4}), x).sync();
  (void)x2;
  return std::move(z).unpartition().to_host()[0] == 1.0f ? 0 : 1;
}
