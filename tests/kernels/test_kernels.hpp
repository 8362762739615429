// The kernels every test suite runs, in one place: the CPU correctness tests (tests/correctness),
// the GPU suite (tests/gpu), the code generator's NVRTC, emulation and GPU-differential tests
// (tests/unit/cuda_codegen), the IR round-trip tests and the front end's golden IR
// (tests/unit/frontend). Each suite brings its own inputs and references; the kernel text is here
// only. The first group are the kernels of the examples (examples/*.cpp are programs for readers
// and keep their own copy; tests/examples runs those programs as they are).
#pragma once

#include <cmath>
#include <cstdint>
#include <tuple>

#include <ctile/ctile.hpp>

namespace test_kernels {

namespace ct = ctile;

// ---- the examples (examples/*.cpp) ----------------------------------------------------------------------
inline void hello(ct::Mut<std::int64_t, 2> ids) {
  auto [i, j] = ids.tile_index();
  ids.store(i * 100 + j);
}

template <int BK>
void matmul(ct::Mut<float, 2> c, ct::Ref<ct::bf16, 2> a, ct::Ref<ct::bf16, 2> b) {
  const auto [bm, bn] = c.tile_shape();
  auto [i, j] = c.tile_index();
  auto pa = a.tiles({bm, BK});
  auto pb = b.tiles({BK, bn});
  auto acc = ct::Tile<float>::zeros({bm, bn});
  for (auto k : ct::range(pa.count(1))) {
    // Named loads: C++ leaves the order of function arguments unspecified, and the trace (so the
    // printed IR) follows the order in which the loads run.
    auto at = pa.load({i, k});
    auto bt = pb.load({k, j});
    acc = ct::mma(at, bt, acc);
  }
  c.store(acc);
}

constexpr std::int64_t kBlock = 4096;
inline void reduce_sum(ct::Atomic<double, 1> total, ct::Ref<double, 1> x) {
  auto tile = x.tiles({kBlock}).load({ct::block_id(0)});
  total.add({0}, ct::sum(tile, 0));
}

inline void rms_norm(ct::Mut<ct::bf16, 2> y, ct::Ref<ct::bf16, 2> x, ct::Ref<ct::bf16, 1> w, ct::Scalar<float> eps) {
  const auto [bm, bn] = y.tile_shape();
  auto [row, col] = y.tile_index();
  auto xf = ct::load_like(x, y).to<float>();
  auto n = x.extent(1).to<float>();
  auto inv = ct::rsqrt(ct::sum(xf * xf, 1, true) / n + eps);
  auto wf = w.tiles({bn}).load({col}).to<float>().reshape({1, bn});
  y.store((xf * inv * wf).to<ct::bf16>());
}

inline void saxpy(ct::Mut<ct::bf16, 1> y, ct::Scalar<float> a, ct::Ref<ct::bf16, 1> x) {
  auto xf = ct::load_like(x, y).to<float>();
  auto yf = y.load().to<float>();
  y.store((a * xf + yf).to<ct::bf16>());
}

inline void softmax(ct::Mut<float, 2> out, ct::Ref<float, 2> x) {
  auto row = ct::load_like(x, out, -INFINITY);
  auto e = ct::exp(row - ct::max(row, 1, /*keepdims=*/true));
  out.store(e / ct::sum(e, 1, true));
}

inline void scatter(ct::UncheckedMut<float, 1> dst, ct::Ref<std::int64_t, 1> idx, ct::Ref<float, 1> src) {
  auto b = ct::block_id(0);
  auto where = idx.tiles({256}).load({b}, -1);
  auto what = src.tiles({256}).load({b});
  dst.scatter(ct::unchecked, where, what);
}

// Scatters whose indices come from iotas (the code generator proves distinct offsets when they are
// strictly increasing or decreasing, up to a tail outside the tensor): increasing; decreasing
// (18 - i: the tests' unchecked tensors of unknown extent have 19 elements, the rest is a
// negative tail); pairs of duplicates (i / 2: the later, odd element wins).
inline void scatter_iota(ct::UncheckedMut<float, 1> dst, ct::Ref<float, 1> src) {
  auto b = ct::block_id(0);
  dst.scatter(ct::unchecked, ct::iota<std::int64_t>(256) + b * 256, src.tiles({256}).load({b}));
}
inline void scatter_reversed(ct::UncheckedMut<float, 1> dst, ct::Ref<float, 1> src) {
  auto b = ct::block_id(0);
  dst.scatter(ct::unchecked, ct::iota<std::int64_t>(256) * -1 + 18 - b * 256, src.tiles({256}).load({b}));
}
inline void scatter_pairs(ct::UncheckedMut<float, 1> dst, ct::Ref<float, 1> src) {
  auto b = ct::block_id(0);
  dst.scatter(ct::unchecked, ct::iota<std::int64_t>(256) / 2 + b * 128, src.tiles({256}).load({b}));
}

// Each tile block scatters its BM x BN tile of src to rows shifted by `shift` of a whole unchecked
// tensor (consecutive positions: canonicalize makes it a window store); indices outside dst drop.
template <std::int64_t BM, std::int64_t BN>
void scatter_block_2d(ct::UncheckedMut<float, 2> dst, ct::Ref<float, 2> src, ct::Scalar<std::int64_t> shift) {
  auto i = ct::block_id(0), j = ct::block_id(1);
  auto rows = (ct::iota<std::int64_t>(BM) + (i * BM + shift)).reshape({BM, 1});
  auto cols = (ct::iota<std::int64_t>(BN) + j * BN).reshape({1, BN});
  dst.scatter(ct::unchecked, {rows, cols}, src.tiles({BM, BN}).load({i, j}));
}

inline void vector_add(ct::Mut<float, 1> z, ct::Ref<float, 1> x, ct::Ref<float, 1> y) {
  z.store(ct::load_like(x, z) + ct::load_like(y, z));
}

// ---- end-to-end correctness (tests/correctness/test_kernels.cpp) --------------------------------------------
template <class T>
void axpby(ct::Mut<T, 1> z, ct::Ref<T, 1> x, ct::Ref<T, 1> y) {
  auto a = ct::load_like(x, z).template to<float>();
  auto b = ct::load_like(y, z).template to<float>();
  z.store((ct::exp(a * 0.5f) - b * b + ct::maximum(a, b)).template to<T>());
}

inline void int_ops(ct::Mut<std::int32_t, 1> z, ct::Ref<std::int32_t, 1> x, ct::Ref<std::int32_t, 1> y) {
  auto a = ct::load_like(x, z);
  auto b = ct::load_like(y, z, 1);
  auto q = a / b + a % b * 3 - (a & 0xff) + (b << 2) - (a >> 1) + (a ^ b);
  z.store(ct::where(a > b, q, -q));
}

inline void convert_k(ct::Mut<ct::bf16, 1> b, ct::Mut<std::int8_t, 1> i8, ct::Ref<float, 1> x) {
  auto v = ct::load_like(x, b);
  b.store(v.to<ct::bf16>());
  i8.store((v * 100.0f).to<std::int8_t>());
}

// The fp8 conversions: f32 scaled past e4m3's largest finite value (448) in places to e4m3 and
// e5m2 (nearest even, saturating), and an e5m2 input (infinities and NaN among the special values)
// to f32, to e4m3 (saturating), to bool, and to integers, one of them through e4m3 and bf16.
inline void convert_fp8(ct::Mut<ct::f8e4m3, 1> e4, ct::Mut<ct::f8e5m2, 1> e5, ct::Mut<float, 1> wide,
                        ct::Mut<ct::f8e4m3, 1> narrowed, ct::Mut<bool, 1> nonzero, ct::Mut<std::int32_t, 1> ints,
                        ct::Ref<float, 1> x, ct::Ref<ct::f8e5m2, 1> y) {
  auto v = ct::load_like(x, e4) * 32.0f;
  auto b = ct::load_like(y, e4);
  e4.store(v.to<ct::f8e4m3>());
  e5.store(v.to<ct::f8e5m2>());
  wide.store(b.to<float>());
  narrowed.store(b.to<ct::f8e4m3>());
  nonzero.store(b.to<bool>());
  auto through = v.to<ct::f8e4m3>().to<ct::bf16>().to<std::int32_t>();
  ints.store(b.to<std::int32_t>() + through);
}

// FP8 with per-tensor scales: x quantized as x / scale (the caller picks scale = amax / the
// format's largest finite value), and a product of two quantized tensors rescaled in f32 by the
// product of their scales (a and b may be the two different fp8 formats).
template <class T>
void quantize(ct::Mut<T, 2> q, ct::Ref<float, 2> x, ct::Scalar<float> inv_scale) {
  q.store((ct::load_like(x, q) * inv_scale).template to<T>());
}
template <class A, class B, int BK>
void scaled_mm(ct::Mut<float, 2> c, ct::Ref<A, 2> a, ct::Ref<B, 2> b, ct::Scalar<float> scale) {
  const auto [bm, bn] = c.tile_shape();
  auto [i, j] = c.tile_index();
  auto pa = a.tiles({bm, BK});
  auto pb = b.tiles({BK, bn});
  auto acc = ct::Tile<float>::zeros({bm, bn});
  for (auto k : ct::range(pa.count(1))) {
    auto at = pa.load({i, k});
    auto bt = pb.load({k, j});
    acc = ct::mma(at, bt, acc);
  }
  c.store(acc * scale);
}

// Row reductions of a tile of T: sums (in double on the CPU, in f32 on the GPU; rounded once to
// T), maxima and their first positions.
template <class T>
void row_reductions(ct::Mut<T, 2> sums, ct::Mut<T, 2> maxes, ct::Mut<std::int64_t, 2> at, ct::Ref<T, 2> x) {
  const auto [bm, bn] = sums.tile_shape();
  (void)bn;
  auto t = x.tiles({bm, 64}).load({sums.tile_index()[0], 0});
  sums.store(ct::sum(t, 1, true));
  maxes.store(ct::max(t, 1, true));
  at.store(ct::argmax(t, 1, true));
}

// sigmoid and its formula (docs/ir.md) built from exp and IEEE division: the device library's
// branch-free sigmoid (a select for the tail, the division's fast path without its range check)
// must give the formula's results bit for bit.
inline void sigmoid_and_formula(ct::Mut<float, 1> s, ct::Mut<float, 1> f, ct::Ref<float, 1> x) {
  auto a = ct::load_like(x, s);
  s.store(ct::sigmoid(a));
  f.store(ct::where(a >= 0.0f, 1.0f / (1.0f + ct::exp(-a)), ct::exp(a) / (1.0f + ct::exp(a))));
}

inline void reduce_rows(ct::Mut<float, 2> sums, ct::Mut<std::int64_t, 2> arg, ct::Mut<float, 2> csum, ct::Ref<float, 2> x) {
  auto t = ct::load_like(x, csum, 0.0f);
  sums.store(ct::sum(t, 1, true));
  arg.store(ct::argmax(t, 1, true));
  csum.store(ct::cumsum(t, 1));
}

// Outputs of two ranks on one grid: per-row sums and maxima ([rows], tiles of 8) beside the rows
// shifted by their maximum ([rows, cols], tiles of 8 x cols). The grid is [rows / 8] for the
// statistics and [rows / 8, 1] for y: they agree up to the trailing axis of extent 1.
inline void row_stats(ct::Mut<float, 1> sums, ct::Mut<float, 1> maxes, ct::Mut<float, 2> y, ct::Ref<float, 2> x) {
  const auto [br, bc] = y.tile_shape();
  (void)bc;
  auto t = ct::load_like(x, y, 0.0f);
  auto m = ct::max(t, 1, true);
  sums.store(ct::sum(t, 1));
  maxes.store(ct::reshape(m, {br}));
  y.store(t - m);
}

// Windows at element offsets (ct.load_window): a 3-point stencil whose neighbour windows start one
// element before and after the piece, so they reach into the next pieces and past both ends of the
// tensor (reading 0 there).
template <class T>
void stencil3(ct::Mut<T, 1> y, ct::Ref<T, 1> x) {
  const auto [n] = y.tile_shape();
  const auto o = y.tile_index()[0] * n;
  auto left = x.load_window({o - 1}, {n});
  auto mid = x.load_window({o}, {n});
  auto right = x.load_window({o + 1}, {n});
  y.store(left + (mid + mid) + right);
}

// A window K elements before and one K after the piece: for K a multiple of the memory vector, the
// first piece's window starts outside the tensor on a vector boundary (whole vectors in or out).
template <class T, int K>
void shifted_difference(ct::Mut<T, 1> y, ct::Ref<T, 1> x) {
  const auto [n] = y.tile_shape();
  const auto o = y.tile_index()[0] * n;
  auto before = x.load_window({o - K}, {n});
  auto after = x.load_window({o + K}, {n});
  y.store(after - before);
}

// Windows at run-time offsets (any i64, the extremes included): y's piece gets the window of x at
// element `at`, then its own window at piece offset `off` is overwritten with 7.
inline void window_at_offsets(ct::Mut<float, 1> y, ct::Ref<float, 1> x, ct::Scalar<std::int64_t> at,
                              ct::Scalar<std::int64_t> off) {
  const auto [n] = y.tile_shape();
  y.store(x.load_window({at}, {n}, -1.0f));
  y.store_window({off}, ct::Tile<float>::full({n}, 7.0f));
}

// One-element windows (replicated tiles: the leader loads and stores): piece element k of y gets
// x[o + k], the rest 0.
inline void window_one_element(ct::Mut<float, 1> y, ct::Ref<float, 1> x, ct::Scalar<std::int64_t> k) {
  const auto [n] = y.tile_shape();
  const auto o = y.tile_index()[0] * n;
  y.store(0.0f);
  y.store_window({k}, x.load_window({o + k}, {1}));
}

// The piece written in parts (ct.store_window). Block (i, j) of y (tiles bm x bn) fills its piece
// with -1, then
// - its left half with x shifted by (1, 3) (a window that reads past the tensor's ends as 0),
// - rows 2.. of its right half with the window of x at (i bm - 2, j bn + bn / 2): a [bm, bn] tile
//   that hangs over the piece's right and bottom edges, of which only the part inside is written,
// - row 0 of its right half with the last row of a [bm, bn / 2] tile placed 7 rows above the piece.
// Row 1 of the right half keeps its -1.
inline void window_parts(ct::Mut<float, 2> y, ct::Ref<float, 2> x) {
  const auto [bm, bn] = y.tile_shape();
  const auto [i, j] = y.tile_index();
  y.store(-1.0f);
  y.store_window({0, 0}, x.load_window({i * bm + 1, j * bn + 3}, {bm, bn / 2}));
  y.store_window({2, bn / 2}, x.load_window({i * bm - 2, j * bn + bn / 2}, {bm, bn}));
  auto r = ct::expand_dims(ct::iota<float>(bm), 1) * 1000.0f + ct::expand_dims(ct::iota<float>(bn / 2), 0);
  y.store_window({1 - bm, bn / 2}, r);
}

// InB: b's element type when it differs from a's (an fp8 product mixes e4m3 and e5m2). BT: b is
// given as Bt [N, K] and transposed in the kernel, so both operands are K-major (the only form in
// which wgmma takes 8-bit operands; mm_bt below).
template <class In, class Acc, int BK, class InB = In, bool BT = false>
void mm(ct::Mut<Acc, 2> c, ct::Ref<In, 2> a, ct::Ref<InB, 2> b) {
  const auto [bm, bn] = c.tile_shape();
  auto [i, j] = c.tile_index();
  auto pa = a.tiles({bm, BK});
  auto pb = BT ? b.tiles({bn, BK}) : b.tiles({BK, bn});
  auto acc = ct::Tile<Acc>::zeros({bm, bn});
  for (auto k : ct::range(pa.count(1))) {
    // Named loads: C++ leaves the order of function arguments unspecified, and the trace (so the
    // printed IR) follows the order in which the loads run.
    auto at = pa.load({i, k});
    if constexpr (BT) {
      auto bt = pb.load({j, k});
      acc = ct::mma(at, ct::transpose(bt), acc);
    } else {
      auto bt = pb.load({k, j});
      acc = ct::mma(at, bt, acc);
    }
  }
  c.store(acc);
}
template <class In, class Acc, int BK, class InB = In>
void mm_bt(ct::Mut<Acc, 2> c, ct::Ref<In, 2> a, ct::Ref<InB, 2> bt) {
  mm<In, Acc, BK, InB, true>(std::move(c), std::move(a), std::move(bt));
}

// Batched products (rank-3 ct.mma): block (h, i, j) of c [P, M, N] in tiles [bp, bm, bn] multiplies
// the bp matrices of a [P, M, K] and b [P, K, N] in a K loop.
template <class In, class Acc, int BK>
void bmm(ct::Mut<Acc, 3> c, ct::Ref<In, 3> a, ct::Ref<In, 3> b) {
  const auto [bp, bm, bn] = c.tile_shape();
  auto [h, i, j] = c.tile_index();
  auto pa = a.tiles({bp, bm, BK});
  auto pb = b.tiles({bp, BK, bn});
  auto acc = ct::Tile<Acc>::zeros({bp, bm, bn});
  for (auto k : ct::range(pa.count(2))) {
    auto at = pa.load({h, i, k});
    auto bt = pb.load({h, k, j});
    acc = ct::mma(at, bt, acc);
  }
  c.store(acc);
}

inline void gather_rows(ct::Mut<float, 2> out, ct::Ref<float, 2> table, ct::Ref<std::int32_t, 1> ids) {
  auto [r, c] = out.tile_index();
  const auto [bm, bn] = out.tile_shape();
  auto rows = ids.tiles({bm}).load({r}, -1).to<std::int64_t>().reshape({bm, 1});
  auto cols = (ct::iota<std::int64_t>(bn) + c * bn).reshape({1, bn});
  out.store(table.gather({rows, cols}, -7.0f));
}

inline void reverse_piece(ct::Mut<float, 1> z, ct::Ref<float, 1> x) {
  const auto [b] = z.tile_shape();
  auto v = ct::load_like(x, z);
  auto idx = ct::iota<std::int64_t>(b) * -1 + (b - 1);
  z.scatter({idx}, v);
}

inline void histogram(ct::Atomic<std::int64_t, 1> hist, ct::Ref<std::int32_t, 1> x) {
  auto v = x.tiles({128}).load({ct::block_id(0)}, -1).to<std::int64_t>();
  hist.add({v}, ct::Tile<std::int64_t>::full({128}, 1));
}

inline void collatz(ct::Mut<std::int64_t, 1> steps, ct::Ref<std::int64_t, 1> start) {
  auto n = ct::load_like(start, steps).reshape({});
  auto count = ct::constant<std::int64_t>(0);
  ct::while_([&] { return n > 1; }, [&] {
    ct::if_((n % 2) == 0, [&] { n = n / 2; }, [&] { n = n * 3 + 1; });
    count = count + 1;
  });
  steps.store(count);
}

inline void copy6(ct::Mut<float, 6> z, ct::Ref<float, 6> x) { z.store(ct::load_like(x, z) * 2.0f); }

inline void scale_by(ct::Mut<float, 1> z, ct::Ref<float, 1> x, ct::Const<int> k) {
  auto v = ct::load_like(x, z);
  for (int i = 1; i < k; ++i) v = v + ct::load_like(x, z);
  z.store(v);
}

inline void pick_tile(ct::Mut<float, 1> out, ct::Ref<float, 1> x, ct::Scalar<std::int64_t> t) { out.store(x.tiles({16}).load({t})); }

// ---- futures and streams (tests/correctness/test_async.cpp) ----------------------------------------------------
inline void add_scalar(ct::Mut<float, 1> z, ct::Scalar<float> v) { z.store(z.load() + v); }
inline void times2(ct::Mut<float, 1> z, ct::Ref<float, 1> x) { z.store(ct::load_like(x, z) * 2.0f); }
inline void fill(ct::Mut<float, 1> z, ct::Scalar<float> v) { z.store(v); }

// ---- golden IR (tests/unit/frontend/golden) --------------------------------------------------------------------
inline void aliasing(ct::Mut<float, 1> z, ct::Scalar<std::int64_t> n) {
  auto a = ct::Tile<float>::full({8}, 1.0f);
  auto b = a;
  auto unchanged = a;
  for (auto k : ct::range(n)) {
    (void)k;
    a = a + b;
  }
  z.store(a + unchanged);
}

inline void branches(ct::Mut<std::int32_t, 1> z, ct::Scalar<std::int32_t> n) {
  auto v = ct::Tile<std::int32_t>::zeros({16});
  auto i = ct::constant<std::int32_t>(0);
  ct::while_([&] { return i < n; }, [&] {
    i = i + 1;
    v = v + 2;
  });
  ct::if_(n > 3, [&] { v = v * 3; }, [&] { v = -v; });
  z.store(v + i);
}

inline void shapes(ct::Mut<float, 2> z, ct::Ref<float, 1> x) {
  auto t = x.tiles({8}).load({0});
  auto m = ct::reshape(t, {2, 4});
  auto p = ct::permute(m, {1, 0});
  auto c = ct::cat(p, p, 1);
  auto e = ct::extract(c, {0, 2}, {4, 2});
  auto io = ct::iota<std::int32_t>(4).to<float>().reshape({4, 1});
  auto s = ct::cumsum(e + io, 0);
  auto am = ct::argmax(s, 1).to<float>().reshape({4, 1});
  z.store(ct::where(s > 1.0f, s, am));
}

inline void memory(ct::Mut<float, 1> z, ct::Ref<float, 2> x, ct::Ref<std::int32_t, 1> idx, ct::Atomic<float, 1> hist) {
  auto i = ct::iota<std::int64_t>(16);
  auto cols = idx.tiles({16}).load({z.tile_index()[0]});
  auto g = x.gather({i, cols}, 0.5f);
  z.scatter({i}, g);
  hist.add({cols}, g);
}

// ---- larger shapes the performance work cares about --------------------------------------------------------------
inline void softmax_bf16(ct::Mut<ct::bf16, 2> out, ct::Ref<ct::bf16, 2> x) {
  auto row = ct::load_like(x, out, ct::bf16(-INFINITY)).to<float>();
  auto e = ct::exp(row - ct::max(row, 1, true));
  out.store((e / ct::sum(e, 1, true)).to<ct::bf16>());
}

// Column masks of the forms the narrow-index pass rewrites (an i64 iota plus the tile's offset
// against the extent or a constant, every predicate, the index on either side, the iota reshaped
// before or after the add) and two it leaves alone (a bound from a division, an offset compared
// with a scalar argument): mask i adds 2^i to x, so every mask of every element is checked.
inline void column_masks(ct::Mut<float, 2> y, ct::Ref<float, 2> x, ct::Scalar<std::int64_t> s) {
  auto [row, col] = y.tile_index();
  (void)row;
  const auto [bm, bn] = y.tile_shape();
  (void)bm;
  auto n = x.extent(1);
  auto idx = (ct::iota<std::int64_t>(bn) + col * bn).reshape({1, bn});
  auto idx2 = ct::iota<std::int64_t>(bn).reshape({1, bn}) + col * bn;
  const ct::Tile<bool> masks[] = {idx < n,      idx <= n - 3, n > idx,        idx >= n / 2,
                                  idx == n - 1, idx2 != s,    idx2 > n - 5, idx < 37};
  auto acc = ct::load_like(x, y);
  float bit = 1.0f;
  for (const auto& m : masks) {
    acc = ct::where(m, acc + bit, acc);
    bit *= 2.0f;
  }
  y.store(acc);
}

inline void layer_norm(ct::Mut<ct::bf16, 2> y, ct::Ref<ct::bf16, 2> x, ct::Ref<ct::bf16, 1> w, ct::Ref<ct::bf16, 1> b,
                ct::Scalar<float> eps) {
  const auto [bm, bn] = y.tile_shape();
  auto [row, col] = y.tile_index();
  auto xf = ct::load_like(x, y).to<float>();
  auto n = x.extent(1).to<float>();
  auto mean = ct::sum(xf, 1, true) / n;
  auto valid = (ct::iota<std::int64_t>(bn).reshape({1, bn}) + col * bn) < x.extent(1);
  auto d = ct::where(valid, xf - mean, 0.0f);
  auto inv = ct::rsqrt(ct::sum(d * d, 1, true) / n + eps);
  auto wf = w.tiles({bn}).load({col}).to<float>().reshape({1, bn});
  auto bf = b.tiles({bn}).load({col}).to<float>().reshape({1, bn});
  y.store((d * inv * wf + bf).to<ct::bf16>());
}


// Each approximate function once, on inputs in their documented ranges (positive for log, sqrt
// and rsqrt), every output its own row, so each gets its op's bound.
inline void approx_math(ct::Mut<float, 2> out, ct::Ref<float, 2> x) {
  auto t = ct::load_like(x, out, 1.0f);                    // [4, 256]
  auto a = ct::abs(t) + 0.5f;                              // in [0.5, ...)
  auto rows = ct::iota<std::int32_t>(4).reshape({4, 1});
  auto pick = [&](int r, const ct::Tile<float>& v, const ct::Tile<float>& rest) { return ct::where(rows == r, v, rest); };
  out.store(pick(0, ct::exp(t, ct::approx), pick(1, ct::log2(a, ct::approx), pick(2, ct::rsqrt(a, ct::approx), ct::div(t, a, ct::approx)))));
}

// The math functions beyond the basic set, each into its own output (so each gets its own op's
// bound in the differential tests); f16/bf16 compute in f32.
template <class T>
void math_fns(ct::Mut<T, 1> erf_o, ct::Mut<T, 1> erfc_o, ct::Mut<T, 1> sigmoid_o, ct::Mut<T, 1> log1p_o,
              ct::Mut<T, 1> expm1_o, ct::Mut<T, 1> atan2_o, ct::Ref<T, 1> x, ct::Ref<T, 1> y) {
  auto a = ct::load_like(x, erf_o);
  auto b = ct::load_like(y, erf_o);
  erf_o.store(ct::erf(a));
  erfc_o.store(ct::erfc(a));
  sigmoid_o.store(ct::sigmoid(a));
  log1p_o.store(ct::log1p(ct::abs(a)));
  expm1_o.store(ct::expm1(a));
  atan2_o.store(ct::atan2(a, b));
}

// Bit counts in three widths, and bitcasts (a float's sign flipped through its bits).
inline void bit_ops(ct::Mut<std::int32_t, 1> counts, ct::Mut<std::uint8_t, 1> clz8, ct::Mut<std::int64_t, 1> clz64,
                    ct::Mut<float, 1> flipped, ct::Ref<std::int32_t, 1> x, ct::Ref<float, 1> f) {
  auto v = ct::load_like(x, counts);
  counts.store(ct::popcount(v) * 100 + ct::clz(v));
  clz8.store(ct::clz(v.to<std::uint8_t>()) + ct::popcount(v.to<std::uint8_t>()));
  clz64.store(ct::clz(v.to<std::int64_t>() * 1000003));
  auto bits = ct::bitcast<std::uint32_t>(ct::load_like(f, flipped));
  flipped.store(ct::bitcast<float>(bits ^ 0x80000000u));
}

// any/all of bool tiles along each axis, and the documented max/min spelling of the same.
inline void bool_reduce(ct::Mut<bool, 2> any_rows, ct::Mut<bool, 2> all_cols, ct::Mut<bool, 2> max_min,
                        ct::Ref<std::int32_t, 2> x) {
  auto v = ct::load_like(x, max_min);          // [8, 32]
  auto pos = v > 2;                            // the fill is in [-8, 23]: mostly true
  auto big = v > 20;                           // mostly false
  any_rows.store(ct::any(big, 1, true));       // [8, 1]
  all_cols.store(ct::all(pos, 0, true));       // [1, 32]
  max_min.store(ct::max(big, 0, true) != ct::min(pos, 1, true));
}

// The scan family: every combine, exclusive and reverse, along both axes of a [4, 64] tile.
template <class T>
void scans(ct::Mut<T, 2> sum_ex, ct::Mut<T, 2> prod_rev, ct::Mut<T, 2> max_ex_rev, ct::Mut<T, 2> min_in, ct::Ref<T, 2> x) {
  auto v = ct::load_like(x, sum_ex);
  sum_ex.store(ct::cumsum(v, 1, ct::exclusive));
  prod_rev.store(ct::cumprod(v, 0, ct::reverse));
  max_ex_rev.store(ct::cummax(v, 1, ct::exclusive | ct::reverse));
  min_in.store(ct::cummin(v, 0));
}

// Random tiles from (seed, offset): uniform, normal and raw bits of one counter per element
// (row * 1000 + column over the whole tensor), and dropout with the uniform numbers.
inline void random_tiles(ct::Mut<float, 2> u, ct::Mut<float, 2> n, ct::Mut<std::uint32_t, 2> bits, ct::Mut<float, 2> dropped,
                         ct::Ref<float, 2> x, ct::Scalar<std::int64_t> seed) {
  auto [i, j] = u.tile_index();
  const auto [bm, bn] = u.tile_shape();
  auto rows = ct::iota<std::int64_t>(bm).reshape({bm, 1}) + i * bm;
  auto cols = ct::iota<std::int64_t>(bn).reshape({1, bn}) + j * bn;
  auto off = rows * 1000 + cols;
  u.store(ct::rand(seed, off));
  n.store(ct::randn(seed, off));
  bits.store(ct::rand_bits(seed + 1, off.to<std::uint32_t>()));
  auto keep = ct::rand(seed, off + (1 << 20)) >= 0.25f;
  dropped.store(ct::where(keep, ct::load_like(x, dropped) * (1.0f / 0.75f), 0.0f));
}

// 16-bit float atomics: a histogram of bf16 weights into 16 bins (neighbouring bins share a
// 32-bit word), and the running max and min of f16 values.
inline void half_atomics(ct::Atomic<ct::bf16, 1> hist, ct::Atomic<ct::f16, 1> extremes, ct::Ref<ct::bf16, 1> w,
                         ct::Ref<ct::f16, 1> v) {
  auto b = ct::block_id(0);
  auto weights = w.tiles({256}).load({b});
  (void)hist.add({ct::iota<std::int64_t>(256) % 16}, weights);
  auto x = v.tiles({256}).load({b});
  (void)extremes.max({ct::iota<std::int64_t>(256) % 2}, x);
  (void)extremes.min({ct::iota<std::int64_t>(256) % 2 + 2}, x);
}

// fp8 atomics (a compare-and-swap on the 32-bit word holding four elements): a histogram of e4m3
// weights into 16 bins, and the running max and min of e5m2 values in neighbouring bytes.
inline void fp8_atomics(ct::Atomic<ct::f8e4m3, 1> hist, ct::Atomic<ct::f8e5m2, 1> extremes, ct::Ref<ct::f8e4m3, 1> w,
                        ct::Ref<ct::f8e5m2, 1> v) {
  auto b = ct::block_id(0);
  auto weights = w.tiles({256}).load({b});
  (void)hist.add({ct::iota<std::int64_t>(256) % 16}, weights);
  auto x = v.tiles({256}).load({b});
  (void)extremes.max({ct::iota<std::int64_t>(256) % 2}, x);
  (void)extremes.min({ct::iota<std::int64_t>(256) % 2 + 2}, x);
}

// ---- reductions and scans over a combine function (ct::reduce, ct::scan) ----------------------------------------
// The combine function of an argmax over (value, index) pairs: the larger value, the smaller index
// on ties, NaN below every number (a total order, so associative and commutative: any order of
// combination gives the same pair, as ct::argmax's first-index rule does).
struct LargerThenFirst {
  template <class V, class I>
  std::tuple<V, I> operator()(const std::tuple<V, I>& a, const std::tuple<V, I>& b) const {
    const auto& [av, ai] = a;
    const auto& [bv, bi] = b;
    // One op-making operand per expression: C++ leaves the order of an operator's operands
    // unspecified, and the traced IR must not depend on the compiler.
    const auto a_nan = av != av;
    const auto b_nan = bv != bv;
    const auto a_num = ~a_nan;
    const auto b_num = ~b_nan;
    const auto first = bi < ai;
    const auto same = bv == av;
    const auto greater = bv > av;
    const auto larger = greater | (same & first);
    const auto both_num = a_num & b_num;
    const auto b_wins_num = both_num & larger;
    const auto b_wins_nan = a_nan & (b_num | first);
    const auto take_b = b_wins_nan | b_wins_num;
    return std::tuple<V, I>{ct::where(take_b, bv, av), ct::where(take_b, bi, ai)};
  }
};

// Along axis A of the [BM, BN] tile of block (i, j): a sum by a combine function beside ct::sum,
// and the largest magnitude. The outputs keep the axis (pieces of [BM, 1] or [1, BN]).
template <class T, std::int64_t BM, std::int64_t BN, int A>
void combine_reduce(ct::Mut<T, 2> sum_fn, ct::Mut<T, 2> sum_builtin, ct::Mut<T, 2> max_abs, ct::Ref<T, 2> x) {
  auto t = x.tiles({BM, BN}).load({ct::block_id(0), ct::block_id(1)});
  sum_fn.store(ct::reduce(t, A, [](auto a, auto b) { return a + b; }, true));
  sum_builtin.store(ct::sum(t, A, true));
  max_abs.store(ct::reduce(t, A, [](auto a, auto b) {
    const auto ma = ct::abs(a);
    const auto mb = ct::abs(b);
    return ct::maximum(ma, mb);
  }, true));
}

// The largest element of each row of the [BM, BN] tile and its column (in the tensor), as a
// reduction of (value, index) pairs, beside ct::argmax (which also takes the first on ties).
template <class T, std::int64_t BM, std::int64_t BN>
void combine_argmax(ct::Mut<T, 2> best, ct::Mut<std::int64_t, 2> at, ct::Mut<std::int64_t, 2> builtin_at, ct::Ref<T, 2> x) {
  const auto i = ct::block_id(0);
  const auto j = ct::block_id(1);
  const auto base = j * BN;
  auto t = x.tiles({BM, BN}).load({i, j});
  auto cols = ct::broadcast(ct::reshape(ct::iota<std::int64_t>(BN), {1, BN}), {BM, BN}) + base;
  auto [v, c] = ct::reduce(std::tuple{t, cols}, 1, LargerThenFirst{}, true);
  best.store(v);
  at.store(c);
  builtin_at.store(ct::argmax(t, 1, true) + base);
}

// Scans along axis A of the [BM, BN] tile: the running largest magnitude (an inclusive scan of
// |x|), the product of the elements after each one (exclusive, reverse, identity 1), and a running
// argmax over (value, position along the axis) pairs.
template <class T, std::int64_t BM, std::int64_t BN, int A>
void combine_scan(ct::Mut<T, 2> run_max_abs, ct::Mut<T, 2> after_prod, ct::Mut<T, 2> run_best, ct::Mut<std::int32_t, 2> run_at,
                  ct::Ref<T, 2> x) {
  auto t = x.tiles({BM, BN}).load({ct::block_id(0), ct::block_id(1)});
  run_max_abs.store(ct::scan(ct::abs(t), A, [](auto a, auto b) { return ct::maximum(a, b); }));
  after_prod.store(ct::scan(t, A, [](auto a, auto b) { return a * b; }, ct::exclusive | ct::reverse, T(1)));
  const ct::Shape along = A == 0 ? ct::Shape{BM, 1} : ct::Shape{1, BN};
  auto pos = ct::broadcast(ct::reshape(ct::iota<std::int32_t>(A == 0 ? BM : BN), along), {BM, BN});
  auto [v, p] = ct::scan(std::tuple{t, pos}, A, LargerThenFirst{});
  run_best.store(v);
  run_at.store(p);
}

// A whole 1-D tile of N elements to one element, two values at once: its smallest and largest
// element (across every thread and warp of the tile block).
template <class T, std::int64_t N>
void combine_extremes(ct::Mut<T, 1> lo, ct::Mut<T, 1> hi, ct::Ref<T, 1> x) {
  auto t = x.tiles({N}).load({ct::block_id(0)});
  auto [l, h] = ct::reduce(std::tuple{t, t}, 0, [](auto a, auto b) {
    return std::tuple{ct::minimum(std::get<0>(a), std::get<0>(b)), ct::maximum(std::get<1>(a), std::get<1>(b))};
  }, true);
  lo.store(l);
  hi.store(h);
}

}  // namespace test_kernels
