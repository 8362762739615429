// ctile kernel library: C = A @ B with the K loop split over tile blocks (split-K), for the skinny
// products of decoding (the projections at M = 16 to 128 tokens): there the output has few tiles
// (M = 16, N = 2560: 40 tiles of 16 x 64) and each would walk all of K alone, leaving most SMs
// idle while the product streams B through memory. Split-K gives every tile of C `splits` tile
// blocks, each over a contiguous range of K, and a second kernel sums their f32 partial products.
//
//   #include <ctile/kernels/matmul_split_k.hpp>
//   // a [M, K] and b [K, N] in bf16 or f16 (read-only handles), c [M, N] in the same type.
//   auto [c2, a2, b2] = ctile::kernels::matmul_split_k(std::move(c), a, b, {.splits = 4}).sync();
//   // The same with the caller's f32 workspace [S, M, N] (no allocation: what a graph capture needs;
//   // matmul_split_k_workspace gives its shape), handed back as the second result.
//   auto ws = ctile::zeros<float>(ctile::kernels::matmul_split_k_workspace(16, 2560, 9728, {.splits = 4}));
//   auto [c3, ws2, a3, b3] = ctile::kernels::matmul_split_k(std::move(c2), std::move(ws), a, b, {.splits = 4}).sync();
//
// The two kernels are written in the tile language, the product as the natural matmul kernel
// (examples/matmul.cpp: `mma` over tile loads in a run-time loop, which the compiler puts on the
// tensor cores), and launched on one stream (a lazy operation, as every launch):
//   1. matmul_split_k_partial: tile block (s, i, j) of the workspace part [S, M, N] (f32) holds
//      the product of tile (i, j) over the K blocks [s * per, min((s + 1) * per, K blocks)) of BK
//      (128 for tiles of 64 and 128 rows, whose wgmma K steps cost about the same per step at
//      twice the depth; 64 for 16 and 32 rows);
//   2. matmul_split_k_sum: each row piece of C (1 x 256) is the sum over s of part's pieces (in
//      order), rounded once to T. S is a trace-time constant, so the S loads are independent and
//      in flight together, and the pieces are small, so the sum has many tile blocks instead of a
//      few that wait for one split after another.
// A split whose range is empty (more splits than K blocks) writes zeros. Accuracy: f32 products
// and f32 sums (S partial sums added in f32, then rounded once), as cuBLAS's split-K.
#pragma once

#include <cstdint>
#include <source_location>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "ctile/ctile.hpp"

