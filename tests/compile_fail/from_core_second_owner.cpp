// expect-gcc: ^no matching function for call to .ctile::Tensor<float>::core\(\).$
// expect-clang: ^too few arguments to function call, expected 1, have 0$
// expect-note-clang: ^.core. declared here$
// A second owner of a tensor, made without a copy and without ctile::unchecked: Tensor::core() and
// Tensor::from_core() (the raw shared view, for the launch glue) take the `unchecked` tag, so doing
// this without it does not compile.
#include <ctile/ctile.hpp>

namespace ct = ctile;

int main() {
  auto t = ct::zeros<float>({64});
#ifdef CTILE_MISUSE
  auto twin = ct::Tensor<float>::from_core(t.core());
  auto p = std::move(twin).partition({16});  // a writable partition of memory `t` still owns
#endif
  return t.numel() == 64 ? 0 : 1;
}
