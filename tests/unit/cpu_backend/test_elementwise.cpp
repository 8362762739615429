// Element-wise ops: unary, binary, fma, cmp, select, convert; f16/bf16 rounding.
#include <limits>

#include "helpers.hpp"
#include "../../../src/backend/cpu/interp.hpp"

namespace cpu_test {
namespace {

using ir::BinaryFn;
using ir::CmpPred;
using ir::UnaryFn;

constexpr std::int64_t kN = 3000;  // not a multiple of the tile (256)
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

double ref_unary(UnaryFn f, double x) {
  switch (f) {
    case UnaryFn::Neg: return -x;
    case UnaryFn::Exp: return std::exp(x);
    case UnaryFn::Exp2: return std::exp2(x);
    case UnaryFn::Log: return std::log(x);
    case UnaryFn::Log2: return std::log2(x);
    case UnaryFn::Sqrt: return std::sqrt(x);
    case UnaryFn::Rsqrt: return 1.0 / std::sqrt(x);
    case UnaryFn::Tanh: return std::tanh(x);
    case UnaryFn::Sin: return std::sin(x);
    case UnaryFn::Cos: return std::cos(x);
    case UnaryFn::Abs: return std::fabs(x);
    case UnaryFn::Floor: return std::floor(x);
    case UnaryFn::Ceil: return std::ceil(x);
    default: break;  // the newer functions: test_math_ops.cpp
  }
  return 0;
}

const UnaryFn kFloatUnary[] = {UnaryFn::Neg,  UnaryFn::Exp,  UnaryFn::Exp2, UnaryFn::Log, UnaryFn::Log2,
                               UnaryFn::Sqrt, UnaryFn::Rsqrt, UnaryFn::Tanh, UnaryFn::Sin, UnaryFn::Cos,
                               UnaryFn::Abs,  UnaryFn::Floor, UnaryFn::Ceil};

bool positive_domain(UnaryFn f) {
  return f == UnaryFn::Log || f == UnaryFn::Log2 || f == UnaryFn::Sqrt || f == UnaryFn::Rsqrt;
}

TEST(CpuElementwise, UnaryF32AndF64) {
  for (UnaryFn f : kFloatUnary) {
    auto x = random_floats(kN, 10 + static_cast<unsigned>(f), positive_domain(f) ? 0.01f : -6.0f, 6.0f);
    auto o = run_map<float>(kN, 256, {in(x)}, [&](KB& kb, auto& v) { return kb.unary(f, v[0]); });
    std::vector<double> xd(x.begin(), x.end());
    auto od = run_map<double>(kN, 256, {in(xd)}, [&](KB& kb, auto& v) { return kb.unary(f, v[0]); });
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double want = ref_unary(f, x[i]);
      ASSERT_NEAR(o[i], want, 4e-7 * std::max(1.0, std::fabs(want))) << ir::unary_name(f) << "(" << x[i] << ")";
      ASSERT_EQ(od[i], want) << ir::unary_name(f) << "(" << xd[i] << ")";
    }
  }
}

TEST(CpuElementwise, UnaryHalfTypesRoundTheFloatResult) {
  for (UnaryFn f : kFloatUnary) {
    auto xf = random_floats(kN, 20 + static_cast<unsigned>(f), positive_domain(f) ? 0.01f : -6.0f, 6.0f);
    std::vector<f16> xh;
    std::vector<bf16> xb;
    for (float v : xf) {
      xh.push_back(h(v));
      xb.push_back(bh(v));
    }
    auto oh = run_map<f16>(kN, 256, {in(xh)}, [&](KB& kb, auto& v) { return kb.unary(f, v[0]); });
    auto ob = run_map<bf16>(kN, 256, {in(xb)}, [&](KB& kb, auto& v) { return kb.unary(f, v[0]); });
    for (std::size_t i = 0; i < xf.size(); ++i) {
      const float rh = static_cast<float>(ref_unary(f, static_cast<float>(xh[i])));
      const float rb = static_cast<float>(ref_unary(f, static_cast<float>(xb[i])));
      // computed in float, rounded once to the 16-bit type: within half an ulp (+ float error)
      ASSERT_NEAR(static_cast<float>(oh[i]), rh, 1e-3 * std::max(1.0f, std::fabs(rh))) << ir::unary_name(f);
      ASSERT_NEAR(static_cast<float>(ob[i]), rb, 8e-3 * std::max(1.0f, std::fabs(rb))) << ir::unary_name(f);
    }
  }
  // exactness where the float result is exact
  std::vector<f16> x{h(2.25f), h(-0.0f), h(65504.0f)};
  x.resize(4, h(1.0f));
  auto o = run_map<f16>(4, 4, {in(x)}, [&](KB& kb, auto& v) { return kb.unary(UnaryFn::Sqrt, kb.unary(UnaryFn::Neg, kb.unary(UnaryFn::Neg, v[0]))); });
  EXPECT_EQ(o[0].bits, h(1.5f).bits);
  EXPECT_EQ(o[1].bits, 0x8000);  // sqrt(-0) = -0
  EXPECT_EQ(o[2].bits, h(std::sqrt(65504.0f)).bits);
}

TEST(CpuElementwise, UnaryIntegersAndBool) {
  std::vector<std::int32_t> x{5, -7, 0, std::numeric_limits<std::int32_t>::min(), 2147483647, -1, 12, 100};
  auto neg = run_map<std::int32_t>(8, 8, {in(x)}, [](KB& kb, auto& v) { return kb.unary(UnaryFn::Neg, v[0]); });
  auto abs = run_map<std::int32_t>(8, 8, {in(x)}, [](KB& kb, auto& v) { return kb.unary(UnaryFn::Abs, v[0]); });
  auto nt = run_map<std::int32_t>(8, 8, {in(x)}, [](KB& kb, auto& v) { return kb.unary(UnaryFn::Not, v[0]); });
  for (std::size_t i = 0; i < x.size(); ++i) {
    const auto m = std::numeric_limits<std::int32_t>::min();
    EXPECT_EQ(neg[i], x[i] == m ? m : -x[i]);
    EXPECT_EQ(abs[i], x[i] == m ? m : std::abs(x[i]));
    EXPECT_EQ(nt[i], ~x[i]);
  }
  std::vector<std::uint8_t> u{0, 1, 255, 128};
  auto un = run_map<std::uint8_t>(4, 4, {in(u)}, [](KB& kb, auto& v) { return kb.unary(UnaryFn::Not, v[0]); });
  EXPECT_EQ(un, (std::vector<std::uint8_t>{255, 254, 0, 127}));
  std::vector<std::uint8_t> b{0, 1, 1, 0};
  auto bn = run_map<std::uint8_t>(4, 4, {{b.data(), DType::b1}}, DType::b1, [](KB& kb, auto& v) { return kb.unary(UnaryFn::Not, v[0]); });
  EXPECT_EQ(bn, (std::vector<std::uint8_t>{1, 0, 0, 1}));
}

double ref_binary(BinaryFn f, double a, double b) {
  switch (f) {
    case BinaryFn::Add: return a + b;
    case BinaryFn::Sub: return a - b;
    case BinaryFn::Mul: return a * b;
    case BinaryFn::Div: return a / b;
    case BinaryFn::Rem: return std::fmod(a, b);
    case BinaryFn::Min: return std::fmin(a, b);
    case BinaryFn::Max: return std::fmax(a, b);
    case BinaryFn::Pow: return std::pow(a, b);
    default: return 0;
  }
}

TEST(CpuElementwise, BinaryFloats) {
  const BinaryFn fns[] = {BinaryFn::Add, BinaryFn::Sub, BinaryFn::Mul, BinaryFn::Div,
                          BinaryFn::Rem, BinaryFn::Min, BinaryFn::Max, BinaryFn::Pow};
  for (BinaryFn f : fns) {
    auto a = random_floats(kN, 30, f == BinaryFn::Pow ? 0.1f : -8.0f, 8.0f);
    auto b = random_floats(kN, 31, -3.0f, 3.0f);
    a[5] = kNaN;  // min/max ignore a NaN operand
    auto o = run_map<float>(kN, 256, {in(a), in(b)}, [&](KB& kb, auto& v) { return kb.binary(f, v[0], v[1]); });
    std::vector<f16> ah, bh2;
    std::vector<bf16> ab, bb;
    for (std::size_t i = 0; i < a.size(); ++i) {
      ah.push_back(h(a[i]));
      bh2.push_back(h(b[i]));
      ab.push_back(bh(a[i]));
      bb.push_back(bh(b[i]));
    }
    auto oh = run_map<f16>(kN, 256, {in(ah), in(bh2)}, [&](KB& kb, auto& v) { return kb.binary(f, v[0], v[1]); });
    auto ob = run_map<bf16>(kN, 256, {in(ab), in(bb)}, [&](KB& kb, auto& v) { return kb.binary(f, v[0], v[1]); });
    for (std::size_t i = 0; i < a.size(); ++i) {
      const double want = ref_binary(f, a[i], b[i]);
      if (f == BinaryFn::Pow) {
        if (std::isnan(want)) continue;
        ASSERT_NEAR(o[i], want, 1e-6 * std::max(1.0, std::fabs(want)));
        continue;
      }
      if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(o[i])) << ir::binary_name(f) << " " << i;
      } else {
        ASSERT_EQ(o[i], static_cast<float>(want)) << ir::binary_name(f) << "(" << a[i] << ", " << b[i] << ")";
      }
      // 16-bit types: exact result rounded once (via float: innocuous double rounding)
      const float wh = static_cast<float>(ref_binary(f, static_cast<float>(ah[i]), static_cast<float>(bh2[i])));
      const float wb = static_cast<float>(ref_binary(f, static_cast<float>(ab[i]), static_cast<float>(bb[i])));
      if (std::isnan(wh)) ASSERT_TRUE(std::isnan(static_cast<float>(oh[i])));
      else ASSERT_EQ(oh[i].bits, h(wh).bits) << ir::binary_name(f) << " f16 " << i;
      if (std::isnan(wb)) ASSERT_TRUE(std::isnan(static_cast<float>(ob[i])));
      else ASSERT_EQ(ob[i].bits, bh(wb).bits) << ir::binary_name(f) << " bf16 " << i;
    }
  }
}

