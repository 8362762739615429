// expect-gcc: ^static assertion failed: ctile: Mut<T, N, dims\.\.\.> names either no tile extents or exactly N of them$
// expect-clang: ^static_assert failed due to requirement .* .ctile: Mut<T, N, dims\.\.\.> names either no tile extents or exactly N of them.$
// Static tile extents on a Mut parameter name every axis or none.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void fill(ct::Mut<float, 2, 16, 16> z) { z.store(1.0f); }

#ifdef CTILE_MISUSE
void fill_bad(ct::Mut<float, 2, 16> z) { z.store(1.0f); }
#endif

int main() {
  auto [z] = ct::launch(fill, ct::zeros<float>({32, 32}).partition({16, 16})).sync();
  return std::move(z).unpartition().to_host()[0] == 1.0f ? 0 : 1;
}
