// expect-gcc: ^no matching function for call to .ctile::Shared<float>::core\(\).$
// expect-clang: ^too few arguments to function call, expected 1, have 0$
// expect-note-clang: ^.core. declared here$
// A write into a shared (read-only) tensor without ctile::unchecked: Shared::core(), which exposes
// the raw view and a writable pointer, takes the `unchecked` tag; Shared::data(ctile::unchecked) is
// the sanctioned (read-only) way to the memory.
#include <ctile/ctile.hpp>

namespace ct = ctile;

int main() {
  auto s = ct::ones<float>({64}).share();
  const float* p = s.data(ct::unchecked);
#ifdef CTILE_MISUSE
  reinterpret_cast<float*>(s.core()->data())[0] = 2.0f;
#endif
  return p[0] == 1.0f ? 0 : 1;
}
