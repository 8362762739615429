// A 2-D SIMT stencil: one Jacobi step of the 5-point Laplace stencil, one thread per point
// (docs/tutorials/simt_stencil.md). Ten steps, ping-ponging two matrices; checked against the same
// steps on the host.
#include <cstdio>
#include <utility>
#include <vector>

#include "example_util.hpp"
#include "simt_kernels.hpp"

namespace ct = ctile;
namespace cs = ctile::simt;

int main() {
  const std::int64_t rows = 300, cols = 517;
  const int steps = 10;
  ct::Tensor<float> grid_now = ct::rand<float>({rows, cols}, 3);
  const std::vector<float> start = grid_now.to_host();
  for (int s = 0; s < steps; ++s) {
    auto in = std::move(grid_now).share();
    auto [out, in2] =
        cs::prepare(simt_examples::simt_stencil, cs::cover_2d(rows, cols), ct::zeros<float>({rows, cols}), in).sync();
    grid_now = std::move(out);  // the next step reads this one's output
  }
  const std::vector<float> got = grid_now.to_host();

  std::vector<float> a = start, b(a.size());
  for (int s = 0; s < steps; ++s) {
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < cols; ++c) {
        const std::int64_t i = r * cols + c;
        const bool interior = r > 0 && c > 0 && r + 1 < rows && c + 1 < cols;
        b[i] = interior ? 0.25f * ((a[i - cols] + a[i + cols]) + (a[i - 1] + a[i + 1])) : a[i];
      }
    std::swap(a, b);
  }
  const double err = example::rel_l2(got, a);
  return example::verdict("simt_stencil", err < 1e-6, err);
}
