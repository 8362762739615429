// expect-gcc: ^static assertion failed: ctile: Mut parameters have rank 1\.\.6$
// expect-clang: ^static_assert failed due to requirement .* .ctile: Mut parameters have rank 1\.\.6.$
// A piece has rank 1 to 6; a rank-0 Mut parameter is rejected with a message.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void fill(ct::Mut<float, 1> z) { z.store(1.0f); }

#ifdef CTILE_MISUSE
void fill_bad(ct::Mut<float, 0> z) { z.store(1.0f); }
#endif

int main() {
  auto [z] = ct::launch(fill, ct::zeros<float>({32}).partition({16})).sync();
  return std::move(z).unpartition().to_host()[0] == 1.0f ? 0 : 1;
}
