// The OCP FP8 element types, f8e4m3 (E4M3FN) and f8e5m2: the host conversions of
// include/ctile/core/dtype.hpp against an independent decoding of every bit pattern and a
// brute-force search for the nearest value, then the ops on fp8 tiles (conversions, arithmetic in
// f32 rounded once, fma, comparisons, reductions, atomics, mma with mixed operands) against
// float64 references. In test_cuda_emulation the same tests run the generated CUDA through the
// host emulation instead of the interpreter: the device library's software conversions.
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "helpers.hpp"

namespace cpu_test {
namespace {

using ir::BinaryFn;
using ir::CmpPred;
using ir::UnaryFn;

// A format, described independently of dtype.hpp's code.
struct Format {
  int e, m;     // exponent and mantissa bits
  bool fn;      // E4M3FN: no infinities, NaN only as S.1111.111
  DType dtype;
  const char* name;
  int bias() const { return (1 << (e - 1)) - 1; }
  double max_finite() const { return fn ? 448.0 : 57344.0; }
  unsigned max_bits() const { return fn ? 0x7eu : 0x7bu; }
};
const Format kE4M3{4, 3, true, DType::f8e4m3, "f8e4m3"};
const Format kE5M2{5, 2, false, DType::f8e5m2, "f8e5m2"};

// The value of bit pattern b, straight from the format's definition.
double decode(const Format& f, unsigned b) {
  const bool neg = (b & 0x80u) != 0;
  const unsigned ex = (b >> f.m) & ((1u << f.e) - 1u), mant = b & ((1u << f.m) - 1u);
  double v;
  if (f.fn && ex == (1u << f.e) - 1u && mant == (1u << f.m) - 1u) return std::numeric_limits<double>::quiet_NaN();
  if (!f.fn && ex == (1u << f.e) - 1u) {
    if (mant != 0) return std::numeric_limits<double>::quiet_NaN();
    v = std::numeric_limits<double>::infinity();
  } else if (ex == 0) {
    v = std::ldexp(static_cast<double>(mant), 1 - f.bias() - f.m);
  } else {
    v = std::ldexp(static_cast<double>(mant + (1u << f.m)), static_cast<int>(ex) - f.bias() - f.m);
  }
  return neg ? -v : v;
}

bool is_nan_bits(const Format& f, unsigned b) { return std::isnan(decode(f, b)); }

// Round to nearest even and saturate (PTX cvt.rn.satfinite): the nearest of the non-negative
// finite patterns by brute force, ties to the even pattern, the sign put back; NaN gives a NaN.
unsigned reference_round(const Format& f, double x) {
  if (std::isnan(x)) return f.fn ? 0x7fu : 0x7eu;
  const unsigned sign = std::signbit(x) ? 0x80u : 0u;
  const double a = std::fabs(x);
  if (a >= f.max_finite()) return sign | f.max_bits();
  static const std::vector<double> e4 = [] {
    std::vector<double> t;
    for (unsigned p = 0; p < 256; ++p) t.push_back(decode(kE4M3, p));
    return t;
  }();
  static const std::vector<double> e5 = [] {
    std::vector<double> t;
    for (unsigned p = 0; p < 256; ++p) t.push_back(decode(kE5M2, p));
    return t;
  }();
  const std::vector<double>& value = f.fn ? e4 : e5;
  unsigned best = 0;
  double best_d = std::numeric_limits<double>::infinity();
  for (unsigned p = 0; p <= f.max_bits(); ++p) {
    const double d = std::fabs(value[p] - a);
    if (d < best_d || (d == best_d && (p & 1u) == 0)) {
      best = p;
      best_d = d;
    }
  }
  return sign | best;
}

template <class T>
unsigned host_from_float(float v) {
  return T::from_float(v);
}
template <class T>
float host_to_float(unsigned b) {
  return T::to_float(static_cast<std::uint8_t>(b));
}

// Values every conversion test goes through: each finite value of the format, the midpoints of
// neighbours (ties), a little either side of them, around the largest finite value, the
// subnormals and half the smallest one, infinities, NaN, and zeros of both signs.
std::vector<double> probe_values(const Format& f) {
  std::vector<double> v;
  for (unsigned p = 0; p <= f.max_bits(); ++p) {
    const double a = decode(f, p);
    v.push_back(a);
    if (p < f.max_bits()) {
      const double mid = (a + decode(f, p + 1)) / 2;
      v.push_back(mid);
      v.push_back(std::nextafter(static_cast<float>(mid), 0.0f));
      v.push_back(std::nextafter(static_cast<float>(mid), 1e30f));
    }
  }
  const double top = f.max_finite();
  const double above_ulp = std::ldexp(1.0, static_cast<int>(std::log2(top)) - f.m);  // the would-be next value's spacing
  for (double x : {top, top + above_ulp / 2, top + above_ulp / 2 + 1, top + above_ulp, 2 * top, 1e30,
                   std::ldexp(1.0, 1 - f.bias() - f.m - 1), std::ldexp(1.0, 1 - f.bias() - f.m - 2), 1e-30,
                   std::numeric_limits<double>::infinity(), 0.0})
    v.push_back(x);
  const std::size_t n = v.size();
  for (std::size_t i = 0; i < n; ++i) v.push_back(-v[i]);
  v.push_back(std::numeric_limits<double>::quiet_NaN());
  v.push_back(-std::numeric_limits<double>::quiet_NaN());
  return v;
}

// ---- the host types (dtype.hpp) ----

template <class T>
void check_every_pattern(const Format& f) {
  int nans = 0, infs = 0;
  for (unsigned b = 0; b < 256; ++b) {
    const double want = decode(f, b);
    const float got = host_to_float<T>(b);
    if (std::isnan(want)) {
      ++nans;
      EXPECT_TRUE(std::isnan(got)) << f.name << " pattern " << b;
      EXPECT_EQ(std::signbit(got), (b & 0x80u) != 0) << f.name << " NaN keeps its sign, pattern " << b;
      EXPECT_TRUE(is_nan_bits(f, host_from_float<T>(got))) << f.name << " NaN stays NaN, pattern " << b;
      continue;
    }
    infs += std::isinf(want) ? 1 : 0;
    EXPECT_EQ(static_cast<double>(got), want) << f.name << " pattern " << b;
    EXPECT_EQ(std::signbit(got), (b & 0x80u) != 0) << f.name << " pattern " << b;
    // Back: every finite value round-trips; infinities (e5m2 only) saturate, as cvt.satfinite does.
    const unsigned back = host_from_float<T>(got);
    if (std::isinf(want)) EXPECT_EQ(back, (b & 0x80u) | f.max_bits()) << f.name << " infinity saturates";
    else EXPECT_EQ(back, b) << f.name << " round trip of pattern " << b;
  }
  EXPECT_EQ(nans, f.fn ? 2 : 6) << f.name;
  EXPECT_EQ(infs, f.fn ? 0 : 2) << f.name;
}

TEST(Fp8Types, EveryBitPatternConvertsToFloatExactlyAndBack) {
  check_every_pattern<f8e4m3>(kE4M3);
  check_every_pattern<f8e5m2>(kE5M2);
}

template <class T>
void check_rounding(const Format& f) {
  for (double x : probe_values(f)) {
    const float xf = static_cast<float>(x);  // the probes are floats (1e30 included)
    const unsigned want = reference_round(f, xf), got = host_from_float<T>(xf);
    if (std::isnan(xf)) {
      EXPECT_TRUE(is_nan_bits(f, got)) << f.name << " NaN";
      EXPECT_EQ(got & 0x80u, std::signbit(xf) ? 0x80u : 0u) << f.name << " NaN keeps its sign";
      continue;
    }
    EXPECT_EQ(got, want) << f.name << " from " << xf;
  }
  // Random floats over the whole range of the format and beyond.
  std::mt19937_64 g(42);
  std::uniform_real_distribution<double> lg(-20, 18);
  for (int i = 0; i < 100000; ++i) {
    const float x = static_cast<float>(std::exp2(lg(g)) * ((g() & 1) ? -1 : 1));
    ASSERT_EQ(host_from_float<T>(x), reference_round(f, x)) << f.name << " from " << x;
  }
}

TEST(Fp8Types, FromFloatRoundsToNearestEvenAndSaturates) {
  check_rounding<f8e4m3>(kE4M3);
  check_rounding<f8e5m2>(kE5M2);
  // Spot checks of the rules themselves.
  EXPECT_EQ(f8e4m3(448.0f).bits, 0x7e);   // the largest finite value
  EXPECT_EQ(f8e4m3(464.0f).bits, 0x7e);   // the tie with the would-be 480: to even (448)
  EXPECT_EQ(f8e4m3(465.0f).bits, 0x7e);   // past it: saturated, not NaN
  EXPECT_EQ(f8e4m3(1e9f).bits, 0x7e);
  EXPECT_EQ(f8e4m3(-INFINITY).bits, 0xfe);
  EXPECT_EQ(f8e4m3(INFINITY).bits, 0x7e);
  EXPECT_EQ(f8e4m3(NAN).bits & 0x7f, 0x7f);
  EXPECT_EQ(f8e4m3(1.0625f).bits, 0x38);  // 1 + 2^-4: the tie between 1 and 1.125 goes to 1
  EXPECT_EQ(f8e4m3(1.1875f).bits, 0x3a);  // 1 + 3 * 2^-4: the tie between 1.125 and 1.25 goes to 1.25
  EXPECT_EQ(f8e4m3(0x1p-9f).bits, 0x01);  // the smallest subnormal
  EXPECT_EQ(f8e4m3(0x1p-10f).bits, 0x00); // half of it: a tie with 0, to even
  EXPECT_EQ(f8e4m3(-0x1p-10f).bits, 0x80);
  EXPECT_EQ(f8e4m3(0x1.8p-10f).bits, 0x01);
  EXPECT_EQ(f8e4m3(0x1.ep-7f).bits, 0x08);  // the largest subnormal + half an ulp rounds to the smallest normal
  EXPECT_EQ(f8e5m2(57344.0f).bits, 0x7b);
  EXPECT_EQ(f8e5m2(61440.0f).bits, 0x7b);  // the tie with 65536 (which would be inf): to even (57344)
  EXPECT_EQ(f8e5m2(1e6f).bits, 0x7b);      // saturated: e5m2 holds infinities, satfinite never makes them
  EXPECT_EQ(f8e5m2(INFINITY).bits, 0x7b);
  EXPECT_EQ(f8e5m2(-INFINITY).bits, 0xfb);
  EXPECT_EQ(f8e5m2(0x1p-16f).bits, 0x01);
  EXPECT_EQ(f8e5m2(0x1p-17f).bits, 0x00);
  EXPECT_EQ(f8e5m2(1.125f).bits, 0x3c);    // 1 + 2^-3: the tie between 1 and 1.25 goes to 1
  EXPECT_EQ(f8e5m2(-0.0f).bits, 0x80);
  EXPECT_TRUE(is_nan_bits(kE5M2, f8e5m2(NAN).bits));
}

// ---- conversions as ops (the interpreter, or the generated code in the emulation) ----

template <class T>
void check_to_float_op(const Format& f) {
  std::vector<T> x(256);
  for (unsigned b = 0; b < 256; ++b) x[b] = T::from_bits(static_cast<std::uint8_t>(b));
  const auto o32 = run_map<float>(256, 128, {in(x)}, [](KB& kb, auto& v) { return kb.convert(v[0], DType::f32); });
  const auto o64 = run_map<double>(256, 128, {in(x)}, [](KB& kb, auto& v) { return kb.convert(v[0], DType::f64); });
  const auto oh = run_map<f16>(256, 128, {in(x)}, [](KB& kb, auto& v) { return kb.convert(v[0], DType::f16); });
  const auto ob = run_map<bf16>(256, 128, {in(x)}, [](KB& kb, auto& v) { return kb.convert(v[0], DType::bf16); });
  for (unsigned b = 0; b < 256; ++b) {
    const double want = decode(f, b);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(o32[b]) && std::isnan(o64[b]) && std::isnan(static_cast<float>(oh[b])) &&
                  std::isnan(static_cast<float>(ob[b])))
          << f.name << " NaN pattern " << b;
      continue;
    }
    // Exact into every wider float (every fp8 value is an f16 and a bf16), signed zeros included.
    EXPECT_EQ(o32[b], want) << f.name << " pattern " << b;
    EXPECT_EQ(o64[b], want) << f.name << " pattern " << b;
    EXPECT_EQ(static_cast<float>(oh[b]), want) << f.name << " pattern " << b;
    EXPECT_EQ(static_cast<float>(ob[b]), want) << f.name << " pattern " << b;
    EXPECT_EQ(std::signbit(o32[b]), (b & 0x80u) != 0) << f.name << " pattern " << b;
    EXPECT_EQ(oh[b].bits & 0x8000u, (b & 0x80u) << 8) << f.name << " pattern " << b;
  }
}

