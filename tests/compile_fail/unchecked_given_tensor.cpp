// expect-gcc: ^static assertion failed: ctile::launch: an UncheckedMut<T, N> parameter takes ctile::unchecked_mut\(ctile::unchecked, std::move\(tensor\)\)$
// expect-clang: ^static_assert failed due to requirement .* .ctile::launch: an UncheckedMut<T, N> parameter takes ctile::unchecked_mut\(ctile::unchecked, std::move\(tensor\)\).$
// An UncheckedMut parameter needs a tensor explicitly marked unchecked; a plain Tensor is rejected,
// so the opt-out is always visible at the call site.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void first(ct::UncheckedMut<float, 1> dst) { dst.store_at(ct::unchecked, {0}, ct::Tile<float>::scalar(1.0f)); }

int main() {
  auto [d] = ct::launch(first, ct::unchecked_mut(ct::unchecked, ct::zeros<float>({4}))).grid({1}).sync();
#ifdef CTILE_MISUSE
  auto [bad] = ct::launch(first, ct::zeros<float>({4})).grid({1}).sync();
#endif
  return std::move(d).into_tensor().to_host()[0] == 1.0f ? 0 : 1;
}
