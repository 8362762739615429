// Moving a tensor to another variable transfers ownership; the old name is empty.
#include <ctile/ctile.hpp>

namespace ct = ctile;

int main() {
  auto t = ct::zeros<float>({64});
  auto owner = std::move(t);
  const auto n = t.numel();  // expect: bugprone-use-after-move
  return owner.numel() == n ? 0 : 1;
}
