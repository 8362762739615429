// expect-gcc: ^no matching function for call to .unchecked_mut\(ctile::Tensor<float>\).$
// expect-clang: ^no matching function for call to .unchecked_mut.$
// expect-note-clang: ^candidate function template not viable: requires 2 arguments, but 1 was provided$
// Making a tensor that every tile block may store into anywhere takes ctile::unchecked.
#include <ctile/ctile.hpp>

namespace ct = ctile;

int main() {
  auto u = ct::unchecked_mut(ct::unchecked, ct::zeros<float>({64}));
#ifdef CTILE_MISUSE
  auto v = ct::unchecked_mut(ct::zeros<float>({64}));
#endif
  return u.valid() ? 0 : 1;
}
