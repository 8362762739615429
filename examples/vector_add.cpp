// Vector add: z = x + y over 1M + 3 floats (the last tile is partial: loads pad, stores mask).
#include <cstdio>

#include <ctile/ctile.hpp>

#include "example_util.hpp"

namespace ct = ctile;

void vector_add(ct::Mut<float, 1> z, ct::Ref<float, 1> x, ct::Ref<float, 1> y) {
  z.store(ct::load_like(x, z) + ct::load_like(y, z));
}

int main() {
  const std::int64_t n = (1 << 20) + 3;
  auto x = ct::rand<float>({n}, 1).share();
  auto y = ct::randn<float>({n}, 2).share();
  auto z = ct::zeros<float>({n}).partition({1024});  // grid = ceil(n / 1024) = 1025 blocks
  auto [z2, x2, y2] = ct::launch(vector_add, std::move(z), x, y).sync();

  const auto out = std::move(z2).unpartition().to_host();
  const auto hx = x2.to_host(), hy = y2.to_host();
  std::vector<double> ref(hx.size());
  for (std::size_t i = 0; i < ref.size(); ++i) ref[i] = double(hx[i]) + double(hy[i]);
  const double err = example::rel_l2(out, ref);
  std::printf("  z[0] = %.6f, z[n-1] = %.6f\n", double(out.front()), double(out.back()));
  return example::verdict("vector_add", err < 1e-6, err);
}
