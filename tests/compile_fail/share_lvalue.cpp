// expect-gcc: ^use of deleted function .ctile::Shared<T> ctile::Tensor<T>::share\(\) & \[with T = float\].$
// expect-clang: ^call to deleted member function .share.$
// share() consumes the tensor (it becomes read-only for everyone): std::move(t).share() only.
#include <ctile/ctile.hpp>

namespace ct = ctile;

int main() {
  auto t = ct::ones<float>({64});
#ifdef CTILE_MISUSE
  auto bad = t.share();
#endif
  auto s = std::move(t).share();
  return s.numel() == 64 ? 0 : 1;
}
