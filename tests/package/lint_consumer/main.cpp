// Built with ctile_enable_lint(): clean as it is; with -DCTILE_MISUSE the partition is used after
// being moved into the launch, which clang-tidy must reject at the marked line.
#include <cstdio>

#include <ctile/ctile.hpp>

namespace ct = ctile;

int main() {
  const auto twice = [](ct::Mut<float, 1> z, ct::Ref<float, 1> x) { z.store(ct::load_like(x, z) * 2.0f); };
  auto x = ct::arange<float>(64).share();
  auto p = ct::zeros<float>({64}).partition({16});
  auto [z, x2] = ct::launch(twice, std::move(p), x).sync();
#ifdef CTILE_MISUSE
  std::printf("%d\n", p.valid() ? 1 : 0);  // expect: bugprone-use-after-move
#endif
  const auto out = std::move(z).unpartition().to_host();
  for (int i = 0; i < 64; ++i)
    if (out[static_cast<std::size_t>(i)] != 2.0f * static_cast<float>(i)) return 1;
  std::printf("lint consumer: ok\n");
  return 0;
}
