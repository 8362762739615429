// expect-gcc: ^use of deleted function .ctile::Tensor<T> ctile::Tensor<T>::reshape\(ctile::Shape\) & \[with T = float. ctile::Shape = std::vector<long int>\].$
// expect-clang: ^call to deleted member function .reshape.$
// reshape() makes a view that shares the storage, so it consumes the source: rvalues only.
#include <ctile/ctile.hpp>

namespace ct = ctile;

int main() {
  auto t = ct::ones<float>({64});
#ifdef CTILE_MISUSE
  auto bad = t.reshape({8, 8});
#endif
  auto m = std::move(t).reshape({8, 8});
  return m.rank() == 2 ? 0 : 1;
}
