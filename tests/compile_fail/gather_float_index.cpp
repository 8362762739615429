// expect-gcc: ^no matching function for call to .ctile::Ref<float, 1>::gather\(ctile::Tile<float>\).$
// expect-clang: ^no matching member function for call to .gather.$
// expect-note-clang: ^candidate function not viable: no known conversion from .Tile<float>. to .const std::array<IndexArg, 1>. for 1st argument$
// Gather indices are integer tiles; a float index tile does not compile.
#include <cstdint>

#include <ctile/ctile.hpp>

namespace ct = ctile;

void reverse(ct::Mut<float, 1> z, ct::Ref<float, 1> x) {
  auto i = ct::iota<std::int64_t>(16);
  auto idx = (ct::block_id(0) * 16 + i);
  z.store(x.gather(idx));
#ifdef CTILE_MISUSE
  z.store(x.gather(idx.to<float>()));
#endif
}

int main() {
  auto x = ct::ones<float>({64}).share();
  auto [z, x2] = ct::launch(reverse, ct::zeros<float>({64}).partition({16}), x).sync();
  (void)x2;
  return std::move(z).unpartition().to_host()[5] == 1.0f ? 0 : 1;
}