TEST(CpuElementwise, BinaryIntegerEdgeCases) {
  using L = std::numeric_limits<std::int32_t>;
  std::vector<std::int32_t> a{7, -7, 7, -7, L::min(), L::min(), 5, 0, 1, -16, -16, 1, L::max(), 3, -1, 9};
  std::vector<std::int32_t> b{2, 2, -2, -2, -1, -1, 0, 0, 31, 2, 40, 32, 1, -1, 1, 9};
  auto run = [&](BinaryFn f) {
    return run_map<std::int32_t>(16, 16, {in(a), in(b)}, [&](KB& kb, auto& v) { return kb.binary(f, v[0], v[1]); });
  };
  using V = std::vector<std::int32_t>;
  EXPECT_EQ(run(BinaryFn::Div), (V{3, -3, -3, 3, L::min(), L::min(), 0, 0, 0, -8, 0, 0, L::max(), -3, -1, 1}));
  EXPECT_EQ(run(BinaryFn::Rem), (V{1, -1, 1, -1, 0, 0, 0, 0, 1, 0, -16, 1, 0, 0, 0, 0}));
  EXPECT_EQ(run(BinaryFn::Add)[12], L::min());  // wraps
  EXPECT_EQ(run(BinaryFn::Mul)[4], L::min());   // INT_MIN * -1 wraps
  const V shl = run(BinaryFn::Shl);
  EXPECT_EQ(shl[0], 28);
  EXPECT_EQ(shl[8], L::min());  // 1 << 31
  EXPECT_EQ(shl[11], 0);        // shift >= 32
  EXPECT_EQ(shl[13], 0);        // negative amount: huge
  const V shr = run(BinaryFn::Shr);
  EXPECT_EQ(shr[9], -4);    // arithmetic
  EXPECT_EQ(shr[10], -1);   // -16 >> 40: all sign bits
  EXPECT_EQ(shr[11], 0);    // 1 >> 32
  EXPECT_EQ(run(BinaryFn::Min)[4], L::min());
  EXPECT_EQ(run(BinaryFn::Max)[13], 3);
  EXPECT_EQ(run(BinaryFn::And)[9], -16 & 2);
  EXPECT_EQ(run(BinaryFn::Or)[9], -16 | 2);
  EXPECT_EQ(run(BinaryFn::Xor)[14], -2);

  std::vector<std::uint32_t> ua{0x80000000u, 5, 0xffffffffu, 3};
  std::vector<std::uint32_t> ub{4, 7, 1, 32};
  auto ushr = run_map<std::uint32_t>(4, 4, {in(ua), in(ub)}, [](KB& kb, auto& v) { return kb.binary(BinaryFn::Shr, v[0], v[1]); });
  EXPECT_EQ(ushr, (std::vector<std::uint32_t>{0x08000000u, 0, 0x7fffffffu, 0}));  // logical
  auto usub = run_map<std::uint32_t>(4, 4, {in(ua), in(ub)}, [](KB& kb, auto& v) { return kb.binary(BinaryFn::Sub, v[0], v[1]); });
  EXPECT_EQ(usub[1], 0xfffffffeu);

  std::vector<std::int8_t> ca{100, -128, 127, 16}, cb{100, 1, 1, 16};
  auto cadd = run_map<std::int8_t>(4, 4, {in(ca), in(cb)}, [](KB& kb, auto& v) { return kb.binary(BinaryFn::Add, v[0], v[1]); });
  auto cmul = run_map<std::int8_t>(4, 4, {in(ca), in(cb)}, [](KB& kb, auto& v) { return kb.binary(BinaryFn::Mul, v[0], v[1]); });
  EXPECT_EQ(cadd, (std::vector<std::int8_t>{-56, -127, -128, 32}));
  EXPECT_EQ(cmul, (std::vector<std::int8_t>{16, -128, 127, 0}));
  std::vector<std::uint16_t> sa{65535, 300}, sb{65535, 300};
  auto smul = run_map<std::uint16_t>(2, 2, {in(sa), in(sb)}, [](KB& kb, auto& v) { return kb.binary(BinaryFn::Mul, v[0], v[1]); });
  EXPECT_EQ(smul, (std::vector<std::uint16_t>{1, static_cast<std::uint16_t>(90000 % 65536)}));
  std::vector<std::int64_t> la{std::numeric_limits<std::int64_t>::min()}, lb{-1};
  auto ldiv = run_map<std::int64_t>(1, 1, {in(la), in(lb)}, [](KB& kb, auto& v) { return kb.binary(BinaryFn::Div, v[0], v[1]); });
  EXPECT_EQ(ldiv[0], std::numeric_limits<std::int64_t>::min());
}

