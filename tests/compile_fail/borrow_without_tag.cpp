// expect-gcc: ^no matching function for call to .ctile::Tensor<float>::borrow\(float\*, <brace-enclosed initializer list>\).$
// expect-clang: ^no matching function for call to .borrow.$
// expect-note-clang: ^candidate function not viable: requires at least 3 arguments, but 2 were provided$
// Wrapping foreign memory in a Tensor (ctile cannot see who else uses it) takes ctile::unchecked.
#include <vector>

#include <ctile/ctile.hpp>

namespace ct = ctile;

int main() {
  std::vector<float> buf(64, 1.0f);
  auto t = ct::Tensor<float>::borrow(ct::unchecked, buf.data(), {64});
#ifdef CTILE_MISUSE
  auto u = ct::Tensor<float>::borrow(buf.data(), {64});
#endif
  return t.to_host()[0] == 1.0f ? 0 : 1;
}
