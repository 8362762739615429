// A sum over a whole tensor: each tile block reduces its tile in registers and adds the partial
// sum into a one-element accumulator with an atomic add. No Mut parameter: the grid is explicit.
#include <cstdio>

#include <ctile/ctile.hpp>

#include "example_util.hpp"

namespace ct = ctile;

constexpr std::int64_t kBlock = 4096;

void reduce_sum(ct::Atomic<double, 1> total, ct::Ref<double, 1> x) {
  auto tile = x.tiles({kBlock}).load({ct::block_id(0)});  // past the end: 0
  total.add({0}, ct::sum(tile, 0));
}

int main() {
  const std::int64_t n = 1'000'003;
  auto x = ct::randn<double>({n}, 10).share();
  const std::int64_t blocks = ct::ceil_div(n, kBlock);
  auto [total, x2] = ct::launch(reduce_sum, ct::zeros<double>({1}), x).grid({blocks}).sync();

  const double got = total.to_host()[0];
  double ref = 0;
  for (double v : x2.to_host()) ref += v;
  const double err = std::abs(got - ref) / std::max(1.0, std::abs(ref));
  std::printf("  sum of %lld normals over %lld blocks = %.9f (reference %.9f)\n", (long long)n, (long long)blocks, got, ref);
  return example::verdict("reduce_sum", err < 1e-9, err);
}
