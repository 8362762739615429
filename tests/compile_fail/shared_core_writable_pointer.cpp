// expect: (is private|is protected|private member|protected member|inaccessible|casts away qualifiers|deleted|no matching (member )?function for call to .*(core|data))
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
