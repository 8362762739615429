// A partition moved into a launch inside a loop, without taking it back from the result, is used
// after move in the next iteration.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void bump(ct::Mut<float, 1> z) { z.store(z.load() + 1.0f); }

int main() {
  auto p = ct::zeros<float>({64}).partition({16});
  for (int step = 0; step < 3; ++step) {
    auto result = ct::launch(bump, std::move(p)).sync();  // expect: bugprone-use-after-move
    (void)result;
  }
  return 0;
}
