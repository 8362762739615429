// expect-gcc: ^.class ctile::Ref<float, 1>. has no member named .store_window.; did you mean .load_window.\?$
// expect-clang: ^no member named .store_window. in .ctile::Ref<float, 1>.$
// Windows at element offsets are read from any shared input (Ref::load_window) but written only
// into the block's own piece (Mut::store_window): a Ref has no store_window.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void shift(ct::Mut<float, 1> z, ct::Ref<float, 1> x) {
  auto t = x.load_window({z.tile_index()[0] * 16 + 1}, {16});
  z.store_window({0}, t);
#ifdef CTILE_MISUSE
  x.store_window({0}, t);
#endif
}

int main() {
  auto x = ct::ones<float>({64}).share();
  auto z = ct::zeros<float>({64}).partition({16});
  auto [z2, x2] = ct::launch(shift, std::move(z), x).sync();
  return std::move(z2).unpartition().to_host()[0] == 1.0f ? 0 : 1;
}
