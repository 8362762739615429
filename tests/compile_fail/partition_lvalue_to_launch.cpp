// expect-gcc: ^use of deleted function .ctile::Partition<T>::Partition\(const ctile::Partition<T>&\) \[with T = float\].$
// expect-clang: ^call to deleted constructor of .ctile::Partition<float>.$
// The launch owns a partition until the work completes, so it must be moved in: an lvalue
// partition is rejected (it would leave the caller a handle to memory the kernel is writing).
#include <ctile/ctile.hpp>

namespace ct = ctile;

void fill(ct::Mut<float, 1> z) { z.store(1.0f); }

int main() {
  auto p = ct::zeros<float>({64}).partition({16});
#ifdef CTILE_MISUSE
  auto [bad] = ct::launch(fill, p).sync();
#endif
  auto [z] = ct::launch(fill, std::move(p)).sync();
  return std::move(z).unpartition().to_host()[0] == 1.0f ? 0 : 1;
}
