// share() consumes the tensor; partitioning it afterwards (to write it) is a use after move.
#include <ctile/ctile.hpp>

namespace ct = ctile;

int main() {
  auto t = ct::ones<float>({64});
  auto s = std::move(t).share();
  auto p = std::move(t).partition({16});  // expect: bugprone-use-after-move
  return s.numel() == 64 && p.valid() ? 0 : 1;
}
