// expect-gcc: ^no matching function for call to .ctile::UncheckedMut<float, 1>::store_at\(<brace-enclosed initializer list>, ctile::Tile<float>&\).$
// expect-clang: ^no matching member function for call to .store_at.$
// expect-note-clang: ^candidate function not viable: requires at least 3 arguments, but 2 were provided$
// UncheckedMut<T, N>::store_at writes one element at an arbitrary index: tagged like scatter.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void first(ct::UncheckedMut<float, 1> dst) {
  auto one = ct::Tile<float>::scalar(1.0f);
  dst.store_at(ct::unchecked, {0}, one);
#ifdef CTILE_MISUSE
  dst.store_at({0}, one);
#endif
}

int main() {
  auto dst = ct::unchecked_mut(ct::unchecked, ct::zeros<float>({4}));
  auto [d] = ct::launch(first, std::move(dst)).grid({1}).sync();
  return std::move(d).into_tensor().to_host()[0] == 1.0f ? 0 : 1;
}