TEST(CpuFp8, ConvertEveryPatternToWiderFloatsExactly) {
  check_to_float_op<f8e4m3>(kE4M3);
  check_to_float_op<f8e5m2>(kE5M2);
}

template <class T>
void check_from_float_op(const Format& f) {
  std::vector<double> probes = probe_values(f);
  std::vector<float> xf;
  for (double p : probes) xf.push_back(static_cast<float>(p));
  // Random floats too, and an even count (the generated code converts f32 to fp8 in pairs).
  std::mt19937_64 g(7);
  std::uniform_real_distribution<double> lg(-20, 18);
  while (xf.size() < 4096) xf.push_back(static_cast<float>(std::exp2(lg(g)) * ((g() & 1) ? -1 : 1)));
  const auto n = static_cast<std::int64_t>(xf.size());
  const auto o = run_map<T>(n, 256, {in(xf)}, [&](KB& kb, auto& v) { return kb.convert(v[0], f.dtype); });
  for (std::size_t i = 0; i < xf.size(); ++i) {
    if (std::isnan(xf[i])) {
      EXPECT_TRUE(is_nan_bits(f, o[i].bits)) << f.name << " NaN";
      continue;
    }
    ASSERT_EQ(o[i].bits, reference_round(f, xf[i])) << f.name << " from " << xf[i] << " (element " << i << ")";
  }
}

