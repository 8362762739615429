// reshape() makes a view over the same storage and consumes the source.
#include <ctile/ctile.hpp>

namespace ct = ctile;

int main() {
  auto t = ct::ones<float>({64});
  auto m = std::move(t).reshape({8, 8});
  const auto rank = t.rank();  // expect: bugprone-use-after-move
  return m.rank() == 2 && rank == 1 ? 0 : 1;
}
