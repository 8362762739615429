// expect-gcc: ^static assertion failed: ctile::launch: an Atomic<T, N> parameter takes a Tensor<T>, moved in$
// expect-clang: ^static_assert failed due to requirement .* .ctile::launch: an Atomic<T, N> parameter takes a Tensor<T>, moved in.$
// An Atomic parameter is written (atomically) by every block; a read-only Shared handle cannot
// back it.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void total(ct::Atomic<float, 1> acc, ct::Ref<float, 1> x) {
  acc.add({0}, ct::sum(x.tiles({16}).load({ct::block_id(0)}), 0));
}

int main() {
  auto x = ct::ones<float>({64}).share();
  auto [acc, x2] = ct::launch(total, ct::zeros<float>({1}), x).grid({4}).sync();
#ifdef CTILE_MISUSE
  auto shared_acc = ct::zeros<float>({1}).share();
  auto bad = ct::launch(total, shared_acc, x).grid({4}).sync();
#endif
  (void)x2;
  return acc.to_host()[0] == 64.0f ? 0 : 1;
}
