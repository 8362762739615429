// expect-gcc: ^no matching function for call to .ctile::UncheckedMut<float, 1>::scatter\(ctile::Tile<long int>&, ctile::Tile<float>&\).$
// expect-clang: ^no matching member function for call to .scatter.$
// expect-note-clang: ^candidate function not viable: requires at least 3 arguments, but 2 were provided$
// UncheckedMut<T, N>::scatter can write anywhere in the tensor, so it takes ctile::unchecked as
// its first argument; leaving the tag out does not compile.
#include <cstdint>
#include <span>
#include <vector>

#include <ctile/ctile.hpp>

namespace ct = ctile;

void permute(ct::UncheckedMut<float, 1> dst, ct::Ref<std::int64_t, 1> idx, ct::Ref<float, 1> src) {
  auto where = idx.tiles({16}).load({ct::block_id(0)});
  auto what = src.tiles({16}).load({ct::block_id(0)});
  dst.scatter(ct::unchecked, where, what);
#ifdef CTILE_MISUSE
  dst.scatter(where, what);
#endif
}

int main() {
  std::vector<std::int64_t> perm(64);
  for (std::int64_t i = 0; i < 64; ++i) perm[static_cast<std::size_t>(i)] = 63 - i;
  auto idx = ct::from_host<std::int64_t>(std::span<const std::int64_t>(perm), {64}).share();
  auto src = ct::ones<float>({64}).share();
  auto dst = ct::unchecked_mut(ct::unchecked, ct::zeros<float>({64}));
  auto [d, i, s] = ct::launch(permute, std::move(dst), idx, src).grid({4}).sync();
  (void)i;
  (void)s;
  return std::move(d).into_tensor().to_host()[0] == 1.0f ? 0 : 1;
}