TEST(CpuFp8, ConvertFloatRoundsToNearestEvenAndSaturates) {
  check_from_float_op<f8e4m3>(kE4M3);
  check_from_float_op<f8e5m2>(kE5M2);
}

TEST(CpuFp8, ConvertFromF16AndBetweenTheFormats) {
  // Every f16 pattern to both formats: one rounding of the f16's value.
  std::vector<f16> h16(65536);
  for (unsigned b = 0; b < 65536; ++b) h16[b] = f16::from_bits(static_cast<std::uint16_t>(b));
  const auto e4 = run_map<f8e4m3>(65536, 1024, {in(h16)}, [](KB& kb, auto& v) { return kb.convert(v[0], DType::f8e4m3); });
  const auto e5 = run_map<f8e5m2>(65536, 1024, {in(h16)}, [](KB& kb, auto& v) { return kb.convert(v[0], DType::f8e5m2); });
  for (unsigned b = 0; b < 65536; ++b) {
    const double x = static_cast<float>(h16[b]);
    if (std::isnan(x)) {
      EXPECT_TRUE(is_nan_bits(kE4M3, e4[b].bits) && is_nan_bits(kE5M2, e5[b].bits)) << "f16 " << b;
      continue;
    }
    ASSERT_EQ(e4[b].bits, reference_round(kE4M3, x)) << "f16 " << x;
    ASSERT_EQ(e5[b].bits, reference_round(kE5M2, x)) << "f16 " << x;
  }
  // e4m3 <-> e5m2, every pattern: rounded (e5m2 has a bit less) and saturated (e4m3 is narrower).
  std::vector<f8e4m3> a(256);
  std::vector<f8e5m2> c(256);
  for (unsigned b = 0; b < 256; ++b) {
    a[b] = f8e4m3::from_bits(static_cast<std::uint8_t>(b));
    c[b] = f8e5m2::from_bits(static_cast<std::uint8_t>(b));
  }
  const auto a2c = run_map<f8e5m2>(256, 64, {in(a)}, [](KB& kb, auto& v) { return kb.convert(v[0], DType::f8e5m2); });
  const auto c2a = run_map<f8e4m3>(256, 64, {in(c)}, [](KB& kb, auto& v) { return kb.convert(v[0], DType::f8e4m3); });
  for (unsigned b = 0; b < 256; ++b) {
    if (is_nan_bits(kE4M3, b)) EXPECT_TRUE(is_nan_bits(kE5M2, a2c[b].bits));
    else EXPECT_EQ(a2c[b].bits, reference_round(kE5M2, decode(kE4M3, b))) << "e4m3 pattern " << b;
    if (is_nan_bits(kE5M2, b)) EXPECT_TRUE(is_nan_bits(kE4M3, c2a[b].bits));
    else EXPECT_EQ(c2a[b].bits, reference_round(kE4M3, decode(kE5M2, b))) << "e5m2 pattern " << b;
  }
  EXPECT_EQ(c2a[0x7c].bits, 0x7e);  // e5m2 +inf -> e4m3's largest finite value
  EXPECT_EQ(c2a[0xfc].bits, 0xfe);
}

