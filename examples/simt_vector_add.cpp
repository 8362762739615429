// A SIMT kernel: out[i] = a[i] + b[i], one thread per element (docs/tutorials/simt_vector_add.md).
// The kernel is in simt_kernels.hpp; this program runs it on the default device (the GPU when one
// is usable, else the CPU backend) and checks it against a host loop.
#include <cstdio>
#include <vector>

#include "example_util.hpp"
#include "simt_kernels.hpp"

namespace ct = ctile;
namespace cs = ctile::simt;

int main() {
  const std::int64_t n = (1 << 20) + 3;  // not a multiple of the block: the last block sticks out
  auto a = ct::rand<float>({n}, 1).share();
  auto b = ct::rand<float>({n}, 2).share();
  // prepare() checks the launch against the device (block, grid, the contract's requires) and
  // returns a launch that owns its arguments; sync() runs it and gives them back.
  auto [out, a2, b2] =
      cs::prepare(simt_examples::simt_vector_add, cs::cover(n), ct::zeros<float>({n}), a, b).sync();
  const std::vector<float> got = out.to_host(), x = a2.to_host(), y = b2.to_host();
  std::vector<double> ref(got.size());
  for (std::size_t i = 0; i < ref.size(); ++i) ref[i] = static_cast<double>(x[i]) + y[i];
  const double err = example::rel_l2(got, ref);
  return example::verdict("simt_vector_add", err < 1e-6, err);
}
