// Fused row softmax: each tile block owns one row of the output, reads the row once, and computes
// max, exp, sum and the division in registers. Columns past the row's end load as -inf.
#include <cmath>
#include <cstdio>

#include <ctile/ctile.hpp>

#include "example_util.hpp"

namespace ct = ctile;

void softmax(ct::Mut<float, 2> out, ct::Ref<float, 2> x) {
  auto row = ct::load_like(x, out, -INFINITY);        // [1, BLOCK]
  auto e = ct::exp(row - ct::max(row, 1, /*keepdims=*/true));
  out.store(e / ct::sum(e, 1, true));
}

int main() {
  const std::int64_t rows = 300, cols = 1000;  // BLOCK = 1024 > cols: the tail pads with -inf
  auto x = ct::randn<float>({rows, cols}, 5).share();
  auto out = ct::zeros<float>({rows, cols}).partition({1, 1024});
  auto [o, x2] = ct::launch(softmax, std::move(out), x).sync();

  const auto got = std::move(o).unpartition().to_host();
  const auto hx = x2.to_host();
  std::vector<double> ref(got.size());
  for (std::int64_t r = 0; r < rows; ++r) {
    double m = -INFINITY, s = 0;
    for (std::int64_t c = 0; c < cols; ++c) m = std::max(m, double(hx[std::size_t(r * cols + c)]));
    for (std::int64_t c = 0; c < cols; ++c) s += std::exp(double(hx[std::size_t(r * cols + c)]) - m);
    for (std::int64_t c = 0; c < cols; ++c)
      ref[std::size_t(r * cols + c)] = std::exp(double(hx[std::size_t(r * cols + c)]) - m) / s;
  }
  const double err = example::rel_l2(got, ref);
  double row0 = 0;
  for (std::int64_t c = 0; c < cols; ++c) row0 += got[std::size_t(c)];
  std::printf("  %lld rows of %lld; row 0 sums to %.6f\n", (long long)rows, (long long)cols, row0);
  return example::verdict("softmax", err < 1e-5, err);
}
