// Mistakes in kernel code: each is a UserError at the user's file:line, found while tracing
// (at the first launch), before anything runs.
#include <cmath>

#include "error_util.hpp"

namespace ct = ctile;

namespace {

int g_line = 0;
#define MARK() (g_line = __LINE__ + 1)

void bad_broadcast(ct::Mut<float, 1> z, ct::Ref<float, 1> x) {
  auto a = x.tiles({16}).load({0});
  auto b = x.tiles({8}).load({0});
  MARK();
  z.store(a + b);
}

void non_pow2_tile(ct::Mut<float, 1> z) {
  MARK();
  auto t = ct::Tile<float>::zeros({12});
  z.store(t);
}

void wrong_store_shape(ct::Mut<float, 1> z) {
  MARK();
  z.store(ct::Tile<float>::zeros({32}));
}

// (A wrong number of tile indices in load({...}) does not even compile: the index array has N entries.)
void tile_extent_count(ct::Mut<float, 2> z, ct::Ref<float, 2> x) {
  (void)z;
  MARK();
  auto p = x.tiles({4});
  (void)p;
}

void if_on_tile(ct::Mut<float, 1> z) {
  auto t = ct::Tile<float>::zeros({16});
  MARK();
  ct::if_(t > 0.0f, [&] { t = t + 1.0f; });
  z.store(t);
}

void shape_change_in_loop(ct::Mut<float, 1> z, ct::Scalar<std::int64_t> n) {
  auto t = ct::Tile<float>::zeros({16});
  auto wide = ct::Tile<float>::zeros({32});
  MARK();
  for (auto k : ct::range(n)) {
    (void)k;
    t = wide;
  }
  z.store(t);
}

void break_in_loop(ct::Mut<float, 1> z, ct::Scalar<std::int64_t> n) {
  auto t = ct::Tile<float>::zeros({16});
  MARK();
  for (auto k : ct::range(n)) {
    (void)k;
    t = t + 1.0f;
    break;
  }
  z.store(t);
}

void escape_from_loop(ct::Mut<float, 1> z, ct::Scalar<std::int64_t> n) {
  std::vector<ct::Tile<float>> keep;
  MARK();
  for (auto k : ct::range(n)) {
    (void)k;
    keep.push_back(ct::Tile<float>::zeros({16}));
  }
  z.store(keep.front());
}

void math_on_ints(ct::Mut<std::int32_t, 1> z) {
  auto t = ct::Tile<std::int32_t>::zeros({16});
  MARK();
  z.store(ct::exp(t));
}

void mma_shapes(ct::Mut<float, 2> c) {
  auto a = ct::Tile<ct::f16>::zeros({16, 32});
  auto b = ct::Tile<ct::f16>::zeros({16, 16});
  MARK();
  c.store(ct::mma(a, b, ct::Tile<float>::zeros({16, 16})));
}

void mma_batches_differ(ct::Mut<float, 3> c) {
  auto a = ct::Tile<ct::bf16>::zeros({2, 16, 16});
  auto b = ct::Tile<ct::bf16>::zeros({4, 16, 16});
  MARK();
  c.store(ct::mma(a, b, ct::Tile<float>::zeros({2, 16, 16})));
}

void mma_mixed_ranks(ct::Mut<float, 2> c) {
  auto a = ct::Tile<ct::bf16>::zeros({2, 16, 16});
  auto b = ct::Tile<ct::bf16>::zeros({16, 16});
  MARK();
  c.store(ct::mma(a, b, ct::Tile<float>::zeros({16, 16})));
}

void mma_types(ct::Mut<std::int32_t, 2> c) {
  auto a = ct::Tile<std::int16_t>::zeros({16, 16});
  MARK();
  c.store(ct::mma(a, a, ct::Tile<std::int32_t>::zeros({16, 16})));
}

void bad_axis(ct::Mut<float, 1> z) {
  auto t = ct::Tile<float>::zeros({16});
  MARK();
  z.store(ct::sum(t, 1));
}

void bad_block_axis(ct::Mut<float, 1> z) {
  MARK();
  auto b = ct::block_id(1);
  (void)b;
  (void)z;
}

void static_check_fails(ct::Mut<float, 1> z) {
  MARK();
  ct::static_check(z.tile_shape()[0] >= 128, "this kernel needs tiles of at least 128 elements");
}

void reshape_count(ct::Mut<float, 1> z) {
  auto t = ct::Tile<float>::zeros({16});
  MARK();
  z.store(t.reshape({4, 8}).reshape({16}));
}

void while_assigns_in_condition(ct::Mut<float, 1> z) {
  auto i = ct::constant<std::int64_t>(0);
  MARK();
  ct::while_([&] {
    i = i + 1;
    return i < 10;
  }, [&] {});
  (void)z;
}

using Kind = ct::detail::ParamSpec::Kind;
ct::detail::ParamSpec piece(ct::DType d, ct::Shape tile) {
  return {Kind::Piece, d, static_cast<int>(tile.size()), tile, {}};
}
ct::detail::ParamSpec ref(ct::DType d, int rank) { return {Kind::Read, d, rank, {}, {}}; }
ct::detail::ParamSpec i64s() { return {Kind::Scalar, ct::DType::i64, 0, {}, {}}; }

// The error names this file and the line MARK() pointed at.
// load_window / store_window: a window of another rank, an extent that is not a power of two.
void window_of_another_rank(ct::Mut<float, 2> z, ct::Ref<float, 2> x) {
  MARK();
  auto t = x.load_window({1, 2}, {16});
  (void)t;
  (void)z;
}
void window_not_pow2(ct::Mut<float, 1> z, ct::Ref<float, 1> x) {
  (void)z;
  MARK();
  auto t = x.load_window({3}, {12});
  (void)t;
}
void store_window_of_another_rank(ct::Mut<float, 2> z) {
  MARK();
  z.store_window({0, 1}, ct::Tile<float>::zeros({16}));
}

// Combine functions (ct::reduce, ct::scan): element-wise ops on their arguments only.
void combine_loads(ct::Mut<float, 1> z, ct::Ref<float, 1> x) {
  auto t = x.tiles({16}).load({0});
  auto p = x.tiles({1});
  z.store(ct::reduce(t, 0, [&](auto a, auto b) {
    MARK();
    auto c = p.load({0}).reshape({});
    return a + b + c;
  }, true));
}
void combine_captures(ct::Mut<float, 1> z, ct::Ref<float, 1> x, ct::Scalar<float> w) {
  auto t = x.tiles({16}).load({0});
  z.store(ct::reduce(t, 0, [&](auto a, auto b) {
    MARK();
    return a + b * w;
  }, true));
}
void combine_nested_reduction(ct::Mut<float, 1> z, ct::Ref<float, 1> x) {
  auto t = x.tiles({16}).load({0});
  z.store(ct::reduce(t, 0, [&](auto a, auto b) {
    MARK();
    return a + b + ct::sum(t, 0);
  }, true));
}
void combine_branches(ct::Mut<float, 1> z, ct::Ref<float, 1> x) {
  auto t = x.tiles({16}).load({0});
  z.store(ct::scan(t, 0, [](auto a, auto b) {
    auto r = a;
    MARK();
    ct::if_(a < b, [&] { r = b; });
    return r;
  }));
}
void combine_makes_a_tile(ct::Mut<float, 1> z, ct::Ref<float, 1> x) {
  auto t = x.tiles({16}).load({0});
  z.store(ct::reduce(t, 0, [](auto a, auto b) {
    MARK();
    auto wide = ct::Tile<float>::full({4}, 1.0f);
    return a + b + ct::sum(wide, 0);
  }, true));
}
void combine_assigns_outside(ct::Mut<float, 1> z, ct::Ref<float, 1> x) {
  auto t = x.tiles({16}).load({0});
  auto seen = ct::constant(0.0f);
  MARK();
  auto r = ct::reduce(t, 0, [&](auto a, auto b) { seen = a; return a + b; }, true);
  z.store(r + seen);
}
void combine_exclusive_without_identity(ct::Mut<float, 1> z, ct::Ref<float, 1> x) {
  auto t = x.tiles({16}).load({0});
  MARK();
  z.store(ct::scan(t, 0, [](auto a, auto b) { return a * b; }, ct::exclusive));
}
void combine_tiles_of_two_shapes(ct::Mut<float, 1> z, ct::Ref<float, 1> x) {
  auto t = x.tiles({16}).load({0});
  auto i = ct::iota<std::int64_t>(8);
  MARK();
  auto [v, k] = ct::reduce(std::tuple{t, i}, 0, [](auto a, auto b) { return b; });
  (void)k;
  z.store(v);
}
void combine_axis_out_of_range(ct::Mut<float, 1> z, ct::Ref<float, 1> x) {
  auto t = x.tiles({16}).load({0});
  MARK();
  z.store(ct::scan(t, 1, [](auto a, auto b) { return a + b; }));
}

void expect_here(const std::string& what) {
  const std::string want = std::string("test_trace_errors.cpp:") + std::to_string(g_line) + ":";
  EXPECT_NE(what.find(want), std::string::npos) << "expected location " << want << " in: " << what;
}

}  // namespace

