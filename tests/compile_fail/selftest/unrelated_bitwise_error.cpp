// expect-gcc: ^no match for .operator&. \(operand types are .ctile::Tile<float>. and .ctile::Tile<float>.\)$
// expect-clang: ^invalid operands to binary expression \(.Tile<float>. and .Tile<float>.\)$
// harness-rejects: does not match the expected regex
// SELF-TEST: a broken copy of bitwise_on_float_tile that the harness must reject: the misuse is
// replaced by `&` on two unrelated types. The old expect line (`no match for .operator&.|invalid
// operands to binary expression`) accepted it under both compilers; the operand types do not.
#include <cstdint>
#include <vector>

#include <ctile/ctile.hpp>

namespace ct = ctile;

void mask(ct::Mut<std::int32_t, 1> z, ct::Mut<float, 1> w) {
  auto i = z.load();
  z.store(i & i);
  auto f = w.load();
  w.store(f);
#ifdef CTILE_MISUSE
  (void)(std::vector<int>() & std::vector<int>());
#endif
}

int main() {
  auto [z, w] = ct::launch(mask, ct::zeros<std::int32_t>({64}).partition({16}),
                           ct::zeros<float>({64}).partition({16}))
                    .sync();
  (void)w;
  return std::move(z).unpartition().to_host()[0] == 0 ? 0 : 1;
}
