// Move assignment transfers ownership as well.
#include <ctile/ctile.hpp>

namespace ct = ctile;

int main() {
  auto a = ct::zeros<float>({64});
  auto b = ct::ones<float>({64});
  a = std::move(b);
  const auto host = b.to_host();  // expect: bugprone-use-after-move
  return host.size() == a.to_host().size() ? 0 : 1;
}
