// A SIMT reduction: the sum of a vector through warp shuffles, shared memory and one atomic per
// block (docs/tutorials/simt_sum.md). Checked against a float64 sum on the host.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "example_util.hpp"
#include "simt_kernels.hpp"

namespace ct = ctile;
namespace cs = ctile::simt;

int main() {
  const std::int64_t n = (1 << 22) + 5;  // not a multiple of 4: the tail is read element by element
  auto x = ct::rand<float>({n}, 7, -1.0, 1.0).share();
  // A grid-stride kernel: a fixed number of blocks, each thread adding many elements.
  const std::int64_t blocks = std::min<std::int64_t>(256, (n / 4 + 255) / 256);
  auto [sum, x2] = cs::prepare(simt_examples::simt_sum, cs::grid(blocks), ct::zeros<float>({1}), x).sync();
  const std::vector<float> xs = x2.to_host();
  double ref = 0;
  for (float v : xs) ref += v;
  const double got = sum.to_host()[0];
  // Float atomics add the blocks' sums in any order: compare with a tolerance for float32 sums.
  const double err = std::abs(got - ref) / std::max(1.0, std::abs(ref));
  std::printf("sum = %.6f (float64 reference %.6f)\n", got, ref);
  return example::verdict("simt_sum", err < 1e-4, err);
}
