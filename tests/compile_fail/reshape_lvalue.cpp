// expect: (use of deleted function .*Tensor<T>::reshape\(|call to deleted member function .reshape.)
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
