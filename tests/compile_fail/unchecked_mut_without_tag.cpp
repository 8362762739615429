// expect: no matching function for call to .*unchecked_mut
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
