// expect-gcc: ^use of deleted function .ctile::Tensor<T> ctile::UncheckedTensor<T>::into_tensor\(\) & \[with T = float\].$
// expect-clang: ^call to deleted member function .into_tensor.$
// into_tensor() consumes the UncheckedTensor wrapper: std::move(u).into_tensor() only.
#include <ctile/ctile.hpp>

namespace ct = ctile;

int main() {
  auto u = ct::unchecked_mut(ct::unchecked, ct::zeros<float>({64}));
#ifdef CTILE_MISUSE
  auto bad = u.into_tensor();
#endif
  auto t = std::move(u).into_tensor();
  return t.numel() == 64 ? 0 : 1;
}
