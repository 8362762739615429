// saxpy: y = a * x + y in bf16, with `a` a run-time scalar and the math done in f32.
#include <cstdio>

#include <ctile/ctile.hpp>

#include "example_util.hpp"

namespace ct = ctile;

void saxpy(ct::Mut<ct::bf16, 1> y, ct::Scalar<float> a, ct::Ref<ct::bf16, 1> x) {
  auto xf = ct::load_like(x, y).to<float>();
  auto yf = y.load().to<float>();  // the block reads its own piece before overwriting it
  y.store((a * xf + yf).to<ct::bf16>());
}

int main() {
  const std::int64_t n = 100000;
  auto x = ct::randn<ct::bf16>({n}, 3).share();
  auto y = ct::randn<ct::bf16>({n}, 4);
  const auto y_before = y.to_host();
  auto [y2, a, x2] = ct::launch(saxpy, std::move(y).partition({2048}), 2.5f, x).sync();

  const auto out = std::move(y2).unpartition().to_host();
  const auto hx = x2.to_host();
  std::vector<double> ref(out.size());
  for (std::size_t i = 0; i < ref.size(); ++i)
    ref[i] = double(a) * double(float(hx[i])) + double(float(y_before[i]));
  const double err = example::rel_l2(out, ref);
  std::printf("  a = %.2f, y[0] = %.4f\n", double(a), double(float(out[0])));
  return example::verdict("saxpy", err < 1e-2, err);  // bf16 output: ~3e-3 expected
}
