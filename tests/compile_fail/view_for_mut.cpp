// expect-gcc: ^static assertion failed: ctile::launch: a Mut<T, N> parameter needs an exclusive Partition<T>. a Shared<T> handle is read-only and cannot be passed where the kernel writes$
// expect-clang: ^static_assert failed due to requirement .* .ctile::launch: a Mut<T, N> parameter needs an exclusive Partition<T>. a Shared<T> handle is read-only and cannot be passed where the kernel writes.$
// A view of a shared handle (slice, permute, expand, reshape) is itself a Shared: a kernel reads
// it (Ref) but cannot be given it to write (Mut); a broadcast view would have every row written
// by several tile blocks.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void add_row(ct::Mut<float, 2> z, ct::Ref<float, 2> x) { z.store(z.load() + ct::load_like(x, z)); }

int main() {
  auto row = ct::ones<float>({1, 64}).share();
  auto rows = row.expand({8, 64});
  auto z = ct::zeros<float>({8, 64}).partition({8, 16});
  auto [z2, r2] = ct::launch(add_row, std::move(z), rows).sync();
#ifdef CTILE_MISUSE
  auto again = ct::launch(add_row, rows, r2).sync();
#endif
  return std::move(z2).unpartition().to_host()[70] == 1.0f ? 0 : 1;
}
