// expect-gcc: ^use of deleted function .ctile::Tensor<T> ctile::Tensor<T>::slice\(int, int64_t, int64_t\) & \[with T = float. int64_t = long int\].$
// expect-clang: ^call to deleted member function .slice.$
// slice() of a Tensor consumes the source, or the view and the source would alias mutably.
#include <ctile/ctile.hpp>

namespace ct = ctile;

int main() {
  auto t = ct::ones<float>({64});
#ifdef CTILE_MISUSE
  auto bad = t.slice(0, 0, 32);
#endif
  auto half = std::move(t).slice(0, 0, 32);
  return half.numel() == 32 ? 0 : 1;
}
