// SIMT launches and the host API's ownership rules: argument checks, futures, streams and their
// dependencies, chaining with tile kernels in both directions, graphs, and raw CUDA kernels.
#include <chrono>
#include <thread>

#include "helpers.hpp"
#include "interop.hpp"
#include "kernels.hpp"

namespace simt_test {
namespace {

TEST(SimtLaunch, MovedFromArguments) {
  ct::Tensor<std::int32_t> gone = ct::zeros<std::int32_t>({4});
  auto keep = std::move(gone);
  EXPECT_USER_ERROR((void)cs::prepare(k_double_own, cs::cover(32), std::move(gone)),  // NOLINT(bugprone-use-after-move)
                    "prepare of SIMT kernel 'k_double_own' (");
  EXPECT_USER_ERROR((void)cs::prepare(k_double_own, cs::cover(32), std::move(gone)),  // NOLINT(bugprone-use-after-move)
                    "argument 0 (DisjointSpan<i32> v): the tensor was moved from");
  EXPECT_USER_ERROR((void)cs::prepare(k_reverse, cs::cover(128), ct::zeros<std::int32_t>({128}), ct::Shared<std::int32_t>()),
                    "argument 1 (Span<i32> in): the Shared handle is empty");
}

TEST(SimtLaunch, LayoutChecks) {
  // A 1-D parameter takes a contiguous tensor of any rank (flattened) ...
  auto [v] = cs::prepare(k_double_own, cs::cover(12), ct::arange<std::int32_t>(12).reshape({3, 4})).sync();
  EXPECT_EQ(v.to_host()[11], 22);
  // ... but not a strided view.
  auto wide = ct::ones<float>({4, 8}).share();
  auto col = wide.slice(1, 2, 3);  // 4 x 1, row stride 8
  EXPECT_USER_ERROR((void)cs::prepare(k_vec4, cs::cover(1), ct::zeros<float>({1}), col),
                    "a 1-D SIMT parameter needs a contiguous tensor");
  // A 2-D parameter needs rank 2 and a contiguous last axis.
  auto flat = ct::ones<float>({20}).share();
  EXPECT_USER_ERROR((void)cs::prepare(k_plus_one_2d, cs::cover_2d(4, 5), ct::zeros<float>({4, 5}), flat),
                    "argument 1 (Span2D<f32> in): a 2-D SIMT parameter needs a rank-2 tensor, got shape [20]");
}

TEST(SimtLaunch, WrittenMemoryMustNotAliasAnotherArgument) {
  std::vector<float> buf(64, 1.0f);
  auto out = ct::Tensor<float>::borrow(ct::unchecked, buf.data(), {64});
  auto in = ct::Tensor<float>::borrow(ct::unchecked, buf.data() + 32, {32}).share();
  EXPECT_USER_ERROR((void)cs::prepare(k_vec4, cs::cover(64), std::move(out), in),
                    "its memory overlaps argument 1; a written argument must not alias another");
}

TEST(SimtLaunch, UniformsThatDoNotFit) {
  auto in = ct::ones<float>({8}).share();
  EXPECT_USER_ERROR((void)cs::prepare(k_uniform_and_fallbacks, cs::cover(8), ct::zeros<double>({8}), ct::zeros<float>({8}),
                                      in, 1.0, std::int64_t{1} << 40),
                    "argument 4 (Uniform<i32> k): the value 1099511627776 does not fit in i32");
}

TEST(SimtLaunch, APreparedLaunchRunsOnlyOnItsDevice) {
  auto p = cs::prepare(k_double_own, cs::cover(8), ct::zeros<std::int32_t>({8}));
  EXPECT_EQ(p.device(), ct::cpu());
  EXPECT_EQ(p.dims().grid, (cs::Dims{1, 1, 1}));
  EXPECT_USER_ERROR((void)std::move(p).async_on(ct::Stream()), "the stream is empty");
}

TEST(SimtLaunch, FutureThenChainsSimtLaunches) {
  auto in = ct::arange<float>(100).share();
  ct::Stream s = ct::Stream::create(ct::cpu());
  auto f = cs::prepare(k_slow_scale, cs::cover(100), ct::zeros<float>({100}), in, std::int64_t{1000}, 3.0f)
               .async_on(s)
               .then([](auto&& r) {
                 auto& [out, in2, spins, scale] = r;
                 return cs::prepare(k_slow_scale, cs::cover(100), ct::zeros<float>({100}), std::move(out).share(),
                                    std::int64_t{0}, 0.5f);
               });
  auto [out2, mid, spins, scale] = std::move(f).get();
  const auto v = out2.to_host();
  for (int i = 0; i < 100; ++i) EXPECT_EQ(v[i], 1.5f * i);
}

TEST(SimtLaunch, DependenciesOrderWorkAcrossStreams) {
  // A slow SIMT writer on stream A, then a reader on stream B launched at once: B must see A's
  // result (it waits for the event A recorded on the storage).
  const int n = 256;
  auto in = ct::ones<float>({n}).share();
  ct::Stream a = ct::Stream::create(ct::cpu()), b = ct::Stream::create(ct::cpu());
  auto fa = cs::prepare(k_slow_scale, cs::cover(n), ct::zeros<float>({n}), in, std::int64_t{200000}, 4.0f).async_on(a);
  auto [mid, in2, s1, sc1] = std::move(fa).get();
  auto shared_mid = std::move(mid).share();
  ct::Stream c = ct::Stream::create(ct::cpu());
  // Writer of `x` on c (slow), reader of `x` on b right after: ordered by x's events.
  auto fx = cs::prepare(k_slow_scale, cs::cover(n), ct::zeros<float>({n}), shared_mid, std::int64_t{200000}, 2.0f).async_on(c);
  auto fy = std::move(fx).then_on(b, [](auto&& r) {
    auto& [x, src, sp, sc] = r;
    return cs::prepare(k_slow_scale, cs::cover(n), ct::zeros<float>({n}), std::move(x).share(), std::int64_t{0}, 1.0f);
  });
  auto [y, x, sp, sc] = std::move(fy).get();
  for (float v : y.to_host()) EXPECT_EQ(v, 8.0f);
}

TEST(SimtInterop, TileThenSimtThenTileAcrossStreams) {
  const int n = 1000;
  auto x = ct::arange<float>(n).share();
  ct::Stream s1 = ct::Stream::create(ct::cpu()), s2 = ct::Stream::create(ct::cpu());
  // tile: z = 2x (on s1) -> SIMT: w = z * 1.5 after a slow start (on s2) -> tile: u = 2w (on s1)
  auto f = ct::launch(tile_double, ct::zeros<float>({n}).partition({128}), x)
               .async_on(s1)
               .then_on(s2,
                        [](auto&& r) {
                          auto& [zp, x2] = r;
                          return cs::prepare(k_slow_scale, cs::cover(n), ct::zeros<float>({n}),
                                             std::move(zp).unpartition().share(), std::int64_t{20000}, 1.5f);
                        })
               .then_on(s1, [](auto&& r) {
                 auto& [w, z, spins, scale] = r;
                 return ct::launch(tile_double, ct::zeros<float>({n}).partition({128}), std::move(w).share());
               });
  auto [u, w] = std::move(f).get();
  const auto v = std::move(u).unpartition().to_host();
  for (int i = 0; i < n; ++i) EXPECT_EQ(v[i], 6.0f * i) << i;
}

TEST(SimtInterop, ASharedInputStaysReadableWhileASimtKernelReadsIt) {
  auto x = ct::arange<float>(64).share();
  auto f = cs::prepare(k_slow_scale, cs::cover(64), ct::zeros<float>({64}), x, std::int64_t{100000}, 1.0f)
               .async_on(ct::Stream::create(ct::cpu()));
  // While the kernel reads x, x cannot be turned back into a mutable tensor.
  auto copy = x;
  EXPECT_USER_ERROR((void)std::move(copy).unshare(), "other holder");
  auto [o, x2, s, sc] = std::move(f).get();
  EXPECT_EQ(o.to_host()[63], 63.0f);
}

TEST(SimtGraph, ASimtLaunchIsAKernelNodeOfAGraph) {
  const std::int64_t n = 1000;
  auto g = capture_tile_then_simt(ct::cpu(), n, ct::arange<float>(n).share(), ct::zeros<float>({n}));
  EXPECT_EQ(g.nodes(), 2u);
  EXPECT_EQ(g.kernel_nodes(), 2u);
  EXPECT_EQ(g.kernel_name(1), "k_slow_scale");
  for (float v : g.read<0>()) ASSERT_EQ(v, 0.0f);  // nothing ran during the capture
  auto s = ct::Stream::create(ct::cpu());
  g = std::move(g).replay(s).get();
  auto out = g.read<0>();
  for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(out[static_cast<std::size_t>(i)], 3.0f * static_cast<float>(i)) << i;
  // A Uniform changes between replays.
  g.set_scalar(1, 3, 2.5f);
  g = std::move(g).replay(s).get();
  out = g.read<0>();
  for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(out[static_cast<std::size_t>(i)], 5.0f * static_cast<float>(i)) << i;
  EXPECT_USER_ERROR(g.set_scalar(1, 0, 1.0f), "argument 0: not a Uniform");
  EXPECT_USER_ERROR(g.set_scalar(1, 3, 1), "an integer value for a parameter of the other kind");
  EXPECT_USER_ERROR(g.set_scalar(1, 2, 1.5), "a floating-point value for a parameter of the other kind");
  EXPECT_USER_ERROR(g.set_scalar(1, 4, 1.0f), "argument 4 does not exist; SIMT kernel 'k_slow_scale'");
  // Another output tensor of the same spec: the old one comes back with what the graph wrote.
  ct::Tensor<float> old = g.swap<0>(ct::zeros<float>({n}));
  EXPECT_EQ(old.to_host()[7], 35.0f);
  g = std::move(g).replay(s).get();
  EXPECT_EQ(g.read<0>()[7], 35.0f);
  // The handles come back and launch eagerly.
  auto [w, z, spins, scale] = std::move(g).unwrap();
  EXPECT_EQ(z.to_host()[7], 14.0f);
  auto [w2, z2, spins2, scale2] = cs::prepare(k_slow_scale, cs::cover(n), std::move(w), z, spins, 1.0f).sync();
  EXPECT_EQ(w2.to_host()[7], 14.0f);
}

TEST(SimtGraph, TheGraphOwnsWhatItsSimtNodesUse) {
  const std::int64_t n = 64;
  auto x = ct::arange<float>(n).share();
  auto g = capture_tile_then_simt(ct::cpu(), n, x, ct::zeros<float>({n}));
  // x is read by the graph: it stays readable outside, but cannot be made mutable under it.
  auto copy = x;
  EXPECT_USER_ERROR((void)std::move(copy).unshare(), "the tensor is owned by a ctile::Graph (a graph reads it)");
  // A SIMT launch outside the capture cannot wait for captured work; a capture cannot allocate.
  ct::Tensor<float> w = ct::zeros<float>({n});
  EXPECT_USER_ERROR((void)ct::capture(ct::cpu(),
                                      [&](ct::Capture& cap) {
                                        return cs::prepare(k_slow_scale, cs::cover(n), ct::zeros<float>({n}), x,
                                                           std::int64_t{1}, 1.0f)
                                            .async_on(cap.stream());
                                      }),
                    "inside a graph capture");
  auto g2 = ct::capture(ct::cpu(), [&](ct::Capture& cap) {
    return cs::prepare(k_slow_scale, cs::cover(n), std::move(w), x, std::int64_t{1}, 2.0f).async_on(cap.stream());
  });
  g2 = std::move(g2).replay(ct::Stream::create(ct::cpu())).get();
  EXPECT_EQ(g2.read<0>()[5], 10.0f);
}

TEST(SimtRaw, FromSourceChecksItsArguments) {
  EXPECT_USER_ERROR((void)cs::RawKernel::from_source(ct::unchecked, "extern \"C\" __global__ void f() {}", ""),
                    "the entry");
  EXPECT_USER_ERROR((void)cs::RawKernel::from_source(ct::unchecked, "extern \"C\" __global__ void f() {}", "g"),
                    "does not mention its entry 'g'");
}

TEST(SimtRaw, RawKernelsRunOnGpusOnly) {
  const auto k = cs::RawKernel::from_source(ct::unchecked, R"(
    extern "C" __global__ void scale(float* y, const float* x, float a, long n) {
      long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
      if (i < n) y[i] = a * x[i];
    })", "scale");
  auto x = ct::ones<float>({10}).share();
  EXPECT_USER_ERROR((void)cs::launch_raw(ct::unchecked, k, cs::grid(1), cs::Dims{32}, 0, ct::zeros<float>({10}), x, 2.0f, 10L),
                    "launch_raw of raw CUDA kernel 'scale': raw CUDA kernels run on GPUs only, and this launch is on cpu:0");
}

TEST(SimtRaw, ACompileErrorIsTheUsers) {
  const auto k = cs::RawKernel::from_source(ct::unchecked, "extern \"C\" __global__ void oops() { nope(); }", "oops");
  EXPECT_USER_ERROR((void)cs::compile_only(k, "sm_80"), "raw CUDA kernel 'oops' does not compile (sm_80)");
}

TEST(SimtRaw, CompileOnlyForBothArchitectures) {
  const auto k = cs::RawKernel::from_source(ct::unchecked, R"(
    extern "C" __global__ void scale(float* y, const float* x, float a, long n) {
      long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
      if (i < n) y[i] = a * x[i];
    })", "scale");
  for (const char* arch : {"sm_80", "sm_90a"}) {
    const cs::CompileResult r = cs::compile_only(k, arch);
    EXPECT_EQ(r.log, "") << arch;
    EXPECT_FALSE(r.cubin.empty());
    EXPECT_NE(r.ptx.find(".entry scale"), std::string::npos);
  }
}

}  // namespace
}  // namespace simt_test
