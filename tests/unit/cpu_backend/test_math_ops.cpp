// The math and bit ops of docs/ir.md beyond the basic set: erf, erfc, sigmoid, log1p, expm1, atan2
// (floats; f16/bf16 compute in f32), popcount and clz (integers, in the element's width) and
// bitcast. Each against a float64 reference (std:: functions on double) on fresh random inputs
// and on edge values. This file also runs through the generated CUDA code in the host emulation
// (test_cuda_emulation), where the same checks hold.
#include <bit>
#include <limits>

#include "helpers.hpp"

namespace cpu_test {
namespace {

using ir::BinaryFn;
using ir::UnaryFn;

constexpr std::int64_t kN = 3000;  // not a multiple of the tile
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The reference, in double, written independently of the interpreter (sigmoid directly as the
// logistic function, on the side where e^-|x| does not overflow).
double ref(UnaryFn f, double x) {
  switch (f) {
    case UnaryFn::Erf: return std::erf(x);
    case UnaryFn::Erfc: return std::erfc(x);
    case UnaryFn::Sigmoid: return x < 0 ? std::exp(x) / (1.0 + std::exp(x)) : 1.0 / (1.0 + std::exp(-x));
    case UnaryFn::Log1p: return std::log1p(x);
    case UnaryFn::Expm1: return std::expm1(x);
    default: break;
  }
  ADD_FAILURE() << "no reference for " << ir::unary_name(f);
  return 0;
}

const UnaryFn kNew[] = {UnaryFn::Erf, UnaryFn::Erfc, UnaryFn::Sigmoid, UnaryFn::Log1p, UnaryFn::Expm1};

// One ulp of |x| in a float format with `mant` fraction bits and minimum normal exponent `emin`.
double ulp_of(double x, int mant, int emin) {
  int e = 0;
  x = std::fabs(x);
  if (x == 0 || !std::isfinite(x)) return std::ldexp(1.0, emin - mant);
  (void)std::frexp(x, &e);
  return std::ldexp(1.0, std::max(e - 1, emin) - mant);
}

// got is within `ulps` ulps of want (f32 ulps: 23 fraction bits), NaN exactly where want is NaN,
// infinities and zero signs exact.
void expect_close(double got, double want, double ulps, int mant, int emin, const std::string& what) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << what << ": got " << got << ", want NaN";
    return;
  }
  if (std::isinf(want) || want == 0) {
    EXPECT_EQ(got, want) << what;
    if (want == 0) {
      EXPECT_EQ(std::signbit(got), std::signbit(want)) << what << ": sign of zero";
    }
    return;
  }
  EXPECT_LE(std::fabs(got - want), ulps * ulp_of(want, mant, emin)) << what << ": got " << got << ", want " << want;
}

std::vector<float> edge_f32() {
  return {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e30f, -1e30f, 1e-40f, -1e-40f, 0x1p-149f, 88.7f, -88.7f,
          -104.0f, 104.0f, 20.0f, -20.0f, 10.0f, -1.0f, -0.999f, 1e-8f, -1e-8f, 0.5f, -2.0f, 3.0e38f};
}

TEST(CpuMath, NewUnaryF32AgainstDouble) {
  for (UnaryFn f : kNew) {
    auto x = random_floats(kN, 40 + static_cast<unsigned>(f), f == UnaryFn::Log1p ? -0.99f : -9.0f, 9.0f);
    const auto e = edge_f32();
    std::copy(e.begin(), e.end(), x.begin());
    auto o = run_map<float>(kN, 256, {in(x)}, [&](KB& kb, auto& v) { return kb.unary(f, v[0]); });
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double want = static_cast<float>(ref(f, x[i]));  // the double result rounded to f32
      expect_close(o[i], want, 4, 23, -126, std::string(ir::unary_name(f)) + "(" + std::to_string(x[i]) + ")");
    }
  }
}

