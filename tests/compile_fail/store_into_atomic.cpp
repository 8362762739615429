// expect-gcc: ^.class ctile::Atomic<float, 1>. has no member named .store.$
// expect-clang: ^no member named .store. in .ctile::Atomic<float, 1>.$
// An Atomic<T, N> parameter is written by every tile block, so it offers atomic operations only:
// a plain store would race with the other blocks.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void total(ct::Atomic<float, 1> acc, ct::Ref<float, 1> x) {
  auto part = ct::sum(x.tiles({16}).load({ct::block_id(0)}), 0);
  acc.add({0}, part);
#ifdef CTILE_MISUSE
  acc.store(part);
#endif
}

int main() {
  auto x = ct::ones<float>({64}).share();
  auto [acc, x2] = ct::launch(total, ct::zeros<float>({1}), x).grid({4}).sync();
  (void)x2;
  return acc.to_host()[0] == 64.0f ? 0 : 1;
}
