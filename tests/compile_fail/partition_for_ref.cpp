// expect-gcc: ^static assertion failed: ctile::launch: a Ref<T, N> parameter takes a Shared<T> handle: std::move\(tensor\)\.share\(\)$
// expect-clang: ^static_assert failed due to requirement .* .ctile::launch: a Ref<T, N> parameter takes a Shared<T> handle: std::move\(tensor\)\.share\(\).$
// A Ref parameter reads a shared tensor; an exclusive Partition is not one.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void copy(ct::Mut<float, 1> z, ct::Ref<float, 1> x) { z.store(ct::load_like(x, z)); }

int main() {
  auto x = ct::ones<float>({64}).share();
  auto [z, x2] = ct::launch(copy, ct::zeros<float>({64}).partition({16}), x).sync();
#ifdef CTILE_MISUSE
  auto bad = ct::launch(copy, ct::zeros<float>({64}).partition({16}), std::move(z)).sync();
#endif
  return std::move(z).unpartition().to_host() == x2.to_host() ? 0 : 1;
}
