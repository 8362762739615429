// The examples of docs/language.md, compiled and traced: an API change that breaks the reference's
// examples breaks this test. Keep the two in step (each kernel here is an example there, or the
// snippets of one section put together in a kernel).
#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include <ctile/ctile.hpp>

namespace ct = ctile;
using Kind = ct::detail::ParamSpec::Kind;

namespace {

void hello(ct::Mut<std::int32_t, 2> out) {
  auto [i, j] = out.tile_index();
  out.store((i * 100 + j).to<std::int32_t>());
}
void embed(ct::Mut<float, 2> out, ct::Ref<float, 2> table, ct::Ref<std::int32_t, 1> ids) {
  auto [i, j] = out.tile_index();
  auto row = ct::expand_dims(ids.tiles({16}).load({i}), 1);
  auto col = ct::expand_dims(ct::iota<std::int64_t>(64) + j * 64, 0);
  out.store(table.gather({row, col}));
}
void block_sums(ct::Atomic<float, 1> total, ct::Ref<float, 1> x) {
  (void)total.add({0}, ct::sum(x.tiles({1024}).load({ct::block_id(0)}), 0));
}
void histogram(ct::Atomic<std::int32_t, 1> counts, ct::Ref<std::int32_t, 1> bins) {
  (void)counts.add({bins.tiles({256}).load({ct::block_id(0)})}, 1);
}
void permute_rows(ct::UncheckedMut<float, 1> dst, ct::Ref<float, 1> src, ct::Ref<std::int64_t, 1> to) {
  auto i = ct::block_id(0);
  dst.scatter(ct::unchecked, to.tiles({256}).load({i}), src.tiles({256}).load({i}));
}
void saxpy(ct::Mut<float, 1> y, ct::Ref<float, 1> x, ct::Scalar<float> a) { y.store(a * ct::load_like(x, y) + y.load()); }
void scale_or_shift(ct::Mut<float, 1> out, ct::Ref<float, 1> x, ct::Const<int> mode) {
  auto t = ct::load_like(x, out);
  if (mode == 0) out.store(t * 2.0f); else out.store(t + 2.0f);
}
void misc(ct::Mut<float, 2> out, ct::Ref<float, 2> x, ct::Scalar<std::int64_t> n) {
  auto row = ct::load_like(x, out, -INFINITY);
  auto e = ct::exp(row - ct::max(row, 1, true));
  auto fast = ct::exp(e, ct::approx);
  auto acc = ct::Tile<float>::zeros({16, 64});
  auto half = ct::Tile<ct::bf16>::full({16}, ct::bf16(0.5f));
  auto f = half.to<float>();
  auto p = ct::pow(2.0f, f);
  auto inv = ct::div(1.0f, p, ct::approx);
  auto r = ct::fma(2.0f, inv, 1.0f);
  auto mask = ct::where(r < 3.0f, 1.0f, 0.0f);
  auto m2 = ct::where<float>(r < 3.0f, 1.0, 0.0);
  auto lo = ct::extract(acc, {0, 0}, {8, 64});
  auto col = ct::expand_dims(mask + m2, 1);
  auto total = ct::sum(ct::sum(lo, 1), 0);
  auto ci = ct::iota<std::int32_t>(16);
  auto offsets = ct::cumsum(ci, 0) - ci;
  ct::static_check(out.tile_shape()[1] % 16 == 0, "the column tile must be a multiple of 16");
  ct::if_(ct::block_id(0) == 0, [&] { acc = acc * 2.0f; }, [&] { acc = -acc; });
  auto i = ct::Index::scalar(0);
  ct::while_([&] { return i < n; }, [&] { i = i + 1; });
  (void)fast; (void)col; (void)total; (void)offsets;
  out.store(acc + total);
}

// The math, bit, any/all, scan and random-number entries.
void new_ops(ct::Mut<float, 1> out, ct::Ref<float, 1> xs, ct::Ref<std::int32_t, 1> cs, ct::Scalar<std::int64_t> seed,
             ct::Scalar<float> p) {
  auto x = ct::load_like(xs, out);
  auto counts = ct::load_like(cs, out);
  auto gelu = x * 0.5f * (1.0f + ct::erf(x * 0.70710678f));
  auto silu = x * ct::sigmoid(x);
  auto u = ct::bitcast<std::uint32_t>(x);
  auto neg = ct::bitcast<float>(u ^ 0x80000000u);
  auto bits = ct::popcount(counts) + ct::clz(counts);
  auto offsets = ct::cumsum(counts, 0, ct::exclusive);
  auto suffix_max = ct::cummax(x, 0, ct::reverse);
  auto seen = ct::cummax(x != 0.0f, 0);
  auto all_positive = ct::all(x > 0.0f, 0);
  auto [i] = out.tile_index();
  auto idx = ct::iota<std::int64_t>(256) + i * 256;
  auto keep = ct::rand(seed, idx) >= p;
  auto noise = ct::randn(seed + 1, idx) * 0.1f;
  auto angle = ct::atan2(x, neg);
  (void)bits; (void)offsets; (void)seen; (void)all_positive;
  out.store(ct::where(keep, (gelu + silu + suffix_max + angle) * (1.0f / (1.0f - p)), 0.0f) + noise + ct::log1p(ct::abs(x)) + ct::expm1(x) + ct::erfc(x));
}

// The fp8 entries: the element types' saturating conversions and ct::mma's e4m3 x e5m2 product
// with per-tensor scales.
void fp8_scaled(ct::Mut<float, 2> c, ct::Ref<ct::f8e4m3, 2> a, ct::Ref<ct::f8e5m2, 2> b, ct::Scalar<float> scale_ab) {
  auto [i, j] = c.tile_index();
  auto qa = a.tiles({32, 32});
  auto qb = b.tiles({32, 32});
  auto acc8 = ct::Tile<float>::zeros({32, 32});
  for (auto k : ct::range(qa.count(1))) acc8 = ct::mma(qa.load({i, k}), qb.load({k, j}), acc8);
  auto saturated = ct::Tile<float>::full({32, 32}, 1000.0f).to<ct::f8e4m3>();  // 448
  c.store(acc8 * scale_ab + saturated.to<float>() * 0.0f);
}

ct::detail::ParamSpec piece(ct::DType d, ct::Shape tile) { return {Kind::Piece, d, static_cast<int>(tile.size()), tile, {}}; }
ct::detail::ParamSpec ref(ct::DType d, int rank) { return {Kind::Read, d, rank, {}, {}}; }
ct::detail::ParamSpec atomic(ct::DType d, int rank) { return {Kind::Atomic, d, rank, {}, {}}; }
ct::detail::ParamSpec scalar(ct::DType d) { return {Kind::Scalar, d, 0, {}, {}}; }
ct::detail::ParamSpec constant(int v) { return {Kind::Const, ct::DType::i32, 0, {}, ct::ir::Scalar::of_int(v)}; }

template <class... P>
bool traces(void (*fn)(P...), const std::vector<ct::detail::ParamSpec>& specs, int grid_rank) {
  return ct::trace(fn, "example", specs, grid_rank) != nullptr;
}

}  // namespace

