// expect-gcc: ^assignment of read-only location .\* v\.ctile::Shared<float>::data\(.*\).$
// expect-clang: ^read-only variable is not assignable$
// The unchecked pointer of a view (here a broadcast, where one element stands for a whole column)
// is const like its parent's: writing through it does not compile.
#include <ctile/ctile.hpp>

namespace ct = ctile;

int main() {
  auto s = ct::ones<float>({1, 64}).share();
  auto v = s.expand({4, 64});
  const float* p = v.data(ct::unchecked);
#ifdef CTILE_MISUSE
  v.data(ct::unchecked)[0] = 2.0f;
#endif
  return p[0] == 1.0f ? 0 : 1;
}