TEST(CpuElementwise, BoolLogic) {
  std::vector<std::uint8_t> a{0, 0, 1, 1}, b{0, 1, 0, 1};
  auto run = [&](BinaryFn f) {
    return run_map<std::uint8_t>(4, 4, {{a.data(), DType::b1}, {b.data(), DType::b1}}, DType::b1,
                                 [&](KB& kb, auto& v) { return kb.binary(f, v[0], v[1]); });
  };
  using V = std::vector<std::uint8_t>;
  EXPECT_EQ(run(BinaryFn::And), (V{0, 0, 0, 1}));
  EXPECT_EQ(run(BinaryFn::Or), (V{0, 1, 1, 1}));
  EXPECT_EQ(run(BinaryFn::Xor), (V{0, 1, 1, 0}));
}

TEST(CpuElementwise, FmaRoundsOnce) {
  // (1 + 2^-23)(1 - 2^-23) - 1 = -2^-46 exactly; a separate multiply would round the product to 1.
  std::vector<float> a{1.0f + 0x1p-23f, 2.0f}, b{1.0f - 0x1p-23f, 3.0f}, c{-1.0f, 0.5f};
  auto o = run_map<float>(2, 2, {in(a), in(b), in(c)}, [](KB& kb, auto& v) { return kb.fma(v[0], v[1], v[2]); });
  EXPECT_EQ(o[0], -0x1p-46f);
  EXPECT_EQ(o[1], 6.5f);
  // f16: (1 + 2^-10)(1 - 2^-11) + 2^-11 = 1 + 2^-10 - 2^-21 rounds to 1 + 2^-10; rounding the
  // product first (to 1) and then the sum (a tie, to even) would give 1.
  std::vector<f16> ha{h(1.0f + 0x1p-10f), h(3.0f)}, hb{h(1.0f - 0x1p-11f), h(5.0f)}, hc{h(0x1p-11f), h(0.25f)};
  auto oh = run_map<f16>(2, 2, {in(ha), in(hb), in(hc)}, [](KB& kb, auto& v) { return kb.fma(v[0], v[1], v[2]); });
  EXPECT_EQ(oh[0].bits, 0x3c01);
  EXPECT_EQ(oh[1].bits, h(15.25f).bits);
  std::vector<std::int16_t> ia{300, -2}, ib{300, 7}, ic{1, 1};
  auto oi = run_map<std::int16_t>(2, 2, {in(ia), in(ib), in(ic)}, [](KB& kb, auto& v) { return kb.fma(v[0], v[1], v[2]); });
  EXPECT_EQ(oi, (std::vector<std::int16_t>{static_cast<std::int16_t>(90001 - 65536 * 1), -13}));
}

