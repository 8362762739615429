// unchecked_mut() takes the tensor; reading the moved-from tensor is a use after move.
#include <ctile/ctile.hpp>

namespace ct = ctile;

int main() {
  auto t = ct::zeros<float>({64});
  auto u = ct::unchecked_mut(ct::unchecked, std::move(t));
  const auto host = t.to_host();  // expect: bugprone-use-after-move
  return u.valid() && host.size() == 64 ? 0 : 1;
}
