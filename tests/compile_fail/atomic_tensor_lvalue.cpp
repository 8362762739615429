// expect-gcc: ^use of deleted function .ctile::Tensor<T>::Tensor\(const ctile::Tensor<T>&\) \[with T = float\].$
// expect-clang: ^call to deleted constructor of .ctile::Tensor<float>.$
// The tensor behind an Atomic parameter is owned by the launch: an lvalue is rejected.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void total(ct::Atomic<float, 1> acc, ct::Ref<float, 1> x) {
  acc.add({0}, ct::sum(x.tiles({16}).load({ct::block_id(0)}), 0));
}

int main() {
  auto x = ct::ones<float>({64}).share();
  auto acc = ct::zeros<float>({1});
#ifdef CTILE_MISUSE
  auto bad = ct::launch(total, acc, x).grid({4}).sync();
#endif
  auto [acc2, x2] = ct::launch(total, std::move(acc), x).grid({4}).sync();
  (void)x2;
  return acc2.to_host()[0] == 64.0f ? 0 : 1;
}