TEST(CpuElementwise, CmpAndSelect) {
  std::vector<float> a{1, 2, kNaN, 3, -0.0f, 5, kNaN, 8}, b{1, 3, 1, 2, 0.0f, kNaN, kNaN, 8};
  const CmpPred preds[] = {CmpPred::Eq, CmpPred::Ne, CmpPred::Lt, CmpPred::Le, CmpPred::Gt, CmpPred::Ge};
  for (CmpPred p : preds) {
    auto o = run_map<std::uint8_t>(8, 8, {in(a), in(b)}, DType::b1, [&](KB& kb, auto& v) { return kb.cmp(p, v[0], v[1]); });
    for (std::size_t i = 0; i < a.size(); ++i) {
      bool want = false;
      switch (p) {
        case CmpPred::Eq: want = a[i] == b[i]; break;
        case CmpPred::Ne: want = a[i] != b[i]; break;
        case CmpPred::Lt: want = a[i] < b[i]; break;
        case CmpPred::Le: want = a[i] <= b[i]; break;
        case CmpPred::Gt: want = a[i] > b[i]; break;
        case CmpPred::Ge: want = a[i] >= b[i]; break;
      }
      EXPECT_EQ(o[i], want ? 1 : 0) << ir::cmp_name(p) << " " << i;
    }
  }
  // select(a < b, a, b) on u64
  std::vector<std::uint64_t> x{1, 9, 5, ~0ull}, y{3, 2, 5, 0};
  auto s = run_map<std::uint64_t>(4, 4, {in(x), in(y)}, [](KB& kb, auto& v) {
    return kb.select(kb.cmp(CmpPred::Lt, v[0], v[1]), v[0], v[1]);
  });
  EXPECT_EQ(s, (std::vector<std::uint64_t>{1, 2, 5, 0}));
}

