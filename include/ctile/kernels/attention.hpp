// ctile kernel library: attention for prefill, O = softmax(Q K^T * scale) V, written the natural
// way in the tile language (the flash-attention algorithm: one pass over K and V with an online
// softmax, so the [S, S] score matrix never leaves the tile block).
//
//   #include <ctile/kernels/attention.hpp>
//   // q [B, Hq, Sq, D], k and v [B, Hkv, Sk, D] (read-only handles, Hq a multiple of Hkv), o [B, Hq, Sq, D].
//   auto [o2, q2, k2, v2, s2] =
//       ctile::kernels::attention_prefill(std::move(o), q, k, v, {.causal = true}).sync();
//   auto out = std::move(o2).unpartition();
//
// The kernel: each tile block owns BM query rows of one (batch, head) pair (its piece of o's
// partition, {1, 1, BM, D}). It walks the key and value blocks of BN rows in a run-time loop,
// computes the scores S = Q K^T with `mma`, and keeps the running row maximum m, the running
// denominator l and the output accumulator as loop-carried tiles: a block's scores raise the
// maximum to m', the old terms are rescaled by 2^(m - m'), and P = 2^(S - m') (the scale is folded
// with log2(e) into one multiplication) adds P V to the accumulator with a second `mma`. The end
// divides by l once. Key columns past Sk and (causal) past the query row are masked to -inf before
// the maximum; a causal block stops its loop at the diagonal (the blocks above it are never read).
//
// Causal masking is top-left aligned, as torch's scaled_dot_product_attention(is_causal=True):
// query row i sees key columns 0..i. Grouped-query attention (GQA/MQA): query head h reads KV head
// h / (Hq / Hkv).
//
// Accuracy: f32 scores, f32 softmax statistics and f32 accumulation of P V with P rounded to T
// (as every flash-attention kernel does), the exponentials by the hardware's approximate exp2
// (relative error about 2^-22, weights below 2^-126 of the row's largest flushed to 0), one
// rounding of the output to T.
#pragma once

#include <cmath>
#include <cstdint>
#include <source_location>
#include <string>
#include <tuple>

#include "ctile/ctile.hpp"

