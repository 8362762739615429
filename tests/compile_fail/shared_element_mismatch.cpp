// expect-gcc: ^static assertion failed: ctile::launch: the Shared handle.s element type differs from the Ref<T, N> parameter.s$
// expect-clang: ^static_assert failed due to requirement .* .ctile::launch: the Shared handle.s element type differs from the Ref<T, N> parameter.s.$
// A Shared<double> cannot back a Ref<float, 1> parameter.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void copy(ct::Mut<float, 1> z, ct::Ref<float, 1> x) { z.store(ct::load_like(x, z)); }

int main() {
  auto x = ct::ones<float>({64}).share();
  auto [z, x2] = ct::launch(copy, ct::zeros<float>({64}).partition({16}), x).sync();
#ifdef CTILE_MISUSE
  auto xd = ct::ones<double>({64}).share();
  auto bad = ct::launch(copy, ct::zeros<float>({64}).partition({16}), xd).sync();
#endif
  return std::move(z).unpartition().to_host() == x2.to_host() ? 0 : 1;
}
