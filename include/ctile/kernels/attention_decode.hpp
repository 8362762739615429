// ctile kernel library: attention for decode, one query token per sequence over a KV cache,
// o = softmax(q K^T * scale) V, written in the tile language as flash-decoding: the keys of a
// sequence are cut into `splits` ranges, each tile block walks one range of one KV head and
// writes a partial output and its log-sum-exp, and a second kernel merges the ranges.
//
//   #include <ctile/kernels/attention_decode.hpp>
//   // q [B, Hq, D], k and v [B, Hkv, Smax, D] (the cache), lens [B] (keys of each sequence, i64),
//   // o [B, Hq, D]; Hq a multiple of Hkv.
//   auto [o2, q2, k2, v2, l2] = ctile::kernels::attention_decode(std::move(o), q, k, v, lens).sync();
//
// GQA grouping: the G = Hq / Hkv query heads that share a KV head are the rows of one tile block's
// products ([GP, D], GP = 64 by default, with the rows past G zero), so every byte of the cache is
// read once per group, and the products run on the tensor cores (wgmma on sm_90). A sequence reads only its first lens[b] keys (the
// cache past them is never read); a length above Smax reads Smax keys, a length of 0 gives zeros.
//
// Accuracy: as the prefill kernel (f32 scores and statistics, P rounded to T for P V); the partial
// outputs and their log-sum-exps are f32, the merge one more rounding to T.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <source_location>
#include <string>
#include <tuple>

#include "ctile/ctile.hpp"
#include "ctile/kernels/attention.hpp"

namespace ctile::kernels {

// Split kernel: the tile block (b, hk * splits + r) walks key range r of sequence b for KV head hk.
// part [B, Hkv * splits, G, D] gets its normalised partial output, lse [B, Hkv * splits, G, 1]
// the log2-sum-exp of its scores (-inf for an empty range), both through pieces of GP >= G rows
// (the rows past G are not stored); q is [B, Hkv, G, D].
template <class T, std::int64_t BN>
void attention_decode_split_kernel(Mut<float, 4> part, Mut<float, 4> lse, Ref<T, 4> q, Ref<T, 4> k, Ref<T, 4> v,
                                   Ref<std::int64_t, 1> lens, Scalar<float> scale, Scalar<std::int64_t> splits) {
  const auto [pb, ph, gp, d] = part.tile_shape();
  auto [b, hs, z0, z1] = part.tile_index();
  auto hk = hs / splits;
  auto r = hs - hk * splits;
  auto len = minimum(lens.tiles({1}).load({b}).reshape({}), k.extent(2));
  auto blocks = (len + (BN - 1)) / BN;
  auto per = (blocks + (splits - 1)) / splits;
  auto lo = minimum(r * per, blocks);
  auto hi = minimum(lo + per, blocks);
  auto qt = q.tiles({1, 1, gp, d}).load({b, hk, 0, 0}).reshape({gp, d});
  auto pk = k.tiles({1, 1, BN, d});
  auto pv = v.tiles({1, 1, BN, d});
  auto qscale = scale * 1.4426950408889634f;
  auto m = Tile<float>::full({gp, 1}, -INFINITY);
  auto l = Tile<float>::zeros({gp, 1});
  auto acc = Tile<float>::zeros({gp, d});
  for (auto j : range(lo, hi)) {
    auto kt = pk.load({b, hk, j, 0}).reshape({BN, d});
    auto vt = pv.load({b, hk, j, 0}).reshape({BN, d});
    auto s = mma(qt, transpose(kt), Tile<float>::zeros({gp, BN})) * qscale;
    if_(j == blocks - 1, [&] {  // the last block of the sequence: keys past its length
      auto cols = (j * BN + iota<std::int64_t>(BN)).reshape({1, BN});
      s = where(cols < len, s, -INFINITY);
    });
    auto m2 = maximum(m, max(s, 1, true));
    auto p = exp2(s - m2);
    auto alpha = exp2(m - m2);
    l = l * alpha + sum(p, 1, true);
    acc = mma(p.template to<T>(), vt, acc * alpha);
    m = m2;
  }
  part.store(where(l > 0.0f, acc / l, 0.0f).reshape({1, 1, gp, d}));
  lse.store((m + log2(l)).reshape({1, 1, gp, 1}));
}

// Merge kernel: the tile block (b, hk, i) combines the splits of query row i of group (b, hk)
// into o [B, Hkv, G, D], weighting each range's output by 2^(lse - max lse). It reads the splits
// C at a time (C = min(splits, 32), one [C, D] tile per load, splits / C loads): one round trip to
// memory per 32 splits, not one per split.
template <class T, std::int64_t C>
void attention_decode_merge_kernel(Mut<T, 4> o, Ref<float, 4> part, Ref<float, 4> lse, Scalar<std::int64_t> splits) {
  const auto [ob, oh, og, d] = o.tile_shape();
  auto [b, hk, i, z] = o.tile_index();
  auto pp = part.tiles({1, C, 1, d});
  auto pl = lse.tiles({1, C, 1, 1});
  auto chunks = splits / C;
  auto m = Tile<float>::full({1, 1}, -INFINITY);
  auto l = Tile<float>::zeros({1, 1});
  auto acc = Tile<float>::zeros({1, d});
  for (auto c : range(chunks)) {
    auto x = pl.load({b, hk * chunks + c, i, 0}).reshape({C, 1});
    auto y = pp.load({b, hk * chunks + c, i, 0}).reshape({C, d});
    auto m2 = maximum(m, max(x, 0, true));
    auto alpha = where(m == -INFINITY, 0.0f, exp2(m - m2));  // (no range yet: nothing to rescale)
    auto w = where(x == -INFINITY, 0.0f, exp2(x - m2));      // (an empty range weighs nothing)
    l = l * alpha + sum(w, 0, true);
    acc = acc * alpha + sum(y * w, 0, true);
    m = m2;
  }
  o.store(where(l > 0.0f, acc / l, 0.0f).template to<T>().reshape({1, 1, 1, d}));
}

// The merge kernel's splits per load: min(splits, 32) (splits is a power of two).
inline constexpr std::int64_t kAttentionDecodeMergeChunk = 32;

// The group rows chosen when the options give none.
// Measured on the H200 (docs/perf/2026-12-01-h200/NOTES.md, session 9, decode-0933c6f): 64 rows
// (wgmma) 1.03-1.19x the bandwidth of 16 (mma.sync), and NVRTC compiles it in two thirds of the time.
inline constexpr std::int64_t kAttentionDecodeRows = 64;

struct AttentionDecodeOptions {
  float scale = 0;          // 0: 1 / sqrt(D)
  std::int64_t splits = 0;  // key ranges per sequence (a power of two up to 256); 0: chosen
  std::int64_t rows = 0;    // rows of a group's products (a power of two, 16 to 128, at least G); 0: chosen
};

// The rows of a group's products: G = Hq / Hkv padded to a power of two, at least `rows` (16: the
// tensor cores' mma.sync; 64: one warpgroup's wgmma on sm_90, its K and V read from shared memory
// in place, at four times the products' work).
inline std::int64_t attention_decode_group_rows(std::int64_t g, std::int64_t rows = 16) {
  std::int64_t r = rows;
  while (r < g) r *= 2;
  return r;
}

// The splits chosen when the options give none: enough tile blocks for two per SM of a large GPU
// (256 over batch x KV heads), each range at least 4 key blocks of 64 of the cache.
inline std::int64_t attention_decode_splits(std::int64_t batch, std::int64_t kv_heads, std::int64_t cache_len) {
  std::int64_t s = 1;
  while (s < 256 && batch * kv_heads * s < 256 && cache_len / (2 * s) >= 256) s *= 2;
  return s;
}

// The lazy operation attention_decode returns: two launches on one stream (the splits, then the
// merge), handing back (o, q, k, v, lens). The workspace of partial outputs lives until the merge
// has read it.
template <class T>
class AttentionDecode {
 public:
  using Result = std::tuple<Tensor<T>, Shared<T>, Shared<T>, Shared<T>, Shared<std::int64_t>>;
  static constexpr std::int64_t kBlockN = 64;

