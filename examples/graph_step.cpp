// graph_step: a decode-like step (three kernels on two streams and a join) captured once into a
// ctile::Graph and replayed per step with a new input and a new scalar, against the same step
// launched eagerly and a host reference.
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include <ctile/ctile.hpp>

#include "example_util.hpp"

namespace ct = ctile;

void affine(ct::Mut<float, 1> h, ct::Scalar<float> a, ct::Ref<float, 1> x, ct::Ref<float, 1> bias) {
  h.store(a * ct::load_like(x, h) + ct::load_like(bias, h));
}
void scale(ct::Mut<float, 1> r, ct::Scalar<float> c, ct::Ref<float, 1> x) { r.store(c * ct::load_like(x, r)); }
void combine(ct::Mut<float, 1> out, ct::Ref<float, 1> h, ct::Ref<float, 1> r, ct::Ref<float, 1> x) {
  auto hv = ct::load_like(h, out);
  out.store(ct::where(hv > 0.0f, hv, 0.0f) + ct::load_like(r, out) + ct::load_like(x, out));
}

using P = ct::Partition<float>;
using S = ct::Shared<float>;

struct Buffers {
  ct::Tensor<float> h, r, out;
};

Buffers buffers(std::int64_t n) { return {ct::zeros<float>({n}), ct::zeros<float>({n}), ct::zeros<float>({n})}; }

// One step: h = a x + bias and r = x / 2 in parallel (two streams), then out = relu(h) + r + x.
ct::Future<std::tuple<P, S, S, S>> step(const ct::Stream& s1, const ct::Stream& s2, Buffers& b, float a, S x, const S& bias) {
  auto f0 = ct::launch(affine, std::move(b.h).partition({1024}), a, x, bias).async_on(s1);
  auto f1 = ct::launch(scale, std::move(b.r).partition({1024}), 0.5f, x).async_on(s2);
  return ct::join(std::move(f0), std::move(f1)).then([&b, x = std::move(x)](auto&& t) mutable {
    auto h = std::move(std::get<0>(std::get<0>(t))).unpartition().share();
    auto r = std::move(std::get<0>(std::get<1>(t))).unpartition().share();
    return ct::launch(combine, std::move(b.out).partition({1024}), h, r, std::move(x));
  });
}

std::vector<float> random_ints(std::size_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_int_distribution<int> d(-8, 8);  // small integers: every result is exact
  std::vector<float> v(n);
  for (auto& e : v) e = static_cast<float>(d(g));
  return v;
}

int main() {
  const std::int64_t n = 4096;
  const int steps = 200;
  const auto hbias = random_ints(n, 1);
  const auto bias = ct::from_host<float>(std::span<const float>(hbias), {n}).share();
  auto s1 = ct::Stream::create(ct::default_device()), s2 = ct::Stream::create(ct::default_device());

  // Capture the step once. The input x is held by the graph only, so copy_in may overwrite it.
  Buffers gb = buffers(n);
  auto gx = ct::zeros<float>({n}).share();
  auto g = ct::capture(ct::default_device(), [&](ct::Capture& cap) { return step(cap.stream(), cap.fork(), gb, 1.0f, std::move(gx), bias); });
  std::printf("  captured %zu kernel nodes on %s\n", g.kernel_nodes(), ct::describe(g.device()).c_str());

  double worst = 0;
  std::chrono::duration<double, std::micro> eager_time{0}, graph_time{0};
  for (int i = 0; i < steps; ++i) {
    const auto hx = random_ints(n, 100 + static_cast<unsigned>(i));
    const float a = static_cast<float>(i % 7) - 3.0f;
    // Eager: fresh buffers and input each step.
    auto t0 = std::chrono::steady_clock::now();
    Buffers eb = buffers(n);
    auto ex = ct::from_host<float>(std::span<const float>(hx), {n}).share();
    auto [eout, eh, er, ex2] = step(s1, s2, eb, a, ex, bias).get();
    const auto eager = std::move(eout).unpartition().to_host();
    auto t1 = std::chrono::steady_clock::now();
    // The graph: the new input copied into the captured buffer, the new scalar into node 0.
    g.copy_in<3>(std::span<const float>(hx));
    g.set_scalar(0, 1, a);
    g = std::move(g).replay(s1).get();
    const auto replayed = g.read<0>();
    auto t2 = std::chrono::steady_clock::now();
    eager_time += t1 - t0;
    graph_time += t2 - t1;
    std::vector<double> ref(hx.size());
    for (std::size_t k = 0; k < ref.size(); ++k) {
      const double h = double(a) * hx[k] + hbias[k];
      ref[k] = (h > 0 ? h : 0) + 0.5 * hx[k] + hx[k];
    }
    worst = std::max({worst, example::rel_l2(eager, ref), example::rel_l2(replayed, ref), example::rel_l2(replayed, eager)});
  }
  std::printf("  %d steps: eager %.1f us per step, graph replay %.1f us per step (with copies and reads)\n", steps,
              eager_time.count() / steps, graph_time.count() / steps);
  auto [out, h, r, x] = std::move(g).unwrap();  // the handles back; the graph is gone
  return example::verdict("graph_step", worst == 0.0 && out.valid() && x.holders() == 1, worst);
}
