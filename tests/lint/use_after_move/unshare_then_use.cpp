// unshare() consumes the shared handle and hands back the mutable tensor.
#include <ctile/ctile.hpp>

namespace ct = ctile;

int main() {
  auto s = ct::ones<float>({64}).share();
  auto t = std::move(s).unshare();
  const auto host = s.to_host();  // expect: bugprone-use-after-move
  return host.size() == static_cast<std::size_t>(t.numel()) ? 0 : 1;
}
