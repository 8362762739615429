// SIMT kernels of the unit tests. Every one of them is also compiled by NVRTC for sm_80 and sm_90a
// (test_nvrtc.cpp), so each is valid kernel text on both sides.
#pragma once

#include <ctile/ctile.hpp>

namespace simt_test {

// ---- index spaces ----

// Every thread writes its linear index at its own element: a 3-D block in a 3-D grid.
CTILE_SIMT_KERNEL(k_index_1d, (DisjointSpan<i64> out), Contract().block(4, 4, 2), (), {
  auto i = index_1d();
  out.get_mut(i).set(i.get());
})

// Every element is hit exactly once: += 1 through each grid-stride token.
CTILE_SIMT_KERNEL(k_grid_stride, (DisjointSpan<i32> hits), Contract().block(64), (), {
  for (auto i : grid_stride(hits.size())) hits.get_mut(i).apply([](i32& h) { h += 1; });
})

// (row, col) of every thread, z folded into the rows: a 3-D launch still names each element once.
CTILE_SIMT_KERNEL(k_index_2d, (DisjointSpan2D<i32> hits), Contract().block(8, 4, 2), (), {
  auto ij = index_2d();
  hits.get_mut(ij).apply([](i32& h) { h += 1; });
})

// 16 x 8 tiles covered by 8 x 4 blocks (each thread covers 2 x 1 positions... and more rows).
CTILE_SIMT_KERNEL(k_tile, (DisjointSpan2D<i32, TileIndex<16, 8, false>> hits), Contract().block(8, 4), (), {
  for (auto o : tile_2d<16, 8>()) hits.get_mut(o).apply([](i32& h) { h += 1; });
})
CTILE_SIMT_KERNEL(k_tile_transposed, (DisjointSpan2D<i32, TileIndex<16, 8, true>> hits), Contract().block(8, 4), (), {
  for (auto o : tile_2d_transposed<16, 8>()) hits.get_mut(o).apply([](i32& h) { h += 1; });
})

// One element per block and per warp, written by their leaders only.
CTILE_SIMT_KERNEL(k_leaders, (DisjointSpan<i64, BlockIndex> per_block, DisjointSpan<i64, WarpIndex> per_warp),
                  Contract().block(96), (), {
  auto b = block_leader();
  per_block.get_mut(b).apply([&](i64& v) { v += b.get() + 1; });
  auto w = warp_leader();
  per_warp.get_mut(w).apply([&](i64& v) { v += w.get() + 1; });
})

// ---- spans and uniforms ----

// out[i] = a * i + k, and the reads of x around i (with fallbacks outside it).
CTILE_SIMT_KERNEL(k_uniform_and_fallbacks,
                  (DisjointSpan<double> out, DisjointSpan<float> around, Span<float> x, Uniform<double> a, Uniform<i32> k),
                  Contract().block(32), (out.size() == around.size()), {
  auto i = index_1d();
  out.get_mut(i).set(a * (double)i.get() + k);
  around.get_mut(i).set(x.get_or(i.get() - 1, -1.0f) + 10.0f * x.get(i.get() + 1).value_or(-2.0f));
})

// out[q] = the sum of x's q-th 4-element vector, or -1 where there is none.
CTILE_SIMT_KERNEL(k_vec4, (DisjointSpan<float> out, Span<float> x), Contract().block(32), (), {
  auto q = index_1d();
  const Vec4<float> v = x.get_vec4_or(q.get(), -0.25f);
  out.get_mut(q).set(v.x + v.y + v.z + v.w);
})

// Reads of 8- and 16-bit integers (on the GPU widened into 32-bit registers with their range
// known to the compiler): every value of each type, sign and zero extension included.
CTILE_SIMT_KERNEL(k_small_ints, (DisjointSpan<i64> out, Span<i8> a, Span<u8> b, Span<i16> c, Span<u16> d),
                  Contract().block(128),
                  (out.size() == a.size(), out.size() == b.size(), out.size() == c.size(), out.size() == d.size()), {
  auto i = index_1d();
  const i64 v = (i64)a.get_or(i, 0) + 256 * ((i64)b.get_or(i, 0) + 256 * ((i64)c.get_or(i, 0) + 65536 * (i64)d.get_or(i, 0)));
  out.get_mut(i).set(v);
})

// A strided 2-D input (a column slice of a wider matrix): out = in + 1.
CTILE_SIMT_KERNEL(k_plus_one_2d, (DisjointSpan2D<float> out, Span2D<float> in), Contract().block(16, 4),
                  (out.rows() == in.rows(), out.cols() == in.cols()), {
  auto ij = index_2d();
  out.get_mut(ij).set(in.get_or(ij.row(), ij.col(), 0.0f) + 1.0f);
})

// Row views, the neighbours of a point (both forms) and a span's own grid-stride loop: for each
// point, out = the sum of the four neighbours (or -1 outside the interior) + 1000 * the number of
// elements of `flat` this thread visited.
CTILE_SIMT_KERNEL(k_neighbours, (DisjointSpan2D<float> out, DisjointSpan2D<float> out2, Span2D<float> in, Span<float> flat),
                  Contract().block(8, 4), (out.rows() == in.rows(), out.cols() == in.cols(), out2.rows() == in.rows(), out2.cols() == in.cols()), {
  auto ij = index_2d();
  const i64 r = ij.row(), c = ij.col();
  float visited = 0.0f;
  for (auto e : grid_stride(flat)) visited += e.value * 0.0f + 1.0f + (e.index < 0 ? 1e9f : 0.0f);
  const Maybe<Neighbours<float>> n = in.neighbours(r, c);
  const Neighbours<float> q = n.value_or(Neighbours<float>{0.0f, 0.0f, 0.0f, 0.0f});
  out.get_mut(ij).set((n ? (q.up + q.down) + (q.left + q.right) : -1.0f) + 1000.0f * visited);
  // The same through with_neighbours and row views.
  const Span<float> up = in.row(r - 1), down = in.row(r + 1), mid = in.row(r);
  float v = -1.0f;
  if (!in.with_neighbours(r, c, [&](const Neighbours<float>& m) { v = (m.up + m.down) + (m.left + m.right); })) v = -1.0f;
  const float w = (up.get_or(c, 0.0f) + down.get_or(c, 0.0f)) + (mid.get_or(c - 1, 0.0f) + mid.get_or(c + 1, 0.0f));
  out2.get_mut(ij).set(v == -1.0f ? -1.0f : (v == w ? v : -99.0f));
})

// The value each thread's own element had, doubled.
CTILE_SIMT_KERNEL(k_double_own, (DisjointSpan<i32> v), Contract().block(32), (), {
  auto i = index_1d();
  const i32 old = v.get(i).value_or(0);
  v.get_mut(i).set(2 * old);
})

// ---- atomics ----

CTILE_SIMT_KERNEL(k_atomics,
                  (AtomicSpan<i32> a, AtomicSpan<i64> b, AtomicSpan<double> d, AtomicSpan<u32, scope::System> c,
                   DisjointSpan<i32> missed),
                  Contract().block(64), (a.size() == 8, b.size() == 1, d.size() == 1, c.size() == 1), {
  auto idx = index_1d();
  const i32 i = (i32)idx.get();
  a.add(0, 1);
  a.fetch_max(1, i);
  a.fetch_min(2, -i);
  a.fetch_or(3, 1 << (i % 31));
  a.fetch_xor(4, i);
  a.fetch_and(5, ~(1 << (i % 31)));
  a.exchange(6, 7);
  b.add(0, (i64)1 << 33);
  d.add(0, 0.5);
  // A compare-and-swap loop: increment c[0].
  u32 seen = c.load(0).value_or(0);
  for (;;) {
    const u32 old = c.compare_exchange(0, seen, seen + 1).value_or(seen);
    if (old == seen) break;
    seen = old;
  }
  // Outside the span: nothing happens, and the Maybe says so.
  const bool outside = !a.add(1000, 1) && !a.fetch_add(-1, 1).has_value();
  missed.get_mut(idx).set(outside ? 1 : 0);
})

// Block-scoped shared atomics, then one global add per block.
CTILE_SIMT_KERNEL(k_shared_atomics, (AtomicSpan<u32> total), Contract().block(128).dynamic_shared(16), (), {
  auto s = dynamic_shared<u32>(ctile::unchecked);
  if (thread_in_block() == 0) s[0] = 0u;
  sync_threads();
  s.atomic_add(0, thread_in_block() + 1);
  s.atomic_max(1, 0u);  // touches another element only atomically
  sync_threads();
  if (thread_in_block() == 0) total.add(0, s[0]);
})

// ---- shared memory, barriers, warps ----

// Reverses each block's 128 elements through shared memory.
CTILE_SIMT_KERNEL(k_reverse, (DisjointSpan<i32> out, Span<i32> in), Contract().block(128).dynamic_shared(128 * 4),
                  (out.size() == in.size()), {
  auto s = dynamic_shared<i32>(ctile::unchecked);
  auto i = index_1d();
  const u32 t = thread_in_block();
  s[t] = in.get_or(i, 0);
  sync_threads();
  out.get_mut(i).set(s[127 - t]);
})

// Nine warp collectives per thread, written to out[9 * i + k].
CTILE_SIMT_KERNEL(k_warp_ops, (DisjointSpan<i32> out, Span<i32> in), Contract().block(64), (), {
  auto i = index_1d();
  const i32 v = in.get_or(i, 0);
  const u32 lane = lane_id();
  const i32 r[9] = {warp::shfl(v, (lane * 7) % 32),
                    warp::shfl_up(v, 3u),
                    warp::shfl_down(v, 5u),
                    warp::shfl_xor(v, 6u),
                    warp::shfl(v, 3u, 8u),
                    warp::shfl_down(v, 2u, 16u),
                    warp::any(v % 7 == 0) ? 1 : 0,
                    warp::all(v >= 0) ? 1 : 0,
                    (i32)warp::ballot(v % 3 == 0)};
  for (int k = 0; k < 9; ++k) out.get_unchecked_mut(ctile::unchecked, 9 * i.get() + k) = r[k];
})

CTILE_SIMT_KERNEL(k_warp_sum, (DisjointSpan<double, WarpIndex> sums, Span<double> in), Contract().block(64), (), {
  const double s = warp::reduce_sum(in.get_or(index_1d(), 0.0));
  sums.get_mut(warp_leader()).set(s);
})

// Misuse the CPU backend reports (the GPU would hang or misbehave).
CTILE_SIMT_KERNEL(k_barrier_early_return, (DisjointSpan<i32> out), Contract().block(64), (), {
  if (thread_in_block() >= 40) return;
  sync_threads();
  out.get_mut(index_1d()).set(1);
})
CTILE_SIMT_KERNEL(k_barrier_two_sites, (DisjointSpan<i32> out), Contract().block(64), (), {
  if (lane_id() < 16)
    sync_threads();
  else
    sync_threads();
  out.get_mut(index_1d()).set(1);
})
CTILE_SIMT_KERNEL(k_warp_divergent, (DisjointSpan<i32> out), Contract().block(64), (), {
  i32 v = (i32)lane_id();
  if (lane_id() < 16) v = warp::shfl_down(v, 1u);
  out.get_mut(index_1d()).set(v);
})
CTILE_SIMT_KERNEL(k_warp_partial, (DisjointSpan<i32> out), Contract().block(48), (), {
  out.get_mut(index_1d()).set(warp::shfl_xor((i32)lane_id(), 1u));
})
CTILE_SIMT_KERNEL(k_warp_bad_width, (DisjointSpan<i32> out), Contract().block(32), (), {
  out.get_mut(index_1d()).set(warp::shfl((i32)lane_id(), 0u, 12u));
})

// ---- races (unchecked accesses) ----

// Every thread writes shared element 0: write-write.
CTILE_SIMT_KERNEL(k_race_ww, (DisjointSpan<i32> out), Contract().block(64).dynamic_shared(4), (), {
  auto s = dynamic_shared<i32>(ctile::unchecked);
  s[0] = (i32)thread_in_block();
  out.get_mut(index_1d()).set(0);
})
// Reads a neighbour's shared element: without the barrier a race, with it none (`sync` decides).
CTILE_SIMT_KERNEL(k_race_neighbour, (DisjointSpan<i32> out, Uniform<bool> sync), Contract().block(64).dynamic_shared(256), (), {
  auto s = dynamic_shared<i32>(ctile::unchecked);
  const u32 t = thread_in_block();
  s[t] = (i32)t;
  if (sync) sync_threads();
  out.get_mut(index_1d()).set(s[(t + 1) % 64]);
})
// The same inside a warp, ordered by warp::sync() (`sync` decides).
CTILE_SIMT_KERNEL(k_race_warp, (DisjointSpan<i32> out, Uniform<bool> sync), Contract().block(32).dynamic_shared(128), (), {
  auto s = dynamic_shared<i32>(ctile::unchecked);
  const u32 l = lane_id();
  s[l] = (i32)l * 3;
  if (sync) warp::sync();
  out.get_mut(index_1d()).set(s[(l + 1) % 32]);
})
// Atomics on one element never race; a plain write to it without a barrier does (`plain` decides).
CTILE_SIMT_KERNEL(k_race_atomic, (DisjointSpan<i32> out, Uniform<bool> plain), Contract().block(64).dynamic_shared(4), (), {
  auto s = dynamic_shared<i32>(ctile::unchecked);
  s.atomic_add(0, 1);
  if (plain && thread_in_block() == 5) s[0] = 0;
  out.get_mut(index_1d()).set(1);
})
// Global memory through UncheckedPtr: every thread writes element 0.
CTILE_SIMT_KERNEL(k_race_global, (UncheckedPtr<i32> p), Contract().block(32), (), {
  p.at(ctile::unchecked, 0) = (i32)thread_in_block();
})
// Each thread writes its own element through UncheckedPtr: no race.
CTILE_SIMT_KERNEL(k_unchecked_own, (UncheckedPtr<i32> p), Contract().block(32), (), {
  const i64 i = index_1d().get();
  if (i < p.size()) p.at(ctile::unchecked, i) = (i32)i * 2;
})
// Thread 0 writes element 1 unchecked; thread 1 writes it through get_mut.
CTILE_SIMT_KERNEL(k_race_mixed, (DisjointSpan<i32> out), Contract().block(32), (), {
  auto i = index_1d();
  if (i.get() == 0) out.get_unchecked_mut(ctile::unchecked, 1) = 7;
  out.get_mut(i).set(1);
})

// ---- errors inside kernels ----

CTILE_SIMT_KERNEL(k_oob_unchecked, (DisjointSpan<i32> out), Contract().block(32), (), {
  out.get_unchecked_mut(ctile::unchecked, out.size() + (i64)thread_in_block()) = 1;
})
CTILE_SIMT_KERNEL(k_oob_shared, (DisjointSpan<i32> out), Contract().block(32).dynamic_shared(64), (), {
  auto s = dynamic_shared<float>(ctile::unchecked);
  s[16 + (i64)thread_in_block()] = 1.0f;
  out.get_mut(index_1d()).set(0);
})
CTILE_SIMT_KERNEL(k_oob_read, (DisjointSpan<float> out, Span<float> in), Contract().block(32), (), {
  out.get_mut(index_1d()).set(in.get_unchecked(ctile::unchecked, in.size()));
})

// ---- for the launch tests ----

// Spins `spins` iterations per thread first (a slow kernel), then out = in * scale.
CTILE_SIMT_KERNEL(k_slow_scale, (DisjointSpan<float> out, Span<float> in, Uniform<i64> spins, Uniform<float> scale),
                  Contract().block(32), (out.size() == in.size()), {
  float acc = 0.0f;
  for (i64 s = 0; s < spins; ++s) acc += 1e-30f * (float)s;
  for (auto i : grid_stride(out.size())) out.get_mut(i).set(in.get_or(i, 0.0f) * scale + acc * 0.0f);
})

// A contract with every clause, and requires relations that involve a Uniform.
CTILE_SIMT_KERNEL(k_contract, (DisjointSpan<float> out, Span<float> in, Uniform<i64> n),
                  Contract().block(128).dynamic_shared(1024).min_compute_capability(8, 0).min_blocks_per_sm(2),
                  (out.size() == in.size(), n <= out.size(), n >= 0), {
  auto i = index_1d();
  if (i.get() < n) out.get_mut(i).set(in.get_or(i, 0.0f));
})

// A relation that reads an element (only sizes and Uniforms may be used).
CTILE_SIMT_KERNEL(k_bad_requires, (DisjointSpan<float> out, Span<float> in), Contract().block(32),
                  (in.get_or(0, 0.0f) > 0.0f), {
  out.get_mut(index_1d()).set(1.0f);
})

// No block shape in the contract.
CTILE_SIMT_KERNEL(k_no_block, (DisjointSpan<float> out), Contract(), (), { out.get_mut(index_1d()).set(1.0f); })

}  // namespace simt_test