template <class S, class D>
std::vector<D> convert(std::vector<S> x, DType dd = dtype_of<D>) {
  const auto n = static_cast<std::int64_t>(x.size());
  return run_map<D>(n, n, {in(x)}, dd, [&](KB& kb, auto& v) { return kb.convert(v[0], dd); });
}

TEST(CpuElementwise, ConvertFloatToIntSaturatesAndTruncates) {
  const float inf = std::numeric_limits<float>::infinity();
  auto i32 = convert<float, std::int32_t>({3e9f, -3e9f, kNaN, -1.7f, 2.9f, inf, -inf, 2147483520.0f});
  EXPECT_EQ(i32, (std::vector<std::int32_t>{2147483647, -2147483647 - 1, 0, -1, 2, 2147483647, -2147483647 - 1, 2147483520}));
  auto u8 = convert<float, std::uint8_t>({-5.0f, 300.0f, 255.9f, -0.9f});
  EXPECT_EQ(u8, (std::vector<std::uint8_t>{0, 255, 255, 0}));
  auto i64 = convert<double, std::int64_t>({1e19, -1e19, 9223372036854775808.0, -9223372036854775808.0});
  EXPECT_EQ(i64, (std::vector<std::int64_t>{INT64_MAX, INT64_MIN, INT64_MAX, INT64_MIN}));
  auto u64 = convert<double, std::uint64_t>({1.8e19, 2e19, -1.0, 12345.75});
  EXPECT_EQ(u64, (std::vector<std::uint64_t>{18000000000000000000ull, ~0ull, 0, 12345}));
  auto h16 = convert<f16, std::int16_t>({h(65504.0f), h(-65504.0f), h(-3.5f), f16::from_bits(0x7e00)});
  EXPECT_EQ(h16, (std::vector<std::int16_t>{32767, -32768, -3, 0}));
}

