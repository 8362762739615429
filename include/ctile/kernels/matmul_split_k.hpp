// ctile kernel library: C = A @ B with the K loop split over tile blocks (split-K), for the skinny
// products of decoding (the projections at M = 16 to 128 tokens): there the output has few tiles
// (M = 16, N = 2560: 40 tiles of 16 x 64) and each would walk all of K alone, leaving most SMs
// idle while the product streams B through memory. Split-K gives every tile of C `splits` tile
// blocks, each over a contiguous range of K, and a second kernel sums their f32 partial products.
//
//   #include <ctile/kernels/matmul_split_k.hpp>
//   // a [M, K] and b [K, N] in bf16 or f16 (read-only handles), c [M, N] in the same type.
//   auto [c2, a2, b2] = ctile::kernels::matmul_split_k(std::move(c), a, b, {.splits = 4}).sync();
//
// The two kernels are written in the tile language, the product as the natural matmul kernel
// (examples/matmul.cpp: `mma` over tile loads in a run-time loop, which the compiler puts on the
// tensor cores), and launched on one stream (a lazy operation, as every launch):
//   1. matmul_split_k_partial: tile block (s, i, j) of the workspace part [S, M, N] (f32) holds
//      the product of tile (i, j) over the K blocks [s * per, min((s + 1) * per, K blocks)) of BK;
//   2. matmul_split_k_sum: tile (i, j) of C is the sum over s of part's tiles (in order), rounded
//      once to T.
// A split whose range is empty (more splits than K blocks) writes zeros. Accuracy: f32 products
// and f32 sums (S partial sums added in f32, then rounded once), as cuBLAS's split-K.
#pragma once

#include <cstdint>
#include <source_location>
#include <string>
#include <tuple>

#include "ctile/ctile.hpp"

namespace ctile::kernels {

// K step of the partial products.
inline constexpr std::int64_t kSplitKBlockK = 64;

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

// (The splits in a run-time loop of element-wise adds: a reduction over a leading axis of the
// tile would exchange the partial sums through shared memory.)
template <class T>
void matmul_split_k_sum(Mut<T, 2> c, Ref<float, 3> part) {
  const auto [bm, bn] = c.tile_shape();
  auto [i, j] = c.tile_index();
  auto pp = part.tiles({1, bm, bn});
  auto acc = Tile<float>::zeros({bm, bn});
  for (auto s : range(pp.count(0))) acc = acc + pp.load({s, i, j}).reshape({bm, bn});
  c.store(acc.template to<T>());
}

struct SplitKOptions {
  std::int64_t splits = 0;   // K ranges per tile of C: a power of two in [1, 16]; 0: matmul_split_k_splits
  std::int64_t block_m = 0;  // rows of a tile of C: 16, 32, 64 or 128; 0: matmul_split_k_block_m
  std::int64_t block_n = 0;  // columns: 64, 128 or 256; 0: 64 for block_m 16 or 32, else 128
};

// The tile rows chosen when the options give none: the smallest of 16, 64 and 128 that covers M
// (16: mma.sync tiles of one warp's rows; 64 and 128: one and two warpgroups of wgmma on sm_90).
inline std::int64_t matmul_split_k_block_m(std::int64_t m) { return m <= 16 ? 16 : m <= 64 ? 64 : 128; }

// The splits chosen when the options give none: doubled while the tile blocks are fewer than two
// per SM of a large GPU (264) and each split keeps at least 8 K blocks.
inline std::int64_t matmul_split_k_splits(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t bm,
                                          std::int64_t bn) {
  const std::int64_t tiles = ceil_div(m, bm) * ceil_div(n, bn), kb = ceil_div(k, kSplitKBlockK);
  std::int64_t s = 1;
  while (s < 16 && tiles * s < 264 && kb / (2 * s) >= 8) s *= 2;
  return s;
}

// The lazy operation matmul_split_k returns: the partial products, then their sum, on one stream,
// handing back (c, a, b). The workspace lives until the sum has read it.
template <class T>
class MatmulSplitK {
 public:
  using Result = std::tuple<Tensor<T>, Shared<T>, Shared<T>>;

