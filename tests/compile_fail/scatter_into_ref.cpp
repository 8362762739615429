// expect-gcc: ^.class ctile::Ref<float, 1>. has no member named .scatter.$
// expect-clang: ^no member named .scatter. in .ctile::Ref<float, 1>.$
// A Ref<T, N> parameter has no scatter either: no store of any form reaches a shared input.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void copy(ct::Mut<float, 1> z, ct::Ref<float, 1> x) {
  auto t = ct::load_like(x, z);
  z.store(t);
#ifdef CTILE_MISUSE
  x.scatter({ct::iota<std::int64_t>(16)}, t);
#endif
}

int main() {
  auto x = ct::ones<float>({64}).share();
  auto z = ct::zeros<float>({64}).partition({16});
  auto [z2, x2] = ct::launch(copy, std::move(z), x).sync();
  (void)x2;
  return std::move(z2).unpartition().to_host().size() == 64 ? 0 : 1;
}
