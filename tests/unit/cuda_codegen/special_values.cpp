#undef cpu_backend  // the real interpreter is the reference (see CMakeLists.txt)
#include "special_values.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "../cpu_backend/helpers.hpp"

namespace cuda_codegen_test {
namespace {

using cpu_test::KB;
using ir::BinaryFn;
using ir::CmpPred;
using ir::ReduceKind;
using ir::UnaryFn;
using ir::ValueId;
using Build = std::function<ValueId(KB&, const std::vector<ValueId>&)>;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kDen = 0x1p-149;         // smallest f32 subnormal
constexpr double kMaxF = 0x1.fffffep127;  // largest f32

// Element-wise: each input is loaded as a tile of 16 (elements past the input read 0), the result
// stored to "out" of the first input's length.
SpecialCase elementwise(std::string name, std::vector<DType> types, std::vector<std::vector<double>> ins, Build f,
                        std::vector<Expect> want) {
  SpecialCase c;
  c.name = name;
  c.in_types = types;
  c.inputs = std::move(ins);
  c.expected = std::move(want);
  c.make = [name, types, f] {
    KB kb(name);
    std::vector<ValueId> ts, xs;
    for (std::size_t i = 0; i < types.size(); ++i) ts.push_back(kb.tensor("in" + std::to_string(i), types[i], 1));
    for (ValueId t : ts) xs.push_back(kb.load(kb.partition(t, {16}), {kb.block_id(0)}));
    const ValueId r = f(kb, xs);
    const ValueId o = kb.piece("out", kb.type(r).dtype, kb.type(r).shape);
    kb.store_piece(o, r);
    return kb.finish();
  };
  return c;
}

// A reduction of 8 elements to one.
SpecialCase reduction(std::string name, DType d, std::vector<double> in, ReduceKind rk, Expect want) {
  SpecialCase c;
  c.name = name;
  c.in_types = {d};
  c.inputs = {std::move(in)};
  c.expected = {want};
  c.make = [name, d, rk] {
    KB kb(name);
    const ValueId t = kb.tensor("in0", d, 1);
    const ValueId x = kb.load(kb.partition(t, {8}), {kb.block_id(0)});
    const ValueId r = kb.reshape(kb.reduce(rk, x, 0), {1});
    const ValueId o = kb.piece("out", kb.type(r).dtype, {1});
    kb.store_piece(o, r);
    return kb.finish();
  };
  return c;
}

Build un(UnaryFn f) {
  return [f](KB& kb, const std::vector<ValueId>& x) { return kb.unary(f, x[0]); };
}
Build bin(BinaryFn f) {
  return [f](KB& kb, const std::vector<ValueId>& x) { return kb.binary(f, x[0], x[1]); };
}
Build conv(DType to) {
  return [to](KB& kb, const std::vector<ValueId>& x) { return kb.convert(x[0], to); };
}
Build cmp(CmpPred p) {
  return [p](KB& kb, const std::vector<ValueId>& x) { return kb.cmp(p, x[0], x[1]); };
}

std::vector<Expect> ex(std::vector<double> v) {
  std::vector<Expect> e;
  for (double x : v) e.push_back({x});
  return e;
}

std::vector<SpecialCase> build() {
  const DType F = DType::f32, D = DType::f64, H = DType::f16, B = DType::bf16;
  std::vector<SpecialCase> c;
  // ---- f32 math: IEEE special cases, no flush of subnormals ----
  c.push_back(elementwise("exp_f32", {F}, {{kNaN, kInf, -kInf, -0.0, 0.0, kDen, -kDen, 100, -200}}, un(UnaryFn::Exp),
                          ex({kNaN, kInf, 0.0, 1, 1, 1, 1, kInf, 0.0})));
  {
    auto e = ex({kNaN, kInf, kNaN, -kInf, -kInf, kNaN, 0.0, -149 * std::log(2.0)});
    e.back().ulps = error_bounds::ulps(error_bounds::Fn::Log, F);  // log of a subnormal is finite
    c.push_back(elementwise("log_f32", {F}, {{kNaN, kInf, -kInf, -0.0, 0.0, -1, 1, kDen}}, un(UnaryFn::Log), e));
  }
  {
    auto e = ex({0.0, kInf, 0x1p-126, kNaN, 1});
    e[2].ulps = error_bounds::ulps(error_bounds::Fn::Exp2, F);
    c.push_back(elementwise("exp2_f32", {F}, {{-kInf, 128, -126, kNaN, -0.0}}, un(UnaryFn::Exp2), e));
    auto l = ex({-kInf, -kInf, 0.0, kNaN, -148, kInf});
    l[4].ulps = error_bounds::ulps(error_bounds::Fn::Log2, F);  // of a subnormal: finite
    c.push_back(elementwise("log2_f32", {F}, {{0.0, -0.0, 1, -2, 0x1p-148, kInf}}, un(UnaryFn::Log2), l));
  }
  c.push_back(elementwise("sqrt_f32", {F}, {{-0.0, 0.0, kInf, -1, kNaN, 0x1p-148, -kInf}}, un(UnaryFn::Sqrt),
                          ex({-0.0, 0.0, kInf, kNaN, kNaN, 0x1p-74, kNaN})));
  c.push_back(elementwise("rsqrt_f32", {F}, {{0.0, -0.0, kInf, -1, 4, 0x1p-148}}, un(UnaryFn::Rsqrt),
                          ex({kInf, -kInf, 0.0, kNaN, 0.5, 0x1p74})));
  {
    auto e = ex({1, -1, -0.0, kNaN, 0x1p-120});
    e.back().ulps = error_bounds::ulps(error_bounds::Fn::Tanh, F);
    c.push_back(elementwise("tanh_f32", {F}, {{kInf, -kInf, -0.0, kNaN, 0x1p-120}}, un(UnaryFn::Tanh), e));
  }
  c.push_back(elementwise("sin_f32", {F}, {{-0.0, kInf, kNaN, 0.0}}, un(UnaryFn::Sin), ex({-0.0, kNaN, kNaN, 0.0})));
  c.push_back(elementwise("cos_f32", {F}, {{kInf, kNaN, 0.0, -0.0}}, un(UnaryFn::Cos), ex({kNaN, kNaN, 1, 1})));
  c.push_back(elementwise("floor_f32", {F}, {{-0.0, -0.5, kInf, kNaN, kDen, -kDen}}, un(UnaryFn::Floor),
                          ex({-0.0, -1, kInf, kNaN, 0.0, -1})));
  c.push_back(elementwise("ceil_f32", {F}, {{-0.0, -0.5, kInf, kNaN, kDen, -kDen}}, un(UnaryFn::Ceil),
                          ex({-0.0, -0.0, kInf, kNaN, 1, -0.0})));
  c.push_back(elementwise("neg_f32", {F}, {{0.0, -0.0, kInf, kNaN, kDen}}, un(UnaryFn::Neg), ex({-0.0, 0.0, -kInf, kNaN, -kDen})));
  c.push_back(elementwise("abs_f32", {F}, {{-0.0, -kInf, -kDen, kNaN}}, un(UnaryFn::Abs), ex({0.0, kInf, kDen, kNaN})));
  c.push_back(elementwise("div_f32", {F, F}, {{1, 1, 0, kInf, 1, -1, kDen, kMaxF}, {-0.0, 0.0, 0.0, kInf, kInf, kInf, 2, 0.5}},
                          bin(BinaryFn::Div), ex({-kInf, kInf, kNaN, kNaN, 0.0, -0.0, 0.0, kInf})));
  c.push_back(elementwise("mul_f32", {F, F}, {{kDen, 0x1p-126, kInf, -0.0, kDen, kMaxF}, {1, 0.5, 0, 5, 0.5, 2}},
                          bin(BinaryFn::Mul), ex({kDen, 0x1p-127, kNaN, -0.0, 0.0, kInf})));
  c.push_back(elementwise("add_f32", {F, F}, {{kInf, -0.0, -0.0, kDen, kMaxF, kNaN, 0x1p-126}, {-kInf, -0.0, 0.0, kDen, kMaxF, 1, -kDen}},
                          bin(BinaryFn::Add), ex({kNaN, -0.0, 0.0, 0x1p-148, kInf, kNaN, 0x1p-126 - kDen})));
  {
    auto e = ex({1, 1, kNaN, -kInf, kDen, 0});
    e.back().any_zero_sign = true;  // fmax(-0, +0): either zero (IEEE 754 leaves the sign open)
    c.push_back(elementwise("max_f32", {F, F}, {{kNaN, 1, kNaN, -kInf, kDen, -0.0}, {1, kNaN, kNaN, kNaN, 0.0, 0.0}},
                            bin(BinaryFn::Max), e));
  }
  {
    auto e = ex({-3, -3, kNaN, -kInf, 0.0, 0});
    e.back().any_zero_sign = true;
    c.push_back(elementwise("min_f32", {F, F}, {{kNaN, -3, kNaN, -kInf, kDen, -0.0}, {-3, kNaN, kNaN, kNaN, 0.0, 0.0}},
                            bin(BinaryFn::Min), e));
  }
  c.push_back(elementwise("rem_f32", {F, F}, {{5, kInf, 1, -0.0, -7, kNaN}, {kInf, 1, 0, 3, 3, 1}}, bin(BinaryFn::Rem),
                          ex({5, kNaN, kNaN, -0.0, -1, kNaN})));
  c.push_back(elementwise("pow_f32", {F, F}, {{0.0, -0.0, -8, kNaN, 1, -1, 2, 0.0}, {-1, -1, 1.0 / 3, 0, kNaN, kInf, 128, 0}},
                          bin(BinaryFn::Pow), ex({kInf, -kInf, kNaN, 1, 1, 1, kInf, 1})));
  c.push_back(elementwise("fma_f32", {F, F, F}, {{kInf, kDen, -0.0, 1, kMaxF}, {0, 0.5, 1, 1, 2}, {1, 0, -0.0, -1, -kMaxF}},
                          [](KB& kb, const std::vector<ValueId>& x) { return kb.fma(x[0], x[1], x[2]); },
                          ex({kNaN, 0.0, -0.0, 0.0, kMaxF})));  // one rounding: max * 2 - max = max exactly
  {
    const std::vector<std::vector<double>> pairs = {{kNaN, kNaN, -0.0, -kInf, kInf, 1}, {kNaN, 1, 0.0, kDen, kMaxF, kNaN}};
    c.push_back(elementwise("cmp_eq_f32", {F, F}, pairs, cmp(CmpPred::Eq), ex({0, 0, 1, 0, 0, 0})));
    c.push_back(elementwise("cmp_ne_f32", {F, F}, pairs, cmp(CmpPred::Ne), ex({1, 1, 0, 1, 1, 1})));
    c.push_back(elementwise("cmp_lt_f32", {F, F}, pairs, cmp(CmpPred::Lt), ex({0, 0, 0, 1, 0, 0})));
    c.push_back(elementwise("cmp_ge_f32", {F, F}, pairs, cmp(CmpPred::Ge), ex({0, 0, 1, 0, 1, 0})));
  }
  c.push_back(elementwise("select_nan_f32", {F, F}, {{kNaN, 1, -0.0}, {2, kNaN, 0.0}},
                          [](KB& kb, const std::vector<ValueId>& x) {
                            auto c = kb.cmp(CmpPred::Ne, x[0], x[0]);  // true exactly for NaN
                            return kb.select(c, x[1], x[0]);
                          },
                          ex({2, 1, -0.0})));
  // ---- the newer math functions (docs/ir.md): limits, signed zeros, tails ----
  c.push_back(elementwise("erf_f32", {F}, {{-0.0, kInf, -kInf, kNaN, kDen, 10}}, un(UnaryFn::Erf),
                          [] {
                            auto e = ex({-0.0, 1, -1, kNaN, 2 / std::sqrt(M_PI) * kDen, 1});
                            e[4].ulps = 4;  // erf(x) = 2x/sqrt(pi) below the subnormal spacing's resolution
                            return e;
                          }()));
  c.push_back(elementwise("erfc_f32", {F}, {{kInf, -kInf, 0.0, kNaN, 10}}, un(UnaryFn::Erfc),
                          [] {
                            auto e = ex({0.0, 2, 1, kNaN, std::erfc(10.0)});
                            e[4].ulps = error_bounds::ulps(error_bounds::Fn::Erfc, F);  // a subnormal result
                            return e;
                          }()));
  c.push_back(elementwise("sigmoid_f32", {F}, {{0.0, -0.0, kInf, -kInf, kNaN, 200, -95, -20.75, -20.875, -87.5, -103.5, -104}},
                          un(UnaryFn::Sigmoid),
                          [] {
                            // -20.75 / -20.875: either side of the tail (e^x = 2^-30) the device returns
                            // without a division; -87.5 and -103.5: subnormal tails; -104: under the
                            // smallest subnormal.
                            auto e = ex({0.5, 0.5, 1, 0.0, kNaN, 1, 1 / (1 + std::exp(95.0)), 1 / (1 + std::exp(20.75)),
                                         1 / (1 + std::exp(20.875)), 1 / (1 + std::exp(87.5)), 1 / (1 + std::exp(103.5)), 0.0});
                            for (int i : {6, 7, 8, 9, 10, 11})  // the tail is not 0 (nor, within an ulp, at -104)
                              e[static_cast<std::size_t>(i)].ulps = error_bounds::ulps(error_bounds::Fn::Sigmoid, F);
                            return e;
                          }()));
  c.push_back(elementwise("log1p_f32", {F}, {{-0.0, -1, -2, kInf, kNaN, kDen}}, un(UnaryFn::Log1p),
                          ex({-0.0, -kInf, kNaN, kInf, kNaN, kDen})));
  c.push_back(elementwise("expm1_f32", {F}, {{-0.0, -kInf, kInf, kNaN, kDen, 100}}, un(UnaryFn::Expm1),
                          ex({-0.0, -1, kInf, kNaN, kDen, kInf})));
  c.push_back(elementwise("atan2_f32", {F, F}, {{0.0, -0.0, 0.0, -0.0, kInf, kNaN, 1}, {0.0, 0.0, -0.0, -0.0, kInf, 1, kNaN}},
                          bin(BinaryFn::Atan2),
                          [] {
                            auto e = ex({0.0, -0.0, M_PI, -M_PI, M_PI / 4, kNaN, kNaN});
                            for (int i : {2, 3, 4}) e[static_cast<std::size_t>(i)].ulps = 1;  // pi rounded to f32
                            return e;
                          }()));
  c.push_back(elementwise("popcount_clz_i32", {DType::i32}, {{0, -1, 1, 2147483647, -2147483648.0, 6}},
                          [](KB& kb, const std::vector<ValueId>& x) {
                            return kb.binary(BinaryFn::Add, kb.binary(BinaryFn::Mul, kb.unary(UnaryFn::Popcount, x[0]), kb.constant(DType::i32, {16}, ir::Scalar::of_int(100))),
                                             kb.unary(UnaryFn::Clz, x[0]));
                          },
                          ex({32, 3200, 131, 3101, 100, 229})));
  c.push_back(elementwise("bitcast_f32_u32", {F}, {{-0.0, kInf, kDen, 1}},
                          [](KB& kb, const std::vector<ValueId>& x) {
                            return kb.op1(ir::OpKind::Bitcast, {x[0]}, ir::Type::tile(DType::u32, kb.type(x[0]).shape));
                          },
                          ex({2147483648.0, 2139095040.0, 1, 1065353216.0})));
  // ---- conversions: saturation, NaN -> 0, rounding to nearest even, subnormals kept ----
  c.push_back(elementwise("f32_to_i32", {F}, {{kNaN, kInf, -kInf, 3e9, -3e9, -0.9, 2.9, -0.0}}, conv(DType::i32),
                          ex({0, 2147483647.0, -2147483648.0, 2147483647.0, -2147483648.0, 0, 2, 0})));
  c.push_back(elementwise("f32_to_u8", {F}, {{-1, 300, kNaN, 255.9, kInf}}, conv(DType::u8), ex({0, 255, 0, 255, 255})));
  c.push_back(elementwise("f32_to_bool", {F}, {{kNaN, -0.0, kDen, 0.0}}, conv(DType::b1), ex({1, 0, 1, 0})));
  c.push_back(elementwise("f32_to_bf16", {F}, {{kNaN, kInf, -0.0, kDen, 0x1p-133, 1 + 0x1p-8, 0x1.fep127, 0x1.ffp127, 1 + 3 * 0x1p-9}},
                          conv(B), ex({kNaN, kInf, -0.0, 0.0, 0x1p-133, 1, 0x1.fep127, kInf, 1 + 0x1p-7})));
  c.push_back(elementwise("f32_to_f16", {F}, {{65504, 65520, 65519, 0x1p-24, 0x1p-25, 3 * 0x1p-26, -0.0, kNaN, -1e6}}, conv(H),
                          ex({65504, kInf, 65504, 0x1p-24, 0.0, 0x1p-24, -0.0, kNaN, -kInf})));
  c.push_back(elementwise("f64_to_f32", {D}, {{1e-320, 1e39, kNaN, -0.0, 0x1p-150 * 3, kDen * 0.5}}, conv(F),
                          ex({0.0, kInf, kNaN, -0.0, 2 * kDen, 0.0})));
  {
    // 2^62 + 2^38 + 1 is above the midpoint of two floats: rounding once gives 2^62 + 2^39; rounding
    // through double first (2^62 + 2^38, a tie) would give 2^62.
    auto i = elementwise("i64_to_f32", {DType::i64}, {{0, -16777217, 16777219}}, conv(F),
                         ex({0x1p62 + 0x1p39, -16777216, 16777220}));
    i.int_inputs = {{(std::int64_t{1} << 62) + (std::int64_t{1} << 38) + 1, -16777217, 16777219}};
    c.push_back(i);
  }
  // ---- fp8: round to nearest even and saturate (cvt.rn.satfinite): infinities and values past the
  // largest finite one become it (+-448, +-57344), NaN stays NaN, ties to even, subnormals kept ----
  const DType E4 = DType::f8e4m3, E5 = DType::f8e5m2;
  c.push_back(elementwise("f32_to_f8e4m3", {F},
                          {{kNaN, kInf, -kInf, 448, 464, 465, 1e30, -0.0, 0x1p-10, 0x1.8p-10, 0x1p-9, 1.0625, 1.1875, 0x1.ep-7}},
                          conv(E4), ex({kNaN, 448, -448, 448, 448, 448, 448, -0.0, 0.0, 0x1p-9, 0x1p-9, 1, 1.25, 0x1p-6})));
  c.push_back(elementwise("f32_to_f8e5m2", {F}, {{kNaN, kInf, -kInf, 57344, 61440, 61441, -0.0, 0x1p-17, 0x1.8p-17, 1.125, 1.375}},
                          conv(E5), ex({kNaN, 57344, -57344, 57344, 57344, 57344, -0.0, 0.0, 0x1p-16, 1, 1.5})));
  c.push_back(elementwise("f8e5m2_to_f32_and_f8e4m3", {E5}, {{kInf, -kInf, kNaN, -0.0, 0x1p-16, 57344, 512, 0x1.8p-9}},
                          [](KB& kb, const std::vector<ValueId>& x) {
                            const ValueId wide = kb.extract(kb.convert(x[0], DType::f32), {0}, {8});
                            const ValueId narrow = kb.convert(kb.extract(kb.convert(x[0], DType::f8e4m3), {0}, {8}), DType::f32);
                            return kb.cat(wide, narrow, 0);
                          },
                          ex({kInf, -kInf, kNaN, -0.0, 0x1p-16, 57344, 512, 0x1.8p-9,  // exact
                              448, -448, kNaN, -0.0, 0.0, 448, 448, 0x1p-8})));         // saturated, rounded (a tie to even)
  c.push_back(elementwise("add_f8e5m2", {E5, E5}, {{kInf, -kInf, kNaN, 57344, 0x1p-16, -0.0}, {1, kInf, 1, 57344, 0x1p-16, -0.0}},
                          bin(BinaryFn::Add), ex({57344, kNaN, kNaN, 57344, 0x1p-15, -0.0})));
  c.push_back(elementwise("mul_f8e4m3", {E4, E4}, {{448, 0x1p-9, -0.0, kNaN, 3, -448}, {2, 0x1p-9, 5, 1, 3, 448}}, bin(BinaryFn::Mul),
                          ex({448, 0.0, -0.0, kNaN, 9, -448})));
  c.push_back(reduction("sum_f8e4m3_accumulates_wider", E4, {448, 448, -448, 0, 0, 0, 0, 0}, ReduceKind::Sum, {448}));
  c.push_back(reduction("sum_f8e4m3_saturates_once", E4, {448, 448, 448, 0x1p-9, 0, 0, 0, 0}, ReduceKind::Sum, {448}));
  // ---- 16-bit and f64 arithmetic ----
  c.push_back(elementwise("add_f16", {H, H}, {{60000, 0x1p-24, kInf, -0.0}, {60000, 0x1p-24, -kInf, -0.0}}, bin(BinaryFn::Add),
                          ex({kInf, 0x1p-23, kNaN, -0.0})));
  c.push_back(elementwise("mul_bf16", {B, B}, {{0x1p-133, 0x1.fep127, -0.0, kNaN}, {0.5, 2, 3, 1}}, bin(BinaryFn::Mul),
                          ex({0.0, kInf, -0.0, kNaN})));
  c.push_back(elementwise("div_log_f64", {D, D}, {{1, 0x1p-1074, -0.0, kInf}, {-0.0, 1, 1, kInf}},
                          [](KB& kb, const std::vector<ValueId>& x) {
                            return kb.cat(kb.extract(kb.binary(BinaryFn::Div, x[0], x[1]), {0}, {8}),
                                          kb.extract(kb.unary(UnaryFn::Log, x[0]), {0}, {8}), 0);
                          },
                          [] {
                            auto e = ex({-kInf, 0x1p-1074, -0.0, kNaN, kNaN, kNaN, kNaN, kNaN,  // x/0 past 4: 0/0
                                         0.0, -1074 * std::log(2.0), -kInf, kInf, -kInf, -kInf, -kInf, -kInf});
                            e[9].ulps = error_bounds::ulps(error_bounds::Fn::Log, D);
                            return e;
                          }()));
  // ---- reductions (8 elements): inf and NaN propagate through sums, max/min/argmax ignore NaN ----
  c.push_back(reduction("sum_inf_f32", F, {1, 2, kInf, 3, 4, 5, 6, 7}, ReduceKind::Sum, {kInf}));
  c.push_back(reduction("sum_inf_minus_inf_f32", F, {1, kInf, 2, -kInf, 4, 5, 6, 7}, ReduceKind::Sum, {kNaN}));
  c.push_back(reduction("sum_nan_f32", F, {1, 2, 3, 4, kNaN, 5, 6, 7}, ReduceKind::Sum, {kNaN}));
  c.push_back(reduction("sum_subnormals_f32", F, {kDen, kDen, kDen, kDen, kDen, kDen, kDen, kDen}, ReduceKind::Sum, {8 * kDen}));
  c.push_back(reduction("sum_f16_accumulates_wider", H, {60000, 60000, -60000, 0, 0, 0, 0, 0}, ReduceKind::Sum, {60000}));
  c.push_back(reduction("max_ignores_nan_f32", F, {kNaN, 1, 5, kNaN, 2, -kInf, kNaN, 3}, ReduceKind::Max, {5}));
  c.push_back(reduction("max_all_nan_f32", F, {kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN}, ReduceKind::Max, {kNaN}));
  c.push_back(reduction("min_ignores_nan_f32", F, {kNaN, 1, -kInf, kNaN, 2, 3, kNaN, 4}, ReduceKind::Min, {-kInf}));
  c.push_back(reduction("argmax_ignores_nan_f32", F, {kNaN, 3, 5, 5, kNaN, 1, 2, -kInf}, ReduceKind::ArgMax, {2}));
  c.push_back(reduction("argmax_all_nan_f32", F, {kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN}, ReduceKind::ArgMax, {0}));
  c.push_back(reduction("argmin_first_of_ties_f64", D, {3, -kInf, 2, -kInf, kNaN, 0, 0, 1}, ReduceKind::ArgMin, {1}));
  c.push_back(elementwise("cumsum_inf_f32", {F}, {{1, kInf, -kInf, 2}},
                          [](KB& kb, const std::vector<ValueId>& x) { return kb.scan(x[0], 0); },
                          ex({1, kInf, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN})));
  return c;
}

template <class T>
void put(Buffer& b, const std::vector<double>& v) {
  T* p = reinterpret_cast<T*>(b.mem.data());
  for (std::size_t i = 0; i < v.size(); ++i) {
    if constexpr (std::is_same_v<T, f8e5m2>) {
      // Rounding saturates an infinity; e5m2 holds them as data all the same (S.11111.00).
      p[i] = std::isinf(v[i]) ? f8e5m2::from_bits(v[i] > 0 ? 0x7c : 0xfc) : backend::cpu::float_from_double<T>(v[i]);
    } else if constexpr (backend::cpu::is_float_v<T>) {
      p[i] = backend::cpu::float_from_double<T>(v[i]);
    } else if constexpr (std::is_same_v<T, bool>) {
      p[i] = v[i] != 0;
    } else {
      p[i] = static_cast<T>(v[i]);
    }
  }
}

}  // namespace

const std::vector<SpecialCase>& special_cases() {
  static const std::vector<SpecialCase> c = build();
  return c;
}

std::vector<std::string> check_special(const SpecialCase& sc, const Runner& run) {
  const auto k = sc.make();
  Inputs in;
  in.grid = {1};
  in.bufs.resize(k->params.size());
  in.args.resize(k->params.size());
  for (std::size_t i = 0; i < k->params.size(); ++i) {
    const ir::Param& p = k->params[i];
    Buffer& b = in.bufs[i];
    b.d = p.type.dtype;
    const bool is_out = p.name == "out";
    const std::size_t n = is_out ? sc.expected.size() : sc.inputs[i].size();
    b.shape = {static_cast<std::int64_t>(n)};
    b.strides = {1};
    b.mem.assign(n * static_cast<std::size_t>(dtype_size(b.d)), std::byte{0x5a});  // outputs start poisoned
    if (!is_out && i < sc.int_inputs.size()) {
      std::memcpy(b.mem.data(), sc.int_inputs[i].data(), b.mem.size());  // i64 inputs not exact in double
    } else if (!is_out) {
      backend::cpu::dispatch(b.d, [&]<class T>(std::type_identity<T>) { put<T>(b, sc.inputs[i]); });
    }
    in.args[i].tensor.data = b.data();
    in.args[i].tensor.dtype = b.d;
    in.args[i].tensor.shape = b.shape;
    in.args[i].tensor.strides = b.strides;
  }
  backend::LaunchConfig cfg;
  cfg.grid = in.grid;
  cfg.kernel_name = sc.name;
  if (run) {
    run(k, cfg, in);
  } else {
    auto cb = backend::cpu_backend();
    cb->run(*cb->compile(k), cfg, in.args);
  }
  std::vector<std::string> fails;
  const Buffer& out = in.bufs.back();
  backend::cpu::dispatch(out.d, [&]<class T>(std::type_identity<T>) {
    const T* o = reinterpret_cast<const T*>(out.mem.data());
    for (std::size_t i = 0; i < sc.expected.size(); ++i) {
      const Expect& e = sc.expected[i];
      double g;
      if constexpr (backend::cpu::is_float_v<T>) g = backend::cpu::to_double(o[i]);
      else g = static_cast<double>(o[i]);
      bool ok;
      if (std::isnan(e.v)) ok = std::isnan(g);
      else if (std::isnan(g)) ok = false;
      else if (e.ulps > 0 && std::isfinite(e.v)) ok = std::fabs(g - e.v) <= e.ulps * error_bounds::ulp(out.d, e.v);
      else ok = g == e.v && (e.any_zero_sign || std::signbit(g) == std::signbit(e.v));
      if (!ok) {
        char b[300];
        std::snprintf(b, sizeof b, "%s (%s): element %zu is %.17g, expected %.17g%s", sc.name.c_str(),
                      dtype_name(out.d).data(), i, g, e.v, e.ulps > 0 ? " (within the table's ulps)" : "");
        fails.push_back(b);
      }
    }
  });
  return fails;
}

}  // namespace cuda_codegen_test