TEST(CpuFp8, ConvertF64AndIntegersRoundOnce) {
  // f64 -> fp8 is one rounding: 1.0625 + 2^-40 lies above the e4m3 tie between 1 and 1.125 (through
  // f32 it would become the tie and round down to 1).
  std::vector<double> dv{1.0625 + 0x1p-40, 1.0625, 1e300, -1e-300};
  auto d4 = run_map<f8e4m3>(4, 4, {in(dv)}, [](KB& kb, auto& v) { return kb.convert(v[0], DType::f8e4m3); });
  EXPECT_EQ(d4[0].bits, 0x39);
  EXPECT_EQ(d4[1].bits, 0x38);
  EXPECT_EQ(d4[2].bits, 0x7e);  // saturated
  EXPECT_EQ(d4[3].bits, 0x80);
  // Integers: one rounding, saturated.
  std::vector<std::int32_t> iv{17, 19, 1000, -100000, 0, -3, 24, 2147483647};
  auto i4 = run_map<f8e4m3>(8, 8, {in(iv)}, [](KB& kb, auto& v) { return kb.convert(v[0], DType::f8e4m3); });
  auto i5 = run_map<f8e5m2>(8, 8, {in(iv)}, [](KB& kb, auto& v) { return kb.convert(v[0], DType::f8e5m2); });
  for (std::size_t i = 0; i < iv.size(); ++i) {
    EXPECT_EQ(i4[i].bits, reference_round(kE4M3, iv[i])) << iv[i];
    EXPECT_EQ(i5[i].bits, reference_round(kE5M2, iv[i])) << iv[i];
  }
  EXPECT_EQ(static_cast<float>(i4[0]), 16.0f);  // 17: the tie between 16 and 18 goes to even
  EXPECT_EQ(static_cast<float>(i4[1]), 20.0f);  // 19: the tie between 18 and 20
  EXPECT_EQ(static_cast<float>(i4[2]), 448.0f);
  EXPECT_EQ(static_cast<float>(i5[3]), -57344.0f);
  // fp8 -> integers truncate and saturate, NaN -> 0; -> bool is x != 0 (NaN: true).
  std::vector<f8e5m2> x{f8e5m2(-2.5f), f8e5m2(57344.0f), f8e5m2::from_bits(0x7c), f8e5m2::from_bits(0xfd),
                        f8e5m2(-0.0f), f8e5m2(0x1p-16f), f8e5m2(320.0f), f8e5m2(-1.5f)};
  auto i8 = run_map<std::int8_t>(8, 8, {in(x)}, [](KB& kb, auto& v) { return kb.convert(v[0], DType::i8); });
  EXPECT_EQ(i8, (std::vector<std::int8_t>{-2, 127, 127, 0, 0, 0, 127, -1}));
  auto bl = run_map<std::uint8_t>(8, 8, {in(x)}, DType::b1, [](KB& kb, auto& v) { return kb.convert(v[0], DType::b1); });
  EXPECT_EQ(bl, (std::vector<std::uint8_t>{1, 1, 1, 1, 0, 1, 1, 1}));
  std::vector<std::uint8_t> bools{0, 1, 1, 0};
  auto fb = run_map<f8e4m3>(4, 4, {{bools.data(), DType::b1}}, [](KB& kb, auto& v) { return kb.convert(v[0], DType::f8e4m3); });
  EXPECT_EQ(fb[0].bits, 0x00);
  EXPECT_EQ(fb[1].bits, 0x38);  // 1.0
}

