// expect-gcc: ^no matching function for call to .ctile::Tensor<float>::core\(\).$
// expect-clang: ^too few arguments to function call, expected 1, have 0$
// expect-note-clang: ^.core. declared here$
// harness-rejects: COMPILES with CTILE_MISUSE
// SELF-TEST: a broken copy of from_core_second_owner that the harness must reject: the misuse
// block spells the tag, so it compiles.
#include <ctile/ctile.hpp>

namespace ct = ctile;

int main() {
  auto t = ct::zeros<float>({64});
#ifdef CTILE_MISUSE
  auto twin = ct::Tensor<float>::from_core(ct::unchecked, t.core(ct::unchecked));
  (void)twin;
#endif
  return t.numel() == 64 ? 0 : 1;
}
