// expect-gcc: ^use of deleted function .ctile::UncheckedTensor<T>::UncheckedTensor\(const ctile::UncheckedTensor<T>&\) \[with T = float\].$
// expect-clang: ^call to deleted constructor of .ctile::UncheckedTensor<float>.$
// An UncheckedTensor is owned by the launch like any writable argument: an lvalue is rejected.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void first(ct::UncheckedMut<float, 1> dst) { dst.store_at(ct::unchecked, {0}, ct::Tile<float>::scalar(1.0f)); }

int main() {
  auto u = ct::unchecked_mut(ct::unchecked, ct::zeros<float>({4}));
#ifdef CTILE_MISUSE
  auto [bad] = ct::launch(first, u).grid({1}).sync();
#endif
  auto [d] = ct::launch(first, std::move(u)).grid({1}).sync();
  return std::move(d).into_tensor().to_host()[0] == 1.0f ? 0 : 1;
}
