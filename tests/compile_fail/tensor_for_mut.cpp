// expect-gcc: ^static assertion failed: ctile::launch: a Mut<T, N> parameter takes a Partition<T>: std::move\(tensor\)\.partition\({tile\.\.\.}\)$
// expect-clang: ^static_assert failed due to requirement .* .ctile::launch: a Mut<T, N> parameter takes a Partition<T>: std::move\(tensor\)\.partition\({tile\.\.\.}\).$
// A Mut parameter needs a partition (which fixes the piece of every tile block); a whole tensor
// is rejected.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void fill(ct::Mut<float, 1> z) { z.store(1.0f); }

int main() {
  auto [z] = ct::launch(fill, ct::zeros<float>({64}).partition({16})).sync();
#ifdef CTILE_MISUSE
  auto [w] = ct::launch(fill, ct::zeros<float>({64})).sync();
#endif
  return std::move(z).unpartition().to_host()[0] == 1.0f ? 0 : 1;
}
