// expect-gcc: ^use of deleted function .ctile::Launch<.*>::Launch\(const ctile::Launch<.*>&\) \[with .*ctile::Partition<float>}\].$
// expect-clang: ^call to deleted constructor of .Launch<.*ctile::Partition<float>>.$
// A lazy launch owns its arguments: it cannot be copied (and so cannot run twice).
#include <ctile/ctile.hpp>

namespace ct = ctile;

void fill(ct::Mut<float, 1> z) { z.store(1.0f); }

int main() {
  auto op = ct::launch(fill, ct::zeros<float>({64}).partition({16}));
#ifdef CTILE_MISUSE
  auto copy = op;
#endif
  auto [z] = std::move(op).sync();
  return std::move(z).unpartition().to_host()[0] == 1.0f ? 0 : 1;
}
