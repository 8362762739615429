// expect-gcc: ^use of deleted function .ctile::Tensor<T> ctile::Shared<T>::unshare\(\) & \[with T = float\].$
// expect-clang: ^call to deleted member function .unshare.$
// unshare() consumes the (last) shared handle: std::move(s).unshare() only.
#include <ctile/ctile.hpp>

namespace ct = ctile;

int main() {
  auto s = ct::ones<float>({64}).share();
#ifdef CTILE_MISUSE
  auto bad = s.unshare();
#endif
  auto t = std::move(s).unshare();
  return t.numel() == 64 ? 0 : 1;
}
