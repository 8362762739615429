// A Shared handle moved into a launch is empty until the launch gives it back; reading the old
// name is a use after move.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void copy(ct::Mut<float, 1> z, ct::Ref<float, 1> x) { z.store(ct::load_like(x, z)); }

int main() {
  auto x = ct::ones<float>({64}).share();
  auto result = ct::launch(copy, ct::zeros<float>({64}).partition({16}), std::move(x)).sync();
  const auto host = x.to_host();  // expect: bugprone-use-after-move
  (void)result;
  return host.size() == 64 ? 0 : 1;
}
