// A SIMT histogram with atomics: block-scoped atomics into shared memory, then device-scoped ones
// into the result (docs/tutorials/simt_histogram.md). Checked exactly against a host count.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "example_util.hpp"
#include "simt_kernels.hpp"

namespace ct = ctile;
namespace cs = ctile::simt;

int main() {
  const std::int64_t n = 3'000'001;
  auto data = ct::rand<std::uint8_t>({n}, 11, 0, 256).share();
  auto [bins, data2] =
      cs::prepare(simt_examples::simt_histogram, cs::grid(120), ct::zeros<std::uint32_t>({256}), data).sync();
  const std::vector<std::uint32_t> got = bins.to_host();
  std::vector<std::uint32_t> ref(256, 0);
  for (std::uint8_t v : data2.to_host()) ++ref[v];
  const bool ok = got == ref;
  std::printf("bins[0] = %u, bins[255] = %u (of %lld bytes)\n", got[0], got[255], static_cast<long long>(n));
  return example::verdict("simt_histogram", ok, ok ? 0.0 : 1.0);
}
