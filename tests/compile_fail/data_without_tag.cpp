// expect-gcc: ^no matching function for call to .ctile::Tensor<float>::data\(\).$
// expect-clang: ^no matching member function for call to .data.$
// expect-note-clang: ^candidate function not viable: requires 1 argument, but 0 were provided$
// A raw pointer into a tensor escapes the ownership model, so Tensor::data takes ctile::unchecked.
#include <ctile/ctile.hpp>

namespace ct = ctile;

int main() {
  auto t = ct::ones<float>({64});
  float* p = t.data(ct::unchecked);
#ifdef CTILE_MISUSE
  float* q = t.data();
#endif
  return p[0] == 1.0f ? 0 : 1;
}
