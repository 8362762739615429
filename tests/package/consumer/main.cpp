#include <cstdio>

#include <ctile/ctile.hpp>

namespace ct = ctile;

void scale(ct::Mut<float, 1> z, ct::Ref<float, 1> x) { z.store(ct::load_like(x, z) * 3.0f); }

int main() {
  auto x = ct::arange<float>(100).share();
  auto [z, x2] = ct::launch(scale, ct::zeros<float>({100}).partition({32}), x).sync();
  const auto out = std::move(z).unpartition().to_host();
  for (int i = 0; i < 100; ++i)
    if (out[static_cast<std::size_t>(i)] != 3.0f * static_cast<float>(i)) return 1;
  std::printf("consumer: ok\n");
  return 0;
}