// ---- arithmetic: computed in f32 and rounded once (to nearest even, saturating) ----

// Every pair of finite values of the format through + - * /: the f32 result rounded to the format
// equals the exact (float64) result rounded once (f32's 24 bits are at least twice the format's
// plus two, so rounding through f32 changes nothing: the double-rounding theorem).
template <class T>
void check_binary_exhaustive(const Format& f) {
  std::vector<T> a, b;
  for (unsigned x = 0; x < 256; ++x)
    for (unsigned y = 0; y < 256; ++y) {
      if (is_nan_bits(f, x) || is_nan_bits(f, y)) continue;
      a.push_back(T::from_bits(static_cast<std::uint8_t>(x)));
      b.push_back(T::from_bits(static_cast<std::uint8_t>(y)));
    }
  while (a.size() % 1024) {  // whole tiles
    a.push_back(T::from_bits(0x38));
    b.push_back(T::from_bits(0x38));
  }
  const auto n = static_cast<std::int64_t>(a.size());
  for (BinaryFn fn : {BinaryFn::Add, BinaryFn::Sub, BinaryFn::Mul, BinaryFn::Div}) {
    const auto o = run_map<T>(n, 1024, {in(a), in(b)}, [&](KB& kb, auto& v) { return kb.binary(fn, v[0], v[1]); });
    for (std::size_t i = 0; i < a.size(); ++i) {
      const double x = decode(f, a[i].bits), y = decode(f, b[i].bits);
      const double r = fn == BinaryFn::Add ? x + y : fn == BinaryFn::Sub ? x - y : fn == BinaryFn::Mul ? x * y : x / y;
      if (std::isnan(r)) {
        ASSERT_TRUE(is_nan_bits(f, o[i].bits)) << f.name << " " << ir::binary_name(fn) << "(" << x << ", " << y << ")";
        continue;
      }
      ASSERT_EQ(o[i].bits, reference_round(f, r)) << f.name << " " << ir::binary_name(fn) << "(" << x << ", " << y << ") = " << r;
    }
  }
}

TEST(CpuFp8, BinaryArithmeticOnEveryPairRoundsOnce) {
  check_binary_exhaustive<f8e4m3>(kE4M3);
  check_binary_exhaustive<f8e5m2>(kE5M2);
}