namespace ctile::kernels {

// K step of the partial products: 64 for tiles of 16 and 32 rows (mma.sync), 128 for 64 and 128
// rows (wgmma) up to 64 x 128 or 128 x 64 elements; 64 for 128 x 128 and larger tiles, whose
// rings at K steps of 128 do not fit a CTA's shared memory (263 KB at 128 x 128).
inline constexpr std::int64_t kSplitKBlockK = 64;
inline constexpr std::int64_t kSplitKWideBlockK = 128;
inline std::int64_t matmul_split_k_block_k(std::int64_t block_m, std::int64_t block_n = 64) {
  return block_m >= 64 && block_m * block_n <= 64 * 128 ? kSplitKWideBlockK : kSplitKBlockK;
}

// The tile of C the sum kernel writes: a row piece of 256 columns (of N rounded up to a power of
// two when narrower), so that even 16 rows give the sum many tile blocks.
inline constexpr std::int64_t kSplitKSumCols = 256;
inline std::int64_t matmul_split_k_sum_cols(std::int64_t n) {
  std::int64_t c = 1;
  while (c < n && c < kSplitKSumCols) c *= 2;
  return c;
}

template <class T, std::int64_t BK>
void matmul_split_k_partial(Mut<float, 3> part, Ref<T, 2> a, Ref<T, 2> b, Scalar<std::int64_t> per) {
  const auto [one, bm, bn] = part.tile_shape();
  auto [s, i, j] = part.tile_index();
  auto pa = a.tiles({bm, BK});
  auto pb = b.tiles({BK, bn});
  auto first = s * per;
  auto last = minimum(first + per, pa.count(1));
  auto acc = Tile<float>::zeros({bm, bn});
  for (auto k : range(first, last)) acc = mma(pa.load({i, k}), pb.load({k, j}), acc);
  part.store(acc.reshape({1, bm, bn}));
}

// (The splits in a trace-time loop of element-wise adds, `splits` being the workspace's first
// extent: independent loads, none waiting for the previous one's sum. A reduction over a leading
// axis of the tile would exchange the partial sums through shared memory.)
template <class T>
void matmul_split_k_sum(Mut<T, 2> c, Ref<float, 3> part, Const<std::int64_t> splits) {
  const auto [bm, bn] = c.tile_shape();
  auto [i, j] = c.tile_index();
  auto pp = part.tiles({1, bm, bn});
  auto acc = pp.load({0, i, j}).reshape({bm, bn});
  for (std::int64_t s = 1; s < splits.value(); ++s) acc = acc + pp.load({s, i, j}).reshape({bm, bn});
  c.store(acc.template to<T>());
}

struct SplitKOptions {
  std::int64_t splits = 0;   // K ranges per tile of C: a power of two in [1, 16]; 0: matmul_split_k_splits
  std::int64_t block_m = 0;  // rows of a tile of C: 16, 32, 64 or 128; 0: matmul_split_k_block_m
  std::int64_t block_n = 0;  // columns: 64, 128 or 256; 0: 64 for block_m 16 or 32, else 128
  std::int64_t block_k = 0;  // K step: 64 or 128; 0: matmul_split_k_block_k(block_m, block_n)
};

// The tile rows chosen when the options give none: the smallest of 16, 64 and 128 that covers M
// (16: mma.sync tiles of one warp's rows; 64 and 128: one and two warpgroups of wgmma on sm_90).
inline std::int64_t matmul_split_k_block_m(std::int64_t m) { return m <= 16 ? 16 : m <= 64 ? 64 : 128; }

// The splits chosen when the options give none: doubled while the tile blocks are fewer than two
// per SM of a large GPU (264) and each split keeps at least 8 K blocks of bk (0: the default K step
// of bm rows).
inline std::int64_t matmul_split_k_splits(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t bm,
                                          std::int64_t bn, std::int64_t bk = 0) {
  const std::int64_t tiles = ceil_div(m, bm) * ceil_div(n, bn), kb = ceil_div(k, bk ? bk : matmul_split_k_block_k(bm, bn));
  std::int64_t s = 1;
  while (s < 16 && tiles * s < 264 && kb / (2 * s) >= 8) s *= 2;
  return s;
}

// The lazy operation matmul_split_k returns: the partial products, then their sum, on one stream,
// handing back (c, a, b), or (c, workspace, a, b) with the caller's workspace (else allocated here,
// it lives until the sum has read it).
template <class T, bool CallersWorkspace = false>
class MatmulSplitK {
 public:
  using Result = std::conditional_t<CallersWorkspace, std::tuple<Tensor<T>, Tensor<float>, Shared<T>, Shared<T>>,
                                    std::tuple<Tensor<T>, Shared<T>, Shared<T>>>;

  MatmulSplitK(Tensor<T> c, std::optional<Tensor<float>> ws, Shared<T> a, Shared<T> b, std::int64_t splits, std::int64_t bm,
               std::int64_t bn, std::int64_t bk)
      : c_(std::move(c)), ws_(std::move(ws)), a_(std::move(a)), b_(std::move(b)), splits_(splits), bm_(bm), bn_(bn), bk_(bk) {}

