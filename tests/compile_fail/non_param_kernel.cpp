// expect-gcc: ^static assertion failed: ctile: every kernel parameter must be Mut<T,N>, Ref<T,N>, Atomic<T,N>, UncheckedMut<T,N>, Scalar<T> or Const<T>$
// expect-clang: ^static_assert failed due to requirement .* .ctile: every kernel parameter must be Mut<T,N>, Ref<T,N>, Atomic<T,N>, UncheckedMut<T,N>, Scalar<T> or Const<T>.$
// Kernel parameters carry the access discipline, so a kernel takes ctile parameter types only:
// a plain `float` (or a pointer) parameter is rejected.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void fill(ct::Mut<float, 1> z, ct::Scalar<float> v) { z.store(v); }

// A plain C++ function: defining it is fine, launching it as a kernel is the misuse.
void fill_plain(ct::Mut<float, 1> z, float v) { z.store(v); }

int main() {
  auto [z, v] = ct::launch(fill, ct::zeros<float>({64}).partition({16}), 2.0f).sync();
#ifdef CTILE_MISUSE
  auto [z2, v2] = ct::launch(fill_plain, ct::zeros<float>({64}).partition({16}), 2.0f).sync();
#endif
  return std::move(z).unpartition().to_host()[0] == v ? 0 : 1;
}
