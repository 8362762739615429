// expect-gcc: ^no matching function for call to .where\(ctile::Tile<bool>, ctile::Tile<float>&, int\).$
// expect-clang: ^no matching function for call to .where.$
// where() takes a literal for either branch, of the other branch's kind: 0.0f with a float tile,
// not 0 (an integer literal would silently become a float).
#include <ctile/ctile.hpp>

namespace ct = ctile;

void relu(ct::Mut<float, 1> z, ct::Ref<float, 1> x) {
  auto t = ct::load_like(x, z);
  z.store(ct::where(t > 0.0f, t, 0.0f));
#ifdef CTILE_MISUSE
  z.store(ct::where(t > 0.0f, t, 0));
#endif
}

int main() {
  auto x = ct::ones<float>({64}).share();
  auto [z, x2] = ct::launch(relu, ct::zeros<float>({64}).partition({16}), x).sync();
  (void)x2;
  return std::move(z).unpartition().to_host()[0] == 1.0f ? 0 : 1;
}
