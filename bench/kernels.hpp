// The kernels measured by the benchmark suite (memory-bound: element-wise, row norms, reductions).
#pragma once

#include <cmath>

#include <ctile/ctile.hpp>

namespace bench {
namespace ct = ctile;

// z = x + y (math in f32).
template <class T>
void add(ct::Mut<T, 1> z, ct::Ref<T, 1> x, ct::Ref<T, 1> y) {
  z.store((ct::load_like(x, z).template to<float>() + ct::load_like(y, z).template to<float>()).template to<T>());
}

// y = a * x + y (math in f32).
template <class T>
void saxpy(ct::Mut<T, 1> y, ct::Scalar<float> a, ct::Ref<T, 1> x) {
  y.store((a * ct::load_like(x, y).template to<float>() + y.load().template to<float>()).template to<T>());
}

// Row softmax; one block per row, the row in one tile (columns past the end load -inf).
inline void softmax(ct::Mut<ct::bf16, 2> out, ct::Ref<ct::bf16, 2> x) {
  auto r = ct::load_like(x, out, ct::bf16(-INFINITY)).to<float>();
  auto e = ct::exp(r - ct::max(r, 1, true));
  out.store((e / ct::sum(e, 1, true)).to<ct::bf16>());
}

// RMSNorm: y = x / sqrt(mean(x^2) + eps) * w.
inline void rms_norm(ct::Mut<ct::bf16, 2> y, ct::Ref<ct::bf16, 2> x, ct::Ref<ct::bf16, 1> w, ct::Scalar<float> eps) {
  const auto [bm, bn] = y.tile_shape();
  auto [row, col] = y.tile_index();
  (void)row;
  auto xf = ct::load_like(x, y).to<float>();
  auto inv = ct::rsqrt(ct::sum(xf * xf, 1, true) / x.extent(1).to<float>() + eps);
  auto wf = w.tiles({bn}).load({col}).to<float>().reshape({bm, bn});
  y.store((xf * inv * wf).to<ct::bf16>());
}

// LayerNorm: y = (x - mean) / sqrt(var + eps) * w + b; padded columns are masked out of the variance.
inline void layer_norm(ct::Mut<ct::bf16, 2> y, ct::Ref<ct::bf16, 2> x, ct::Ref<ct::bf16, 1> w, ct::Ref<ct::bf16, 1> b,
                       ct::Scalar<float> eps) {
  const auto [bm, bn] = y.tile_shape();
  auto [row, col] = y.tile_index();
  (void)row;
  auto xf = ct::load_like(x, y).to<float>();
  auto n = x.extent(1);
  auto nf = n.to<float>();
  auto mean = ct::sum(xf, 1, true) / nf;
  auto inside = (ct::iota<std::int64_t>(bn) + col * bn).reshape({bm, bn}) < n;
  auto d = ct::where(inside, xf - mean, 0.0f);
  auto rstd = ct::rsqrt(ct::sum(d * d, 1, true) / nf + eps);
  auto wf = w.tiles({bn}).load({col}).to<float>().reshape({bm, bn});
  auto bf = b.tiles({bn}).load({col}).to<float>().reshape({bm, bn});
  y.store((d * rstd * wf + bf).to<ct::bf16>());
}

// Sum of a whole tensor: per-block partial sums added atomically.
template <std::int64_t Block>
void sum(ct::Atomic<float, 1> total, ct::Ref<float, 1> x) {
  total.add({0}, ct::sum(x.tiles({Block}).load({ct::block_id(0)}), 0));
}

}  // namespace bench
