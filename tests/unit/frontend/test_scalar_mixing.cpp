// Scalars mix with tiles the same way in every op: a literal of the tile's kind may stand for a
// tile operand, on either side, in every operator and every element-wise DSL function, and it means
// exactly a rank-0 constant tile of the tile's element type. Each case traces the literal form
// and the spelled-out form (Tile<T>::full({}, lit)) and requires the same IR; a literal on the
// wrong side or of the wrong type would change it. A CPU run checks the non-commutative ones
// against a host reference, and error tests check that a mistake involving a literal is reported
// at the user's line.
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <ctile/ctile.hpp>

#include "../../error/error_util.hpp"

namespace ct = ctile;
using Kind = ct::detail::ParamSpec::Kind;

namespace {

ct::detail::ParamSpec piece(ct::DType d, ct::Shape tile) {
  return {Kind::Piece, d, static_cast<int>(tile.size()), tile, {}};
}
ct::detail::ParamSpec ref(ct::DType d, int rank) { return {Kind::Read, d, rank, {}, {}}; }
ct::detail::ParamSpec atomic(ct::DType d, int rank) { return {Kind::Atomic, d, rank, {}, {}}; }

template <class... P>
std::string ir_of(void (*fn)(P...), const std::vector<ct::detail::ParamSpec>& specs) {
  return ct::ir::print(*ct::trace(fn, "k", specs, 1));
}

// ---- float kernels: z = f(v), v a [16] tile; `L` is the literal form, `T` the tile form, where
// `c2`, `c3` are the literals 2 and 3 spelled as rank-0 tiles (made in the order the literals are
// written, as the DSL makes them).
using F = float;
#define FLOAT_CASE(NAME, LIT, TILE)                                                 \
  void NAME##_lit(ct::Mut<F, 1> z, ct::Ref<F, 1> x) {                               \
    auto v = ct::load_like(x, z);                                                   \
    z.store(LIT);                                                                   \
  }                                                                                 \
  void NAME##_tile(ct::Mut<F, 1> z, ct::Ref<F, 1> x) {                              \
    auto v = ct::load_like(x, z);                                                   \
    auto c2 = ct::Tile<F>::full({}, 2.0f);                                          \
    z.store(TILE);                                                                  \
  }
#define FLOAT_CASE3(NAME, LIT, TILE)                                                \
  void NAME##_lit(ct::Mut<F, 1> z, ct::Ref<F, 1> x) {                               \
    auto v = ct::load_like(x, z);                                                   \
    z.store(LIT);                                                                   \
  }                                                                                 \
  void NAME##_tile(ct::Mut<F, 1> z, ct::Ref<F, 1> x) {                              \
    auto v = ct::load_like(x, z);                                                   \
    auto c2 = ct::Tile<F>::full({}, 2.0f);                                          \
    auto c3 = ct::Tile<F>::full({}, 3.0f);                                          \
    z.store(TILE);                                                                  \
  }
