// partition() consumes the tensor; reading it afterwards is a use after move.
#include <ctile/ctile.hpp>

namespace ct = ctile;

int main() {
  auto t = ct::zeros<float>({64});
  auto p = std::move(t).partition({16});
  const auto host = t.to_host();  // expect: bugprone-use-after-move
  return p.grid()[0] == 4 && host.size() == 64 ? 0 : 1;
}
