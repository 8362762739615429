// expect-gcc: ^no matching function for call to .maximum\(ctile::Tile<int>&, double\).$
// expect-clang: ^no matching function for call to .maximum.$
// The element-wise functions mix literals with tiles as the operators do: a literal of the tile's
// kind works on either side (maximum(v, 0)), a floating-point literal with an integer tile does not.
#include <cstdint>

#include <ctile/ctile.hpp>

namespace ct = ctile;

void relu(ct::Mut<std::int32_t, 1> z, ct::Ref<std::int32_t, 1> x) {
  auto t = ct::load_like(x, z);
  z.store(ct::maximum(t, 0));
#ifdef CTILE_MISUSE
  z.store(ct::maximum(t, 0.5));
#endif
}

int main() {
  auto x = ct::zeros<std::int32_t>({64}).share();
  auto [z, x2] = ct::launch(relu, ct::zeros<std::int32_t>({64}).partition({16}), x).sync();
  (void)x2;
  return std::move(z).unpartition().to_host()[0] == 0 ? 0 : 1;
}
