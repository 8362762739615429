// Specialisation facts (ir::TensorFacts): computed from each tensor argument (alignment of element
// 0, contiguity of the last axis, extents and strides divisible by 16), part of the kernel cache
// key, and carried into the traced IR.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <ctile/ctile.hpp>

namespace ct = ctile;
using Facts = ct::ir::TensorFacts;

namespace {

// `small`: every offset fits in 32 bits (true for every tensor these tests allocate). `div8`: the
// extents divisible by 8 but not by 16 (div16 implies div8); `stride8` likewise for strides.
Facts facts(bool aligned16, bool contig, std::uint32_t div16, std::uint32_t stride16, bool small = true,
            std::uint32_t div8 = 0, std::uint32_t stride8 = 0) {
  return Facts{aligned16, contig, div16, stride16, small, static_cast<std::uint8_t>(div16 | div8),
               static_cast<std::uint8_t>(stride16 | stride8)};
}

template <class H>
Facts facts_of(const H& h) {
  return ct::detail::tensor_facts(*h.core(ct::unchecked));
}

std::string str(const Facts& f) { return ct::ir::facts_str(f); }

TEST(TensorFacts, ContiguousFreshTensor) {
  auto t = ct::zeros<float>({32, 48});  // strides [48, 1]; owned memory is 64-byte aligned
  EXPECT_EQ(facts_of(t), facts(true, true, 0b11, 0b01)) << str(facts_of(t));
  auto u = ct::zeros<float>({30, 40});  // neither extent nor the row stride divisible by 16
  EXPECT_EQ(facts_of(u), facts(true, true, 0, 0, true, 0b10, 0b01)) << str(facts_of(u));  // 40 = 8 * 5
  EXPECT_EQ(str(facts_of(u)), "{align16, contig, div8=[1], stride8=[0], small}");
  auto v = ct::zeros<ct::bf16>({16, 300});  // rows 600 bytes apart: no stride fact
  EXPECT_EQ(facts_of(v), facts(true, true, 0b01, 0, true, 0b01)) << str(facts_of(v));
}

TEST(TensorFacts, SliceFromElementOneIsMisaligned) {
  auto f32 = ct::arange<float>(33).slice(0, 1, 33);  // 4 bytes past a 64-byte boundary
  EXPECT_EQ(facts_of(f32), facts(false, true, 0b1, 0)) << str(facts_of(f32));
  auto f32_4 = ct::arange<float>(36).slice(0, 4, 36);  // 16 bytes past: aligned again
  EXPECT_EQ(facts_of(f32_4), facts(true, true, 0b1, 0)) << str(facts_of(f32_4));
  auto f64 = ct::arange<double>(20).slice(0, 1, 17);  // 8 bytes past
  EXPECT_FALSE(facts_of(f64).aligned16);
  auto f64_2 = ct::arange<double>(20).slice(0, 2, 18);
  EXPECT_TRUE(facts_of(f64_2).aligned16);
  auto bf = ct::zeros<ct::bf16>({40}).share().slice(0, 8, 40);  // 16 bytes past, through a Shared view
  EXPECT_EQ(facts_of(bf), facts(true, true, 0b1, 0)) << str(facts_of(bf));
}

TEST(TensorFacts, SlicesOfAMatrix) {
  // Columns [0, 32) of a [8, 40] matrix: strides stay [40, 1].
  auto cols = ct::zeros<float>({8, 40}).slice(1, 0, 32);
  EXPECT_EQ(facts_of(cols), facts(true, true, 0b10, 0, true, 0b01, 0b01)) << str(facts_of(cols));
  // Columns [1, 33): misaligned.
  auto cols1 = ct::zeros<float>({8, 40}).slice(1, 1, 33);
  EXPECT_EQ(facts_of(cols1), facts(false, true, 0b10, 0, true, 0b01, 0b01)) << str(facts_of(cols1));
  // Rows [2, 18) of a [20, 16] matrix: offset 32 elements (128 bytes), row stride 16.
  auto rows = ct::zeros<float>({20, 16}).slice(0, 2, 18);
  EXPECT_EQ(facts_of(rows), facts(true, true, 0b11, 0b01)) << str(facts_of(rows));
  // A partition's view is its tensor's.
  auto p = ct::zeros<float>({64, 32}).partition({16, 16});
  EXPECT_EQ(facts_of(p), facts(true, true, 0b11, 0b01)) << str(facts_of(p));
}

TEST(TensorFacts, StridedAndBroadcastViews) {
  alignas(64) static std::array<float, 256> buf{};
  auto borrow = [&](std::size_t offset, ct::Shape shape, ct::Shape strides) {
    return ct::Tensor<float>::borrow(ct::unchecked, buf.data() + offset, std::move(shape), std::move(strides));
  };
  // A row broadcast along axis 0 (stride 0 counts as divisible by 16).
  EXPECT_EQ(facts_of(borrow(0, {4, 32}, {0, 1})), facts(true, true, 0b10, 0b01));
  // Broadcast along the last axis: not contiguous.
  EXPECT_EQ(facts_of(borrow(0, {32, 4}, {1, 0})), facts(true, false, 0b01, 0));
  // Every other element.
  EXPECT_EQ(facts_of(borrow(0, {16}, {2})), facts(true, false, 0b1, 0));
  // A transposed [16, 8] view of an [8, 16] matrix.
  EXPECT_EQ(facts_of(borrow(4, {16, 8}, {1, 16})), facts(true, false, 0b01, 0, true, 0b10));
  // Extent 1: its stride is never used.
  EXPECT_EQ(facts_of(borrow(1, {1, 8}, {7, 1})), facts(false, true, 0, 0b01, true, 0b10));
  EXPECT_EQ(facts_of(borrow(0, {8, 1}, {1, 5})), facts(true, true, 0, 0, true, 0b01));
  // Rank 3: the last axis never has a stride bit.
  EXPECT_EQ(facts_of(borrow(0, {2, 4, 16}, {64, 16, 1})), facts(true, true, 0b100, 0b011));
}

TEST(TensorFacts, PureComputation) {
  EXPECT_EQ(ct::detail::tensor_facts(true, {0, 17}, {17, 1}), facts(true, true, 0b01, 0));  // extent 0 divides
  EXPECT_EQ(ct::detail::tensor_facts(false, {48, 32, 16}, {512, 16, 1}), facts(false, true, 0b111, 0b011));
  EXPECT_EQ(ct::detail::tensor_facts(true, {5}, {3}), facts(true, false, 0, 0));
}

TEST(TensorFacts, SmallMeansEveryOffsetFitsIn32Bits) {
  constexpr std::int64_t g = std::int64_t{1} << 30;
  // The farthest element of [2, 2^30] is 2^31 - 1 elements away: still small.
  EXPECT_TRUE(ct::detail::tensor_facts(true, {2, g}, {g, 1}).small);
  // [3, 2^30] reaches past 2^31.
  EXPECT_FALSE(ct::detail::tensor_facts(true, {3, g}, {g, 1}).small);
  // One axis of 2^31 elements.
  EXPECT_FALSE(ct::detail::tensor_facts(true, {2 * g}, {1}).small);
  // A stride that overflows the product stays unsmall rather than wrapping around.
  EXPECT_FALSE(ct::detail::tensor_facts(true, {4, 2}, {std::int64_t{1} << 62, 1}).small);
  // Negative and broadcast strides count by magnitude; an empty tensor accesses nothing.
  EXPECT_TRUE(ct::detail::tensor_facts(true, {16, 8}, {-8, 1}).small);
  EXPECT_FALSE(ct::detail::tensor_facts(true, {4 * g, 8}, {0, 1}).small);  // a broadcast extent past 2^31
  EXPECT_TRUE(ct::detail::tensor_facts(true, {0, 4 * g}, {4 * g, 1}).small);
}

TEST(TensorFacts, PrintedForm) {
  EXPECT_EQ(str(Facts{}), "");
  EXPECT_EQ(str(facts(true, false, 0, 0, false)), "{align16}");
  EXPECT_EQ(str(facts(true, true, 0b11, 0b01, false)), "{align16, contig, div16=[0,1], stride16=[0]}");
  EXPECT_EQ(str(facts(false, false, 0b100, 0, false)), "{div16=[2]}");
  EXPECT_EQ(str(facts(false, true, 0, 0b10, false)), "{contig, stride16=[1]}");
  EXPECT_EQ(str(facts(true, true, 0b11, 0b01)), "{align16, contig, div16=[0,1], stride16=[0], small}");
  // div8 lists only the axes divisible by 8 and not by 16.
  EXPECT_EQ(str(facts(true, true, 0b10, 0, true, 0b01)), "{align16, contig, div16=[1], div8=[0], small}");
  // stride8 likewise lists the strides divisible by 8 and not by 16.
  EXPECT_EQ(str(facts(true, true, 0, 0b01, true, 0, 0b10)), "{align16, contig, stride16=[0], stride8=[1], small}");
}

void add_one(ct::Mut<float, 1> z, ct::Ref<float, 1> x) { z.store(ct::load_like(x, z) + 1.0f); }
void scale(ct::Mut<float, 1> z, ct::Ref<float, 1> x, ct::Scalar<float> s) { z.store(ct::load_like(x, z) * s); }

TEST(FactSpecialisation, PlanCarriesTheFactsOfEachArgument) {
  ct::detail::LaunchPlan plan;
  auto x = ct::arange<float>(1025).slice(0, 1, 1025).share();
  auto z = ct::zeros<float>({1024}).partition({256});
  ct::detail::plan_argument<ct::Mut<float, 1>>(plan, "scale", 0, z);
  ct::detail::plan_argument<ct::Ref<float, 1>>(plan, "scale", 1, x);
  ct::detail::plan_argument<ct::Scalar<float>>(plan, "scale", 2, 2.0f);
  ASSERT_EQ(plan.specs.size(), 3u);
  EXPECT_EQ(plan.specs[0].facts, facts(true, true, 0b1, 0));
  EXPECT_EQ(plan.specs[1].facts, facts(false, true, 0b1, 0));
  EXPECT_EQ(plan.specs[2].facts, Facts{});

  // The tracer copies them into the IR's params; the printer shows those that hold.
  const auto k = ct::trace(scale, "scale", plan.specs, 1);
  ASSERT_EQ(k->params.size(), 3u);
  EXPECT_EQ(k->params[0].facts, plan.specs[0].facts);
  EXPECT_EQ(k->params[1].facts, plan.specs[1].facts);
  EXPECT_EQ(k->params[2].facts, Facts{});
  const std::string text = ct::ir::print(*k);
  const std::string line = text.substr(0, text.find('\n'));
  EXPECT_EQ(line,
            "ct.kernel @scale grid_rank 1 (%0: piece<f32, [256]> \"arg0\" {align16, contig, div16=[0], small}, "
            "%1: tensor<f32, rank 1, read> \"arg1\" {contig, div16=[0], small}, %2: f32 \"arg2\") {");
}

TEST(FactSpecialisation, AlignedAndMisalignedViewsAreTwoSpecialisations) {
  const auto before = ct::detail::kernel_cache_stats(add_one);
  const std::int64_t n = 1000;

  // Aligned, contiguous.
  auto [z, x] = ct::launch(add_one, ct::zeros<float>({n}).partition({256}), ct::arange<float>(n).share()).sync();
  auto after1 = ct::detail::kernel_cache_stats(add_one);
  EXPECT_EQ(after1.specialisations, before.specialisations + 1);
  EXPECT_EQ(after1.compiles, before.compiles + 1);

  // The same shapes through views that start at element 1: misaligned, another specialisation.
  auto xm = ct::arange<float>(n + 1).slice(0, 1, n + 1).share();  // values 1..n
  auto zm = ct::zeros<float>({n + 1}).slice(0, 1, n + 1).partition({256});
  EXPECT_EQ(xm.shape(), x.shape());
  auto [zm2, xm2] = ct::launch(add_one, std::move(zm), xm).sync();
  auto after2 = ct::detail::kernel_cache_stats(add_one);
  EXPECT_EQ(after2.specialisations, before.specialisations + 2);
  EXPECT_EQ(after2.compiles, before.compiles + 2);

  // The aligned arguments again: a cache hit.
  auto [z3, x3] = ct::launch(add_one, ct::zeros<float>({n}).partition({256}), x).sync();
  auto after3 = ct::detail::kernel_cache_stats(add_one);
  EXPECT_EQ(after3.specialisations, before.specialisations + 2);
  EXPECT_EQ(after3.compiles, before.compiles + 2);
  EXPECT_EQ(after3.hits, before.hits + 1);
  EXPECT_GE(ct::detail::kernel_cache_size(), after3.specialisations);

  // Both compute the right thing.
  const auto a = std::move(z).unpartition().to_host();
  const auto b = std::move(zm2).unpartition().to_host();
  const auto c = std::move(z3).unpartition().to_host();
  ASSERT_EQ(a.size(), static_cast<std::size_t>(n));
  ASSERT_EQ(b.size(), static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(a[static_cast<std::size_t>(i)], static_cast<float>(i + 1)) << i;
    EXPECT_EQ(b[static_cast<std::size_t>(i)], static_cast<float>(i + 2)) << i;
    EXPECT_EQ(c[static_cast<std::size_t>(i)], static_cast<float>(i + 1)) << i;
  }
}

TEST(FactSpecialisation, ExtentsDivisibleBy16AreAFact) {
  const auto before = ct::detail::kernel_cache_stats(scale);
  auto run = [](std::int64_t n) {
    auto [z, x, s] = ct::launch(scale, ct::zeros<float>({n}).partition({64}), ct::ones<float>({n}).share(), 3.0f).sync();
    const auto out = std::move(z).unpartition().to_host();
    for (float v : out) EXPECT_EQ(v, 3.0f);
  };
  run(512);
  run(1024);  // same facts (both divisible by 16): a hit
  EXPECT_EQ(ct::detail::kernel_cache_stats(scale).specialisations, before.specialisations + 1);
  run(500);   // not divisible: its own specialisation
  EXPECT_EQ(ct::detail::kernel_cache_stats(scale).specialisations, before.specialisations + 2);
}

// ---- Const<T> values in the cache key: compared by bit pattern ---------------------------------

void store_const(ct::Mut<float, 1> z, ct::Const<float> c) { z.store(c.value()); }
void store_reciprocal(ct::Mut<float, 1> z, ct::Const<float> c) { z.store(1.0f / c.value()); }

std::vector<float> run_const(void (*k)(ct::Mut<float, 1>, ct::Const<float>), float c) {
  auto [z, c2] = ct::launch(k, ct::zeros<float>({16}).partition({16}), c).sync();
  (void)c2;
  return std::move(z).unpartition().to_host();
}

TEST(ConstSpecialisation, NaNGetsItsOwnKernelNotAnotherValues) {
  // Compared as doubles, NaN was unordered with everything: the map found 1.0f's kernel for it.
  const auto before = ct::detail::kernel_cache_stats(store_const);
  EXPECT_EQ(run_const(store_const, 1.0f)[0], 1.0f);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto all_nan = [](const std::vector<float>& v) {
    return std::all_of(v.begin(), v.end(), [](float x) { return std::isnan(x); });
  };
  const auto out = run_const(store_const, nan);
  EXPECT_TRUE(all_nan(out)) << "the NaN launch stored " << out[0];
  EXPECT_EQ(ct::detail::kernel_cache_stats(store_const).specialisations, before.specialisations + 2);
  // A second NaN launch finds the NaN kernel (NaN's bit pattern equals itself): a hit.
  const auto mid = ct::detail::kernel_cache_stats(store_const);
  EXPECT_TRUE(all_nan(run_const(store_const, nan)));
  const auto after = ct::detail::kernel_cache_stats(store_const);
  EXPECT_EQ(after.specialisations, mid.specialisations);
  EXPECT_EQ(after.hits, mid.hits + 1);
  EXPECT_EQ(run_const(store_const, 1.0f)[0], 1.0f);  // 1.0f still gets its own
}

TEST(ConstSpecialisation, NegativeZeroIsNotPositiveZero) {
  // 1 / c tells them apart: +inf for +0.0, -inf for -0.0 (they shared one kernel).
  const auto before = ct::detail::kernel_cache_stats(store_reciprocal);
  const auto pos = run_const(store_reciprocal, 0.0f);
  const auto neg = run_const(store_reciprocal, -0.0f);
  EXPECT_EQ(pos[0], std::numeric_limits<float>::infinity());
  EXPECT_EQ(neg[0], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(ct::detail::kernel_cache_stats(store_reciprocal).specialisations, before.specialisations + 2);
}

TEST(ConstSpecialisation, ParamSpecOrderIsStrictWeakWithNaN) {
  using Spec = ct::detail::ParamSpec;
  const auto c = [](double v) {
    return Spec(Spec::Kind::Const, ct::DType::f32, 0, {}, ct::ir::Scalar::of_float(v));
  };
  const Spec nan = c(std::numeric_limits<double>::quiet_NaN()), one = c(1.0), two = c(2.0), pz = c(0.0), nz = c(-0.0);
  EXPECT_TRUE(nan == nan);  // reflexive, unlike NaN == NaN
  EXPECT_FALSE(nan < nan);  // irreflexive
  // Exactly one of a < b, b < a, a == b for every pair (trichotomy: NaN is no longer
  // "equivalent" to every value, which made the map's equivalence non-transitive).
  const Spec all[] = {nan, one, two, pz, nz};
  for (const Spec& a : all)
    for (const Spec& b : all) {
      const int n = int(a < b) + int(b < a) + int(a == b);
      EXPECT_EQ(n, 1) << ct::ir::scalar_str(a.const_value, ct::DType::f32) << " vs "
                      << ct::ir::scalar_str(b.const_value, ct::DType::f32);
    }
  EXPECT_FALSE(pz == nz);
  EXPECT_TRUE(one < two);  // positive finite values keep their numeric order
  // Integer constants are unaffected.
  const Spec i3(Spec::Kind::Const, ct::DType::i32, 0, {}, ct::ir::Scalar::of_int(3));
  const Spec i4(Spec::Kind::Const, ct::DType::i32, 0, {}, ct::ir::Scalar::of_int(4));
  EXPECT_TRUE(i3 < i4);
  EXPECT_FALSE(i3 == i4);
}

}  // namespace