TEST(CpuFp8, UnaryFmaMinMaxAndComparisons) {
  std::vector<f8e4m3> x(256);
  for (unsigned b = 0; b < 256; ++b) x[b] = f8e4m3::from_bits(static_cast<std::uint8_t>(b));
  // Exact functions: sqrt, neg, abs, floor, ceil of every pattern, rounded once.
  for (UnaryFn fn : {UnaryFn::Sqrt, UnaryFn::Neg, UnaryFn::Abs, UnaryFn::Floor, UnaryFn::Ceil}) {
    const auto o = run_map<f8e4m3>(256, 256, {in(x)}, [&](KB& kb, auto& v) { return kb.unary(fn, v[0]); });
    for (unsigned b = 0; b < 256; ++b) {
      const double a = decode(kE4M3, b);
      const double r = fn == UnaryFn::Sqrt ? std::sqrt(a) : fn == UnaryFn::Neg ? -a : fn == UnaryFn::Abs ? std::fabs(a)
                       : fn == UnaryFn::Floor ? std::floor(a) : std::ceil(a);
      if (std::isnan(r)) EXPECT_TRUE(is_nan_bits(kE4M3, o[b].bits)) << ir::unary_name(fn) << " " << a;
      else EXPECT_EQ(o[b].bits, reference_round(kE4M3, r)) << ir::unary_name(fn) << "(" << a << ")";
    }
  }
  // exp: computed in f32 (within an f32 ulp or two of e^x), then rounded: the result is one of the two
  // e4m3 neighbours of the exact value (or saturated).
  const auto ex = run_map<f8e4m3>(256, 256, {in(x)}, [](KB& kb, auto& v) { return kb.unary(UnaryFn::Exp, v[0]); });
  for (unsigned b = 0; b < 256; ++b) {
    const double a = decode(kE4M3, b), r = std::exp(a);
    if (std::isnan(r)) continue;
    const double got = decode(kE4M3, ex[b].bits);
    const double lo = decode(kE4M3, reference_round(kE4M3, r * (1 - 1e-6))), hi = decode(kE4M3, reference_round(kE4M3, r * (1 + 1e-6)));
    EXPECT_TRUE(got >= lo && got <= hi) << "exp(" << a << ") = " << r << ", got " << got;
  }
  // fma rounds once: a * b + c of random e4m3 values (exact in double: 4-bit significands, sums
  // within 2^-18 .. 2^18) rounded once; the sample must hold cases where rounding the product
  // first would differ.
  std::mt19937_64 g(3);
  std::vector<f8e4m3> fa, fb, fc;
  for (int i = 0; i < 4096; ++i) {
    auto pick = [&] {
      unsigned b;
      do b = static_cast<unsigned>(g() & 0xffu);
      while (is_nan_bits(kE4M3, b));
      return f8e4m3::from_bits(static_cast<std::uint8_t>(b));
    };
    fa.push_back(pick());
    fb.push_back(pick());
    fc.push_back(pick());
  }
  const auto fo = run_map<f8e4m3>(4096, 512, {in(fa), in(fb), in(fc)}, [](KB& kb, auto& v) { return kb.fma(v[0], v[1], v[2]); });
  int differs_from_two_roundings = 0;
  for (std::size_t i = 0; i < fa.size(); ++i) {
    const double a = decode(kE4M3, fa[i].bits), b = decode(kE4M3, fb[i].bits), c = decode(kE4M3, fc[i].bits);
    const double exact = a * b + c;
    ASSERT_EQ(fo[i].bits, reference_round(kE4M3, exact)) << "fma(" << a << ", " << b << ", " << c << ")";
    differs_from_two_roundings += reference_round(kE4M3, decode(kE4M3, reference_round(kE4M3, a * b)) + c) != fo[i].bits;
  }
  EXPECT_GT(differs_from_two_roundings, 0) << "the sample holds no fma that a rounded product would get wrong";
  // min/max ignore NaN (fmin/fmax); comparisons are IEEE on the values.
  std::vector<f8e4m3> p{f8e4m3(1.0f), f8e4m3::from_bits(0x7f), f8e4m3(-0.0f), f8e4m3(-448.0f)};
  std::vector<f8e4m3> q{f8e4m3::from_bits(0xff), f8e4m3(2.0f), f8e4m3(0.0f), f8e4m3(-448.0f)};
  const auto mx = run_map<f8e4m3>(4, 4, {in(p), in(q)}, [](KB& kb, auto& v) { return kb.binary(BinaryFn::Max, v[0], v[1]); });
  EXPECT_EQ(mx[0].bits, 0x38);
  EXPECT_EQ(mx[1].bits, f8e4m3(2.0f).bits);
  EXPECT_EQ(mx[3].bits, 0xfe);
  for (CmpPred pr : {CmpPred::Eq, CmpPred::Ne, CmpPred::Lt, CmpPred::Ge}) {
    const auto o = run_map<std::uint8_t>(4, 4, {in(p), in(q)}, DType::b1, [&](KB& kb, auto& v) { return kb.cmp(pr, v[0], v[1]); });
    for (std::size_t i = 0; i < p.size(); ++i) {
      const double a = decode(kE4M3, p[i].bits), b = decode(kE4M3, q[i].bits);
      const bool want = pr == CmpPred::Eq ? a == b : pr == CmpPred::Ne ? a != b : pr == CmpPred::Lt ? a < b : a >= b;
      EXPECT_EQ(o[i], want ? 1 : 0) << ir::cmp_name(pr) << " " << i;
    }
  }
}

// ---- reductions, atomics, products ----