namespace ctile::kernels {

namespace detail {
// One block of bm query rows of query head h, batch b (rows i * bm ...), over the key blocks: the
// online softmax of the prefill kernel. Returns (acc, m, l): O = acc / l, and the rows'
// log-sum-exp is (m + log2 l) ln 2 (m and l are in log2 units).
template <class T, std::int64_t BN, bool Causal>
auto attention_block(const Ref<T, 4>& q, const Ref<T, 4>& k, const Ref<T, 4>& v, const Scalar<float>& scale, const Index& b,
                     const Index& h, const Index& i, std::int64_t bm, std::int64_t d) {
  auto hk = h / (q.extent(1) / k.extent(1));  // the KV head of this query head (GQA)
  auto sk = k.extent(2);
  auto qt = q.tiles({1, 1, bm, d}).load({b, h, i, 0}).reshape({bm, d});
  auto pk = k.tiles({1, 1, BN, d});
  auto pv = v.tiles({1, 1, BN, d});
  auto qscale = scale * 1.4426950408889634f;  // exp(x) = exp2(x log2 e)
  auto m = Tile<float>::full({bm, 1}, -INFINITY);
  auto l = Tile<float>::zeros({bm, 1});
  auto acc = Tile<float>::zeros({bm, d});
  auto rows = (i * bm + iota<std::int64_t>(bm)).reshape({bm, 1});  // this block's query rows
  auto blocks = pk.count(2);
  // Blocks before `whole` need no mask: every key column is inside Sk and (causal) at or left of
  // this block's first query row.
  auto whole = sk / BN;
  if constexpr (Causal) {
    blocks = minimum(blocks, ((i + 1) * bm + (BN - 1)) / BN);  // up to the diagonal
    whole = minimum(whole, (i * bm + 1) / BN);
  }
  for (auto j : range(blocks)) {
    auto kt = pk.load({b, hk, j, 0}).reshape({BN, d});
    auto vt = pv.load({b, hk, j, 0}).reshape({BN, d});
    auto s = mma(qt, transpose(kt), Tile<float>::zeros({bm, BN})) * qscale;
    if_(j >= whole, [&] {  // the diagonal and the last block only
      auto cols = (j * BN + iota<std::int64_t>(BN)).reshape({1, BN});
      auto keep = cols < sk;
      if constexpr (Causal) keep = keep & (cols <= rows);
      s = where(keep, s, -INFINITY);
    });
    auto m2 = maximum(m, max(s, 1, true));
    // The hardware's exp2 (one MUFU.EX2; `full` adds a subnormal range fix-up of three
    // instructions an element): a weight below 2^-126 of the row's largest flushes to 0.
    auto p = exp2(s - m2, approx);
    auto alpha = exp2(m - m2, approx);
    l = l * alpha + sum(p, 1, true);
    acc = mma(p.template to<T>(), vt, acc * alpha);
    m = m2;
  }
  return std::tuple{acc, m, l};
}
}  // namespace detail

// The kernel. T is bf16 or f16 (f32 also runs, off the tensor cores); BN is the key block. Lse:
// empty, or Mut<float, 4> for the optional log-sum-exp output ([B, Hq, Sq, 1], natural log).
template <class T, std::int64_t BN, bool Causal, class... Lse>
void attention_prefill_kernel(Mut<T, 4> o, Ref<T, 4> q, Ref<T, 4> k, Ref<T, 4> v, Scalar<float> scale, Lse... lse) {
  const auto [ob, oh, bm, d] = o.tile_shape();
  auto [b, h, i, z] = o.tile_index();
  auto [acc, m, l] = detail::attention_block<T, BN, Causal>(q, k, v, scale, b, h, i, bm, d);
  o.store((acc / l).template to<T>().reshape({1, 1, bm, d}));
  if constexpr (sizeof...(Lse) == 1)  // log(sum exp(scores)) of each row: m and l are in log2 units
    (lse.store(((m + log2(l)) * 0.6931471805599453f).reshape({1, 1, bm, 1})), ...);
}

struct AttentionOptions {
  bool causal = false;
  float scale = 0;  // 0: 1 / sqrt(D)
  // Query rows per tile block: 64 (one warpgroup) or 128 (two); 0: attention_prefill_block_m's
  // choice for the head dim and the device.
  std::int64_t block_m = 0;
  // Key rows per loop iteration: 64 or 128; 0: attention_prefill_block_n's choice.
  std::int64_t block_n = 0;
};

namespace detail {
[[noreturn]] inline void attention_error(const std::string& what, const std::source_location& loc) {
  throw UserError(std::string("attention_prefill: ") + what, SourceLoc(loc));
}
}  // namespace detail

// The query block of the library's prefill kernel (its piece of o): 128 rows (two warpgroups) at
// head dim 128, and at head dim 64 on sm_90 (wgmma with TMA copies and a producer warpgroup); 64
// rows (one warpgroup) at head dim 256 and at head dim 64 before sm_90. Measured: on the H200
// (docs/perf/2026-12-01-h200/NOTES.md, session 9, cp.async copies) 64 rows at head dim 64 ran two
// tile blocks per SM and 1.2x faster than 128, and 0.85x at head dim 128; on the H100 (session 18,
// docs/perf/2026-12-06-h100/NOTES.md) with TMA and key blocks of 128, 128 rows at head dim 64 ran
// 1.39x (1.21x causal) faster than the 64 rows of cp.async.
// `max_smem`: the shared memory a CTA may use on the device (DeviceLimits; 0: the CPU). 128 rows at
// head dim 128 need 193 KB on sm_80's mma.sync path (padded operands) and 129 KB on sm_90's wgmma
// path: a GPU that gives a CTA less than 200 KB (sm_80: 163 KB) takes 64 rows. `sm`: the device's
// compute capability (0: the CPU, which takes the sm_80 choice).
inline std::int64_t attention_prefill_block_m(std::int64_t head_dim, std::int64_t max_smem = 0, int sm = 0) {
  if (head_dim == 128) return max_smem == 0 || max_smem >= 200 * 1024 ? 128 : 64;
  return head_dim == 64 && sm >= 90 ? 128 : 64;
}

// The key block (rows of K and V per loop iteration): 128 on sm_90 at head dims 64 and 128 (S of
// [64, 128] per warpgroup: wgmma's wider N; measured on the H100, session 18: 1.19x at head dim 128,
// s4096 486 against 408 TFLOP/s), else 64 (on sm_80's mma.sync path 128 spills and compiles twice
// as long, for no gain; at head dim 256 the accumulator alone takes 128 registers a thread).
inline std::int64_t attention_prefill_block_n(std::int64_t head_dim, int sm = 0) {
  return sm >= 90 && head_dim <= 128 ? 128 : 64;
}

namespace detail {
// The query block of a launch: the options' block_m (checked) or the library's choice.
inline std::int64_t prefill_block_m(const AttentionOptions& opt, std::int64_t d, const DeviceLimits& dl,
                                    const std::source_location& loc) {
  if (opt.block_m == 0) return attention_prefill_block_m(d, dl.max_smem_per_block, dl.sm);
  if (opt.block_m != 64 && opt.block_m != 128)
    attention_error("block_m " + std::to_string(opt.block_m) + " is not one the kernel takes (64 or 128; 0: the library's choice)", loc);
  return opt.block_m;
}

// The kernel for the options' key block and mask (Lse: as attention_prefill_kernel's).
template <class T, class... Lse>
auto prefill_kernel(const AttentionOptions& opt, std::int64_t d, const DeviceLimits& dl, const std::source_location& loc) {
  if (opt.block_n != 0 && opt.block_n != 64 && opt.block_n != 128)
    attention_error("block_n " + std::to_string(opt.block_n) + " is not one the kernel takes (64 or 128; 0: the library's choice)", loc);
  if ((opt.block_n ? opt.block_n : attention_prefill_block_n(d, dl.sm)) == 128)
    return opt.causal ? attention_prefill_kernel<T, 128, true, Lse...> : attention_prefill_kernel<T, 128, false, Lse...>;
  return opt.causal ? attention_prefill_kernel<T, 64, true, Lse...> : attention_prefill_kernel<T, 64, false, Lse...>;
}

// The shapes the prefill kernel takes (a UserError at `loc` naming them otherwise).
inline void check_attention_shapes(const Shape& qs, const Shape& ks, const Shape& vs, const Shape& os,
                                   const std::source_location& loc) {
  auto all = [&] {
    return "q " + shape_str(qs) + ", k " + shape_str(ks) + ", v " + shape_str(vs) + ", o " + shape_str(os);
  };
  if (qs.size() != 4 || ks.size() != 4 || vs.size() != 4 || os.size() != 4)
    detail::attention_error("q, k, v and o must be rank 4, [batch, heads, seq, head_dim]; got " + all(), loc);
  if (ks != vs) detail::attention_error("k and v must have one shape; got " + all(), loc);
  if (os != qs) detail::attention_error("o must have the shape of q; got " + all(), loc);
  if (ks[0] != qs[0]) detail::attention_error("k has batch " + std::to_string(ks[0]) + ", q has " + std::to_string(qs[0]) + " (" + all() + ")", loc);
  if (ks[3] != qs[3]) detail::attention_error("k has head_dim " + std::to_string(ks[3]) + ", q has " + std::to_string(qs[3]) + " (" + all() + ")", loc);
  if (ks[1] == 0 || qs[1] % ks[1] != 0)
    detail::attention_error("the query heads (" + std::to_string(qs[1]) + ") must be a multiple of the KV heads (" +
                                std::to_string(ks[1]) + "): " + all(), loc);
  const std::int64_t d = qs[3];
  if (d != 64 && d != 128 && d != 256)
    detail::attention_error("head_dim " + std::to_string(d) + " is not one the kernel takes (64, 128 or 256): " + all(), loc);
  if (ks[2] == 0) detail::attention_error("k and v have no rows (Sk = 0): the softmax has nothing to normalise over", loc);
}
}  // namespace detail

// Checks the shapes and returns the lazy launch of the prefill kernel, which gives back
// (o partitioned in {1, 1, BM, D} pieces, q, k, v, the scale). Head dims 64, 128 and 256.
template <class T>
auto attention_prefill(Tensor<T> o, Shared<T> q, Shared<T> k, Shared<T> v, AttentionOptions opt = {},
                       std::source_location loc = std::source_location::current()) {
  detail::check_attention_shapes(q.shape(), k.shape(), v.shape(), o.shape(), loc);
  const std::int64_t d = q.shape()[3];
  const float scale = opt.scale != 0 ? opt.scale : 1.0f / std::sqrt(static_cast<float>(d));
  const DeviceLimits dl = device_limits(o.device());
  const Shape tile{1, 1, detail::prefill_block_m(opt, d, dl, loc), d};
  return launch(detail::prefill_kernel<T>(opt, d, dl, loc), std::move(o).partition(tile), std::move(q), std::move(k), std::move(v), scale);
}

// The same with the log-sum-exp of every query row written to lse ([B, Hq, Sq, 1], f32, natural
// log: what a backward pass or a merge of attention over several key sets needs). The lazy launch
// gives back (o partitioned, q, k, v, the scale, lse partitioned).
template <class T>
auto attention_prefill(Tensor<T> o, Tensor<float> lse, Shared<T> q, Shared<T> k, Shared<T> v, AttentionOptions opt = {},
                       std::source_location loc = std::source_location::current()) {
  const Shape& qs = q.shape();
  const Shape& ls = lse.shape();
  detail::check_attention_shapes(qs, k.shape(), v.shape(), o.shape(), loc);
  if (ls.size() != 4 || ls[0] != qs[0] || ls[1] != qs[1] || ls[2] != qs[2] || ls[3] != 1)
    detail::attention_error("lse must be [batch, heads, seq, 1] for q " + shape_str(qs) + "; got " + shape_str(ls), loc);
  const std::int64_t d = qs[3];
  const float scale = opt.scale != 0 ? opt.scale : 1.0f / std::sqrt(static_cast<float>(d));
  const DeviceLimits dl = device_limits(o.device());
  const std::int64_t bm = detail::prefill_block_m(opt, d, dl, loc);
  return launch(detail::prefill_kernel<T, Mut<float, 4>>(opt, d, dl, loc), std::move(o).partition({1, 1, bm, d}), std::move(q), std::move(k), std::move(v), scale,
                std::move(lse).partition({1, 1, bm, 1}));
}

}  // namespace ctile::kernels