#define B2F(e) ct::where(e, 1.0f, 0.0f)  // a bool tile stored as 1 / 0
FLOAT_CASE(add_l, 2.0f + v, c2 + v)
FLOAT_CASE(sub_l, 2.0f - v, c2 - v)
FLOAT_CASE(sub_r, v - 2.0f, v - c2)
FLOAT_CASE(mul_l, 2.0f * v, c2 * v)
FLOAT_CASE(div_l, 2.0f / v, c2 / v)
FLOAT_CASE(div_r, v / 2.0f, v / c2)
FLOAT_CASE(rem_l, 2.0f % v, c2 % v)
FLOAT_CASE(lt_l, B2F(2.0f < v), B2F(c2 < v))
FLOAT_CASE(le_l, B2F(2.0f <= v), B2F(c2 <= v))
FLOAT_CASE(gt_l, B2F(2.0f > v), B2F(c2 > v))
FLOAT_CASE(ge_l, B2F(2.0f >= v), B2F(c2 >= v))
FLOAT_CASE(eq_l, B2F(2.0f == v), B2F(c2 == v))
FLOAT_CASE(ne_l, B2F(2.0f != v), B2F(c2 != v))
FLOAT_CASE(max_r, ct::maximum(v, 2.0f), ct::maximum(v, c2))
FLOAT_CASE(max_l, ct::maximum(2.0f, v), ct::maximum(c2, v))
FLOAT_CASE(min_r, ct::minimum(v, 2.0f), ct::minimum(v, c2))
FLOAT_CASE(min_l, ct::minimum(2.0f, v), ct::minimum(c2, v))
FLOAT_CASE(max_nan_r, ct::maximum(v, 2.0f, ct::propagate_nan), ct::maximum(v, c2, ct::propagate_nan))
FLOAT_CASE(max_nan_l, ct::maximum(2.0f, v, ct::propagate_nan), ct::maximum(c2, v, ct::propagate_nan))
FLOAT_CASE(min_nan_r, ct::minimum(v, 2.0f, ct::propagate_nan), ct::minimum(v, c2, ct::propagate_nan))
FLOAT_CASE(min_nan_l, ct::minimum(2.0f, v, ct::propagate_nan), ct::minimum(c2, v, ct::propagate_nan))
FLOAT_CASE(pow_r, ct::pow(v, 2.0f), ct::pow(v, c2))
FLOAT_CASE(pow_l, ct::pow(2.0f, v), ct::pow(c2, v))
FLOAT_CASE(pdiv_r, ct::div(v, 2.0f, ct::approx), ct::div(v, c2, ct::approx))
FLOAT_CASE(pdiv_l, ct::div(2.0f, v, ct::approx), ct::div(c2, v, ct::approx))
FLOAT_CASE(fma_b, ct::fma(v, 2.0f, v), ct::fma(v, c2, v))
FLOAT_CASE(fma_c, ct::fma(v, v, 2.0f), ct::fma(v, v, c2))
FLOAT_CASE3(fma_bc, ct::fma(v, 2.0f, 3.0f), ct::fma(v, c2, c3))
FLOAT_CASE(fma_a, ct::fma(2.0f, v, v), ct::fma(c2, v, v))
FLOAT_CASE3(fma_ac, ct::fma(2.0f, v, 3.0f), ct::fma(c2, v, c3))
FLOAT_CASE3(fma_ab, ct::fma(2.0f, 3.0f, v), ct::fma(c2, c3, v))
// where: the condition first (it is an argument, traced before the literals become constants).
#define WHERE_CASE(NAME, LIT, TILE)                                                 \
  void NAME##_lit(ct::Mut<F, 1> z, ct::Ref<F, 1> x) {                               \
    auto v = ct::load_like(x, z);                                                   \
    auto c = v > v;                                                                 \
    z.store(LIT);                                                                   \
  }                                                                                 \
  void NAME##_tile(ct::Mut<F, 1> z, ct::Ref<F, 1> x) {                              \
    auto v = ct::load_like(x, z);                                                   \
    auto c = v > v;                                                                 \
    auto c2 = ct::Tile<F>::full({}, 2.0f);                                          \
    z.store(TILE);                                                                  \
  }
#define WHERE_CASE3(NAME, LIT, TILE)                                                 \
  void NAME##_lit(ct::Mut<F, 1> z, ct::Ref<F, 1> x) {                               \
    auto v = ct::load_like(x, z);                                                   \
    auto c = v > v;                                                                 \
    z.store(LIT);                                                                   \
  }                                                                                 \
  void NAME##_tile(ct::Mut<F, 1> z, ct::Ref<F, 1> x) {                              \
    auto v = ct::load_like(x, z);                                                   \
    auto c = v > v;                                                                 \
    auto c2 = ct::Tile<F>::full({}, 2.0f);                                          \
    auto c3 = ct::Tile<F>::full({}, 3.0f);                                          \
    z.store(TILE);                                                                  \
  }