TEST(CpuMath, NewUnaryF64AgainstDouble) {
  for (UnaryFn f : kNew) {
    auto xf = random_floats(kN, 50 + static_cast<unsigned>(f), f == UnaryFn::Log1p ? -0.99f : -9.0f, 9.0f);
    std::vector<double> x(xf.begin(), xf.end());
    const double e[] = {0.0, -0.0, kInf, -kInf, kNaN, 1e300, -1e300, 0x1p-1074, -0x1p-1074, 709.0, -745.0, 30.0, -1.0, 1e-300};
    std::copy(std::begin(e), std::end(e), x.begin());
    auto o = run_map<double>(kN, 256, {in(x)}, [&](KB& kb, auto& v) { return kb.unary(f, v[0]); });
    for (std::size_t i = 0; i < x.size(); ++i)
      expect_close(o[i], ref(f, x[i]), 4, 52, -1022, std::string(ir::unary_name(f)) + "(" + std::to_string(x[i]) + ")");
  }
}

// Exact points the functions pass through (the edge cases of docs/ir.md), compared bit for bit.
TEST(CpuMath, NewUnaryEdgeValuesExactly) {
  struct P {
    UnaryFn f;
    float x, want;
  };
  const P pts[] = {
      {UnaryFn::Erf, -0.0f, -0.0f},        {UnaryFn::Erf, INFINITY, 1.0f},       {UnaryFn::Erf, -INFINITY, -1.0f},
      {UnaryFn::Erfc, INFINITY, 0.0f},     {UnaryFn::Erfc, -INFINITY, 2.0f},     {UnaryFn::Erfc, 0.0f, 1.0f},
      {UnaryFn::Sigmoid, 0.0f, 0.5f},      {UnaryFn::Sigmoid, -0.0f, 0.5f},      {UnaryFn::Sigmoid, INFINITY, 1.0f},
      {UnaryFn::Sigmoid, -INFINITY, 0.0f}, {UnaryFn::Sigmoid, 200.0f, 1.0f},     {UnaryFn::Sigmoid, -200.0f, 0.0f},
      {UnaryFn::Log1p, -0.0f, -0.0f},      {UnaryFn::Log1p, -1.0f, -INFINITY},   {UnaryFn::Log1p, INFINITY, INFINITY},
      {UnaryFn::Log1p, 0x1p-149f, 0x1p-149f}, {UnaryFn::Expm1, -0.0f, -0.0f},    {UnaryFn::Expm1, -INFINITY, -1.0f},
      {UnaryFn::Expm1, INFINITY, INFINITY}, {UnaryFn::Expm1, 0x1p-149f, 0x1p-149f}, {UnaryFn::Expm1, 100.0f, INFINITY},
  };
  for (const P& p : pts) {
    std::vector<float> x(16, p.x);
    auto o = run_map<float>(16, 16, {in(x)}, [&](KB& kb, auto& v) { return kb.unary(p.f, v[0]); });
    EXPECT_EQ(bits(o[0]), bits(p.want)) << ir::unary_name(p.f) << "(" << p.x << ") = " << o[0] << ", want " << p.want;
  }
  // NaN in, NaN out; log1p below -1 is NaN.
  for (UnaryFn f : kNew) {
    std::vector<float> x(16, NAN);
    auto o = run_map<float>(16, 16, {in(x)}, [&](KB& kb, auto& v) { return kb.unary(f, v[0]); });
    EXPECT_TRUE(std::isnan(o[0])) << ir::unary_name(f);
  }
  std::vector<float> x(16, -2.0f);
  auto o = run_map<float>(16, 16, {in(x)}, [&](KB& kb, auto& v) { return kb.unary(UnaryFn::Log1p, v[0]); });
  EXPECT_TRUE(std::isnan(o[0]));
}

// The sigmoid of large negative inputs is a small number, not 0 (the e^x / (1 + e^x) side).
TEST(CpuMath, SigmoidKeepsItsTailInF32) {
  std::vector<float> x(16, -95.0f);
  auto o = run_map<float>(16, 16, {in(x)}, [&](KB& kb, auto& v) { return kb.unary(UnaryFn::Sigmoid, v[0]); });
  const double want = 1.0 / (1.0 + std::exp(95.0));
  EXPECT_GT(o[0], 0.0f);
  EXPECT_LE(std::fabs(o[0] - want), 4 * ulp_of(want, 23, -126));
}