TEST(CpuFp8, RowSumsMaximaAndScans) {
  // e4m3 rows of 64: their sums are exact in f32 (multiples of 2^-9 below 2^15), so the interpreter
  // (double, rounded once) and the generated code (an f32 tree) agree bit for bit; the sum
  // saturates at 448.
  constexpr std::int64_t R = 8, C = 64;
  std::mt19937_64 g(11);
  std::vector<f8e4m3> x(static_cast<std::size_t>(R * C));
  for (auto& v : x) {
    unsigned b;
    do b = static_cast<unsigned>(g() & 0xffu);
    while (is_nan_bits(kE4M3, b) || std::fabs(decode(kE4M3, b)) > 16);
    v = f8e4m3::from_bits(static_cast<std::uint8_t>(b));
  }
  for (std::int64_t c = 0; c < C; ++c) x[static_cast<std::size_t>(7 * C + c)] = f8e4m3(64.0f);  // row 7: 4096, saturates
  const auto sums = run_tile<f8e4m3>({x.data(), DType::f8e4m3}, {R, C}, DType::f8e4m3, {R},
                                     [](KB& kb, ValueId t) { return kb.reduce(ir::ReduceKind::Sum, t, 1); });
  const auto maxes = run_tile<f8e4m3>({x.data(), DType::f8e4m3}, {R, C}, DType::f8e4m3, {R},
                                      [](KB& kb, ValueId t) { return kb.reduce(ir::ReduceKind::Max, t, 1); });
  const auto cums = run_tile<f8e4m3>({x.data(), DType::f8e4m3}, {R, C}, DType::f8e4m3, {R, C},
                                     [](KB& kb, ValueId t) { return kb.scan(t, 1); });
  for (std::int64_t r = 0; r < R; ++r) {
    double s = 0, m = -INFINITY;
    for (std::int64_t c = 0; c < C; ++c) {
      const double v = decode(kE4M3, x[static_cast<std::size_t>(r * C + c)].bits);
      s += v;
      m = std::max(m, v);
      // cumsum: each output the exact running sum, rounded once
      EXPECT_EQ(cums[static_cast<std::size_t>(r * C + c)].bits, reference_round(kE4M3, s)) << "row " << r << " col " << c;
    }
    EXPECT_EQ(sums[static_cast<std::size_t>(r)].bits, reference_round(kE4M3, s)) << "row " << r;
    EXPECT_EQ(maxes[static_cast<std::size_t>(r)].bits, reference_round(kE4M3, m)) << "row " << r;
  }
  EXPECT_EQ(sums[7].bits, 0x7e);
}

TEST(CpuFp8, AtomicsOnNeighbouringBytes) {
  // 16 blocks each add 1 to 16 e4m3 bins (four to a 32-bit word): every partial sum up to 16 is an
  // e4m3 value, so the order of the adds does not matter. Bin 16 takes 448 from every block: each
  // add saturates. Bins 17..19 share its word and stay as they are; e5m2 max and min in bins 0..3
  // of another tensor.
  constexpr std::int64_t kBlocks = 16;
  KB kb("fp8_atomics");
  const ValueId hist = kb.tensor("hist", DType::f8e4m3, 1, ir::Access::Atomic);
  const ValueId ext = kb.tensor("ext", DType::f8e5m2, 1, ir::Access::Atomic);
  const ValueId vals = kb.tensor("vals", DType::f8e5m2, 1);
  (void)kb.atomic(ir::AtomicKind::Add, hist, {kb.iota(DType::i64, 16)}, kb.fconst(DType::f8e4m3, {16}, 1.0));
  (void)kb.atomic(ir::AtomicKind::Add, hist, {kb.i64c(16)}, kb.fconst(DType::f8e4m3, {}, 448.0));
  const ValueId v = kb.load(kb.partition(vals, {4}), {kb.block_id(0)});
  const ValueId which = kb.binary(BinaryFn::Rem, kb.iota(DType::i64, 4), kb.constant(DType::i64, {4}, ir::Scalar::of_int(2)));
  (void)kb.atomic(ir::AtomicKind::Max, ext, {which}, v);
  const ValueId which2 = kb.binary(BinaryFn::Add, which, kb.constant(DType::i64, {4}, ir::Scalar::of_int(2)));
  (void)kb.atomic(ir::AtomicKind::Min, ext, {which2}, v);
  std::vector<f8e4m3> h(20, f8e4m3(0.0f));
  std::vector<f8e5m2> e(4, f8e5m2(0.0f));
  std::vector<f8e5m2> in_v(static_cast<std::size_t>(4 * kBlocks));
  std::mt19937_64 g(5);
  double mx[2] = {0, 0}, mn[2] = {0, 0};
  for (std::size_t i = 0; i < in_v.size(); ++i) {
    unsigned b;
    do b = static_cast<unsigned>(g() & 0xffu);
    while (is_nan_bits(kE5M2, b));
    in_v[i] = f8e5m2::from_bits(static_cast<std::uint8_t>(b));
    const double d = decode(kE5M2, b);
    mx[i % 2] = std::max(mx[i % 2], d);
    mn[i % 2] = std::min(mn[i % 2], d);
  }
  launch(kb.finish(), {kBlocks}, {targ(h, {20}), targ(e, {4}), targ(in_v, {4 * kBlocks})});
  for (int i = 0; i < 16; ++i) EXPECT_EQ(static_cast<float>(h[static_cast<std::size_t>(i)]), 16.0f) << "bin " << i;
  EXPECT_EQ(h[16].bits, 0x7e);  // 448 + 448, saturated at every add
  for (int i = 17; i < 20; ++i) EXPECT_EQ(h[static_cast<std::size_t>(i)].bits, 0) << "bin " << i << " (a neighbour) untouched";
  EXPECT_EQ(decode(kE5M2, e[0].bits), mx[0]);
  EXPECT_EQ(decode(kE5M2, e[1].bits), mx[1]);
  EXPECT_EQ(decode(kE5M2, e[2].bits), mn[0]);
  EXPECT_EQ(decode(kE5M2, e[3].bits), mn[1]);
}

