// expect-gcc: ^assignment of read-only location .\* s\.ctile::Shared<float>::data\(.*\).$
// expect-clang: ^read-only variable is not assignable$
// Even the unchecked pointer of a Shared handle is const: writing through it does not compile.
#include <ctile/ctile.hpp>

namespace ct = ctile;

int main() {
  auto s = ct::ones<float>({64}).share();
  const float* p = s.data(ct::unchecked);
#ifdef CTILE_MISUSE
  s.data(ct::unchecked)[0] = 2.0f;
#endif
  return p[0] == 1.0f ? 0 : 1;
}
