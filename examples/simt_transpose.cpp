// A SIMT transpose through shared memory (docs/tutorials/simt_transpose.md): 32 x 32 tiles, a
// padded shared tile, coalesced reads and writes. Checked exactly against a host transpose.
#include <cstdio>
#include <vector>

#include "example_util.hpp"
#include "simt_kernels.hpp"

namespace ct = ctile;
namespace cs = ctile::simt;

int main() {
  const std::int64_t rows = 1000, cols = 777;  // not multiples of 32
  auto in = ct::rand<float>({rows, cols}, 5).share();
  // One block per 32 x 32 input tile: x runs over the input's columns, y over its rows.
  const auto grid = cs::grid((cols + 31) / 32, (rows + 31) / 32);
  auto [out, in2] = cs::prepare(simt_examples::simt_transpose, grid, ct::zeros<float>({cols, rows}), in).sync();
  const std::vector<float> got = out.to_host(), x = in2.to_host();
  bool ok = true;
  for (std::int64_t r = 0; r < rows && ok; ++r)
    for (std::int64_t c = 0; c < cols; ++c)
      if (got[c * rows + r] != x[r * cols + c]) {
        std::printf("out[%lld][%lld] = %g, expected %g\n", static_cast<long long>(c), static_cast<long long>(r),
                    got[c * rows + r], x[r * cols + c]);
        ok = false;
        break;
      }
  return example::verdict("simt_transpose", ok, ok ? 0.0 : 1.0);
}