  AttentionDecode(Tensor<T> o, Shared<T> q, Shared<T> k, Shared<T> v, Shared<std::int64_t> lens, float scale,
                  std::int64_t splits, std::int64_t rows)
      : o_(std::move(o)), q_(std::move(q)), k_(std::move(k)), v_(std::move(v)), lens_(std::move(lens)), scale_(scale),
        splits_(splits), rows_(rows) {}

  Future<Result> async_on(Stream s) && {
    const Shape os = o_.shape();
    const std::int64_t b = os[0], hq = os[1], d = os[2], hkv = k_.shape()[1], g = hq / hkv;
    const std::int64_t gp = rows_, n = splits_;
    const Device dev = o_.device();
    // The workspace holds the G real rows of each group: the split kernel's [GP, D] pieces are
    // stored masked, and the merge reads only those rows (GP = 64 would read 16x the bytes at G = 4).
    auto part = zeros<float>({b, hkv * n, g, d}, dev);
    auto lse = zeros<float>({b, hkv * n, g, 1}, dev);
    Shared<T> q4 = q_.reshape({b, hkv, g, d});
    Tensor<T> o4 = std::move(o_).reshape({b, hkv, g, d});
    auto f = launch(attention_decode_split_kernel<T, kBlockN>, std::move(part).partition({1, 1, gp, d}),
                    std::move(lse).partition({1, 1, gp, 1}), q4, k_, v_, lens_, scale_, n)
                 .async_on(s)
                 .then([o4 = std::move(o4), n, d](auto&& t) mutable {
                   auto p = std::move(std::get<0>(t)).unpartition().share();
                   auto e = std::move(std::get<1>(t)).unpartition().share();
                   return merge(std::move(o4).partition({1, 1, 1, d}), std::move(p), std::move(e), n);
                 });
    auto st = std::move(f).into_state();
    auto out = ctile::detail::make_pooled<FutureState<Result>>();
    out->done = st->done;
    out->stream = st->stream;
    out->payload.emplace(std::move(std::get<0>(*st->payload)).unpartition().reshape(os), std::move(q_), std::move(k_),
                         std::move(v_), std::move(lens_));
    return Future<Result>(std::move(out));
  }
  Result sync() && {
    const Device dev = o_.device();
    return std::move(*this).async_on(default_stream(dev)).get();
  }

