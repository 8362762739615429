// warm_up / warm_up_on: argument specs trace and compile a kernel into launch()'s cache, so the
// next launch whose arguments match compiles nothing; other arguments (a misaligned view, another
// Const value) still get their own specialisation. Results are checked against float64 references.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include <ctile/ctile.hpp>

#include "test_helpers.hpp"

namespace ct = ctile;
namespace spec = ctile::spec;

namespace {

void axpy(ct::Mut<float, 1> z, ct::Ref<float, 1> x, ct::Ref<float, 1> y, ct::Scalar<float> a) {
  z.store(a * ct::load_like(x, z) + ct::load_like(y, z));
}

void softmax_rows(ct::Mut<float, 2> out, ct::Ref<float, 2> x) {
  auto row = ct::load_like(x, out, -INFINITY);
  auto e = ct::exp(row - ct::max(row, 1, true));
  out.store(e / ct::sum(e, 1, true));
}

// mode 0: x * s, mode 1: x + s (a trace-time choice).
void scale_or_shift(ct::Mut<float, 2> out, ct::Ref<float, 2> x, ct::Scalar<float> s, ct::Const<int> mode) {
  auto t = ct::load_like(x, out);
  if (mode == 0) out.store(t * s);
  else out.store(t + s);
}

// No Mut parameter: the grid comes from .grid() at launch, so warm_up needs its rank.
void block_sums(ct::Atomic<float, 1> acc, ct::Ref<float, 1> x) {
  acc.add({0}, ct::sum(x.tiles({16}).load({ct::block_id(0)}), 0));
}

void scatter_reverse(ct::UncheckedMut<float, 1> dst, ct::Ref<float, 1> src) {
  auto i = ct::iota<std::int64_t>(16) + ct::block_id(0) * 16;
  auto v = src.gather(i);
  dst.scatter(ct::unchecked, dst.extent(0) - 1 - i, v);
}

double max_abs_diff(const std::vector<float>& got, const std::vector<double>& want) {
  EXPECT_EQ(got.size(), want.size());
  double m = 0;
  for (std::size_t i = 0; i < got.size() && i < want.size(); ++i) m = std::max(m, std::abs(double(got[i]) - want[i]));
  return m;
}

TEST(WarmUp, NextMatchingLaunchIsACacheHit) {
  const std::int64_t n = 3000;
  const auto s0 = ct::detail::kernel_cache_stats(axpy);
  const ct::WarmUpResult w = ct::warm_up(axpy, spec::partition<float>({n}, {512}), spec::shared<float>({n}),
                                         spec::shared<float>({n}), 0.0f);
  EXPECT_FALSE(w.was_cached);
  EXPECT_EQ(w.backend, ct::backend_name(ct::default_device()));
  const auto s1 = ct::detail::kernel_cache_stats(axpy);
  EXPECT_EQ(s1.specialisations, s0.specialisations + 1);
  EXPECT_EQ(s1.compiles, s0.compiles + 1);

  auto x = ct::rand<float>({n}, 11, -1.0, 1.0).share();
  auto y = ct::rand<float>({n}, 12, -1.0, 1.0).share();
  const float a = 1.75f;  // any value: Scalar values are not specialised on
  auto [z, x2, y2, a2] = ct::launch(axpy, ct::zeros<float>({n}).partition({512}), x, y, a).sync();
  const auto s2 = ct::detail::kernel_cache_stats(axpy);
  EXPECT_EQ(s2.compiles, s1.compiles) << "the launch compiled although warm_up prepared its specialisation";
  EXPECT_EQ(s2.hits, s1.hits + 1);

  const auto hx = x.to_host(), hy = y.to_host();
  std::vector<double> ref(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < ref.size(); ++i) ref[i] = double(a) * double(hx[i]) + double(hy[i]);
  EXPECT_LT(max_abs_diff(std::move(z).unpartition().to_host(), ref), 1e-6);

  // A misaligned view of the same shape is another specialisation, compiled by its launch.
  auto xm = ct::rand<float>({n + 1}, 13, -1.0, 1.0).slice(0, 1, n + 1).share();
  auto [zm, xm2, y3, a3] = ct::launch(axpy, ct::zeros<float>({n}).partition({512}), xm, y, a).sync();
  const auto s3 = ct::detail::kernel_cache_stats(axpy);
  EXPECT_EQ(s3.compiles, s2.compiles + 1);
  EXPECT_EQ(s3.specialisations, s1.specialisations + 1);
  const auto hxm = xm.to_host();
  for (std::size_t i = 0; i < ref.size(); ++i) ref[i] = double(a) * double(hxm[i]) + double(hy[i]);
  EXPECT_LT(max_abs_diff(std::move(zm).unpartition().to_host(), ref), 1e-6);

  // Warming up what is there already compiles nothing; a spec with .misaligned() finds the
  // misaligned launch's specialisation.
  EXPECT_TRUE(ct::warm_up(axpy, spec::partition<float>({n}, {512}), spec::shared<float>({n}), spec::shared<float>({n}),
                          -3.0f)
                  .was_cached);
  EXPECT_TRUE(ct::warm_up(axpy, spec::partition<float>({n}, {512}), spec::shared<float>({n}).misaligned(),
                          spec::shared<float>({n}), 0.0f)
                  .was_cached);
  EXPECT_EQ(ct::detail::kernel_cache_stats(axpy).compiles, s3.compiles);
}

TEST(WarmUp, OnTheCpuDeviceAndStreamRowSoftmax) {
  const std::int64_t rows = 37, cols = 200;
  const auto s0 = ct::detail::kernel_cache_stats(softmax_rows);
  const auto w = ct::warm_up_on(ct::cpu(), softmax_rows, spec::partition<float>({rows, cols}, {1, 256}),
                                spec::shared<float>({rows, cols}));
  EXPECT_EQ(w.backend, "cpu");
  EXPECT_FALSE(w.was_cached);
  // Through a stream of the same device: the same cache entry.
  EXPECT_TRUE(ct::warm_up_on(ct::default_stream(ct::cpu()), softmax_rows,
                             spec::partition<float>({rows, cols}, {1, 256}), spec::shared<float>({rows, cols}))
                  .was_cached);
  const auto s1 = ct::detail::kernel_cache_stats(softmax_rows);
  EXPECT_EQ(s1.compiles, s0.compiles + 1);

  auto x = ct::randn<float>({rows, cols}, 21, 0.0, 2.0, ct::cpu()).share();
  auto [o, x2] = ct::launch(softmax_rows, ct::zeros<float>({rows, cols}, ct::cpu()).partition({1, 256}), x)
                     .sync_on(ct::default_stream(ct::cpu()));
  EXPECT_EQ(ct::detail::kernel_cache_stats(softmax_rows).compiles, s1.compiles);

  const auto hx = x.to_host();
  std::vector<double> ref(hx.size());
  for (std::int64_t r = 0; r < rows; ++r) {
    double m = -INFINITY, s = 0;
    const auto at = [&](std::int64_t c) { return double(hx[static_cast<std::size_t>(r * cols + c)]); };
    for (std::int64_t c = 0; c < cols; ++c) m = std::max(m, at(c));
    for (std::int64_t c = 0; c < cols; ++c) s += std::exp(at(c) - m);
    for (std::int64_t c = 0; c < cols; ++c) ref[static_cast<std::size_t>(r * cols + c)] = std::exp(at(c) - m) / s;
  }
  EXPECT_LT(max_abs_diff(std::move(o).unpartition().to_host(), ref), 1e-6);
}

TEST(WarmUp, ConstValuesAreSpecialisedOnScalarValuesAreNot) {
  const std::int64_t rows = 16, cols = 64;
  const auto s0 = ct::detail::kernel_cache_stats(scale_or_shift);
  ct::warm_up(scale_or_shift, spec::partition<float>({rows, cols}, {4, 32}), spec::shared<float>({rows, cols}), 0.0f, 1);
  const auto s1 = ct::detail::kernel_cache_stats(scale_or_shift);
  EXPECT_EQ(s1.compiles, s0.compiles + 1);

  auto x = ct::rand<float>({rows, cols}, 5, -2.0, 2.0).share();
  const auto hx = x.to_host();
  auto [o1, xa, sa, ma] = ct::launch(scale_or_shift, ct::zeros<float>({rows, cols}).partition({4, 32}), x, 0.5f, 1).sync();
  EXPECT_EQ(ct::detail::kernel_cache_stats(scale_or_shift).compiles, s1.compiles);  // Const 1: warmed up
  auto [o0, xb, sb, mb] = ct::launch(scale_or_shift, ct::zeros<float>({rows, cols}).partition({4, 32}), x, 0.5f, 0).sync();
  EXPECT_EQ(ct::detail::kernel_cache_stats(scale_or_shift).compiles, s1.compiles + 1);  // Const 0: not

  std::vector<double> shift(hx.size()), mul(hx.size());
  for (std::size_t i = 0; i < hx.size(); ++i) {
    shift[i] = double(hx[i]) + 0.5;
    mul[i] = double(hx[i]) * 0.5;
  }
  EXPECT_LT(max_abs_diff(std::move(o1).unpartition().to_host(), shift), 1e-6);
  EXPECT_LT(max_abs_diff(std::move(o0).unpartition().to_host(), mul), 1e-6);
}

TEST(WarmUp, KernelWithoutMutTakesTheGridRankFromTheOptions) {
  const std::int64_t n = 64;
  ct::test::expect_user_error(
      [&] { (void)ct::warm_up(block_sums, spec::tensor<float>({1}), spec::shared<float>({n})); },
      {"warm_up of kernel", "block_sums", "grid_rank"});
  const auto s0 = ct::detail::kernel_cache_stats(block_sums);
  const auto w = ct::warm_up(block_sums, ct::WarmUpOptions{.grid_rank = 1}, spec::tensor<float>({1}),
                             spec::shared<float>({n}));
  EXPECT_FALSE(w.was_cached);

  auto x = ct::rand<float>({n}, 3, 0.0, 1.0).share();
  auto [acc, x2] = ct::launch(block_sums, ct::zeros<float>({1}), x).grid({n / 16}).sync();
  const auto s1 = ct::detail::kernel_cache_stats(block_sums);
  EXPECT_EQ(s1.compiles, s0.compiles + 1);  // the warm-up's compile only
  EXPECT_EQ(s1.hits, s0.hits + 1);
  double want = 0;
  for (float v : x.to_host()) want += v;
  EXPECT_NEAR(acc.to_host()[0], want, 1e-4);
}

TEST(WarmUp, UncheckedSpec) {
  const std::int64_t n = 128;
  const auto s0 = ct::detail::kernel_cache_stats(scatter_reverse);
  ct::warm_up(scatter_reverse, ct::WarmUpOptions{.grid_rank = 1}, spec::unchecked<float>({n}), spec::shared<float>({n}));
  auto src = ct::arange<float>(n).share();
  auto [dst, src2] =
      ct::launch(scatter_reverse, ct::unchecked_mut(ct::unchecked, ct::zeros<float>({n})), src).grid({n / 16}).sync();
  EXPECT_EQ(ct::detail::kernel_cache_stats(scatter_reverse).compiles, s0.compiles + 1);
  const auto out = std::move(dst).into_tensor().to_host();
  for (std::int64_t i = 0; i < n; ++i) EXPECT_EQ(out[static_cast<std::size_t>(i)], float(n - 1 - i));
}

TEST(WarmUp, SpecDefaultsAndModifiers) {
  const auto s = spec::shared<float>({4, 48});
  EXPECT_EQ(s.strides(), (ct::Shape{48, 1}));
  EXPECT_TRUE(s.aligned16());
  EXPECT_EQ(s.facts(), (ct::ir::TensorFacts{true, true, 0b10, 0b01, true, 0b10, 0b01}));
  EXPECT_EQ(s.misaligned().facts(), (ct::ir::TensorFacts{false, true, 0b10, 0b01, true, 0b10, 0b01}));
  EXPECT_EQ(s.strides({96, 2}).facts(), (ct::ir::TensorFacts{true, false, 0b10, 0b01, true, 0b10, 0b01}));
  // 1000 columns: whole 16-byte vectors of a 2-byte type, not of 16 elements; rows 16-byte aligned.
  EXPECT_EQ(spec::shared<ct::bf16>({3, 1000}).facts(), (ct::ir::TensorFacts{true, true, 0b00, 0b00, true, 0b10, 0b01}));
  EXPECT_EQ(ct::ir::facts_str(spec::shared<ct::bf16>({3, 1000}).facts()), "{align16, contig, div8=[1], stride8=[0], small}");
  const ct::ir::TensorFacts none{};
  EXPECT_EQ(s.facts(none).facts(), none);
  const auto p = spec::partition<float>({64}, {16});
  EXPECT_EQ(p.tile(), (ct::Shape{16}));
  EXPECT_EQ(p.strides(), (ct::Shape{1}));
}

}  // namespace