  Future<Result> async_on(Stream s) && {
    const std::int64_t m = a_.shape()[0], k = a_.shape()[1], n = b_.shape()[1], sp = splits_, bm = bm_, bn = bn_;
    const std::int64_t per = ceil_div(ceil_div(k, bk_), sp);
    // Every split writes each of its tiles (zeros for an empty range): the workspace needs no fill.
    Tensor<float> part = CallersWorkspace ? std::move(*ws_) : zeros<float>({sp, m, n}, c_.device());
    const auto partial = bk_ == kSplitKWideBlockK ? &matmul_split_k_partial<T, kSplitKWideBlockK> : &matmul_split_k_partial<T, kSplitKBlockK>;
    auto f = launch(partial, std::move(part).partition({1, bm, bn}), a_, b_, per)
                 .async_on(s)
                 .then([c = std::move(c_), sp, cols = matmul_split_k_sum_cols(n)](auto&& t) mutable {
                   return launch(matmul_split_k_sum<T>, std::move(c).partition({1, cols}),
                                 std::move(std::get<0>(t)).unpartition().share(), sp);
                 });
    auto st = std::move(f).into_state();
    auto out = ctile::detail::make_pooled<FutureState<Result>>();
    out->done = st->done;
    out->stream = st->stream;
    if constexpr (CallersWorkspace)  // the sum still reads it: the payload is the caller's once it is done
      out->payload.emplace(std::move(std::get<0>(*st->payload)).unpartition(),
                           std::move(std::get<1>(*st->payload)).unshare(unchecked), std::move(a_), std::move(b_));
    else
      out->payload.emplace(std::move(std::get<0>(*st->payload)).unpartition(), std::move(a_), std::move(b_));
    return Future<Result>(std::move(out));
  }
  Result sync() && {
    const Device dev = c_.device();
    return std::move(*this).async_on(default_stream(dev)).get();
  }

