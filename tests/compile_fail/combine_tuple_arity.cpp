// expect-gcc: ^static assertion failed: ctile::reduce / ctile::scan over a tuple of tiles: the combine function must return a std::tuple of one tile per combined tile, of their element types, in their order$
// expect-clang: ^static_assert failed due to requirement .* .ctile::reduce / ctile::scan over a tuple of tiles: the combine function must return a std::tuple of one tile per combined tile, of their element types, in their order.$
// A combine function over two tiles returns two values: one of them alone is not the pair.
#include <cstdint>
#include <tuple>

#include <ctile/ctile.hpp>

namespace ct = ctile;

void kernel(ct::Mut<float, 1> z, ct::Ref<float, 1> x) {
  auto t = x.tiles({16}).load({0});
  auto i = ct::iota<std::int64_t>(16);
  auto [v, k] = ct::scan(std::tuple{t, i}, 0, [](auto a, auto b) { return std::tuple{std::get<0>(b), std::get<1>(a)}; });
  z.store(v + k.to<float>());
#ifdef CTILE_MISUSE
  auto w = ct::scan(std::tuple{t, i}, 0, [](auto a, auto b) { return std::tuple{std::get<0>(a) + std::get<0>(b)}; });
  (void)w;
#endif
}

int main() { return 0; }