TEST(CpuMath, NewUnaryHalfTypesComputeInF32) {
  for (UnaryFn f : kNew) {
    auto xf = random_floats(kN, 60 + static_cast<unsigned>(f), f == UnaryFn::Log1p ? -0.99f : -6.0f, 6.0f);
    std::vector<f16> xh;
    std::vector<bf16> xb;
    for (float v : xf) {
      xh.push_back(h(v));
      xb.push_back(bh(v));
    }
    auto oh = run_map<f16>(kN, 256, {in(xh)}, [&](KB& kb, auto& v) { return kb.unary(f, v[0]); });
    auto ob = run_map<bf16>(kN, 256, {in(xb)}, [&](KB& kb, auto& v) { return kb.unary(f, v[0]); });
    for (std::size_t i = 0; i < xf.size(); ++i) {
      // f32 result (within a few f32 ulps of the double one) rounded once: half an ulp of the
      // 16-bit type, plus one for a rounding boundary between the two.
      const double wh = ref(f, static_cast<float>(xh[i])), wb = ref(f, static_cast<float>(xb[i]));
      expect_close(static_cast<float>(oh[i]), static_cast<float>(h(static_cast<float>(wh))), 1, 10, -14, ir::unary_name(f));
      expect_close(static_cast<float>(ob[i]), static_cast<float>(bh(static_cast<float>(wb))), 1, 7, -126, ir::unary_name(f));
    }
  }
}

TEST(CpuMath, Atan2F32F64AndQuadrants) {
  auto y = random_floats(kN, 71, -5, 5), x = random_floats(kN, 72, -5, 5);
  // IEEE 754 / C Annex F special cases
  const float ys[] = {0.0f, -0.0f, 0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY, INFINITY, 1.0f, NAN, 1.0f, 0x1p-149f};
  const float xs[] = {0.0f, 0.0f, -0.0f, -0.0f, INFINITY, -INFINITY, INFINITY, -INFINITY, 1.0f, 0.0f, 1.0f, NAN, 1e38f};
  for (std::size_t i = 0; i < std::size(ys); ++i) {
    y[i] = ys[i];
    x[i] = xs[i];
  }
  auto o = run_map<float>(kN, 256, {in(y), in(x)}, [&](KB& kb, auto& v) { return kb.binary(BinaryFn::Atan2, v[0], v[1]); });
  std::vector<double> yd(y.begin(), y.end()), xd(x.begin(), x.end());
  auto od = run_map<double>(kN, 256, {in(yd), in(xd)}, [&](KB& kb, auto& v) { return kb.binary(BinaryFn::Atan2, v[0], v[1]); });
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double want = std::atan2(static_cast<double>(y[i]), static_cast<double>(x[i]));
    expect_close(o[i], static_cast<float>(want), 4, 23, -126, "atan2(" + std::to_string(y[i]) + ", " + std::to_string(x[i]) + ")");
    expect_close(od[i], want, 4, 52, -1022, "atan2 f64");
  }
  EXPECT_EQ(bits(o[1]), bits(-0.0f));                   // atan2(-0, +0) = -0
  EXPECT_EQ(o[2], static_cast<float>(M_PI));            // atan2(+0, -0) = pi
  EXPECT_EQ(o[3], -static_cast<float>(M_PI));           // atan2(-0, -0) = -pi
}