WHERE_CASE(where_b, ct::where(c, v, 2.0f), ct::where(c, v, c2))
WHERE_CASE(where_a, ct::where(c, 2.0f, v), ct::where(c, c2, v))
WHERE_CASE3(where_ab, ct::where<F>(c, 2.0f, 3.0f), ct::where(c, c2, c3))
WHERE_CASE3(where_ab_deduced, ct::where(c, 2.0f, 3.0f), ct::where(c, c2, c3))
#undef WHERE_CASE
#undef WHERE_CASE3
// A double literal with a float tile is the same constant: the literal takes the tile's type.
FLOAT_CASE(max_double, ct::maximum(v, 2.0), ct::maximum(v, c2))
#undef FLOAT_CASE
#undef FLOAT_CASE3

// A Scalar<T> parameter is a rank-0 tile: it mixes with literals like any tile.
void scalar_param_lit(ct::Mut<F, 1> z, ct::Scalar<F> s) {
  auto m = ct::maximum(s, 2.0f);
  z.store(ct::where(2.0f < s, m, 0.0f));
}
void scalar_param_tile(ct::Mut<F, 1> z, ct::Scalar<F> s) {
  auto c2 = ct::Tile<F>::full({}, 2.0f);
  auto m = ct::maximum(s, c2);
  auto c2b = ct::Tile<F>::full({}, 2.0f);
  auto c = c2b < s;
  auto c0 = ct::Tile<F>::full({}, 0.0f);
  z.store(ct::where(c, m, c0));
}

// ---- integer kernels
using I = std::int32_t;
#define INT_CASE(NAME, LIT, TILE)                                                   \
  void NAME##_lit(ct::Mut<I, 1> z, ct::Ref<I, 1> x) {                               \
    auto v = ct::load_like(x, z);                                                   \
    z.store(LIT);                                                                   \
  }                                                                                 \
  void NAME##_tile(ct::Mut<I, 1> z, ct::Ref<I, 1> x) {                              \
    auto v = ct::load_like(x, z);                                                   \
    auto c2 = ct::Tile<I>::full({}, 2);                                             \
    z.store(TILE);                                                                  \
  }
INT_CASE(and_l, 2 & v, c2 & v)
INT_CASE(or_l, 2 | v, c2 | v)
INT_CASE(xor_l, 2 ^ v, c2 ^ v)
INT_CASE(shl_l, 2 << v, c2 << v)
INT_CASE(shr_l, 2 >> v, c2 >> v)
INT_CASE(shl_r, v << 2, v << c2)
INT_CASE(imax_l, ct::maximum(2, v), ct::maximum(c2, v))
INT_CASE(imin_r, ct::minimum(v, 2), ct::minimum(v, c2))
// An unsigned or 64-bit literal with an i32 tile is cast to i32, as in `v + 2u`.
INT_CASE(imax_u64, ct::maximum(v, std::uint64_t{2}), ct::maximum(v, c2))
#undef INT_CASE

void iwhere_a_lit(ct::Mut<I, 1> z, ct::Ref<I, 1> x) {
  auto v = ct::load_like(x, z);
  auto c = v > v;
  z.store(ct::where(c, 2, v));
}
void iwhere_a_tile(ct::Mut<I, 1> z, ct::Ref<I, 1> x) {
  auto v = ct::load_like(x, z);
  auto c = v > v;
  z.store(ct::where(c, ct::Tile<I>::full({}, 2), v));
}

// Compound assignment with literals, for the bitwise operators too.
void compound_lit(ct::Mut<I, 1> z, ct::Ref<I, 1> x) {
  auto v = ct::load_like(x, z);
  v &= 6;
  v <<= 1;
  v |= 1;
  z.store(v);
}
void compound_tile(ct::Mut<I, 1> z, ct::Ref<I, 1> x) {
  auto v = ct::load_like(x, z);
  v = v & ct::Tile<I>::full({}, 6);
  v = v << ct::Tile<I>::full({}, 1);
  v = v | ct::Tile<I>::full({}, 1);
  z.store(v);
}