  MatmulSplitK(Tensor<T> c, Shared<T> a, Shared<T> b, std::int64_t splits, std::int64_t bm, std::int64_t bn)
      : c_(std::move(c)), a_(std::move(a)), b_(std::move(b)), splits_(splits), bm_(bm), bn_(bn) {}

  Future<Result> async_on(Stream s) && {
    const std::int64_t m = a_.shape()[0], k = a_.shape()[1], n = b_.shape()[1], sp = splits_, bm = bm_, bn = bn_;
    const std::int64_t per = ceil_div(ceil_div(k, kSplitKBlockK), sp);
    auto part = zeros<float>({sp, m, n}, c_.device());
    auto f = launch(matmul_split_k_partial<T, kSplitKBlockK>, std::move(part).partition({1, bm, bn}), a_, b_, per)
                 .async_on(s)
                 .then([c = std::move(c_), bm, bn](auto&& t) mutable {
                   return launch(matmul_split_k_sum<T>, std::move(c).partition({bm, bn}),
                                 std::move(std::get<0>(t)).unpartition().share());
                 });
    auto st = std::move(f).into_state();
    auto out = ctile::detail::make_pooled<FutureState<Result>>();
    out->done = st->done;
    out->stream = st->stream;
    out->payload.emplace(std::move(std::get<0>(*st->payload)).unpartition(), std::move(a_), std::move(b_));
    return Future<Result>(std::move(out));
  }
  Result sync() && {
    const Device dev = c_.device();
    return std::move(*this).async_on(default_stream(dev)).get();
  }

 private:
  Tensor<T> c_;
  Shared<T> a_, b_;
  std::int64_t splits_, bm_, bn_;
};

// Checks the shapes and options and returns the lazy split-K product (`.sync()`, `.async_on(s)`).
template <class T>
MatmulSplitK<T> matmul_split_k(Tensor<T> c, Shared<T> a, Shared<T> b, SplitKOptions opt = {},
                               std::source_location loc = std::source_location::current()) {
  static_assert(!std::is_same_v<T, f8e4m3> && !std::is_same_v<T, f8e5m2>,
                "matmul_split_k: fp8 operands need per-tensor scales: use ctile::kernels::matmul_fp8(c, a, bt, scale_a, scale_b)");
  const Shape &as = a.shape(), &bs = b.shape(), &cs = c.shape();
  auto fail = [&](const std::string& what) {
    throw UserError("matmul_split_k: " + what + " (a " + shape_str(as) + ", b " + shape_str(bs) + ", c " + shape_str(cs) + ")", SourceLoc(loc));
  };
  if (as.size() != 2 || bs.size() != 2 || cs.size() != 2) fail("a, b and c must be rank 2, a [M, K], b [K, N], c [M, N]");
  if (as[1] != bs[0]) fail("a has K = " + std::to_string(as[1]) + ", b has " + std::to_string(bs[0]) + " rows");
  if (cs[0] != as[0] || cs[1] != bs[1]) fail("c must be [M, N] = [" + std::to_string(as[0]) + ", " + std::to_string(bs[1]) + "]");
  auto pow2 = [](std::int64_t x, std::int64_t lo, std::int64_t hi) { return x >= lo && x <= hi && (x & (x - 1)) == 0; };
  if (opt.block_m != 0 && !pow2(opt.block_m, 16, 128)) fail("block_m " + std::to_string(opt.block_m) + " is not 16, 32, 64 or 128");
  if (opt.block_n != 0 && !pow2(opt.block_n, 64, 256)) fail("block_n " + std::to_string(opt.block_n) + " is not 64, 128 or 256");
  if (opt.splits != 0 && !pow2(opt.splits, 1, 16)) fail("splits " + std::to_string(opt.splits) + " is not a power of two in [1, 16]");
  const std::int64_t bm = opt.block_m ? opt.block_m : matmul_split_k_block_m(as[0]);
  const std::int64_t bn = opt.block_n ? opt.block_n : (bm <= 32 ? 64 : 128);
  const std::int64_t sp = opt.splits ? opt.splits : matmul_split_k_splits(as[0], bs[1], as[1], bm, bn);
  return MatmulSplitK<T>(std::move(c), std::move(a), std::move(b), sp, bm, bn);
}

}  // namespace ctile::kernels
