// Mistakes with the math, bit, reduction, scan and random ops: each a UserError at the user's
// file:line that names the op and the element types, found while tracing.
#include "error_util.hpp"

namespace ct = ctile;

namespace {

int g_line = 0;
#define MARK() (g_line = __LINE__ + 1)

using Kind = ct::detail::ParamSpec::Kind;
ct::detail::ParamSpec piece(ct::DType d, ct::Shape tile) { return {Kind::Piece, d, static_cast<int>(tile.size()), tile, {}}; }
ct::detail::ParamSpec ref(ct::DType d, int rank) { return {Kind::Read, d, rank, {}, {}}; }

void expect_here(const std::string& what) {
  const std::string want = std::string("test_op_errors.cpp:") + std::to_string(g_line) + ":";
  EXPECT_NE(what.find(want), std::string::npos) << "expected location " << want << " in: " << what;
}

void erf_of_ints(ct::Mut<std::int32_t, 1> z, ct::Ref<std::int32_t, 1> x) {
  auto t = ct::load_like(x, z);
  MARK();
  z.store(ct::erf(t));
}
void sigmoid_of_ints(ct::Mut<std::int32_t, 1> z, ct::Ref<std::int32_t, 1> x) {
  auto t = ct::load_like(x, z);
  MARK();
  z.store(ct::sigmoid(t));
}
void popcount_of_floats(ct::Mut<float, 1> z, ct::Ref<float, 1> x) {
  auto t = ct::load_like(x, z);
  MARK();
  z.store(ct::popcount(t));
}
void clz_of_bools(ct::Mut<float, 1> z, ct::Ref<float, 1> x) {
  auto t = ct::load_like(x, z) > 0.0f;
  MARK();
  z.store(ct::where(ct::clz(t), 1.0f, 0.0f));
}
void atan2_of_ints(ct::Mut<std::int32_t, 1> z, ct::Ref<std::int32_t, 1> x) {
  auto t = ct::load_like(x, z);
  MARK();
  z.store(ct::atan2(t, t));
}
void bitcast_to_narrower(ct::Mut<ct::f16, 1> z, ct::Ref<float, 1> x) {
  auto t = x.tiles({16}).load({0});
  MARK();
  z.store(ct::bitcast<ct::f16>(t));
}
void bitcast_to_bool(ct::Mut<bool, 1> z, ct::Ref<std::uint8_t, 1> x) {
  auto t = x.tiles({16}).load({0});
  MARK();
  z.store(ct::bitcast<bool>(t));
}
void erf_with_a_rounding(ct::Mut<float, 1> z, ct::Ref<float, 1> x) {
  auto t = ct::load_like(x, z);
  MARK();
  z.store(ct::erf(t, ct::approx));
}

void sum_of_bools(ct::Mut<bool, 1> z, ct::Ref<float, 1> x) {
  auto t = ct::load_like(x, z) > 0.0f;
  MARK();
  z.store(ct::sum(t, 0, true));
}
void any_axis_out_of_range(ct::Mut<bool, 1> z, ct::Ref<float, 1> x) {
  auto t = ct::load_like(x, z) > 0.0f;
  MARK();
  z.store(ct::any(t, 1));
}

void cumsum_of_bools(ct::Mut<bool, 1> z, ct::Ref<float, 1> x) {
  auto t = ct::load_like(x, z) > 0.0f;
  MARK();
  z.store(ct::cummax(t, 0) == ct::cumsum(t, 0, ct::exclusive));
}
void cumprod_axis_out_of_range(ct::Mut<float, 2> z, ct::Ref<float, 2> x) {
  auto t = ct::load_like(x, z);
  MARK();
  z.store(ct::cumprod(t, 2, ct::reverse));
}

void rand_with_a_tile_seed(ct::Mut<float, 1> z, ct::Ref<std::int64_t, 1> seeds) {
  auto s = seeds.tiles({16}).load({0});
  MARK();
  z.store(ct::rand(s, ct::iota<std::int64_t>(16)));
}

void cas_of_halves(ct::Atomic<ct::f16, 1> a) {
  MARK();
  (void)a.compare_exchange({ct::iota<std::int64_t>(16)}, ct::Tile<ct::f16>::zeros({16}), ct::Tile<ct::f16>::zeros({16}));
}

// fp8 uses that are rejected: compare-and-swap (read-modify-writes only, as for f16/bf16), a
// product into anything but f32, bit counts, a bitcast to another width.
void cas_of_fp8(ct::Atomic<ct::f8e4m3, 1> a) {
  MARK();
  (void)a.compare_exchange({ct::iota<std::int64_t>(16)}, ct::Tile<ct::f8e4m3>::zeros({16}), ct::Tile<ct::f8e4m3>::zeros({16}));
}
void fp8_mma_into_f16(ct::Mut<ct::f16, 2> c, ct::Ref<ct::f8e4m3, 2> a, ct::Ref<ct::f8e5m2, 2> b) {
  auto ta = a.tiles({16, 16}).load({0, 0});
  auto tb = b.tiles({16, 16}).load({0, 0});
  MARK();
  c.store(ct::mma(ta, tb, ct::Tile<ct::f16>::zeros({16, 16})));
}
void popcount_of_fp8(ct::Mut<ct::f8e5m2, 1> z, ct::Ref<ct::f8e5m2, 1> x) {
  auto t = ct::load_like(x, z);
  MARK();
  z.store(ct::popcount(t));
}
void bitcast_fp8_to_i16(ct::Mut<std::int16_t, 1> z, ct::Ref<ct::f8e4m3, 1> x) {
  auto t = x.tiles({16}).load({0});
  MARK();
  z.store(ct::bitcast<std::int16_t>(t));
}

}  // namespace

