// expect-gcc: ^use of deleted function .ctile::UncheckedTensor<T>::UncheckedTensor\(const ctile::UncheckedTensor<T>&\) \[with T = float\].$
// expect-clang: ^call to deleted constructor of .UncheckedTensor<float>.$
// An UncheckedTensor owns its tensor like a Tensor does: no copies.
#include <ctile/ctile.hpp>

namespace ct = ctile;

int main() {
  auto u = ct::unchecked_mut(ct::unchecked, ct::zeros<float>({64}));
#ifdef CTILE_MISUSE
  auto copy = u;
#endif
  auto moved = std::move(u);
  return moved.valid() ? 0 : 1;
}
