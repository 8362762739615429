// expect: (could not convert|cannot convert|no viable conversion|no matching (member )?function for call to .*load)
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