TEST(TraceErrors, ShapesThatDoNotBroadcast) {
  expect_here(EXPECT_USER_ERROR(
      ct::trace(bad_broadcast, "k", {piece(ct::DType::f32, {16}), ref(ct::DType::f32, 1)}, 1), "do not broadcast"));
}
TEST(TraceErrors, TileExtentNotAPowerOfTwo) {
  expect_here(EXPECT_USER_ERROR(ct::trace(non_pow2_tile, "k", {piece(ct::DType::f32, {16})}, 1), "power of two"));
}
TEST(TraceErrors, StoreOfAnotherShape) {
  expect_here(EXPECT_USER_ERROR(ct::trace(wrong_store_shape, "k", {piece(ct::DType::f32, {16})}, 1), "does not fit"));
}
TEST(TraceErrors, WrongNumberOfTileExtents) {
  expect_here(EXPECT_USER_ERROR(
      ct::trace(tile_extent_count, "k", {piece(ct::DType::f32, {4, 4}), ref(ct::DType::f32, 2)}, 2), "tile extents"));
}
TEST(TraceErrors, RunTimeBranchOnATile) {
  expect_here(EXPECT_USER_ERROR(ct::trace(if_on_tile, "k", {piece(ct::DType::f32, {16})}, 1), "bool scalar"));
}
TEST(TraceErrors, CarriedValueChangesShape) {
  expect_here(EXPECT_USER_ERROR(ct::trace(shape_change_in_loop, "k", {piece(ct::DType::f32, {16}), i64s()}, 1),
                                "changes its type"));
}
TEST(TraceErrors, BreakOutOfATracedLoop) {
  expect_here(EXPECT_USER_ERROR(ct::trace(break_in_loop, "k", {piece(ct::DType::f32, {16}), i64s()}, 1),
                                "C++ break, return or goto left a ctile::range loop while it was traced"));
}
TEST(TraceErrors, TileEscapesItsLoop) {
  expect_here(EXPECT_USER_ERROR(ct::trace(escape_from_loop, "k", {piece(ct::DType::f32, {16}), i64s()}, 1),
                                "still alive after it"));
}
TEST(TraceErrors, FloatMathOnIntegers) {
  expect_here(EXPECT_USER_ERROR(ct::trace(math_on_ints, "k", {piece(ct::DType::i32, {16})}, 1), "floating-point"));
}
TEST(TraceErrors, MmaShapesDisagree) {
  expect_here(EXPECT_USER_ERROR(ct::trace(mma_shapes, "k", {piece(ct::DType::f32, {16, 16})}, 2), "do not agree"));
}
TEST(TraceErrors, MmaElementTypesUnsupported) {
  expect_here(EXPECT_USER_ERROR(ct::trace(mma_types, "k", {piece(ct::DType::i32, {16, 16})}, 2), "unsupported"));
}
TEST(TraceErrors, ReductionAxisOutOfRange) {
  expect_here(EXPECT_USER_ERROR(ct::trace(bad_axis, "k", {piece(ct::DType::f32, {16})}, 1), "out of range"));
}
TEST(TraceErrors, BlockIdBeyondTheGrid) {
  expect_here(EXPECT_USER_ERROR(ct::trace(bad_block_axis, "k", {piece(ct::DType::f32, {16})}, 1),
                                "block_id(1): the grid of this launch has 1 axes"));
}
TEST(TraceErrors, StaticCheckNamesTheCaller) {
  expect_here(EXPECT_USER_ERROR(ct::trace(static_check_fails, "k", {piece(ct::DType::f32, {64})}, 1),
                                "at least 128 elements"));
}
TEST(TraceErrors, ConditionOfWhileAssigns) {
  expect_here(EXPECT_USER_ERROR(ct::trace(while_assigns_in_condition, "k", {piece(ct::DType::f32, {16})}, 1),
                                "condition of ctile::while_ assigns"));
}
TEST(TraceErrors, ReshapeMustKeepTheElementCount) {
  expect_here(EXPECT_USER_ERROR(ct::trace(reshape_count, "k", {piece(ct::DType::f32, {16})}, 1),
                                "different numbers of elements"));
}
TEST(TraceErrors, LoadWindowOfAnotherRank) {
  expect_here(EXPECT_USER_ERROR(
      ct::trace(window_of_another_rank, "k", {piece(ct::DType::f32, {16, 16}), ref(ct::DType::f32, 2)}, 2),
      "load_window: a rank-2 tensor needs a window of rank 2, got [16]"));
}
TEST(TraceErrors, LoadWindowExtentNotAPowerOfTwo) {
  expect_here(EXPECT_USER_ERROR(ct::trace(window_not_pow2, "k", {piece(ct::DType::f32, {16}), ref(ct::DType::f32, 1)}, 1),
                                "power of two"));
}
TEST(TraceErrors, StoreWindowOfAnotherRank) {
  expect_here(EXPECT_USER_ERROR(ct::trace(store_window_of_another_rank, "k", {piece(ct::DType::f32, {16, 16})}, 2),
                                "store_window: a tile of shape [16] into a rank-2 piece; the ranks must agree"));
}
TEST(TraceErrors, BatchedMmaBatchesDiffer) {
  expect_here(EXPECT_USER_ERROR(ct::trace(mma_batches_differ, "k", {piece(ct::DType::f32, {2, 16, 16})}, 3),
                                "mma: shapes [2, 16, 16] @ [4, 16, 16] + [2, 16, 16] do not agree ([P,M,K] @ [P,K,N] + [P,M,N])"));
}
TEST(TraceErrors, MmaOfMixedRanks) {
  expect_here(EXPECT_USER_ERROR(ct::trace(mma_mixed_ranks, "k", {piece(ct::DType::f32, {16, 16})}, 2),
                                "mma needs three rank-2 tiles"));
}
TEST(TraceErrors, CombineFunctionLoads) {
  expect_here(EXPECT_USER_ERROR(ct::trace(combine_loads, "k", {piece(ct::DType::f32, {1}), ref(ct::DType::f32, 1)}, 1),
                                "a memory access (ct.load) is not allowed in a combine function"));
}
TEST(TraceErrors, CombineFunctionCapturesATile) {
  expect_here(EXPECT_USER_ERROR(
      ct::trace(combine_captures, "k",
                {piece(ct::DType::f32, {1}), ref(ct::DType::f32, 1), {Kind::Scalar, ct::DType::f32, 0, {}, {}}}, 1),
      "not a tile from outside it (a lambda capture of f32)"));
}
TEST(TraceErrors, CombineFunctionNestsAReduction) {
  expect_here(EXPECT_USER_ERROR(ct::trace(combine_nested_reduction, "k", {piece(ct::DType::f32, {1}), ref(ct::DType::f32, 1)}, 1),
                                "a nested reduction or scan (ct.reduce) is not allowed in a combine function"));
}
TEST(TraceErrors, CombineFunctionBranches) {
  expect_here(EXPECT_USER_ERROR(ct::trace(combine_branches, "k", {piece(ct::DType::f32, {16}), ref(ct::DType::f32, 1)}, 1),
                                "control flow (ctile::range, ctile::if_, ctile::while_)"));
}
TEST(TraceErrors, CombineFunctionMakesATile) {
  expect_here(EXPECT_USER_ERROR(ct::trace(combine_makes_a_tile, "k", {piece(ct::DType::f32, {1}), ref(ct::DType::f32, 1)}, 1),
                                "a combine function computes on scalars"));
}
TEST(TraceErrors, CombineFunctionAssignsAVariableOutsideIt) {
  expect_here(EXPECT_USER_ERROR(ct::trace(combine_assigns_outside, "k", {piece(ct::DType::f32, {1}), ref(ct::DType::f32, 1)}, 1),
                                "the combine function assigns a tile variable from outside it"));
}
TEST(TraceErrors, ExclusiveCombineScanNeedsAnIdentity) {
  expect_here(EXPECT_USER_ERROR(
      ct::trace(combine_exclusive_without_identity, "k", {piece(ct::DType::f32, {16}), ref(ct::DType::f32, 1)}, 1),
      "needs the function's identity"));
}
TEST(TraceErrors, CombinedTilesOfTwoShapes) {
  expect_here(EXPECT_USER_ERROR(
      ct::trace(combine_tiles_of_two_shapes, "k", {piece(ct::DType::f32, {16}), ref(ct::DType::f32, 1)}, 1),
      "the tiles combined together must have one shape"));
}
TEST(TraceErrors, CombineAxisOutOfRange) {
  expect_here(EXPECT_USER_ERROR(ct::trace(combine_axis_out_of_range, "k", {piece(ct::DType::f32, {16}), ref(ct::DType::f32, 1)}, 1),
                                "ctile::scan: axis 1 is out of range for rank 1"));
}
