// unpartition() consumes the partition; launching with it again is a use after move.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void fill(ct::Mut<float, 1> z) { z.store(1.0f); }

int main() {
  auto p = ct::zeros<float>({64}).partition({16});
  auto t = std::move(p).unpartition();
  auto result = ct::launch(fill, std::move(p)).sync();  // expect: bugprone-use-after-move
  (void)result;
  return t.numel() == 64 ? 0 : 1;
}
