// expect-gcc: ^use of deleted function .ctile::Partition<T>::Partition\(const ctile::Partition<T>&\) \[with T = float\].$
// expect-clang: ^call to deleted constructor of .Partition<float>.$
// Two copies of one partition would give two tile blocks the same piece to write.
#include <ctile/ctile.hpp>

namespace ct = ctile;

int main() {
  auto p = ct::zeros<float>({64}).partition({16});
#ifdef CTILE_MISUSE
  auto copy = p;
#endif
  auto moved = std::move(p);
  return moved.grid()[0] == 4 ? 0 : 1;
}
