// expect: (use of deleted function .*UncheckedTensor<T>::UncheckedTensor\(const ctile::UncheckedTensor<T>&\)|call to deleted constructor of .*UncheckedTensor<float>)
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
