// expect-gcc: ^no matching function for call to .ctile::Tensor<float>::core\(\).$
// expect-clang: ^too few arguments to function call, expected 1, have 0$
// expect-note-clang: ^.core. declared here$
// harness-rejects: does not match the expected regex
// SELF-TEST: a broken copy of from_core_second_owner that the harness must reject: the misuse is
// replaced by a read of another class's private member. The old expect line's bare `is private`
// alternative accepted it.
#include <ctile/ctile.hpp>

namespace ct = ctile;

class Other {
  int secret_ = 0;
};

int main() {
  auto t = ct::zeros<float>({64});
#ifdef CTILE_MISUSE
  Other o;
  (void)o.secret_;
#endif
  return t.numel() == 64 ? 0 : 1;
}
