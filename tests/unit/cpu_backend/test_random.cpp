// ct.random: Philox-4x32-10 against the Random123 known answers and against an independent
// implementation written here (all offsets and seeds of a kernel, bit for bit); the uniform and
// normal maps against double-precision formulas; statistics (mean, variance, chi-square over
// bins). This file also runs through the generated code in the host emulation
// (test_cuda_emulation): the same bits there prove the device lowering bit-identical.
#include <array>
#include <cmath>

#include "ctile/device/philox.h"
#include "helpers.hpp"

namespace cpu_test {
namespace {

// ---- an independent Philox-4x32-10 (the paper's round function, written from its definition) ----
using Block = std::array<std::uint32_t, 4>;
Block reference_philox(Block ctr, std::array<std::uint32_t, 2> key) {
  for (int r = 0; r < 10; ++r) {
    const std::uint64_t a = std::uint64_t{0xD2511F53u} * ctr[0];
    const std::uint64_t b = std::uint64_t{0xCD9E8D57u} * ctr[2];
    ctr = {static_cast<std::uint32_t>(b >> 32) ^ ctr[1] ^ key[0], static_cast<std::uint32_t>(b),
           static_cast<std::uint32_t>(a >> 32) ^ ctr[3] ^ key[1], static_cast<std::uint32_t>(a)};
    key = {key[0] + 0x9E3779B9u, key[1] + 0xBB67AE85u};  // the bump after the last round is unused
  }
  return ctr;
}

// Random123's known-answer vectors (kat_vectors, philox4x32 10).
struct Kat {
  Block ctr;
  std::array<std::uint32_t, 2> key;
  Block out;
};
const Kat kKats[] = {
    {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}},
    {{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, {0xffffffffu, 0xffffffffu}, {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}},
    {{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, {0xa4093822u, 0x299f31d0u}, {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}},
};

TEST(Philox, KnownAnswersOfBothImplementations) {
  for (const Kat& k : kKats) {
    EXPECT_EQ(reference_philox(k.ctr, k.key), k.out);
    ct::philox::Words c{{k.ctr[0], k.ctr[1], k.ctr[2], k.ctr[3]}};
    const ct::philox::Words w = ct::philox::philox4x32_10(c, k.key[0], k.key[1]);
    EXPECT_EQ((Block{w.w[0], w.w[1], w.w[2], w.w[3]}), k.out);
  }
}

// A kernel of R x C elements: out[i] = ct.random(seed, offset[i]) with the offsets base + i * stride.
template <class Out>
std::vector<Out> run_random(ir::RandomDist d, std::int64_t seed, std::int64_t base, std::int64_t stride, std::int64_t n,
                            std::int64_t tile = 256) {
  KB kb("random");
  const ValueId sd = kb.scalar_param("seed", DType::i64);
  const ValueId out = kb.piece("out", d == ir::RandomDist::Bits ? DType::u32 : DType::f32, {tile});
  const ValueId first = kb.binary(ir::BinaryFn::Add, kb.binary(ir::BinaryFn::Mul, kb.block_id(0), kb.i64c(tile * stride)), kb.i64c(base));
  const ValueId off = kb.binary(ir::BinaryFn::Add, kb.binary(ir::BinaryFn::Mul, kb.iota(DType::i64, tile), kb.broadcast(kb.reshape(kb.i64c(stride), {1}), {tile})),
                                kb.broadcast(kb.reshape(first, {1}), {tile}));
  auto& op = kb.op(ir::OpKind::Random, {kb.broadcast(kb.reshape(sd, {1}), {tile}), off},
                   {ir::Type::tile(d == ir::RandomDist::Bits ? DType::u32 : DType::f32, {tile})});
  op.random = d;
  kb.store_piece(out, op.results[0]);
  std::vector<Out> o(static_cast<std::size_t>(n));
  launch(kb.finish(), {ceil_div(n, tile)}, {sarg(ir::Scalar::of_int(seed)), targ(o, {n})});
  return o;
}

// Seeds and offsets are the key and the counter's low 64 bits, exactly (negative i64 values are
// their two's-complement patterns).
TEST(Random, BitsAreTheFirstPhiloxWordOfEveryOffset) {
  for (std::int64_t seed : {std::int64_t{0}, std::int64_t{1}, std::int64_t{-1}, std::int64_t{0x123456789abcdefll}}) {
    for (std::int64_t stride : {std::int64_t{1}, std::int64_t{0x100000001ll}}) {
      const std::int64_t base = seed == -1 ? -512 : 7;
      auto o = run_random<std::uint32_t>(ir::RandomDist::Bits, seed, base, stride, 1000);
      const auto s = static_cast<std::uint64_t>(seed);
      for (std::int64_t i = 0; i < 1000; ++i) {
        const auto off = static_cast<std::uint64_t>(base) + static_cast<std::uint64_t>(i) * static_cast<std::uint64_t>(stride);
        const Block want = reference_philox({static_cast<std::uint32_t>(off), static_cast<std::uint32_t>(off >> 32), 0, 0},
                                            {static_cast<std::uint32_t>(s), static_cast<std::uint32_t>(s >> 32)});
        ASSERT_EQ(o[static_cast<std::size_t>(i)], want[0]) << "seed " << seed << " offset " << off;
      }
    }
  }
  // The zero known answer through a kernel.
  EXPECT_EQ(run_random<std::uint32_t>(ir::RandomDist::Bits, 0, 0, 1, 16, 16)[0], 0x6627e8d5u);
}

TEST(Random, UniformIsTheTop24BitsScaled) {
  auto o = run_random<float>(ir::RandomDist::Uniform, 42, 0, 1, 4096);
  for (std::int64_t i = 0; i < 4096; ++i) {
    const Block w = reference_philox({static_cast<std::uint32_t>(i), 0, 0, 0}, {42, 0});
    const double want = std::ldexp(static_cast<double>(w[0] >> 8), -24);
    ASSERT_EQ(static_cast<double>(o[static_cast<std::size_t>(i)]), want) << i;
    ASSERT_LT(o[static_cast<std::size_t>(i)], 1.0f);
    ASSERT_GE(o[static_cast<std::size_t>(i)], 0.0f);
  }
}

// randn against Box-Muller in double from the same words: the f32 polynomials of philox.h are
// accurate to a few ulps of the radius.
TEST(Random, NormalIsBoxMullerOfTheFirstTwoWords) {
  auto o = run_random<float>(ir::RandomDist::Normal, 7, 1000, 1, 8192);
  double worst = 0;
  for (std::int64_t i = 0; i < 8192; ++i) {
    const Block w = reference_philox({static_cast<std::uint32_t>(1000 + i), 0, 0, 0}, {7, 0});
    const double u1 = std::ldexp(static_cast<double>((w[0] >> 8) + 1), -24), u2 = std::ldexp(static_cast<double>(w[1] >> 8), -24);
    const double want = std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
    const double err = std::fabs(o[static_cast<std::size_t>(i)] - want);
    worst = std::max(worst, err);
    ASSERT_LE(err, 2e-6 * std::max(1.0, std::fabs(want)) + 1e-6) << i << ": " << o[static_cast<std::size_t>(i)] << " vs " << want;
  }
  EXPECT_LT(worst, 4e-6);
}

// The extremes of the maps: u1 = 1 (radius 0), u1 = 2^-24 (the largest radius), each quadrant.
TEST(Random, NormalMapAtItsExtremes) {
  for (std::uint32_t w1 : {0u, 0x40000000u, 0x80000000u, 0xc0000000u, 0x20000000u, 0xffffff00u}) {
    for (std::uint32_t w0 : {0u, 0xffffff00u, 0x80000000u}) {
      const double u1 = std::ldexp(static_cast<double>((w0 >> 8) + 1), -24), u2 = std::ldexp(static_cast<double>(w1 >> 8), -24);
      const double want = std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
      EXPECT_NEAR(ct::philox::normal(w0, w1), want, 2e-6 * std::max(1.0, std::fabs(want)) + 1e-6) << w0 << " " << w1;
    }
  }
  EXPECT_EQ(std::fabs(ct::philox::normal(0xffffff00u, 0)), 0.0f);  // u1 = 1
}

double chi_square(const std::vector<int>& counts, double expected) {
  double c = 0;
  for (int k : counts) c += (k - expected) * (k - expected) / expected;
  return c;
}

TEST(Random, UniformStatistics) {
  const std::int64_t n = 1 << 16;
  auto o = run_random<float>(ir::RandomDist::Uniform, 2024, 0, 1, n);
  double s = 0, s2 = 0;
  std::vector<int> bins(64, 0);
  for (float v : o) {
    s += v;
    s2 += static_cast<double>(v) * v;
    ++bins[static_cast<std::size_t>(v * 64)];
  }
  const double mean = s / n, var = s2 / n - mean * mean;
  EXPECT_NEAR(mean, 0.5, 5 * std::sqrt(1.0 / 12 / n));
  EXPECT_NEAR(var, 1.0 / 12, 0.02 / 12);
  EXPECT_LT(chi_square(bins, n / 64.0), 63 + 5 * std::sqrt(2 * 63.0));  // 63 degrees of freedom, 5 sigma
  // Neighbouring offsets are not correlated.
  double c = 0;
  for (std::int64_t i = 0; i + 1 < n; ++i) c += (o[static_cast<std::size_t>(i)] - 0.5) * (o[static_cast<std::size_t>(i + 1)] - 0.5);
  EXPECT_NEAR(c / (n - 1) * 12, 0.0, 5 / std::sqrt(static_cast<double>(n)));
}

TEST(Random, NormalStatistics) {
  const std::int64_t n = 1 << 16;
  auto o = run_random<float>(ir::RandomDist::Normal, 99, 1 << 20, 3, n);
  double s = 0, s2 = 0, s4 = 0;
  std::vector<int> bins(32, 0);
  for (float v : o) {
    s += v;
    s2 += static_cast<double>(v) * v;
    s4 += std::pow(static_cast<double>(v), 4);
    const double cdf = 0.5 * std::erfc(-v / std::sqrt(2.0));  // equiprobable bins of N(0, 1)
    ++bins[std::min<std::size_t>(31, static_cast<std::size_t>(cdf * 32))];
  }
  const double mean = s / n, var = s2 / n - mean * mean;
  EXPECT_NEAR(mean, 0.0, 5 / std::sqrt(static_cast<double>(n)));
  EXPECT_NEAR(var, 1.0, 5 * std::sqrt(2.0 / n));
  EXPECT_NEAR(s4 / n, 3.0, 5 * std::sqrt(96.0 / n));  // the fourth moment of a normal
  EXPECT_LT(chi_square(bins, n / 32.0), 31 + 5 * std::sqrt(2 * 31.0));
}

// The checks are not vacuous: numbers that miss half the range, or uniform numbers taken for
// normal ones, fail them.
TEST(Random, TheStatisticsRejectABrokenGenerator) {
  const std::int64_t n = 1 << 16;
  auto o = run_random<float>(ir::RandomDist::Uniform, 2024, 0, 1, n);
  std::vector<int> half(64, 0), as_normal(32, 0);
  for (float v : o) {
    ++half[static_cast<std::size_t>(v * 0.5f * 64)];
    const double z = 2.0 * v - 1.0;
    ++as_normal[std::min<std::size_t>(31, static_cast<std::size_t>(0.5 * std::erfc(-z / std::sqrt(2.0)) * 32))];
  }
  EXPECT_GT(chi_square(half, n / 64.0), 63 + 5 * std::sqrt(2 * 63.0));
  EXPECT_GT(chi_square(as_normal, n / 32.0), 31 + 5 * std::sqrt(2 * 31.0));
}

}  // namespace
}  // namespace cpu_test
