// ctile kernel library: the matrix-vector product of decoding, y = W x, written in the tile
// language (no tensor cores: at M = 1 the product is a stream of W through memory, so the kernel's
// job is to read W at the bandwidth limit).
//
//   #include <ctile/kernels/gemv.hpp>
//   // W [N, K] and x [K] in bf16 (read-only handles), y [N] in bf16; R rows of y per tile block.
//   auto [y2, w2, x2] = ctile::launch(ctile::kernels::gemv<ctile::bf16, 512>,
//                                     std::move(y).partition({R}), w, x).sync();
//
// Each tile block owns R rows of y (its piece of y's partition) and walks K in steps of BK: it
// loads the [R, BK] tile of W (16-byte vectors along K, the rows over the warps) and the [BK] slice
// of x (broadcast over the rows: every warp reads the same slice, from L1), multiplies in f32 and
// keeps an [R, BK] f32 partial sum in registers; one reduction along K at the end gives the R
// results, rounded once to T. Partial tiles at the end of N and K pad W and x with 0, so any N and
// K work. The sum is in f32: per element of the [R, BK] partial sums over the K steps, then a tree
// along BK, not the order of a sequential loop (the tests bound the error by K * 2^-24 * sum |w x|).
//
// Choosing R and BK: R * BK elements per step, about 8 16-byte vectors per thread (R = 4, BK = 512
// on 4 warps for bf16: one warp per row, 2 vectors per lane per step) keeps enough loads in flight
// to reach the bandwidth with one tile block per 4 rows (N / 4 blocks: 1024 for N = 4096).
#pragma once

#include <cstdint>

#include "ctile/ctile.hpp"

namespace ctile::kernels {

template <class T, std::int64_t BK>
void gemv(Mut<T, 1> y, Ref<T, 2> w, Ref<T, 1> x) {
  const auto [r] = y.tile_shape();
  auto [i] = y.tile_index();
  auto pw = w.tiles({r, BK});
  auto px = x.tiles({BK});
  auto acc = Tile<float>::zeros({r, BK});
  for (auto k : range(pw.count(1))) {
    // Named loads: the trace (and so the IR) follows the order in which they run.
    auto wt = pw.load({i, k}).template to<float>();
    auto xt = px.load({k}).template to<float>();
    acc = acc + wt * xt;  // [r, BK] * [BK]: x broadcasts over the rows
  }
  y.store(sum(acc, 1).template to<T>());
}

}  // namespace ctile::kernels
