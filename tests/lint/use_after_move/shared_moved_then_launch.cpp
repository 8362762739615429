// A Shared handle can be copied, but once moved from it is empty; passing the old name to a launch
// is a use after move.
//
// KNOWN GAP (this test fails until it is closed): launch() takes its arguments as forwarding
// references, so an lvalue Shared<T> binds to a non-const `Shared<T>&`, and bugprone-use-after-move
// treats passing a variable by non-const reference as a possible re-initialisation (an
// out-parameter). The misuse is therefore caught only at run time ("the Shared handle is empty").
// Taking Shared arguments by value or by const reference in launch() would make it visible here.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void copy(ct::Mut<float, 1> z, ct::Ref<float, 1> x) { z.store(ct::load_like(x, z)); }

int main() {
  auto x = ct::ones<float>({64}).share();
  auto keep = std::move(x);
  auto result = ct::launch(copy, ct::zeros<float>({64}).partition({16}), x).sync();  // expect: bugprone-use-after-move
  (void)result;
  return keep.numel() == 64 ? 0 : 1;
}