TEST(CpuElementwise, ConvertBoolAndIntegers) {
  auto b = convert<float, std::uint8_t>({0.0f, -0.0f, kNaN, 0.5f}, DType::b1);
  EXPECT_EQ(b, (std::vector<std::uint8_t>{0, 0, 1, 1}));
  std::vector<std::uint8_t> bools{0, 1};
  auto bf = run_map<float>(2, 2, {{bools.data(), DType::b1}}, [](KB& kb, auto& v) { return kb.convert(v[0], DType::f32); });
  EXPECT_EQ(bf, (std::vector<float>{0.0f, 1.0f}));
  auto bh16 = run_map<bf16>(2, 2, {{bools.data(), DType::b1}}, [](KB& kb, auto& v) { return kb.convert(v[0], DType::bf16); });
  EXPECT_EQ(bh16[1].bits, 0x3f80);
  auto wrap = convert<std::int32_t, std::int8_t>({300, -129, 127, -1});
  EXPECT_EQ(wrap, (std::vector<std::int8_t>{44, 127, 127, -1}));
  auto u2s = convert<std::uint32_t, std::int64_t>({4294967295u, 0});
  EXPECT_EQ(u2s, (std::vector<std::int64_t>{4294967295ll, 0}));
  auto s2u = convert<std::int16_t, std::uint64_t>({-1, 5});
  EXPECT_EQ(s2u, (std::vector<std::uint64_t>{~0ull, 5}));
  auto i2b = convert<std::int64_t, std::uint8_t>({0, 256, -1, 1}, DType::b1);
  EXPECT_EQ(i2b, (std::vector<std::uint8_t>{0, 1, 1, 1}));
  auto u2f = convert<std::uint32_t, float>({4294967295u, 16777217u});
  EXPECT_EQ(u2f, (std::vector<float>{4294967296.0f, 16777216.0f}));  // nearest, ties to even
  auto l2d = convert<std::int64_t, double>({(std::int64_t(1) << 53) + 1, -3});
  EXPECT_EQ(l2d, (std::vector<double>{9007199254740992.0, -3.0}));
}

