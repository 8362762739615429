// ctile::capture / ctile::Graph on the CPU backend: a graph runs as a recorded sequence with the
// semantics of the same operations run eagerly. Results are checked against host references on
// fresh random inputs; misuse is checked for its UserError and message.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <random>
#include <vector>

#include <ctile/ctile.hpp>

#include "test_helpers.hpp"

namespace ct = ctile;
using ct::test::expect_user_error;

namespace {

void acc(ct::Mut<float, 1> z, ct::Ref<float, 1> x) { z.store(z.load() + ct::load_like(x, z)); }
void axpy(ct::Mut<float, 1> y, ct::Scalar<float> a, ct::Ref<float, 1> x) { y.store(a * ct::load_like(x, y) + y.load()); }
void add2(ct::Mut<float, 1> z, ct::Ref<float, 1> x, ct::Ref<float, 1> y) { z.store(ct::load_like(x, z) + ct::load_like(y, z)); }
void shift(ct::Mut<std::int32_t, 1> z, ct::Ref<std::int32_t, 1> x, ct::Scalar<std::int32_t> k) { z.store(ct::load_like(x, z) + k); }
void scale_const(ct::Mut<float, 1> z, ct::Ref<float, 1> x, ct::Const<float> c) { z.store(ct::load_like(x, z) * c.value()); }

using P = ct::Partition<float>;
using S = ct::Shared<float>;

std::vector<float> random_floats(std::size_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_int_distribution<int> d(-8, 8);  // small integers: sums are exact in float
  std::vector<float> v(n);
  for (auto& x : v) x = static_cast<float>(d(g));
  return v;
}

S shared_of(const std::vector<float>& v) {
  return ct::from_host<float>(std::span<const float>(v), {static_cast<std::int64_t>(v.size())}, ct::cpu()).share();
}

unsigned seed() {
  static const unsigned s = std::random_device{}();
  return s;
}

TEST(Graph, AChainReplaysAsItRanEagerly) {
  const std::int64_t n = 1000;
  const auto hx = random_floats(n, seed());
  auto x = shared_of(hx);
  auto z = ct::zeros<float>({n}, ct::cpu()).partition({128});
  constexpr int k = 5;
  auto g = ct::capture(ct::cpu(), [&](ct::Capture& cap) {
    auto f = ct::launch(acc, std::move(z), x).async_on(cap.stream());
    for (int i = 1; i < k; ++i)
      f = std::move(f).then([](std::tuple<P, S>&& t) { return ct::launch(acc, std::move(std::get<0>(t)), std::get<1>(t)); });
    return f;
  });
  EXPECT_EQ(g.nodes(), static_cast<std::size_t>(k));
  EXPECT_EQ(g.kernel_nodes(), static_cast<std::size_t>(k));
  EXPECT_NE(g.kernel_name(0).find("acc"), std::string::npos) << g.kernel_name(0);
  EXPECT_EQ(g.device(), ct::cpu());
  // Nothing ran during the capture.
  for (float v : g.read<0>()) ASSERT_EQ(v, 0.0f);
  auto s = ct::Stream::create(ct::cpu());
  constexpr int replays = 3;
  for (int r = 0; r < replays; ++r) g = std::move(g).replay(s).get();
  const auto out = g.read<0>();
  for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(out[static_cast<std::size_t>(i)], hx[static_cast<std::size_t>(i)] * k * replays) << i;
  // The handles come back and work eagerly.
  auto [z2, x2] = std::move(g).unwrap();
  auto [z3, x3] = ct::launch(acc, std::move(z2), x2).sync();
  const auto after = std::move(z3).unpartition().to_host();
  EXPECT_EQ(after[7], hx[7] * (k * replays + 1));
}

TEST(Graph, ChainedReplaysAreOrderedAndThenWorks) {
  const std::int64_t n = 256;
  const auto hx = random_floats(n, seed() + 1);
  auto x = shared_of(hx);
  auto z = ct::zeros<float>({n}, ct::cpu()).partition({64});
  auto g = ct::capture(ct::cpu(), [&](ct::Capture& cap) { return ct::launch(acc, std::move(z), x).async_on(cap.stream()); });
  auto s = ct::Stream::create(ct::cpu());
  // Replays chained without waiting: each follows the previous one (the graph's tensors' events).
  auto f = std::move(g).replay(s);
  for (int i = 0; i < 9; ++i) f = std::move(f).then([](ct::Graph<std::tuple<P, S>>&& gg) { return std::move(gg); });
  g = std::move(f).get();
  const auto out = g.read<0>();
  for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(out[static_cast<std::size_t>(i)], hx[static_cast<std::size_t>(i)] * 10) << i;
}

// A small pipeline with intermediate buffers, forked lanes and a join, against the same operations
// run eagerly on copies of the inputs.
struct Pipeline {
  S a, b;
  std::vector<ct::Tensor<float>> bufs;
};

Pipeline make_pipeline(const std::vector<float>& ha, const std::vector<float>& hb) {
  Pipeline p{shared_of(ha), shared_of(hb), {}};
  for (int i = 0; i < 4; ++i) p.bufs.push_back(ct::zeros<float>({static_cast<std::int64_t>(ha.size())}, ct::cpu()));
  return p;
}

// t0 = a + b (lane 1), t1 = 2 a + t1 (lane 2, in parallel), t2 = t0 + t1 (joins both), t3 = 0.5 t2 + t3
auto run_pipeline(const ct::Stream& s1, const ct::Stream& s2, Pipeline& p) {
  auto f0 = ct::launch(add2, std::move(p.bufs[0]).partition({64}), p.a, p.b).async_on(s1);
  auto f1 = ct::launch(axpy, std::move(p.bufs[1]).partition({64}), 2.0f, p.a).async_on(s2);
  return ct::join(std::move(f0), std::move(f1)).then_on(s1, [&p](auto&& t) {
    auto t0 = std::move(std::get<0>(std::get<0>(t))).unpartition().share();
    auto t1 = std::move(std::get<0>(std::get<1>(t))).unpartition().share();
    return ct::launch(add2, std::move(p.bufs[2]).partition({64}), t0, t1);
  }).then([&p](auto&& t) {
    auto t2 = std::move(std::get<0>(t)).unpartition().share();
    return ct::launch(axpy, std::move(p.bufs[3]).partition({64}), 0.5f, t2);
  });
}

TEST(Graph, ForkedLanesAndJoinsGiveTheEagerResults) {
  const std::size_t n = 300;
  const auto ha = random_floats(n, seed() + 2), hb = random_floats(n, seed() + 3);
  Pipeline eager = make_pipeline(ha, hb);
  auto s1 = ct::Stream::create(ct::cpu()), s2 = ct::Stream::create(ct::cpu());
  auto [e3, et2, ea] = run_pipeline(s1, s2, eager).get();
  const auto want = std::move(e3).unpartition().to_host();

  Pipeline cap_p = make_pipeline(ha, hb);
  auto g = ct::capture(ct::cpu(), [&](ct::Capture& cap) { return run_pipeline(cap.stream(), cap.fork(), cap_p); });
  EXPECT_EQ(g.kernel_nodes(), 4u);
  // The host reference after r runs: t1 and t3 accumulate (axpy reads its output), so
  // t1 = 2 a r and t3 = sum over k = 1..r of (a + b + 2 a k) / 2.
  auto reference = [&](int r) {
    std::vector<float> t3(n, 0.0f);
    for (std::size_t i = 0; i < n; ++i)
      for (int k = 1; k <= r; ++k) t3[i] += 0.5f * (ha[i] + hb[i] + 2.0f * ha[i] * static_cast<float>(k));
    return t3;
  };
  EXPECT_EQ(want, reference(1));
  g = std::move(g).sync_on(s1);  // one replay equals the eager run
  EXPECT_EQ(g.read<0>(), want);
  g = std::move(g).sync_on(s2);  // any stream of the device
  const auto twice = g.read<0>(), ref2 = reference(2);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(twice[i], ref2[i]) << i;
}

TEST(Graph, ScalarsChangeBetweenReplays) {
  const std::int64_t n = 200;
  const auto hx = random_floats(n, seed() + 4);
  auto x = shared_of(hx);
  auto y = ct::zeros<float>({n}, ct::cpu()).partition({64});
  auto g = ct::capture(ct::cpu(), [&](ct::Capture& cap) { return ct::launch(axpy, std::move(y), 1.0f, x).async_on(cap.stream()); });
  auto s = ct::Stream::create(ct::cpu());
  float total = 0;
  for (float a : {1.0f, 3.0f, -2.0f, 0.5f}) {
    g.set_scalar(0, 1, a);
    total += a;
    g = std::move(g).replay(s).get();
  }
  const auto out = g.read<0>();
  for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(out[static_cast<std::size_t>(i)], total * hx[static_cast<std::size_t>(i)]) << i;
  // Integer scalars, range-checked like a launch's.
  auto xi = ct::arange<std::int32_t>(64, ct::cpu()).share();
  auto zi = ct::zeros<std::int32_t>({64}, ct::cpu()).partition({32});
  auto gi = ct::capture(ct::cpu(), [&](ct::Capture& cap) { return ct::launch(shift, std::move(zi), xi, 0).async_on(cap.stream()); });
  gi.set_scalar(0, 2, 100);
  gi = std::move(gi).sync_on(s);
  EXPECT_EQ(gi.read<0>()[5], 105);
  expect_user_error([&] { gi.set_scalar(0, 2, std::int64_t{1} << 40); }, {"does not fit in i32"});
  expect_user_error([&] { gi.set_scalar(0, 2, 1.5); }, {"floating-point value", "other kind"});
}

TEST(Graph, InputsChangeByCopyingIntoCapturedBuffers) {
  const std::int64_t n = 128;
  auto x = ct::zeros<float>({n}, ct::cpu()).share();  // the graph's input buffer, held only by the graph
  auto z = ct::zeros<float>({n}, ct::cpu()).partition({32});
  auto g = ct::capture(ct::cpu(), [&](ct::Capture& cap) { return ct::launch(acc, std::move(z), std::move(x)).async_on(cap.stream()); });
  auto s = ct::Stream::create(ct::cpu());
  std::vector<float> sum(static_cast<std::size_t>(n), 0.0f);
  for (int step = 0; step < 4; ++step) {
    const auto in = random_floats(static_cast<std::size_t>(n), seed() + 10 + step);
    g.copy_in<1>(std::span<const float>(in));  // ordered after the previous replay
    g = std::move(g).replay(s).get();
    for (std::size_t i = 0; i < in.size(); ++i) sum[i] += in[i];
  }
  EXPECT_EQ(g.read<0>(), sum);
  EXPECT_EQ(g.read<1>(), g.get<1>().to_host());
  expect_user_error([&] { g.copy_in<1>(std::vector<float>(3, 1.0f)); }, {"3 elements given for a tensor of 128"});
  // A Shared input with a holder outside the graph cannot be overwritten under it.
  const S outside = g.get<1>();
  expect_user_error([&] { g.copy_in<1>(std::vector<float>(128, 1.0f)); }, {"1 holder outside the graph"});
}

TEST(Graph, SwappingInATensorOfTheSameSpec) {
  const std::int64_t n = 256;
  const auto hx = random_floats(n, seed() + 20);
  auto x = shared_of(hx);
  auto z = ct::zeros<float>({n}, ct::cpu()).partition({64});
  auto g = ct::capture(ct::cpu(), [&](ct::Capture& cap) { return ct::launch(acc, std::move(z), x).async_on(cap.stream()); });
  auto s = ct::Stream::create(ct::cpu());
  g = std::move(g).sync_on(s);  // z = x
  // Another output: the graph writes it from now on; the old one comes back with its contents.
  P old = g.swap<0>(ct::full<float>({n}, 100.0f, ct::cpu()).partition({64}));
  g = std::move(g).sync_on(s);
  g = std::move(g).sync_on(s);
  const auto out = g.read<0>();
  const auto old_host = std::move(old).unpartition().to_host();
  for (std::int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(out[static_cast<std::size_t>(i)], 100.0f + 2 * hx[static_cast<std::size_t>(i)]) << i;
    ASSERT_EQ(old_host[static_cast<std::size_t>(i)], hx[static_cast<std::size_t>(i)]) << i;
  }
  // Another input.
  const auto hy = random_floats(n, seed() + 21);
  S x_old = g.swap<1>(shared_of(hy));
  EXPECT_EQ(x_old.to_host(), hx);
  g = std::move(g).sync_on(s);
  EXPECT_EQ(g.read<0>()[3], out[3] + hy[3]);
}

TEST(Graph, CopiesAndHostCallbacksAreNodes) {
  const std::int64_t n = 100;
  const auto hx = random_floats(n, seed() + 30);
  auto x = shared_of(hx);
  auto buf = ct::zeros<float>({n}, ct::cpu());
  auto z = ct::zeros<float>({n}, ct::cpu()).partition({32});
  std::atomic<int> calls{0};
  auto g = ct::capture(ct::cpu(), [&](ct::Capture& cap) {
    ct::Stream s = cap.stream();
    (void)s.host([&] { calls.fetch_add(1); });
    // buf <- x (a copy node), then z += buf.
    return ct::copy(std::move(buf), x).async_on(s).then([&](auto&& t) {
      auto b = std::move(std::get<0>(t)).share();
      return ct::launch(acc, std::move(z), b);
    });
  });
  EXPECT_EQ(g.nodes(), 3u);
  EXPECT_EQ(g.kernel_nodes(), 1u);
  EXPECT_EQ(calls.load(), 0);  // nothing ran in the capture
  auto s = ct::Stream::create(ct::cpu());
  g = std::move(g).sync_on(s);
  g = std::move(g).sync_on(s);
  EXPECT_EQ(calls.load(), 2);
  const auto out = g.read<0>();
  for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(out[static_cast<std::size_t>(i)], 2 * hx[static_cast<std::size_t>(i)]) << i;
}

TEST(Graph, ADroppedGraphOrInFlightReplayReleasesItsTensors) {
  const std::int64_t n = 4096;
  auto x = ct::ones<float>({n}, ct::cpu()).share();
  auto z = ct::zeros<float>({n}, ct::cpu()).partition({256});
  auto g = ct::capture(ct::cpu(), [&](ct::Capture& cap) { return ct::launch(acc, std::move(z), x).async_on(cap.stream()); });
  EXPECT_EQ(x.holders(), 2);  // the graph holds a copy
  auto s = ct::Stream::create(ct::cpu());
  { auto f = std::move(g).replay(s); }  // the future (and with it the graph) dropped while in flight
  s.synchronize();
  EXPECT_EQ(x.holders(), 1);
  auto t = std::move(x).unshare();  // the graph's claim is gone with it
  EXPECT_EQ(t.to_host()[0], 1.0f);
}

TEST(Graph, ConstArgumentsArePartOfTheGraph) {
  auto x = ct::arange<float>(64, ct::cpu()).share();
  auto z = ct::zeros<float>({64}, ct::cpu()).partition({64});
  auto g = ct::capture(ct::cpu(), [&](ct::Capture& cap) { return ct::launch(scale_const, std::move(z), x, 3.0f).async_on(cap.stream()); });
  g = std::move(g).sync_on(ct::Stream::create(ct::cpu()));
  EXPECT_EQ(g.read<0>()[10], 30.0f);
  expect_user_error([&] { g.set_scalar(0, 2, 4.0f); }, {"Const value is part of the kernel's specialisation"});
  expect_user_error([&] { g.set_scalar(0, 0, 4.0f); }, {"not a scalar", "Graph::swap"});
  expect_user_error([&] { g.set_scalar(0, 7, 4.0f); }, {"argument 7 does not exist"});
  expect_user_error([&] { g.set_scalar(1, 2, 4.0f); }, {"kernel node 1 does not exist", "1 kernel node"});
}

// ---- misuse ---------------------------------------------------------------------------------

TEST(GraphErrors, AllocationInsideACaptureIsRejected) {
  auto x = ct::ones<float>({64}, ct::cpu()).share();
  auto z = ct::zeros<float>({64}, ct::cpu()).partition({64});
  expect_user_error(
      [&] {
        (void)ct::capture(ct::cpu(), [&](ct::Capture& cap) {
          auto tmp = ct::zeros<float>({64}, ct::cpu());  // allocates
          return ct::launch(acc, std::move(z), x).async_on(cap.stream());
        });
      },
      {"allocation of 256 bytes on cpu:0 inside a graph capture", "allocate every tensor it uses before ctile::capture"});
  EXPECT_TRUE(z.valid());  // the capture failed before z was moved anywhere
  // Copying to another device allocates too.
  expect_user_error([&] { (void)ct::capture(ct::cpu(), [&](ct::Capture& cap) {
                        auto c = x.to(ct::cpu());
                        return ct::launch(acc, std::move(z), x).async_on(cap.stream());
                      }); },
                    {"inside a graph capture"});
  // Outside a capture the same allocation works, and capturing works again after a failed capture.
  auto ok = ct::zeros<float>({64}, ct::cpu());
  auto g = ct::capture(ct::cpu(), [&](ct::Capture& cap) { return ct::launch(acc, std::move(z), x).async_on(cap.stream()); });
  EXPECT_EQ(g.kernel_nodes(), 1u);
}

TEST(GraphErrors, WaitingForCapturedWorkIsRejected) {
  auto x = ct::ones<float>({64}, ct::cpu()).share();
  auto z = ct::zeros<float>({64}, ct::cpu()).partition({64});
  expect_user_error(
      [&] {
        (void)ct::capture(ct::cpu(), [&](ct::Capture& cap) {
          auto f = ct::launch(acc, std::move(z), x).async_on(cap.stream());
          auto t = std::move(f).get();
          return ct::launch(acc, std::move(std::get<0>(t)), x).async_on(cap.stream());
        });
      },
      {"Future::get inside a graph capture"});
  auto z2 = ct::zeros<float>({64}, ct::cpu()).partition({64});
  expect_user_error(
      [&] {
        (void)ct::capture(ct::cpu(), [&](ct::Capture& cap) {
          return ct::launch(acc, std::move(z2), x).async_on(cap.stream()).then([&](std::tuple<P, S>&& t) {
            auto host = std::move(std::get<0>(t)).unpartition();
            (void)host.to_host();  // the captured write has not happened
            return ct::launch(acc, std::move(host).partition({64}), x);
          });
        });
      },
      {"reading it on the host", "graph capture"});
  // After the failed captures the tensor the capture read is as it was.
  EXPECT_EQ(x.to_host()[0], 1.0f);
}

TEST(GraphErrors, CapturedTensorsCannotBeUsedElsewhere) {
  auto x = ct::ones<float>({64}, ct::cpu()).share();
  auto z = ct::zeros<float>({64}, ct::cpu()).partition({64});
  auto eager = ct::Stream::create(ct::cpu());
  // During the capture: work outside the capture that depends on captured work.
  expect_user_error(
      [&] {
        (void)ct::capture(ct::cpu(), [&](ct::Capture& cap) {
          return ct::launch(acc, std::move(z), x).async_on(cap.stream()).then_on(eager, [&](std::tuple<P, S>&& t) {
            return ct::launch(acc, std::move(std::get<0>(t)), x);
          });
        });
      },
      {"outside the capture", "recorded into the graph, not run"});
  // After the capture: the graph owns what it uses. A Shared tensor it reads may be read elsewhere
  // but not taken back for writing.
  auto z2 = ct::zeros<float>({64}, ct::cpu()).partition({64});
  auto g = ct::capture(ct::cpu(), [&](ct::Capture& cap) { return ct::launch(acc, std::move(z2), x).async_on(cap.stream()); });
  auto other = ct::zeros<float>({64}, ct::cpu()).partition({64});
  auto [o2, x2] = ct::launch(acc, std::move(other), x).sync();  // reading it elsewhere is fine
  EXPECT_EQ(std::move(o2).unpartition().to_host()[0], 1.0f);
  S holder = std::move(x2);
  x = S();
  expect_user_error([&] { (void)std::move(holder).unshare(); }, {"owned by a ctile::Graph", "unwrap"});
  {
    auto [gz, gx] = std::move(g).unwrap();
    (void)gz;
  }  // the handles the graph gave back are dropped too
  auto t = std::move(holder).unshare();  // the claim went with the graph
  EXPECT_TRUE(t.valid());
}

TEST(GraphErrors, ReplayWithAWrongSpec) {
  auto x = ct::ones<float>({64}, ct::cpu()).share();
  auto z = ct::zeros<float>({64}, ct::cpu()).partition({32});
  auto g = ct::capture(ct::cpu(), [&](ct::Capture& cap) { return ct::launch(acc, std::move(z), x).async_on(cap.stream()); });
  expect_user_error([&] { (void)g.swap<0>(ct::zeros<float>({128}, ct::cpu()).partition({32})); },
                    {"Graph::swap of a Partition<f32>", "shape [128]", "differs from the captured tensor", "shape [64]"});
  expect_user_error([&] { (void)g.swap<0>(ct::zeros<float>({64}, ct::cpu()).partition({16})); },
                    {"tiles [16]", "tiles [32]"});
  // A misaligned view has other facts: another specialisation.
  auto big = ct::zeros<float>({65}, ct::cpu());
  auto view = std::move(big).slice(0, 1, 65);
  expect_user_error([&] { (void)g.swap<0>(std::move(view).partition({32})); }, {"differs from the captured tensor"});
  expect_user_error([&] { (void)g.swap<1>(ct::ones<float>({32}, ct::cpu()).share()); }, {"Graph::swap of a Shared<f32>"});
  // The graph is unchanged and still replays.
  g = std::move(g).sync_on(ct::Stream::create(ct::cpu()));
  EXPECT_EQ(g.read<0>()[0], 1.0f);
}

TEST(GraphErrors, WhatCannotBeCaptured) {
  auto x = ct::ones<float>({64}, ct::cpu()).share();
  auto fresh = [] { return ct::zeros<float>({64}, ct::cpu()).partition({64}); };
  auto z = fresh();
  expect_user_error([&] { (void)ct::capture(ct::cpu(), [&](ct::Capture& cap) {
                        (void)cap.stream().enqueue([] {});
                        return ct::launch(acc, std::move(z), x).async_on(cap.stream());
                      }); },
                    {"Stream::enqueue on a capturing stream"});
  expect_user_error([&] { (void)ct::capture(ct::cpu(), [&](ct::Capture& cap) {
                        cap.stream().synchronize();
                        return ct::launch(acc, std::move(z), x).async_on(cap.stream());
                      }); },
                    {"Stream::synchronize on a capturing stream"});
  expect_user_error([&] { (void)ct::capture(ct::cpu(), [&](ct::Capture& cap) {
                        return ct::launch(acc, std::move(z), x).race_check().async_on(cap.stream());
                      }); },
                    {"race-checked launch cannot be captured"});
  auto eager = ct::Stream::create(ct::cpu());
  auto z2 = fresh();
  expect_user_error([&] { (void)ct::capture(ct::cpu(), [&](ct::Capture&) { return ct::launch(acc, std::move(z2), x).async_on(eager); }); },
                    {"ctile::capture on cpu:0", "recorded nothing", "cap.stream()"});
  eager.synchronize();
  // Something recorded, but the future returned is of other work.
  auto z2b = fresh();
  expect_user_error([&] { (void)ct::capture(ct::cpu(), [&](ct::Capture& cap) {
                        (void)cap.stream().host([] {});
                        return ct::launch(acc, std::move(z2b), x).async_on(eager);
                      }); },
                    {"future of work that was not captured"});
  eager.synchronize();
  EXPECT_EQ(x.holders(), 1);  // the failed captures left no claim and no copy
  auto z3 = fresh();
  expect_user_error([&] { (void)ct::capture(ct::cpu(), [&](ct::Capture& cap) {
                        return ct::capture(ct::cpu(), [&](ct::Capture& inner) { return ct::launch(acc, std::move(z3), x).async_on(inner.stream()); })
                            .replay(cap.stream());
                      }); },
                    {"captures do not nest"});
  // A capturing stream kept past its capture.
  ct::Stream kept;
  auto z4 = fresh();
  auto g = ct::capture(ct::cpu(), [&](ct::Capture& cap) {
    kept = cap.stream();
    return ct::launch(acc, std::move(z4), x).async_on(cap.stream());
  });
  EXPECT_TRUE(kept.capturing());
  auto z5 = fresh();
  expect_user_error([&] { (void)ct::launch(acc, std::move(z5), x).async_on(kept); }, {"has ended"});
  // Replaying on a capturing stream.
  auto z6 = fresh();
  expect_user_error([&] { (void)ct::capture(ct::cpu(), [&](ct::Capture& cap) {
                        g = std::move(g).replay(cap.stream()).get();
                        return ct::launch(acc, std::move(z6), x).async_on(cap.stream());
                      }); },
                    {"replay of a graph on a capturing stream"});
  EXPECT_TRUE(g.valid());
}

TEST(GraphErrors, MovedFromGraphsAndEmptyCaptures) {
  auto x = ct::ones<float>({64}, ct::cpu()).share();
  auto z = ct::zeros<float>({64}, ct::cpu()).partition({64});
  auto g = ct::capture(ct::cpu(), [&](ct::Capture& cap) { return ct::launch(acc, std::move(z), x).async_on(cap.stream()); });
  auto f = std::move(g).replay(ct::Stream::create(ct::cpu()));
  EXPECT_FALSE(g.valid());
  expect_user_error([&] { (void)g.nodes(); }, {"use of a moved-from Graph"});
  expect_user_error([&] { (void)std::move(g).unwrap(); }, {"use of a moved-from Graph"});
  g = std::move(f).get();
  EXPECT_TRUE(g.valid());
  expect_user_error([&] { (void)ct::capture(ct::cpu(), [&](ct::Capture&) { return ct::Future<int>(std::make_shared<ct::FutureState<int>>(ct::FutureState<int>{ct::Event::ready(), 1, {}})); }); },
                    {"recorded nothing"});
}

}  // namespace
