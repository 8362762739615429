// expect-gcc: ^.class ctile::Ref<float, 1>. has no member named .store.$
// expect-clang: ^no member named .store. in .ctile::Ref<float, 1>.$
// A Ref<T, N> parameter is a shared, read-only input: it has no store member, so a kernel cannot
// write to a tensor that other kernels may be reading.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void copy(ct::Mut<float, 1> z, ct::Ref<float, 1> x) {
  auto t = ct::load_like(x, z);
  z.store(t);
#ifdef CTILE_MISUSE
  x.store(t);
#endif
}

int main() {
  auto x = ct::ones<float>({64}).share();
  auto z = ct::zeros<float>({64}).partition({16});
  auto [z2, x2] = ct::launch(copy, std::move(z), x).sync();
  return std::move(z2).unpartition().to_host() == x2.to_host() ? 0 : 1;
}
