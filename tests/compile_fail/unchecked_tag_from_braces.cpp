// expect-gcc: ^converting to .ctile::unchecked_t. from initializer list would use explicit constructor .constexpr ctile::unchecked_t::unchecked_t\(\).$
// expect-clang: ^no matching member function for call to .data.$
// expect-note-clang: ^candidate function not viable: cannot convert initializer list argument to .ctile::unchecked_t.$
// The tag cannot be conjured from `{}`: its default constructor is explicit, so every opt-out
// names ctile::unchecked (and stays greppable).
#include <ctile/ctile.hpp>

namespace ct = ctile;

int main() {
  auto t = ct::ones<float>({64});
  float* p = t.data(ct::unchecked);
#ifdef CTILE_MISUSE
  float* q = t.data({});
#endif
  return p[0] == 1.0f ? 0 : 1;
}
