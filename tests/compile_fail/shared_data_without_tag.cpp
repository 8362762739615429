// expect-gcc: ^no matching function for call to .ctile::Shared<float>::data\(\).$
// expect-clang: ^too few arguments to function call, expected 1, have 0$
// expect-note-clang: ^.data. declared here$
// The read-only pointer of a Shared handle is an opt-out as well: Shared::data takes the tag.
#include <ctile/ctile.hpp>

namespace ct = ctile;

int main() {
  auto s = ct::ones<float>({64}).share();
  const float* p = s.data(ct::unchecked);
#ifdef CTILE_MISUSE
  const float* q = s.data();
#endif
  return p[0] == 1.0f ? 0 : 1;
}
