// expect: (use of deleted function .*Tensor<T>::operator=\(const ctile::Tensor<T>&\)|overload resolution selected deleted operator .=.)
// Copy assignment is deleted too.
#include <ctile/ctile.hpp>

namespace ct = ctile;

int main() {
  auto a = ct::zeros<float>({64});
  auto b = ct::ones<float>({64});
#ifdef CTILE_MISUSE
  a = b;
#endif
  a = std::move(b);
  return a.to_host()[0] == 1.0f ? 0 : 1;
}
