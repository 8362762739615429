// Launch contracts against fake device limits (validate_launch and prepare()), with
// overflow-checked arithmetic; the requires relations; unchecked launches.
#include <limits>

#include "helpers.hpp"
#include "kernels.hpp"

namespace simt_test {
namespace {

const std::string what = "prepare of SIMT kernel 'k' (k.cpp:1)";

cs::DeviceLimits small_gpu() {
  cs::DeviceLimits l;
  l.device = "fake:0 (an sm_80 part with small limits)";
  l.compute_capability = 80;
  l.max_threads_per_block = 512;
  l.max_block = cs::Dims{512, 256, 16};
  l.max_grid = cs::Dims{1000, 100, 10};
  l.max_shared_per_block = 16 * 1024;
  l.max_shared_per_block_optin = 32 * 1024;
  return l;
}

TEST(SimtContract, AValidLaunchAndItsShape) {
  const auto d = cs::validate_launch(what, cs::Contract().block(128, 2).dynamic_shared(4096), small_gpu(), cs::cover(1000, 7));
  EXPECT_EQ(d.block, (cs::Dims{128, 2, 1}));
  EXPECT_EQ(d.grid, (cs::Dims{8, 4, 1}));  // ceil(1000 / 128), ceil(7 / 2)
  EXPECT_EQ(d.dynamic_shared, 4096);
  EXPECT_EQ(d.threads, 8 * 4 * 256);
  const auto e = cs::validate_launch(what, cs::Contract().block(32), small_gpu(), cs::grid(1000, 100, 10));
  EXPECT_EQ(e.grid, (cs::Dims{1000, 100, 10}));
  const auto f = cs::validate_launch(what, cs::Contract().block(16, 16), small_gpu(), cs::cover_2d(33, 17));
  EXPECT_EQ(f.grid, (cs::Dims{2, 3, 1}));  // x covers the 17 columns, y the 33 rows
}

TEST(SimtContract, EveryLimit) {
  const auto lim = small_gpu();
  auto v = [&](const cs::Contract& c, const cs::GridSpec& g) { (void)cs::validate_launch(what, c, lim, g); };
  EXPECT_USER_ERROR(v(cs::Contract(), cs::grid(1)), "declares no block shape");
  EXPECT_USER_ERROR(v(cs::Contract().block(0), cs::grid(1)), "has extent 0 along x; every extent must be at least 1");
  EXPECT_USER_ERROR(v(cs::Contract().block(4, -1), cs::grid(1)), "along y");
  EXPECT_USER_ERROR(v(cs::Contract().block(1024), cs::grid(1)),
                    "has 1024 threads along x; fake:0 (an sm_80 part with small limits) allows at most 512");
  EXPECT_USER_ERROR(v(cs::Contract().block(1, 1, 17), cs::grid(1)), "has 17 threads along z");
  EXPECT_USER_ERROR(v(cs::Contract().block(32, 32), cs::grid(1)), "has 1024 threads; fake:0");
  EXPECT_USER_ERROR(v(cs::Contract().block(32), cs::grid(1001)), "has 1001 blocks along x; fake:0");
  EXPECT_USER_ERROR(v(cs::Contract().block(32), cs::grid(1, 101)), "has 101 blocks along y");
  EXPECT_USER_ERROR(v(cs::Contract().block(32), cs::grid(1, 1, 11)), "has 11 blocks along z");
  EXPECT_USER_ERROR(v(cs::Contract().block(32), cs::cover(32 * 1000 + 1)), "(use grid_stride with a smaller grid)");
  EXPECT_USER_ERROR(v(cs::Contract().block(32), cs::grid(0)), "is empty (no blocks along x); there is nothing to launch");
  EXPECT_USER_ERROR(v(cs::Contract().block(32), cs::cover(0)), "it covers 0 threads there");
  EXPECT_USER_ERROR(v(cs::Contract().block(32), cs::cover(-5)), "negative extent along x");
  EXPECT_USER_ERROR(v(cs::Contract().block(32).dynamic_shared(32 * 1024 + 1), cs::grid(1)),
                    "asks for 32769 bytes of dynamic shared memory per block; fake:0");
  EXPECT_USER_ERROR(v(cs::Contract().block(32).dynamic_shared(-1), cs::grid(1)), "is negative");
  EXPECT_USER_ERROR(v(cs::Contract().block(32).min_compute_capability(9, 0), cs::grid(1)),
                    "needs compute capability 9.0 or newer; fake:0 (an sm_80 part with small limits) has 8.0");
  EXPECT_USER_ERROR(v(cs::Contract().block(32).min_blocks_per_sm(-1), cs::grid(1)), "min_blocks_per_sm");
  // Each failure starts with what was being done.
  EXPECT_USER_ERROR(v(cs::Contract(), cs::grid(1)), "prepare of SIMT kernel 'k' (k.cpp:1): ");
}

TEST(SimtContract, ThreadCountsThatOverflow64Bits) {
  cs::DeviceLimits huge;
  huge.device = "fake:1";
  const std::int64_t big = std::numeric_limits<std::int64_t>::max() / 2;
  huge.max_grid = cs::Dims{big, big, big};
  huge.max_block = cs::Dims{1024, 1024, 64};
  EXPECT_USER_ERROR((void)cs::validate_launch(what, cs::Contract().block(1024), huge, cs::grid(big)),
                    "has more threads than a 64-bit index can count");
  EXPECT_USER_ERROR((void)cs::validate_launch(what, cs::Contract().block(2), huge, cs::grid(1 << 30, 1 << 30, 1 << 30)),
                    "more threads than a 64-bit index can count");
  // Just below the limit passes: (2^62 - 1) blocks of 2 threads.
  const auto d = cs::validate_launch(what, cs::Contract().block(2), huge, cs::grid((std::int64_t{1} << 62) - 1));
  EXPECT_EQ(d.threads, std::numeric_limits<std::int64_t>::max() - 1);
  // cover() rounds up without overflowing; the rounded-up grid may then have too many threads.
  const std::int64_t max = std::numeric_limits<std::int64_t>::max();
  EXPECT_USER_ERROR((void)cs::validate_launch(what, cs::Contract().block(1024), huge, cs::cover(max)),
                    "more threads than a 64-bit index can count");
  const auto e = cs::validate_launch(what, cs::Contract().block(1024), huge, cs::cover(max - 2000));
  EXPECT_EQ(e.grid.x, (max - 2000) / 1024 + 1);
}

TEST(SimtContract, TheCpuHasAnSm90GpusLimits) {
  const cs::DeviceLimits c = cs::limits_of(ct::cpu());
  EXPECT_EQ(c.compute_capability, 90);
  EXPECT_EQ(c.max_threads_per_block, 1024);
  EXPECT_EQ(c.max_shared_per_block_optin, 227 * 1024);
  EXPECT_NE(c.device.find("cpu:0"), std::string::npos);
}

TEST(SimtContract, PrepareChecksAgainstTheGivenLimits) {
  auto lim = small_gpu();
  lim.compute_capability = 75;
  auto in = ct::ones<float>({300}).share();
  EXPECT_USER_ERROR((void)cs::prepare(lim, k_contract, cs::cover(300), ct::zeros<float>({300}), in, std::int64_t{300}),
                    "prepare of SIMT kernel 'k_contract' (");
  EXPECT_USER_ERROR((void)cs::prepare(lim, k_contract, cs::cover(300), ct::zeros<float>({300}), in, std::int64_t{300}),
                    "needs compute capability 8.0 or newer; fake:0 (an sm_80 part with small limits) has 7.5");
  lim.compute_capability = 80;
  lim.max_shared_per_block_optin = 1000;
  EXPECT_USER_ERROR((void)cs::prepare(lim, k_contract, cs::cover(300), ct::zeros<float>({300}), in, std::int64_t{300}),
                    "asks for 1024 bytes of dynamic shared memory");
  // Within the limits, it runs (on the arguments' device, the CPU).
  lim.max_shared_per_block_optin = 4096;
  auto [o, in2, n] = cs::prepare(lim, k_contract, cs::cover(300), ct::zeros<float>({300}), in, std::int64_t{250}).sync();
  const auto v = o.to_host();
  for (int i = 0; i < 300; ++i) EXPECT_EQ(v[i], i < 250 ? 1.0f : 0.0f);
}

TEST(SimtContract, RequiresRelations) {
  auto in = ct::ones<float>({300}).share();
  EXPECT_USER_ERROR((void)cs::prepare(k_contract, cs::cover(300), ct::zeros<float>({299}), in, std::int64_t{10}),
                    "the contract requires `out.size() == in.size()`, which does not hold for out: DisjointSpan<f32> of "
                    "299 elements, in: Span<f32> of 300 elements, n: Uniform<i64> = 10");
  EXPECT_USER_ERROR((void)cs::prepare(k_contract, cs::cover(300), ct::zeros<float>({300}), in, std::int64_t{301}),
                    "requires `n <= out.size()`");
  EXPECT_USER_ERROR((void)cs::prepare(k_contract, cs::cover(300), ct::zeros<float>({300}), in, std::int64_t{-1}),
                    "requires `n >= 0`");
  // The kernel's own relations of simt_kernels.hpp hold for the examples' shapes; a 2-D mismatch:
  auto m = ct::ones<float>({4, 5}).share();
  EXPECT_USER_ERROR((void)cs::prepare(k_plus_one_2d, cs::cover_2d(4, 5), ct::zeros<float>({4, 6}), m),
                    "requires `out.cols() == in.cols()`, which does not hold for out: DisjointSpan2D<f32> of 4x6");
}

TEST(SimtContract, ARequiresRelationMayNotReadElements) {
  auto in = ct::ones<float>({32}).share();
  EXPECT_USER_ERROR((void)cs::prepare(k_bad_requires, cs::cover(32), ct::zeros<float>({32}), in),
                    "a requires relation may use sizes and Uniform values only");
}

TEST(SimtContract, AContractWithoutABlock) {
  EXPECT_USER_ERROR((void)cs::prepare(k_no_block, cs::cover(32), ct::zeros<float>({32})),
                    "prepare of SIMT kernel 'k_no_block'");
  EXPECT_USER_ERROR((void)cs::prepare(k_no_block, cs::cover(32), ct::zeros<float>({32})), "declares no block shape");
}

TEST(SimtContract, UncheckedLaunchesSkipLimitsAndRelations) {
  auto lim = small_gpu();
  lim.compute_capability = 70;
  auto in = ct::ones<float>({300}).share();
  // n > out.size() breaks a relation; the unchecked launch does not look (the kernel itself bounds i).
  auto [o, in2, n] =
      cs::prepare(ct::unchecked, k_contract, cs::cover(300), ct::zeros<float>({300}), in, std::int64_t{1000}).sync();
  EXPECT_EQ(o.to_host()[299], 1.0f);
  // The launch shape must still make sense.
  EXPECT_USER_ERROR((void)cs::prepare(ct::unchecked, k_contract, cs::cover(0), ct::zeros<float>({300}), in, std::int64_t{1}),
                    "unchecked prepare of SIMT kernel 'k_contract'");
}

}  // namespace
}  // namespace simt_test
