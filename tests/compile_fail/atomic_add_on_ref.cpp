// expect-gcc: ^.class ctile::Ref<float, 1>. has no member named .add.$
// expect-clang: ^no member named .add. in .ctile::Ref<float, 1>.$
// Atomic updates need an Atomic<T, N> parameter; a shared Ref<T, N> input has none.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void total(ct::Atomic<float, 1> acc, ct::Ref<float, 1> x) {
  auto part = ct::sum(x.tiles({16}).load({ct::block_id(0)}), 0);
  acc.add({0}, part);
#ifdef CTILE_MISUSE
  x.add({0}, part);
#endif
}

int main() {
  auto x = ct::ones<float>({64}).share();
  auto [acc, x2] = ct::launch(total, ct::zeros<float>({1}), x).grid({4}).sync();
  (void)x2;
  return acc.to_host()[0] == 64.0f ? 0 : 1;
}