 private:
  Tensor<T> c_;
  std::optional<Tensor<float>> ws_;
  Shared<T> a_, b_;
  std::int64_t splits_, bm_, bn_, bk_;
};

namespace detail {
// The tile rows, tile columns and splits of a product of a [M, K] and b [K, N] with these options
// (the library's choices where they give none); a UserError at `loc` for an option out of range.
struct SplitKPlan {
  std::int64_t bm, bn, splits, bk;
};
inline SplitKPlan plan_split_k(std::int64_t m, std::int64_t n, std::int64_t k, const SplitKOptions& opt, const std::string& shapes,
                               std::source_location loc) {
  auto fail = [&](const std::string& what) { throw UserError("matmul_split_k: " + what + " (" + shapes + ")", SourceLoc(loc)); };
  auto pow2 = [](std::int64_t x, std::int64_t lo, std::int64_t hi) { return x >= lo && x <= hi && (x & (x - 1)) == 0; };
  if (opt.block_m != 0 && !pow2(opt.block_m, 16, 128)) fail("block_m " + std::to_string(opt.block_m) + " is not 16, 32, 64 or 128");
  if (opt.block_n != 0 && !pow2(opt.block_n, 64, 256)) fail("block_n " + std::to_string(opt.block_n) + " is not 64, 128 or 256");
  if (opt.splits != 0 && !pow2(opt.splits, 1, 16)) fail("splits " + std::to_string(opt.splits) + " is not a power of two in [1, 16]");
  if (opt.block_k != 0 && opt.block_k != kSplitKBlockK && opt.block_k != kSplitKWideBlockK)
    fail("block_k " + std::to_string(opt.block_k) + " is not 64 or 128");
  const std::int64_t bm = opt.block_m ? opt.block_m : matmul_split_k_block_m(m);
  const std::int64_t bn = opt.block_n ? opt.block_n : (bm <= 32 ? 64 : 128);
  const std::int64_t bk = opt.block_k ? opt.block_k : matmul_split_k_block_k(bm, bn);
  return {bm, bn, opt.splits ? opt.splits : matmul_split_k_splits(m, n, k, bm, bn, bk), bk};
}
}  // namespace detail

// The shape of the f32 workspace a split-K product of a [M, K] and b [K, N] with these options
// takes: [splits, M, N].
inline Shape matmul_split_k_workspace(std::int64_t m, std::int64_t n, std::int64_t k, SplitKOptions opt = {},
                                      std::source_location loc = std::source_location::current()) {
  const auto p = detail::plan_split_k(m, n, k, opt, "M " + std::to_string(m) + ", N " + std::to_string(n) + ", K " + std::to_string(k), loc);
  return {p.splits, m, n};
}

namespace detail {
template <class T>
SplitKPlan check_split_k(const Tensor<T>& c, const Shared<T>& a, const Shared<T>& b, const SplitKOptions& opt, std::source_location loc) {
  static_assert(!std::is_same_v<T, f8e4m3> && !std::is_same_v<T, f8e5m2>,
                "matmul_split_k: fp8 operands need per-tensor scales: use ctile::kernels::matmul_fp8(c, a, bt, scale_a, scale_b)");
  const Shape &as = a.shape(), &bs = b.shape(), &cs = c.shape();
  const std::string shapes = "a " + shape_str(as) + ", b " + shape_str(bs) + ", c " + shape_str(cs);
  auto fail = [&](const std::string& what) { throw UserError("matmul_split_k: " + what + " (" + shapes + ")", SourceLoc(loc)); };
  if (as.size() != 2 || bs.size() != 2 || cs.size() != 2) fail("a, b and c must be rank 2, a [M, K], b [K, N], c [M, N]");
  if (as[1] != bs[0]) fail("a has K = " + std::to_string(as[1]) + ", b has " + std::to_string(bs[0]) + " rows");
  if (cs[0] != as[0] || cs[1] != bs[1]) fail("c must be [M, N] = [" + std::to_string(as[0]) + ", " + std::to_string(bs[1]) + "]");
  return plan_split_k(as[0], bs[1], as[1], opt, shapes, loc);
}
}  // namespace detail

// Checks the shapes and options and returns the lazy split-K product (`.sync()`, `.async_on(s)`);
// it allocates its f32 workspace.
template <class T>
MatmulSplitK<T> matmul_split_k(Tensor<T> c, Shared<T> a, Shared<T> b, SplitKOptions opt = {},
                               std::source_location loc = std::source_location::current()) {
  const detail::SplitKPlan p = detail::check_split_k(c, a, b, opt, loc);
  return MatmulSplitK<T>(std::move(c), std::nullopt, std::move(a), std::move(b), p.splits, p.bm, p.bn, p.bk);
}

// The same product with the caller's f32 workspace of shape matmul_split_k_workspace(M, N, K, opt),
// handed back as the second result: no allocation, so it can be captured into a ctile::Graph.
template <class T>
MatmulSplitK<T, true> matmul_split_k(Tensor<T> c, Tensor<float> workspace, Shared<T> a, Shared<T> b, SplitKOptions opt = {},
                                     std::source_location loc = std::source_location::current()) {
  const detail::SplitKPlan p = detail::check_split_k(c, a, b, opt, loc);
  const Shape want{p.splits, a.shape()[0], b.shape()[1]};
  if (workspace.shape() != want)
    throw UserError("matmul_split_k: the workspace is " + shape_str(workspace.shape()) + ", the product needs " + shape_str(want) +
                        " (f32 [splits, M, N]: matmul_split_k_workspace)",
                    SourceLoc(loc));
  if (workspace.device() != c.device())
    throw UserError("matmul_split_k: the workspace is on " + describe(workspace.device()) + ", c on " + describe(c.device()),
                    SourceLoc(loc));
  return MatmulSplitK<T, true>(std::move(c), std::move(workspace), std::move(a), std::move(b), p.splits, p.bm, p.bn, p.bk);
}

}  // namespace ctile::kernels
