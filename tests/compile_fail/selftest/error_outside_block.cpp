// expect-gcc: ^static assertion failed: ctile::launch: the Partition.s element type differs from the Mut<T, N> parameter.s$
// expect-clang: ^static_assert failed due to requirement .* .ctile::launch: the Partition.s element type differs from the Mut<T, N> parameter.s.$
// harness-rejects: outside the misuse block
// SELF-TEST: a broken copy of partition_element_mismatch that the harness must reject: the message
// is the expected one, but the launch that causes it sits after the misuse block; the block only
// picks a type. The error must be caused by the block's own code.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void fill(ct::Mut<float, 1> z) { z.store(1.0f); }

int main() {
  auto [z] = ct::launch(fill, ct::zeros<float>({64}).partition({16})).sync();
#ifdef CTILE_MISUSE
  using Elem = ct::bf16;
#else
  using Elem = float;
#endif
  auto [w] = ct::launch(fill, ct::zeros<Elem>({64}).partition({16})).sync();
  (void)w;
  return std::move(z).unpartition().to_host()[0] == 1.0f ? 0 : 1;
}
