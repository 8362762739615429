// RMS norm: y = x / sqrt(mean(x^2) + eps) * w over rows, bf16 in and out, f32 math.
#include <cmath>
#include <cstdio>

#include <ctile/ctile.hpp>

#include "example_util.hpp"

namespace ct = ctile;

void rms_norm(ct::Mut<ct::bf16, 2> y, ct::Ref<ct::bf16, 2> x, ct::Ref<ct::bf16, 1> w, ct::Scalar<float> eps) {
  const auto [bm, bn] = y.tile_shape();                   // [1, BLOCK]
  auto [row, col] = y.tile_index();
  auto xf = ct::load_like(x, y).to<float>();              // padded columns read 0: they add nothing
  auto n = x.extent(1).to<float>();
  auto inv = ct::rsqrt(ct::sum(xf * xf, 1, true) / n + eps);
  auto wf = w.tiles({bn}).load({col}).to<float>().reshape({1, bn});
  y.store((xf * inv * wf).to<ct::bf16>());
}

int main() {
  const std::int64_t rows = 64, cols = 3000;
  auto x = ct::randn<ct::bf16>({rows, cols}, 6).share();
  auto w = ct::rand<ct::bf16>({cols}, 7, 0.5, 1.5).share();
  auto y = ct::zeros<ct::bf16>({rows, cols}).partition({1, 4096});
  const float eps = 1e-6f;
  auto [y2, x2, w2, e] = ct::launch(rms_norm, std::move(y), x, w, eps).sync();

  const auto got = std::move(y2).unpartition().to_host();
  const auto hx = x2.to_host();
  const auto hw = w2.to_host();
  std::vector<double> ref(got.size());
  for (std::int64_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (std::int64_t c = 0; c < cols; ++c) ss += std::pow(double(float(hx[std::size_t(r * cols + c)])), 2);
    const double inv = 1.0 / std::sqrt(ss / double(cols) + double(e));
    for (std::int64_t c = 0; c < cols; ++c)
      ref[std::size_t(r * cols + c)] = double(float(hx[std::size_t(r * cols + c)])) * inv * double(float(hw[std::size_t(c)]));
  }
  const double err = example::rel_l2(got, ref);
  std::printf("  %lld rows of %lld, eps %.0e\n", (long long)rows, (long long)cols, double(e));
  return example::verdict("rms_norm", err < 1e-2, err);
}
