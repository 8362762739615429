// A Shared handle can be copied, but once moved from it is empty; passing the old name to a launch
// is a use after move.
//
// launch() takes its arguments by value, so the moved-from handle is copied at the call: a use
// that bugprone-use-after-move flags (the launch would also reject the empty handle at run time).
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