 private:
  // The merge launch for `n` splits: the kernel instance that reads min(n, 32) of them per load.
  static auto merge(Partition<T> o, Shared<float> p, Shared<float> e, std::int64_t n) {
    using Out = decltype(launch(attention_decode_merge_kernel<T, 1>, std::move(o), std::move(p), std::move(e), n));
    const std::int64_t c = std::min(n, kAttentionDecodeMergeChunk);
    auto go = [&](auto kernel) -> Out { return launch(kernel, std::move(o), std::move(p), std::move(e), n); };
    switch (c) {
      case 1: return go(attention_decode_merge_kernel<T, 1>);
      case 2: return go(attention_decode_merge_kernel<T, 2>);
      case 4: return go(attention_decode_merge_kernel<T, 4>);
      case 8: return go(attention_decode_merge_kernel<T, 8>);
      case 16: return go(attention_decode_merge_kernel<T, 16>);
      default: return go(attention_decode_merge_kernel<T, 32>);
    }
  }

  Tensor<T> o_;
  Shared<T> q_, k_, v_;
  Shared<std::int64_t> lens_;
  float scale_;
  std::int64_t splits_, rows_;
};

// Checks the shapes and returns the lazy decode operation (`.sync()`, `.async_on(stream)`). Head
// dims 64, 128 and 256.
template <class T>
AttentionDecode<T> attention_decode(Tensor<T> o, Shared<T> q, Shared<T> k, Shared<T> v, Shared<std::int64_t> lens,
                                    AttentionDecodeOptions opt = {},
                                    std::source_location loc = std::source_location::current()) {
  const Shape& qs = q.shape();
  const Shape& ks = k.shape();
  const Shape& vs = v.shape();
  const Shape& os = o.shape();
  const Shape& ls = lens.shape();
  auto all = [&] {
    return "q " + shape_str(qs) + ", k " + shape_str(ks) + ", v " + shape_str(vs) + ", o " + shape_str(os) + ", lens " +
           shape_str(ls);
  };
  auto fail = [&](const std::string& what) {
    throw UserError(std::string("attention_decode: ") + what, SourceLoc(loc));
  };
  if (qs.size() != 3 || os.size() != 3) fail("q and o must be rank 3, [batch, heads, head_dim]; got " + all());
  if (ks.size() != 4 || vs.size() != 4) fail("k and v must be rank 4, [batch, kv_heads, cache_len, head_dim]; got " + all());
  if (ls.size() != 1) fail("lens must be rank 1, [batch]; got " + all());
  if (ks != vs) fail("k and v must have one shape; got " + all());
  if (os != qs) fail("o must have the shape of q; got " + all());
  if (ks[0] != qs[0] || ls[0] != qs[0]) fail("q, k and lens must have one batch; got " + all());
  if (ks[3] != qs[2]) fail("k has head_dim " + std::to_string(ks[3]) + ", q has " + std::to_string(qs[2]) + " (" + all() + ")");
  if (ks[1] == 0 || qs[1] % ks[1] != 0)
    fail("the query heads (" + std::to_string(qs[1]) + ") must be a multiple of the KV heads (" + std::to_string(ks[1]) +
         "): " + all());
  const std::int64_t d = qs[2];
  if (d != 64 && d != 128 && d != 256)
    fail("head_dim " + std::to_string(d) + " is not one the kernel takes (64, 128 or 256): " + all());
  if (ks[2] == 0) fail("k and v have no rows (cache_len = 0): " + all());
  std::int64_t n = opt.splits != 0 ? opt.splits : attention_decode_splits(qs[0], ks[1], ks[2]);
  if (n < 1 || n > 256 || (n & (n - 1)) != 0) fail("splits " + std::to_string(n) + " is not a power of two in [1, 256]");
  const std::int64_t g = qs[1] / ks[1];
  if (opt.rows != 0 && (opt.rows < 16 || opt.rows > 128 || (opt.rows & (opt.rows - 1)) != 0 || opt.rows < g))
    fail("rows " + std::to_string(opt.rows) + " is not a power of two in [16, 128] of at least the group's " +
         std::to_string(g) + " query heads");
  const std::int64_t rows = attention_decode_group_rows(g, opt.rows != 0 ? opt.rows : kAttentionDecodeRows);
  const float scale = opt.scale != 0 ? opt.scale : 1.0f / std::sqrt(static_cast<float>(d));
  return AttentionDecode<T>(std::move(o), std::move(q), std::move(k), std::move(v), std::move(lens), scale, n, rows);
}

}  // namespace ctile::kernels
