// expect-gcc: ^no matching function for call to .ctile::Tensor<float>::core\(\).$
// expect-clang: ^too few arguments to function call, expected 1, have 0$
// expect-note-clang: ^.core. declared here$
// harness-rejects-gcc: does not match the expected regex
// harness-rejects-clang: no note of the first error
// SELF-TEST: a broken copy of from_core_second_owner that the harness must reject: the misuse is
// replaced by a call of another class's member function without its argument. Clang's message is the same
// ("too few arguments to function call, expected 1, have 0"); only the note naming the function
// tells them apart.
#include <ctile/ctile.hpp>

namespace ct = ctile;

struct Other {
  int need_one(int) const;  // declared only: the suite compiles with -fsyntax-only, nothing links
};

int main() {
  auto t = ct::zeros<float>({64});
#ifdef CTILE_MISUSE
  (void)Other{}.need_one();
#endif
  return t.numel() == 64 && Other{}.need_one(1) == 1 ? 0 : 1;
}
