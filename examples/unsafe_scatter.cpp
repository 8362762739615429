// The unsafe opt-out: UncheckedMut lets any tile block store anywhere, and every such store is
// tagged `ct::unchecked`. The race checker (CPU backend) records who wrote each element: a
// permutation scatter passes, a scatter where two blocks hit the same element is reported.
#include <cstdio>

#include <ctile/ctile.hpp>

#include "example_util.hpp"

namespace ct = ctile;

// dst[idx[i]] = src[i], each block handling 256 consecutive i.
void scatter(ct::UncheckedMut<float, 1> dst, ct::Ref<std::int64_t, 1> idx, ct::Ref<float, 1> src) {
  auto b = ct::block_id(0);
  auto where = idx.tiles({256}).load({b}, -1);  // padding -1: out of bounds, dropped
  auto what = src.tiles({256}).load({b});
  dst.scatter(ct::unchecked, where, what);
}

int main() {
  const std::int64_t n = 4096;
  std::vector<std::int64_t> perm(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) perm[std::size_t(i)] = (i * 1237) % n;  // 1237 is odd: a permutation of [0, n)
  auto src = ct::rand<float>({n}, 11).share();
  auto idx = ct::from_host<std::int64_t>(std::span<const std::int64_t>(perm), {n}).share();

  // 1. A permutation: no element is written twice. Checked, and the result is verified.
  auto dst = ct::unchecked_mut(ct::unchecked, ct::zeros<float>({n}));
  auto [d2, i2, s2] = ct::launch(scatter, std::move(dst), idx, src).grid({n / 256}).race_check().sync();
  const auto out = std::move(d2).into_tensor().to_host();
  const auto hs = s2.to_host();
  bool ok = true;
  for (std::int64_t i = 0; i < n; ++i) ok = ok && out[std::size_t(perm[std::size_t(i)])] == hs[std::size_t(i)];
  std::printf("  permutation scatter: race checker silent, result %s\n", ok ? "correct" : "WRONG");

  // 2. Every index folded into the first half: blocks collide, and the checker says where.
  std::vector<std::int64_t> folded(perm);
  for (auto& v : folded) v %= n / 2;
  auto idx_bad = ct::from_host<std::int64_t>(std::span<const std::int64_t>(folded), {n}).share();
  bool caught = false;
  try {
    auto r = ct::launch(scatter, ct::unchecked_mut(ct::unchecked, ct::zeros<float>({n})), idx_bad, src)
                 .grid({n / 256})
                 .race_check()
                 .sync();
    (void)r;
  } catch (const ct::RaceError& e) {
    caught = true;
    std::printf("  colliding scatter: %s\n", e.what());
  }
  return example::verdict("unsafe_scatter", ok && caught);
}
