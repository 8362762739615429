// expect-gcc: ^static assertion failed: ctile::launch: a Mut<T, N> parameter needs an exclusive Partition<T>. a Shared<T> handle is read-only and cannot be passed where the kernel writes$
// expect-clang: ^static_assert failed due to requirement .* .ctile::launch: a Mut<T, N> parameter needs an exclusive Partition<T>. a Shared<T> handle is read-only and cannot be passed where the kernel writes.$
// A Shared<T> handle is read-only: passing it where the kernel writes (a Mut parameter) is
// rejected by launch's static_assert.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void copy(ct::Mut<float, 1> z, ct::Ref<float, 1> x) { z.store(ct::load_like(x, z)); }

int main() {
  auto x = ct::ones<float>({64}).share();
  auto z = ct::zeros<float>({64}).partition({16});
  auto [z2, x2] = ct::launch(copy, std::move(z), x).sync();
#ifdef CTILE_MISUSE
  auto again = ct::launch(copy, x2, x).sync();
#endif
  return std::move(z2).unpartition().to_host() == x2.to_host() ? 0 : 1;
}
