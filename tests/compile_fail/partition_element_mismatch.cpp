// expect-gcc: ^static assertion failed: ctile::launch: the Partition.s element type differs from the Mut<T, N> parameter.s$
// expect-clang: ^static_assert failed due to requirement .* .ctile::launch: the Partition.s element type differs from the Mut<T, N> parameter.s.$
// A Partition<bf16> cannot back a Mut<float, 1> parameter: element types are checked at
// compile time, never converted.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void fill(ct::Mut<float, 1> z) { z.store(1.0f); }

int main() {
  auto [z] = ct::launch(fill, ct::zeros<float>({64}).partition({16})).sync();
#ifdef CTILE_MISUSE
  auto [w] = ct::launch(fill, ct::zeros<ct::bf16>({64}).partition({16})).sync();
#endif
  return std::move(z).unpartition().to_host()[0] == 1.0f ? 0 : 1;
}