// ---- memory ops whose value operand may be a literal
void scatter_lit(ct::Mut<F, 1> z) { z.scatter({ct::iota<std::int64_t>(16)}, 2.0f); }
void scatter_tile(ct::Mut<F, 1> z) {
  auto i = ct::iota<std::int64_t>(16);
  z.scatter({i}, ct::Tile<F>::full({}, 2.0f));
}
void atomic_lit(ct::Atomic<I, 1> h, ct::Ref<I, 1> x) {
  auto i = x.tiles({16}).load({ct::block_id(0)});
  (void)h.add({i}, 1);
  (void)h.max({i}, 1);
  (void)h.min({i}, 1);
  (void)h.exchange({i}, 1);
  (void)h.compare_exchange({i}, 0, 1);
}
void atomic_tile(ct::Atomic<I, 1> h, ct::Ref<I, 1> x) {
  auto i = x.tiles({16}).load({ct::block_id(0)});
  (void)h.add({i}, ct::Tile<I>::full({}, 1));
  (void)h.max({i}, ct::Tile<I>::full({}, 1));
  (void)h.min({i}, ct::Tile<I>::full({}, 1));
  (void)h.exchange({i}, ct::Tile<I>::full({}, 1));
  auto e = ct::Tile<I>::full({}, 0);
  auto d = ct::Tile<I>::full({}, 1);
  (void)h.compare_exchange({i}, e, d);
}
void unchecked_lit(ct::UncheckedMut<F, 1> u) {
  u.scatter(ct::unchecked, ct::iota<std::int64_t>(16), 2.0f);
  u.store_at(ct::unchecked, {0}, 3.0f);
}
void unchecked_tile(ct::UncheckedMut<F, 1> u) {
  auto i = ct::iota<std::int64_t>(16);
  u.scatter(ct::unchecked, i, ct::Tile<F>::full({}, 2.0f));
  auto c3 = ct::Tile<F>::full({}, 3.0f);
  u.store_at(ct::unchecked, {0}, c3);
}

}  // namespace

