// expect-gcc: ^use of deleted function .ctile::Tensor<T> ctile::Tensor<T>::unslice\(\) & \[with T = float\].$
// expect-clang: ^call to deleted member function .unslice.$
// unslice() consumes the slice: an lvalue slice would stay usable next to the whole parent and
// alias it mutably.
#include <ctile/ctile.hpp>

namespace ct = ctile;

int main() {
  auto t = ct::ones<float>({64});
  auto half = std::move(t).slice(0, 0, 32);
#ifdef CTILE_MISUSE
  auto whole = half.unslice();
#endif
  auto back = std::move(half).unslice();
  return back.numel() == 64 ? 0 : 1;
}
