// expect-gcc: ^cannot convert .<brace-enclosed initializer list>. to .const std::array<ctile::IndexArg, 1>&.$
// expect-clang: ^no viable conversion from .Tile<float>. to .ctile::IndexArg.$
// expect-note-gcc: ^initializing argument 1 of .ctile::Tile<U> ctile::PartitionView<T, N>::load\(
// Tile indices are integers (an Index, an integer scalar tile or an integer literal); a float
// scalar tile as a tile index does not compile.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void copy(ct::Mut<float, 1> z, ct::Ref<float, 1> x) {
  auto view = x.tiles({16});
  auto b = ct::block_id(0);
  z.store(view.load({b}));
#ifdef CTILE_MISUSE
  z.store(view.load({b.to<float>()}));
#endif
}

int main() {
  auto x = ct::ones<float>({64}).share();
  auto [z, x2] = ct::launch(copy, ct::zeros<float>({64}).partition({16}), x).sync();
  (void)x2;
  return std::move(z).unpartition().to_host()[0] == 1.0f ? 0 : 1;
}
