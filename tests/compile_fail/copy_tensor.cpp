// expect-gcc: ^use of deleted function .ctile::Tensor<T>::Tensor\(const ctile::Tensor<T>&\) \[with T = float\].$
// expect-clang: ^call to deleted constructor of .Tensor<float>.$
// A Tensor has exactly one owner: copying it does not compile (two owners could hand it to two
// writing kernels, or free it under a running one).
#include <ctile/ctile.hpp>

namespace ct = ctile;

int main() {
  auto t = ct::zeros<float>({64});
#ifdef CTILE_MISUSE
  auto copy = t;
#endif
  auto moved = std::move(t);
  return moved.numel() == 64 ? 0 : 1;
}
