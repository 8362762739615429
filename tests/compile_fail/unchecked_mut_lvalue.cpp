// expect-gcc: ^cannot bind rvalue reference of type .ctile::Tensor<float>&&. to lvalue of type .ctile::Tensor<float>.$
// expect-clang: ^no matching function for call to .unchecked_mut.$
// expect-note-clang: ^candidate function \[with T = float\] not viable: expects an rvalue for 2nd argument$
// unchecked_mut takes the tensor by rvalue: its ownership moves into the UncheckedTensor.
#include <ctile/ctile.hpp>

namespace ct = ctile;

int main() {
  auto t = ct::zeros<float>({64});
#ifdef CTILE_MISUSE
  auto bad = ct::unchecked_mut(ct::unchecked, t);
#endif
  auto u = ct::unchecked_mut(ct::unchecked, std::move(t));
  return u.valid() ? 0 : 1;
}
