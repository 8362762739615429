// expect-gcc: ^use of deleted function .ctile::Tensor<T> ctile::Partition<T>::unpartition\(\) & \[with T = float\].$
// expect-clang: ^call to deleted member function .unpartition.$
// unpartition() consumes the partition: std::move(p).unpartition() only.
#include <ctile/ctile.hpp>

namespace ct = ctile;

int main() {
  auto p = ct::zeros<float>({64}).partition({16});
#ifdef CTILE_MISUSE
  auto bad = p.unpartition();
#endif
  auto t = std::move(p).unpartition();
  return t.numel() == 64 ? 0 : 1;
}
