// The launch owns the partition until the work completes and gives it back in its result; the
// moved-from name must not be used.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void fill(ct::Mut<float, 1> z) { z.store(1.0f); }

int main() {
  auto p = ct::zeros<float>({64}).partition({16});
  auto result = ct::launch(fill, std::move(p)).sync();
  auto t = std::move(p).unpartition();  // expect: bugprone-use-after-move
  (void)result;
  return t.numel() == 64 ? 0 : 1;
}
