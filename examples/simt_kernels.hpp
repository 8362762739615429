// The SIMT example kernels: written once, run by the examples (examples/simt_*.cpp) on the
// default device, by the GPU suite against the CPU backend (tests/gpu_simt), compiled by NVRTC in
// CI (tests/unit/simt), and timed against the same kernels as raw CUDA (bench/simt). Each has a
// tutorial in docs/tutorials/simt_*.md.
#pragma once

#include <ctile/ctile.hpp>

namespace simt_examples {

// out[i] = a[i] + b[i]: one thread per element. index_1d() is this thread's token; get_mut()
// writes only when the token is inside `out` (the last block may stick out).
CTILE_SIMT_KERNEL(simt_vector_add,
    (DisjointSpan<float> out, Span<float> a, Span<float> b),
    Contract().block(256),
    (out.size() == a.size(), out.size() == b.size()),
{
  auto i = index_1d();
  out.get_mut(i).set(a.get_or(i, 0.0f) + b.get_or(i, 0.0f));
})

// out = a + b with 16-byte vectors: each thread adds four consecutive elements (index_1d_vec4()),
// with one vector load from each input and one vector store when all four are inside and aligned,
// element by element at the output's end (or for unaligned views). Launch ceil(n / 4) threads.
CTILE_SIMT_KERNEL(simt_vector_add4,
    (DisjointSpan<float, Vec4Index> out, Span<float> a, Span<float> b),
    Contract().block(256),
    (out.size() == a.size(), out.size() == b.size()),
{
  auto q = index_1d_vec4();
  const Vec4<float> x = a.get_vec4_or(q, 0.0f), y = b.get_vec4_or(q, 0.0f);
  out.get_mut(q).set(Vec4<float>{x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w});
})

// out[0] += the sum of x: each thread adds a grid-stride run of x (16-byte vector loads, four in
// flight per thread, then the tail), the warp adds its 32 partial sums with shuffles, warp 0 adds
// the warps' sums from shared memory, and one thread per block adds the block's sum to out[0]
// with a device-scoped atomic. Launch it with a grid that fills the GPU (grid_stride style).
CTILE_SIMT_KERNEL(simt_sum,
    (AtomicSpan<float> out, Span<float> x),
    Contract().block(256).dynamic_shared(8 * sizeof(float)),  // one partial sum per warp
    (out.size() == 1),
{
  const i64 first = index_1d().get(), step = grid_threads();
  const i64 nv = x.vec4_count();
  float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
  for (i64 q = first; q < nv; q += 4 * step) {
    const Vec4<float> v0 = x.get_vec4_or(q, 0.0f), v1 = x.get_vec4_or(q + step, 0.0f);
    const Vec4<float> v2 = x.get_vec4_or(q + 2 * step, 0.0f), v3 = x.get_vec4_or(q + 3 * step, 0.0f);
    a0 += (v0.x + v0.y) + (v0.z + v0.w);
    a1 += (v1.x + v1.y) + (v1.z + v1.w);
    a2 += (v2.x + v2.y) + (v2.z + v2.w);
    a3 += (v3.x + v3.y) + (v3.z + v3.w);
  }
  float acc = (a0 + a1) + (a2 + a3);
  for (i64 i = nv * 4 + first; i < x.size(); i += step) acc += x.get_or(i, 0.0f);
  acc = warp::reduce_sum(acc);
  auto partials = dynamic_shared<float>(ctile::unchecked);
  if (lane_id() == 0) partials[warp_id()] = acc;
  sync_threads();
  if (warp_id() == 0) {
    float v = lane_id() < warps_per_block() ? float(partials[lane_id()]) : 0.0f;
    v = warp::reduce_sum(v);
    if (lane_id() == 0) out.add(0, v);
  }
})

// bins[v] += 1 for every byte v of data: each block counts into its own bins in shared memory
// (block-scoped atomics), then adds its counts to the global bins (device-scoped atomics).
CTILE_SIMT_KERNEL(simt_histogram,
    (AtomicSpan<u32> bins, Span<u8> data),
    Contract().block(256).dynamic_shared(256 * sizeof(u32)),
    (bins.size() == 256),
{
  auto local = dynamic_shared<u32>(ctile::unchecked);
  for (u32 b = thread_in_block(); b < 256; b += block_size()) local[b] = 0u;
  sync_threads();
  for (auto e : grid_stride(data)) local.atomic_add(e.value, 1u);  // this thread's bytes
  sync_threads();
  for (u32 b = thread_in_block(); b < 256; b += block_size()) {
    const u32 c = local[b];
    if (c != 0) bins.add(b, c);
  }
})

// One Jacobi step of the 5-point stencil: every interior point becomes the mean of its four
// neighbours, boundary points keep their value. One thread per point (index_2d()); the thread
// works inside get_mut's check of its own element, and in.with_neighbours(r, c, f) reads the four
// neighbours after one bounds check for all of them. (On the GPU the requires relations are facts
// for the optimizer: with out and in of one shape, the read of in(r, c) needs no check of its own.)
CTILE_SIMT_KERNEL(simt_stencil,
    (DisjointSpan2D<float> out, Span2D<float> in),
    Contract().block(32, 8),
    (out.rows() == in.rows(), out.cols() == in.cols()),
{
  auto ij = index_2d();
  const i64 r = ij.row(), c = ij.col();
  out.get_mut(ij).apply([&](float& o) {
    if (!in.with_neighbours(r, c, [&](const Neighbours<float>& n) { o = 0.25f * ((n.up + n.down) + (n.left + n.right)); }))
      o = in.get_or(r, c, 0.0f);
  });
})

// out = in^T through a 32 x 33 shared-memory tile (the padding column keeps the transposed reads
// free of bank conflicts). Block (bx, by) reads the input tile at (by * 32, bx * 32) with
// coalesced rows and writes the output tile at (bx * 32, by * 32), also row by row: its write
// tokens come from tile_2d_transposed<32, 32>(), the index space of exactly that output tile.
CTILE_SIMT_KERNEL(simt_transpose,
    (DisjointSpan2D<float, TileIndex<32, 32, true>> out, Span2D<float> in),
    Contract().block(32, 8).dynamic_shared(32 * 33 * sizeof(float)),
    (out.rows() == in.cols(), out.cols() == in.rows()),
{
  auto tile = dynamic_shared<float>(ctile::unchecked);
  const Dim3 t = thread_idx(), b = block_idx();
  const i64 row0 = (i64)b.y * 32, col0 = (i64)b.x * 32;
  for (u32 r = t.y; r < 32; r += block_dim().y) tile[r * 33 + t.x] = in.get_or(row0 + r, col0 + t.x, 0.0f);
  sync_threads();
  for (auto o : tile_2d_transposed<32, 32>()) out.get_mut(o).set(tile[o.tile_col() * 33 + o.tile_row()]);
})

}  // namespace simt_examples