TEST(OpErrors, CompareExchangeOfFp8) {
  expect_here(EXPECT_USER_ERROR(ct::trace(cas_of_fp8, "k", {{Kind::Atomic, ct::DType::f8e4m3, 1, {}, {}}}, 1),
                                "compare_exchange supports i32, i64, u32, u64, f32 and f64 tensors, not f8e4m3"));
}
TEST(OpErrors, Fp8ProductIntoF16) {
  expect_here(EXPECT_USER_ERROR(
      ct::trace(fp8_mma_into_f16, "k", {piece(ct::DType::f16, {16, 16}), ref(ct::DType::f8e4m3, 2), ref(ct::DType::f8e5m2, 2)}, 2),
      "mma: unsupported element types f8e4m3 x f8e5m2 -> f16 (supported: f16->f32|f16, bf16->f32, f32->f32, f64->f64, "
      "i8|u8->i32, and f8e4m3|f8e5m2 x f8e4m3|f8e5m2->f32)"));
}
TEST(OpErrors, PopcountOfFp8) {
  expect_here(EXPECT_USER_ERROR(ct::trace(popcount_of_fp8, "k", {piece(ct::DType::f8e5m2, {16}), ref(ct::DType::f8e5m2, 1)}, 1),
                                "popcount needs an integer tile, got tile<f8e5m2, [16]>; reinterpret float bits with bitcast"));
}
TEST(OpErrors, BitcastOfFp8ToAnotherWidth) {
  expect_here(EXPECT_USER_ERROR(ct::trace(bitcast_fp8_to_i16, "k", {piece(ct::DType::i16, {16}), ref(ct::DType::f8e4m3, 1)}, 1),
                                "bitcast: f8e4m3 (1 byte) and i16 (2 bytes) differ in width"));
}
TEST(OpErrors, CompareExchangeOfHalves) {
  expect_here(EXPECT_USER_ERROR(ct::trace(cas_of_halves, "k", {{Kind::Atomic, ct::DType::f16, 1, {}, {}}}, 1),
                                "compare_exchange supports i32, i64, u32, u64, f32 and f64 tensors, not f16"));
}
TEST(OpErrors, RandSeedMustBeAScalar) {
  expect_here(EXPECT_USER_ERROR(ct::trace(rand_with_a_tile_seed, "k", {piece(ct::DType::f32, {16}), ref(ct::DType::i64, 1)}, 1),
                                "rand: the seed must be an integer scalar, got tile<i64, [16]>"));
}
TEST(OpErrors, CumsumOfBools) {
  expect_here(EXPECT_USER_ERROR(ct::trace(cumsum_of_bools, "k", {piece(ct::DType::b1, {16}), ref(ct::DType::f32, 1)}, 1),
                                "cumsum is not defined on bool tiles (cummax/cummin are running any/all)"));
}
TEST(OpErrors, CumprodAxisOutOfRange) {
  expect_here(EXPECT_USER_ERROR(ct::trace(cumprod_axis_out_of_range, "k", {piece(ct::DType::f32, {4, 4}), ref(ct::DType::f32, 2)}, 2),
                                "cumprod: axis 2 is out of range for rank 2"));
}
TEST(OpErrors, SumOfBools) {
  expect_here(EXPECT_USER_ERROR(ct::trace(sum_of_bools, "k", {piece(ct::DType::b1, {1}), ref(ct::DType::f32, 1)}, 1),
                                "sum is not defined on bool tiles; use any/all"));
}
TEST(OpErrors, AnyAxisOutOfRange) {
  expect_here(EXPECT_USER_ERROR(ct::trace(any_axis_out_of_range, "k", {piece(ct::DType::b1, {16}), ref(ct::DType::f32, 1)}, 1),
                                "any (max): axis 1 is out of range for rank 1"));
}
TEST(OpErrors, ErfOfIntegers) {
  expect_here(EXPECT_USER_ERROR(ct::trace(erf_of_ints, "k", {piece(ct::DType::i32, {16}), ref(ct::DType::i32, 1)}, 1),
                                "erf needs a floating-point tile, got tile<i32, [16]>"));
}
TEST(OpErrors, SigmoidOfIntegers) {
  expect_here(EXPECT_USER_ERROR(ct::trace(sigmoid_of_ints, "k", {piece(ct::DType::i32, {16}), ref(ct::DType::i32, 1)}, 1),
                                "sigmoid needs a floating-point tile"));
}
TEST(OpErrors, PopcountOfFloats) {
  expect_here(EXPECT_USER_ERROR(ct::trace(popcount_of_floats, "k", {piece(ct::DType::f32, {16}), ref(ct::DType::f32, 1)}, 1),
                                "popcount needs an integer tile, got tile<f32, [16]>; reinterpret float bits with bitcast"));
}
TEST(OpErrors, ClzOfBools) {
  expect_here(EXPECT_USER_ERROR(ct::trace(clz_of_bools, "k", {piece(ct::DType::f32, {16}), ref(ct::DType::f32, 1)}, 1),
                                "clz needs an integer tile, got tile<bool"));
}
TEST(OpErrors, Atan2OfIntegers) {
  expect_here(EXPECT_USER_ERROR(ct::trace(atan2_of_ints, "k", {piece(ct::DType::i32, {16}), ref(ct::DType::i32, 1)}, 1),
                                "atan2 needs floating-point tiles"));
}
TEST(OpErrors, BitcastOfAnotherWidth) {
  expect_here(EXPECT_USER_ERROR(ct::trace(bitcast_to_narrower, "k", {piece(ct::DType::f16, {16}), ref(ct::DType::f32, 1)}, 1),
                                "bitcast: f32 (4 bytes) and f16 (2 bytes) differ in width"));
}
TEST(OpErrors, BitcastToBool) {
  expect_here(EXPECT_USER_ERROR(ct::trace(bitcast_to_bool, "k", {piece(ct::DType::b1, {16}), ref(ct::DType::u8, 1)}, 1),
                                "bitcast: bool tiles have no bit pattern"));
}
TEST(OpErrors, ErfTakesNoRounding) {
  expect_here(EXPECT_USER_ERROR(ct::trace(erf_with_a_rounding, "k", {piece(ct::DType::f32, {16}), ref(ct::DType::f32, 1)}, 1),
                                "erf takes no rounding mode"));
}