#define EXPECT_SAME_IR(NAME, SPECS) \
  EXPECT_EQ(ir_of(NAME##_lit, SPECS), ir_of(NAME##_tile, SPECS)) << #NAME ": the literal form differs from the tile form"

TEST(ScalarMixing, FloatOperatorsAndFunctionsTakeALiteralOnEitherSide) {
  const std::vector<ct::detail::ParamSpec> s{piece(ct::DType::f32, {16}), ref(ct::DType::f32, 1)};
  EXPECT_SAME_IR(add_l, s);
  EXPECT_SAME_IR(sub_l, s);
  EXPECT_SAME_IR(sub_r, s);
  EXPECT_SAME_IR(mul_l, s);
  EXPECT_SAME_IR(div_l, s);
  EXPECT_SAME_IR(div_r, s);
  EXPECT_SAME_IR(rem_l, s);
  EXPECT_SAME_IR(lt_l, s);
  EXPECT_SAME_IR(le_l, s);
  EXPECT_SAME_IR(gt_l, s);
  EXPECT_SAME_IR(ge_l, s);
  EXPECT_SAME_IR(eq_l, s);
  EXPECT_SAME_IR(ne_l, s);
  EXPECT_SAME_IR(max_r, s);
  EXPECT_SAME_IR(max_l, s);
  EXPECT_SAME_IR(min_r, s);
  EXPECT_SAME_IR(min_l, s);
  EXPECT_SAME_IR(max_nan_r, s);
  EXPECT_SAME_IR(max_nan_l, s);
  EXPECT_SAME_IR(min_nan_r, s);
  EXPECT_SAME_IR(min_nan_l, s);
  EXPECT_SAME_IR(pow_r, s);
  EXPECT_SAME_IR(pow_l, s);
  EXPECT_SAME_IR(pdiv_r, s);
  EXPECT_SAME_IR(pdiv_l, s);
  EXPECT_SAME_IR(fma_b, s);
  EXPECT_SAME_IR(fma_c, s);
  EXPECT_SAME_IR(fma_bc, s);
  EXPECT_SAME_IR(fma_a, s);
  EXPECT_SAME_IR(fma_ac, s);
  EXPECT_SAME_IR(fma_ab, s);
  EXPECT_SAME_IR(where_b, s);
  EXPECT_SAME_IR(where_a, s);
  EXPECT_SAME_IR(where_ab, s);
  EXPECT_SAME_IR(where_ab_deduced, s);
  EXPECT_SAME_IR(max_double, s);
  EXPECT_SAME_IR(scalar_param, (std::vector<ct::detail::ParamSpec>{piece(ct::DType::f32, {16}),
                                                                    {Kind::Scalar, ct::DType::f32, 0, {}, {}}}));
}

TEST(ScalarMixing, IntegerOperatorsAndFunctionsTakeALiteralOnEitherSide) {
  const std::vector<ct::detail::ParamSpec> s{piece(ct::DType::i32, {16}), ref(ct::DType::i32, 1)};
  EXPECT_SAME_IR(and_l, s);
  EXPECT_SAME_IR(or_l, s);
  EXPECT_SAME_IR(xor_l, s);
  EXPECT_SAME_IR(shl_l, s);
  EXPECT_SAME_IR(shr_l, s);
  EXPECT_SAME_IR(shl_r, s);
  EXPECT_SAME_IR(imax_l, s);
  EXPECT_SAME_IR(imin_r, s);
  EXPECT_SAME_IR(iwhere_a, s);
  EXPECT_SAME_IR(imax_u64, s);
  EXPECT_SAME_IR(compound, s);
}

TEST(ScalarMixing, StoresScattersAndAtomicsTakeALiteralValue) {
  EXPECT_SAME_IR(scatter, (std::vector<ct::detail::ParamSpec>{piece(ct::DType::f32, {16})}));
  EXPECT_SAME_IR(atomic, (std::vector<ct::detail::ParamSpec>{atomic(ct::DType::i32, 1), ref(ct::DType::i32, 1)}));
  EXPECT_SAME_IR(unchecked, (std::vector<ct::detail::ParamSpec>{{Kind::Unchecked, ct::DType::f32, 1, {}, {}}}));
}

// The comparison is not vacuous: a literal on the other side, or another literal, changes the IR.
TEST(ScalarMixing, TheIrComparisonSeesASwappedOperand) {
  const std::vector<ct::detail::ParamSpec> s{piece(ct::DType::f32, {16}), ref(ct::DType::f32, 1)};
  EXPECT_NE(ir_of(sub_l_lit, s), ir_of(sub_r_lit, s));
  EXPECT_NE(ir_of(pow_l_lit, s), ir_of(pow_r_lit, s));
  EXPECT_NE(ir_of(lt_l_lit, s), ir_of(gt_l_lit, s));
  EXPECT_NE(ir_of(fma_ac_lit, s), ir_of(fma_ab_lit, s));
}

namespace {
// One kernel, one trace-time case per specialisation: the values of the literal forms.
void mixed(ct::Mut<F, 1> z, ct::Ref<F, 1> x, ct::Const<int> which) {
  auto v = ct::load_like(x, z);
  switch (static_cast<int>(which)) {
    case 0: z.store(2.0f - v); break;
    case 1: z.store(1.0f / v); break;
    case 2: z.store(ct::where(0.5f < v, 1.0f, 0.0f)); break;
    case 3: z.store(ct::maximum(v, 0.0f)); break;
    case 4: z.store(ct::minimum(0.25f, v)); break;
    case 5: z.store(ct::pow(2.0f, v)); break;
    case 6: z.store(ct::fma(2.0f, v, 1.0f)); break;
    case 7: z.store(ct::where(v > 0.0f, 0.0f, v)); break;
    default: z.store(ct::div(3.0f, v, ct::rounding::rn)); break;
  }
}
float mixed_ref(int which, float v) {
  switch (which) {
    case 0: return 2.0f - v;
    case 1: return 1.0f / v;
    case 2: return 0.5f < v ? 1.0f : 0.0f;
    case 3: return std::fmax(v, 0.0f);
    case 4: return std::fmin(0.25f, v);
    case 5: return std::pow(2.0f, v);
    case 6: return std::fma(2.0f, v, 1.0f);
    case 7: return v > 0.0f ? 0.0f : v;
    default: return 3.0f / v;
  }
}
}  // namespace

TEST(ScalarMixing, LiteralFormsComputeTheirReferenceOnTheCpu) {
  const std::int64_t n = 100;  // not a multiple of the tile: the padded tail too
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> h(static_cast<std::size_t>(n));
  for (float& e : h) e = dist(rng);
  auto x = ct::from_host<float>(h, {n}, ct::cpu()).share();
  for (int which = 0; which <= 8; ++which) {
    auto [z, x2, w] = ct::launch(mixed, ct::zeros<float>({n}, ct::cpu()).partition({16}), x, which).sync();
    (void)x2;
    (void)w;
    const auto out = std::move(z).unpartition().to_host();
    for (std::size_t i = 0; i < h.size(); ++i) {
      const float want = mixed_ref(which, h[i]);
      if (which == 5) EXPECT_NEAR(out[i], want, 4e-6f * std::fabs(want)) << "case " << which << " at " << i;
      else EXPECT_EQ(out[i], want) << "case " << which << " at " << i << " (x = " << h[i] << ")";
    }
  }
}

namespace {
int g_line = 0;
void where_literal_bad_shape(ct::Mut<F, 1> z, ct::Ref<F, 1> x) {
  auto v = ct::load_like(x, z);                    // [16]
  auto c = ct::Tile<F>::zeros({8}) > 0.0f;         // [8]
  g_line = __LINE__ + 1;
  z.store(ct::where(c, 0.0f, v));
}
void maximum_literal_bad_store(ct::Mut<F, 1> z, ct::Ref<F, 1> x) {
  auto v = x.tiles({32}).load({0});
  g_line = __LINE__ + 1;
  z.store(ct::maximum(v, 0.0f));  // a [32] tile into a [16] piece
}
void atomic_literal_i8(ct::Atomic<std::int8_t, 1> h) {
  g_line = __LINE__ + 1;
  (void)h.add({ct::iota<std::int64_t>(16)}, 1);
}
void scatter_literal_bad_rank(ct::Mut<F, 2> z) {
  g_line = __LINE__ + 1;
  z.scatter({ct::iota<std::int64_t>(16), ct::iota<std::int64_t>(8)}, 1.0f);
}
std::string at_line() { return "test_scalar_mixing.cpp:" + std::to_string(g_line); }
}  // namespace

TEST(ScalarMixing, MistakesWithLiteralsAreUserErrorsAtTheUsersLine) {
  const std::vector<ct::detail::ParamSpec> s{piece(ct::DType::f32, {16}), ref(ct::DType::f32, 1)};
  std::string m = EXPECT_USER_ERROR(ir_of(where_literal_bad_shape, s), "where: shapes [8], [] and [16] do not broadcast");
  EXPECT_NE(m.find(at_line()), std::string::npos) << m;
  m = EXPECT_USER_ERROR(ir_of(maximum_literal_bad_store, s), "store");
  EXPECT_NE(m.find(at_line()), std::string::npos) << m;
  m = EXPECT_USER_ERROR(ir_of(atomic_literal_i8, {atomic(ct::DType::i8, 1)}), "atomic add supports i32, i64, u32, u64, f16, bf16, f8e4m3, f8e5m2, f32 and f64 tensors, not i8");
  EXPECT_NE(m.find(at_line()), std::string::npos) << m;
  m = EXPECT_USER_ERROR(ir_of(scatter_literal_bad_rank, {piece(ct::DType::f32, {16, 16})}), "do not broadcast");
  EXPECT_NE(m.find(at_line()), std::string::npos) << m;
}
