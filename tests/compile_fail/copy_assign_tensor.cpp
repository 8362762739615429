// expect-gcc: ^use of deleted function .ctile::Tensor<T>& ctile::Tensor<T>::operator=\(const ctile::Tensor<T>&\) \[with T = float\].$
// expect-clang: ^overload resolution selected deleted operator .=.$
// expect-note-clang: ^candidate function has been explicitly deleted$
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