TEST(CpuElementwise, HalfPrecisionRoundingSpotChecks) {
  // bf16: 1 + 2^-8 is a tie between 1 and 1 + 2^-7: to even (1.0); 1 + 3 * 2^-8 ties up to 1 + 2^-6.
  auto b = convert<float, bf16>({1.00390625f, 1.01171875f, 1.0f + 0x1p-8f + 0x1p-20f, -0.0f});
  EXPECT_EQ(b[0].bits, 0x3f80);
  EXPECT_EQ(b[1].bits, 0x3f82);
  EXPECT_EQ(b[2].bits, 0x3f81);  // just above the tie
  EXPECT_EQ(b[3].bits, 0x8000);
  // f16: max 65504, 65519 still rounds to it, 65520 overflows; subnormals.
  auto f = convert<float, f16>({65504.0f, 65519.0f, 65520.0f, 0x1p-24f, 0x1p-25f, 0x1.8p-25f, 0x1p-14f, 0x1.ffcp-15f});
  EXPECT_EQ(f[0].bits, 0x7bff);
  EXPECT_EQ(f[1].bits, 0x7bff);
  EXPECT_EQ(f[2].bits, 0x7c00);
  EXPECT_EQ(f[3].bits, 0x0001);  // smallest subnormal
  EXPECT_EQ(f[4].bits, 0x0000);  // tie with 0: to even
  EXPECT_EQ(f[5].bits, 0x0001);
  EXPECT_EQ(f[6].bits, 0x0400);  // smallest normal
  EXPECT_EQ(f[7].bits, 0x0400);  // largest subnormal + half an ulp rounds to the smallest normal
  // f64 -> f16 rounds once: 1 + 2^-11 + 2^-40 is above the tie (via f32 it would become the tie and round down)
  auto d = convert<double, f16>({1.0 + 0x1p-11 + 0x1p-40, 1.0 + 0x1p-11, 1e300, -1e-300});
  EXPECT_EQ(d[0].bits, 0x3c01);
  EXPECT_EQ(d[1].bits, 0x3c00);
  EXPECT_EQ(d[2].bits, 0x7c00);
  EXPECT_EQ(d[3].bits, 0x8000);
  // i64 -> bf16 rounds once: 2^62 + 2^54 + 1 is above the tie between 2^62 and 2^62 + 2^55
  auto l = convert<std::int64_t, bf16>(
      {(std::int64_t(1) << 62) + (std::int64_t(1) << 54) + 1, (std::int64_t(1) << 62) + (std::int64_t(1) << 54), -3, 0});
  EXPECT_EQ(l[0].bits, 0x5e81);
  EXPECT_EQ(l[1].bits, 0x5e80);
  EXPECT_EQ(l[2].bits, bh(-3.0f).bits);
  auto u = convert<std::uint16_t, f16>({65535, 2049});
  EXPECT_EQ(u[0].bits, 0x7c00);  // 65535 > 65520: inf
  EXPECT_EQ(u[1].bits, h(2048.0f).bits);  // tie to even
  // f16 arithmetic rounds after each op: 1 + 2^-11 is a tie (to 1), (1 + 2^-10) + 2^-11 ties up to 1 + 2^-9
  std::vector<f16> a{h(1.0f), h(1.0f + 0x1p-10f)}, b2{h(0x1p-11f), h(0x1p-11f)};
  auto s = run_map<f16>(2, 2, {in(a), in(b2)}, [](KB& kb, auto& v) { return kb.binary(BinaryFn::Add, v[0], v[1]); });
  EXPECT_EQ(s[0].bits, 0x3c00);
  EXPECT_EQ(s[1].bits, 0x3c02);
  // f16 <-> bf16 and f32 -> f64 are exact or round once
  auto hb = convert<f16, bf16>({h(1.0f + 0x1p-10f), h(65504.0f)});
  EXPECT_EQ(hb[0].bits, 0x3f80);  // 1 + 2^-10 rounds to 1 in bf16
  EXPECT_EQ(static_cast<float>(hb[1]), 65536.0f);
}

}  // namespace
}  // namespace cpu_test

// ct.iota with a floor g (narrow-index sets it): element i is i - i % g, in every element type.
TEST(CpuIota, FloorRoundsEachIndexDownToItsGroup) {
  namespace cpu = ctile::backend::cpu;
  for (const ctile::DType d : {ctile::DType::i32, ctile::DType::i64, ctile::DType::f32}) {
    const ctile::ir::Type ty = ctile::ir::Type::tile(d, {64});
    for (const std::int64_t g : {0, 1, 4, 16, 64}) {
      cpu::Tile t;
      cpu::prepare(t, ty);
      cpu::op_iota(t, g);
      for (std::int64_t i = 0; i < 64; ++i) {
        const std::int64_t want = g > 1 ? i / g * g : i;
        const double got = d == ctile::DType::i32   ? t.as<std::int32_t>()[i]
                           : d == ctile::DType::i64 ? static_cast<double>(t.as<std::int64_t>()[i])
                                                    : t.as<float>()[i];
        ASSERT_EQ(got, static_cast<double>(want)) << "element " << i << ", floor " << g << ", " << ctile::dtype_name(d);
      }
    }
  }
}
