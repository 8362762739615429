// The kernels measured by the benchmark suite (memory-bound: element-wise, row norms, a fused
// residual add + RMSNorm, reductions), and the UncheckedMut variants that measure what the safe
// stores cost. Row kernels hold a row in one tile whose width is the next power of two of the
// row's length; loads past the end pad (0, or -inf for softmax) and stores past it are dropped.
#pragma once

#include <cmath>

#include <ctile/ctile.hpp>
#include <ctile/kernels/attention.hpp>

namespace bench {
namespace ct = ctile;

// z = x + y (math in f32).
template <class T>
void add(ct::Mut<T, 1> z, ct::Ref<T, 1> x, ct::Ref<T, 1> y) {
  z.store((ct::load_like(x, z).template to<float>() + ct::load_like(y, z).template to<float>()).template to<T>());
}

// The same add through UncheckedMut: each block scatters its B elements (indices past the end are
// dropped, as a piece store drops them).
template <class T, std::int64_t B>
void add_unchecked(ct::UncheckedMut<T, 1> z, ct::Ref<T, 1> x, ct::Ref<T, 1> y) {
  auto b = ct::block_id(0);
  auto v = x.tiles({B}).load({b}).template to<float>() + y.tiles({B}).load({b}).template to<float>();
  z.scatter(ct::unchecked, ct::iota<std::int64_t>(B) + b * B, v.template to<T>());
}

// y = a * x + y (math in f32).
template <class T>
void saxpy(ct::Mut<T, 1> y, ct::Scalar<float> a, ct::Ref<T, 1> x) {
  y.store((a * ct::load_like(x, y).template to<float>() + y.load().template to<float>()).template to<T>());
}

// Row softmax; one block per row (columns past the end load -inf). The benchmark's mode is the
// approximate one (ex2.approx, an approximate reciprocal of the row sum), like Triton's softmax;
// softmax_accurate is the same kernel in the default precision (expf, IEEE division).
template <class T>
void softmax(ct::Mut<T, 2> out, ct::Ref<T, 2> x) {
  auto r = ct::load_like(x, out, T(-INFINITY)).template to<float>();
  auto e = ct::exp(r - ct::max(r, 1, true), ct::approx);
  out.store(ct::div(e, ct::sum(e, 1, true), ct::approx).template to<T>());
}
template <class T>
void softmax_accurate(ct::Mut<T, 2> out, ct::Ref<T, 2> x) {
  auto r = ct::load_like(x, out, T(-INFINITY)).template to<float>();
  auto e = ct::exp(r - ct::max(r, 1, true));
  out.store((e / ct::sum(e, 1, true)).template to<T>());
}

// The same softmax through UncheckedMut: block b scatters row b (a row of at most BN columns).
template <class T, std::int64_t BN>
void softmax_unchecked(ct::UncheckedMut<T, 2> out, ct::Ref<T, 2> x) {
  auto row = ct::block_id(0);
  auto r = x.tiles({1, BN}).load({row, 0}, T(-INFINITY)).template to<float>();
  auto e = ct::exp(r - ct::max(r, 1, true));
  auto rows = (ct::iota<std::int64_t>(BN) * 0 + row).reshape({1, BN});
  auto cols = ct::iota<std::int64_t>(BN).reshape({1, BN});
  out.scatter(ct::unchecked, {rows, cols}, (e / ct::sum(e, 1, true)).template to<T>());
}

// RMSNorm: y = x / sqrt(mean(x^2) + eps) * w.
template <class T>
void rms_norm(ct::Mut<T, 2> y, ct::Ref<T, 2> x, ct::Ref<T, 1> w, ct::Scalar<float> eps) {
  const auto [bm, bn] = y.tile_shape();
  auto [row, col] = y.tile_index();
  (void)row;
  auto xf = ct::load_like(x, y).template to<float>();
  auto inv = ct::rsqrt(ct::sum(xf * xf, 1, true) / x.extent(1).template to<float>() + eps);
  auto wf = w.tiles({bn}).load({col}).template to<float>().reshape({bm, bn});
  y.store((xf * inv * wf).template to<T>());
}

// LayerNorm: y = (x - mean) / sqrt(var + eps) * w + b; padded columns are masked out of the variance.
template <class T>
void layer_norm(ct::Mut<T, 2> y, ct::Ref<T, 2> x, ct::Ref<T, 1> w, ct::Ref<T, 1> b, ct::Scalar<float> eps) {
  const auto [bm, bn] = y.tile_shape();
  auto [row, col] = y.tile_index();
  (void)row;
  auto xf = ct::load_like(x, y).template to<float>();
  auto n = x.extent(1);
  auto nf = n.template to<float>();
  auto mean = ct::sum(xf, 1, true) / nf;
  auto inside = (ct::iota<std::int64_t>(bn) + col * bn).reshape({bm, bn}) < n;
  auto d = ct::where(inside, xf - mean, 0.0f);
  auto rstd = ct::rsqrt(ct::sum(d * d, 1, true) / nf + eps);
  auto wf = w.tiles({bn}).load({col}).template to<float>().reshape({bm, bn});
  auto bf = b.tiles({bn}).load({col}).template to<float>().reshape({bm, bn});
  y.store((d * rstd * wf + bf).template to<T>());
}

// Residual add + RMSNorm in one kernel, writing both outputs: h = x + r (rounded to T, as the
// unfused version stores it), y = rmsnorm(h) * w. Unfused, this is two launches and h is read back.
template <class T>
void add_rms_norm(ct::Mut<T, 2> h, ct::Mut<T, 2> y, ct::Ref<T, 2> x, ct::Ref<T, 2> r, ct::Ref<T, 1> w,
                  ct::Scalar<float> eps) {
  const auto [bm, bn] = y.tile_shape();
  auto [row, col] = y.tile_index();
  (void)row;
  auto hs = (ct::load_like(x, y).template to<float>() + ct::load_like(r, y).template to<float>()).template to<T>();
  h.store(hs);
  auto hf = hs.template to<float>();
  auto inv = ct::rsqrt(ct::sum(hf * hf, 1, true) / x.extent(1).template to<float>() + eps);
  auto wf = w.tiles({bn}).load({col}).template to<float>().reshape({bm, bn});
  y.store((hf * inv * wf).template to<T>());
}

// Sum of a whole tensor: per-block partial sums added atomically.
template <std::int64_t Block>
void sum(ct::Atomic<float, 1> total, ct::Ref<float, 1> x) {
  total.add({0}, ct::sum(x.tiles({Block}).load({ct::block_id(0)}), 0));
}

// Writes every element: the L2 flush before each timed call (the same as the peers').
inline void fill(ct::Mut<float, 1> z, ct::Scalar<float> v) { z.store(v); }

// C = A @ B with 16-bit inputs, f32 accumulation and C in T: each block owns one tile of C and walks
// K in a run-time loop of BK-wide steps (the K tail pads with 0); the natural kernel of
// examples/matmul.cpp, which the compiler puts on the tensor cores.
//
// product() is the K loop the matmul kernels below share: the f32 bm x bn tile (i, j) of A @ B, or
// of A @ Bt^T when BT (B given as Bt [N, K], K-contiguous).
template <std::int64_t BK, bool BT = false, class TA, class TB>
ct::Tile<float> product(const ct::Ref<TA, 2>& a, const ct::Ref<TB, 2>& b, const auto& i, const auto& j, std::int64_t bm,
                        std::int64_t bn) {
  auto pa = a.tiles({bm, BK});
  auto pb = BT ? b.tiles({bn, BK}) : b.tiles({BK, bn});
  auto acc = ct::Tile<float>::zeros({bm, bn});
  for (auto k : ct::range(pa.count(1))) {
    if constexpr (BT) acc = ct::mma(pa.load({i, k}), ct::transpose(pb.load({j, k})), acc);
    else acc = ct::mma(pa.load({i, k}), pb.load({k, j}), acc);
  }
  return acc;
}

template <class T, std::int64_t BK>
void matmul(ct::Mut<T, 2> c, ct::Ref<T, 2> a, ct::Ref<T, 2> b) {
  const auto [bm, bn] = c.tile_shape();
  auto [i, j] = c.tile_index();
  c.store(product<BK>(a, b, i, j, bm, bn).template to<T>());
}

// The same product stored through UncheckedMut (the unsafe opt-out): each tile block scatters its
// BM x BN tile of C at its rows and columns, indices past the ends dropped (canonicalize makes the
// scatter a window store of the tensor). Launched on C's tiles (.grid({ceil(m / BM), ceil(n / BN)})).
// Issue 8 holds the checked kernel above to within 0.5% of it.
template <class T, std::int64_t BM, std::int64_t BN, std::int64_t BK>
void matmul_unchecked(ct::UncheckedMut<T, 2> c, ct::Ref<T, 2> a, ct::Ref<T, 2> b) {
  auto i = ct::block_id(0), j = ct::block_id(1);
  auto acc = product<BK>(a, b, i, j, BM, BN);
  auto rows = (ct::iota<std::int64_t>(BM) + i * BM).reshape({BM, 1});
  auto cols = (ct::iota<std::int64_t>(BN) + j * BN).reshape({1, BN});
  c.scatter(ct::unchecked, {rows, cols}, acc.template to<T>());
}

// An FP8 product with per-tensor scales, as torch._scaled_mm computes it: C = (A @ B) * scale in
// bf16, A [M, K] and B given as Bt [N, K] (both K-contiguous: the layout 8-bit tensor-core products
// read), products accumulated in f32; scale = scale_a * scale_b. Issue 8's target: >= 0.90x
// torch._scaled_mm at 8192^3 (e4m3).
template <class T8, std::int64_t BK>
void matmul_fp8(ct::Mut<ct::bf16, 2> c, ct::Ref<T8, 2> a, ct::Ref<T8, 2> bt, ct::Scalar<float> scale) {
  const auto [bm, bn] = c.tile_shape();
  auto [i, j] = c.tile_index();
  c.store((product<BK, true>(a, bt, i, j, bm, bn) * scale).template to<ct::bf16>());
}

// The same product with a fused epilogue: C = silu(A @ B + bias) (bias [N], broadcast over the
// rows; silu(h) = h * sigmoid(h)), computed on the f32 accumulator and rounded to T once. Its peer is
// cuBLAS with the bias (torch.addmm) followed by a separate SiLU (issue 8's fused-epilogue target).
template <class T, std::int64_t BK>
void matmul_bias_silu(ct::Mut<T, 2> c, ct::Ref<T, 2> a, ct::Ref<T, 2> b, ct::Ref<T, 1> bias) {
  const auto [bm, bn] = c.tile_shape();
  auto [i, j] = c.tile_index();
  auto acc = product<BK>(a, b, i, j, bm, bn);  // named: C++ leaves the order of a +'s operands (so of the trace) open
  auto h = acc + bias.tiles({bn}).load({j}).template to<float>();
  c.store((h * ct::sigmoid(h)).template to<T>());
}

// Attention prefill with O stored through UncheckedMut (issue 12's checked-vs-unchecked target):
// the library's query block (ctile::kernels::detail::attention_block), its [BM, D] tile scattered to
// its own rows of the whole output, which canonicalize turns into a window store like the checked
// kernel's piece store. Grid [B, Hq, ceil(Sq / BM)].
template <class T, std::int64_t BM, std::int64_t D, std::int64_t BN, bool Causal>
void attention_prefill_unchecked(ct::UncheckedMut<T, 4> o, ct::Ref<T, 4> q, ct::Ref<T, 4> k, ct::Ref<T, 4> v,
                                 ct::Scalar<float> scale) {
  auto b = ct::block_id(0), h = ct::block_id(1), i = ct::block_id(2);
  auto [acc, m, l] = ct::kernels::detail::attention_block<T, BN, Causal>(q, k, v, scale, b, h, i, BM, D);
  (void)m;
  auto rows = (ct::iota<std::int64_t>(BM) + i * BM).reshape({1, 1, BM, 1});
  auto cols = ct::iota<std::int64_t>(D).reshape({1, 1, 1, D});
  o.scatter(ct::unchecked, {b, h, rows, cols}, (acc / l).template to<T>().reshape({1, 1, BM, D}));
}

}  // namespace bench