TEST(LanguageReferenceExamples, Trace) {
  using D = ct::DType;
  EXPECT_TRUE(traces(hello, {piece(D::i32, {1, 1})}, 2));
  EXPECT_TRUE(traces(embed, {piece(D::f32, {16, 64}), ref(D::f32, 2), ref(D::i32, 1)}, 2));
  EXPECT_TRUE(traces(block_sums, {atomic(D::f32, 1), ref(D::f32, 1)}, 1));
  EXPECT_TRUE(traces(histogram, {atomic(D::i32, 1), ref(D::i32, 1)}, 1));
  EXPECT_TRUE(traces(permute_rows, {{Kind::Unchecked, D::f32, 1, {}, {}}, ref(D::f32, 1), ref(D::i64, 1)}, 1));
  EXPECT_TRUE(traces(saxpy, {piece(D::f32, {256}), ref(D::f32, 1), scalar(D::f32)}, 1));
  EXPECT_TRUE(traces(scale_or_shift, {piece(D::f32, {256}), ref(D::f32, 1), constant(0)}, 1));
  EXPECT_TRUE(traces(scale_or_shift, {piece(D::f32, {256}), ref(D::f32, 1), constant(1)}, 1));
  EXPECT_TRUE(traces(misc, {piece(D::f32, {16, 64}), ref(D::f32, 2), scalar(D::i64)}, 2));
  EXPECT_TRUE(traces(new_ops, {piece(D::f32, {256}), ref(D::f32, 1), ref(D::i32, 1), scalar(D::i64), scalar(D::f32)}, 1));
  EXPECT_TRUE(traces(fp8_scaled, {piece(D::f32, {32, 32}), ref(D::f8e4m3, 2), ref(D::f8e5m2, 2), scalar(D::f32)}, 2));
}
