// expect-gcc: ^no match for .operator&. \(operand types are .ctile::Tile<float>. and .ctile::Tile<float>.\)$
// expect-clang: ^invalid operands to binary expression \(.Tile<float>. and .Tile<float>.\)$
// Bitwise operators exist for integer tiles only.
#include <cstdint>

#include <ctile/ctile.hpp>

namespace ct = ctile;

void mask(ct::Mut<std::int32_t, 1> z, ct::Mut<float, 1> w) {
  auto i = z.load();
  z.store(i & i);
  auto f = w.load();
  w.store(f);
#ifdef CTILE_MISUSE
  w.store(f & f);
#endif
}

int main() {
  auto [z, w] = ct::launch(mask, ct::zeros<std::int32_t>({64}).partition({16}),
                           ct::zeros<float>({64}).partition({16}))
                    .sync();
  (void)w;
  return std::move(z).unpartition().to_host()[0] == 0 ? 0 : 1;
}
