// expect: (no matching (member )?function for call to .*data|too few arguments to function call.*data)
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