// Popcount and clz against a bit-by-bit count (independent of std::popcount/countl_zero).
template <class T>
void check_bits(unsigned seed) {
  std::mt19937_64 g(seed);
  std::vector<T> x(kN);
  for (auto& v : x) v = static_cast<T>(g() >> (g() % 64));
  const T edges[] = {T(0), static_cast<T>(-1), std::numeric_limits<T>::min(), std::numeric_limits<T>::max(), T(1), T(2)};
  std::copy(std::begin(edges), std::end(edges), x.begin());
  auto pc = run_map<T>(kN, 256, {in(x)}, [&](KB& kb, auto& v) { return kb.unary(UnaryFn::Popcount, v[0]); });
  auto lz = run_map<T>(kN, 256, {in(x)}, [&](KB& kb, auto& v) { return kb.unary(UnaryFn::Clz, v[0]); });
  constexpr int W = 8 * sizeof(T);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const auto u = static_cast<std::make_unsigned_t<T>>(x[i]);
    int ones = 0, lead = 0;
    bool seen = false;
    for (int b = W - 1; b >= 0; --b) {
      const bool bit = ((u >> b) & 1u) != 0;
      ones += bit;
      seen = seen || bit;
      lead += !seen;
    }
    ASSERT_EQ(static_cast<long long>(pc[i]), ones) << dtype_name(dtype_of<T>) << " popcount of " << +x[i];
    ASSERT_EQ(static_cast<long long>(lz[i]), lead) << dtype_name(dtype_of<T>) << " clz of " << +x[i];
  }
}
TEST(CpuMath, PopcountAndClzEveryIntegerWidth) {
  check_bits<std::int8_t>(1);
  check_bits<std::uint8_t>(2);
  check_bits<std::int16_t>(3);
  check_bits<std::uint16_t>(4);
  check_bits<std::int32_t>(5);
  check_bits<std::uint32_t>(6);
  check_bits<std::int64_t>(7);
  check_bits<std::uint64_t>(8);
}

// bitcast keeps every bit (NaN payloads, signs of zeros, subnormals) and round-trips.
template <class A, class B>
void check_bitcast(std::vector<A> x) {
  x.resize(kN, A{});
  auto y = run_map<B>(kN, 256, {in(x)}, [&](KB& kb, auto& v) { return kb.op1(ir::OpKind::Bitcast, {v[0]}, ir::Type::tile(dtype_of<B>, kb.type(v[0]).shape)); });
  auto back = run_map<A>(kN, 256, {in(y)}, [&](KB& kb, auto& v) { return kb.op1(ir::OpKind::Bitcast, {v[0]}, ir::Type::tile(dtype_of<A>, kb.type(v[0]).shape)); });
  for (std::size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(std::memcmp(&y[i], &x[i], sizeof(A)), 0) << dtype_name(dtype_of<A>) << " -> " << dtype_name(dtype_of<B>) << " at " << i;
    ASSERT_EQ(std::memcmp(&back[i], &x[i], sizeof(A)), 0) << "round trip at " << i;
  }
}
TEST(CpuMath, BitcastKeepsTheBits) {
  std::vector<float> f = random_floats(kN, 81);
  const float fe[] = {-0.0f, INFINITY, 0x1p-149f, std::bit_cast<float>(0x7fc01234u), std::bit_cast<float>(0xff800001u)};
  std::copy(std::begin(fe), std::end(fe), f.begin());
  check_bitcast<float, std::uint32_t>(f);
  check_bitcast<float, std::int32_t>(f);
  std::vector<double> d(f.begin(), f.end());
  d[3] = std::bit_cast<double>(0x7ff8000000000abcull);
  check_bitcast<double, std::int64_t>(d);
  check_bitcast<double, std::uint64_t>(d);
  std::vector<f16> hv;
  std::vector<bf16> bv;
  for (float v : f) {
    hv.push_back(h(v));
    bv.push_back(bh(v));
  }
  hv[3] = f16::from_bits(0x7e01);  // a NaN with a payload
  check_bitcast<f16, std::int16_t>(hv);
  check_bitcast<bf16, std::uint16_t>(bv);
  check_bitcast<f16, bf16>(hv);
  std::vector<std::int8_t> i8{-128, -1, 0, 127};
  check_bitcast<std::int8_t, std::uint8_t>(i8);
  // The known pattern of 1.0f.
  std::vector<float> one(16, 1.0f);
  auto u = run_map<std::uint32_t>(16, 16, {in(one)}, [&](KB& kb, auto& v) { return kb.op1(ir::OpKind::Bitcast, {v[0]}, ir::Type::tile(DType::u32, {16})); });
  EXPECT_EQ(u[0], 0x3f800000u);
}

}  // namespace
}  // namespace cpu_test