// An fp8 product into f32 with inputs whose sums are exact in f32 (values 2^-2 .. 15, K = 32):
// bit for bit against the float64 reference on every backend, for each pairing of the formats.
template <class A, class B>
void check_mma_exact(const Format& fa, const Format& fb) {
  constexpr std::int64_t M = 16, K = 32, N = 16;
  std::mt19937_64 g(21);
  auto pick = [&](const Format& f) {
    unsigned b;
    double d;
    do {
      b = static_cast<unsigned>(g() & 0xffu);
      d = std::fabs(decode(f, b));
    } while (std::isnan(d) || d < 0.25 || d > 15);
    return static_cast<std::uint8_t>(b);
  };
  std::vector<A> a(static_cast<std::size_t>(M * K));
  std::vector<B> b(static_cast<std::size_t>(K * N));
  std::vector<float> c(static_cast<std::size_t>(M * N)), out(static_cast<std::size_t>(M * N));
  for (auto& v : a) v = A::from_bits(pick(fa));
  for (auto& v : b) v = B::from_bits(pick(fb));
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
  KB kb("fp8_mma", 2);
  const ValueId ta = kb.tensor("a", fa.dtype, 2), tb = kb.tensor("b", fb.dtype, 2), tc = kb.tensor("c", DType::f32, 2);
  const ValueId o = kb.piece("out", DType::f32, {M, N});
  const ValueId z = kb.i64c(0);
  kb.store_piece(o, kb.mma(kb.load(kb.partition(ta, {M, K}), {z, z}), kb.load(kb.partition(tb, {K, N}), {z, z}),
                           kb.load(kb.partition(tc, {M, N}), {z, z})));
  launch(kb.finish(), {1, 1}, {targ(a.data(), fa.dtype, {M, K}), targ(b.data(), fb.dtype, {K, N}), targ(c, {M, N}), targ(out, {M, N})});
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      double s = c[static_cast<std::size_t>(i * N + j)];
      for (std::int64_t k = 0; k < K; ++k)
        s += decode(fa, a[static_cast<std::size_t>(i * K + k)].bits) * decode(fb, b[static_cast<std::size_t>(k * N + j)].bits);
      ASSERT_EQ(out[static_cast<std::size_t>(i * N + j)], static_cast<float>(s)) << fa.name << " x " << fb.name << " [" << i << ", " << j << "]";
    }
}

TEST(CpuFp8, MmaOfEveryPairingIntoF32) {
  check_mma_exact<f8e4m3, f8e4m3>(kE4M3, kE4M3);
  check_mma_exact<f8e5m2, f8e5m2>(kE5M2, kE5M2);
  check_mma_exact<f8e4m3, f8e5m2>(kE4M3, kE5M2);
  check_mma_exact<f8e5m2, f8e4m3>(kE5M2, kE4M3);
}

// The interpreter's rule for any inputs: the products are exact, summed in double in ascending k,
// rounded once to f32 (the GPU sums in f32: test_cuda_emulation leaves this one out).
TEST(CpuFp8, MmaSumsInDoubleAndRoundsOnce) {
  constexpr std::int64_t M = 4, K = 64, N = 8;
  std::mt19937_64 g(99);
  std::vector<f8e5m2> a(static_cast<std::size_t>(M * K));
  std::vector<f8e4m3> b(static_cast<std::size_t>(K * N));
  for (auto& v : a) {
    unsigned x;
    do x = static_cast<unsigned>(g() & 0xffu);
    while (is_nan_bits(kE5M2, x) || std::isinf(decode(kE5M2, x)));
    v = f8e5m2::from_bits(static_cast<std::uint8_t>(x));
  }
  for (auto& v : b) {
    unsigned x;
    do x = static_cast<unsigned>(g() & 0xffu);
    while (is_nan_bits(kE4M3, x));
    v = f8e4m3::from_bits(static_cast<std::uint8_t>(x));
  }
  std::vector<float> out(static_cast<std::size_t>(M * N));
  KB kb("fp8_mma_wide", 2);
  const ValueId ta = kb.tensor("a", DType::f8e5m2, 2), tb = kb.tensor("b", DType::f8e4m3, 2);
  const ValueId o = kb.piece("out", DType::f32, {M, N});
  const ValueId z = kb.i64c(0);
  kb.store_piece(o, kb.mma(kb.load(kb.partition(ta, {M, K}), {z, z}), kb.load(kb.partition(tb, {K, N}), {z, z}),
                           kb.fconst(DType::f32, {M, N}, 0.0)));
  launch(kb.finish(), {1, 1}, {targ(a, {M, K}), targ(b, {K, N}), targ(out, {M, N})});
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (std::int64_t k = 0; k < K; ++k)
        s += decode(kE5M2, a[static_cast<std::size_t>(i * K + k)].bits) * decode(kE4M3, b[static_cast<std::size_t>(k * N + j)].bits);
      EXPECT_EQ(out[static_cast<std::size_t>(i * N + j)], static_cast<float>(s)) << "[" << i << ", " << j << "]";
    }
}

}  // namespace
}  // namespace cpu_test
