// expect-gcc: ^use of deleted function .ctile::Partition<T> ctile::Tensor<T>::partition\(ctile::Shape\) & \[with T = float. ctile::Shape = std::vector<long int>\].$
// expect-clang: ^call to deleted member function .partition.$
// partition() consumes the tensor, so it is callable on an rvalue only: the transfer must be
// spelled std::move(t).partition(...), which clang-tidy then tracks for use after move.
#include <ctile/ctile.hpp>

namespace ct = ctile;

int main() {
  auto t = ct::zeros<float>({64});
#ifdef CTILE_MISUSE
  auto bad = t.partition({16});
#endif
  auto p = std::move(t).partition({16});
  return p.grid()[0] == 4 ? 0 : 1;
}
