// Loads, stores, padding and masking, strided tensors, gather/scatter, grid queries, 64-bit indexing.
#include <thread>

#include "helpers.hpp"

namespace cpu_test {
namespace {

constexpr float kPoison = -12345.0f;

// out = in * 2 + 1 over a 2-D grid of 8x16 tiles; extents not multiples of the tile.
std::shared_ptr<const ir::Kernel> affine_kernel() {
  KB kb("affine", 2);
  const ValueId in = kb.tensor("in", DType::f32, 2);
  const ValueId out = kb.piece("out", DType::f32, {8, 16});
  const ValueId p = kb.partition(in, {8, 16});
  const ValueId x = kb.load(p, {kb.block_id(0), kb.block_id(1)}, ir::Scalar::of_float(-1.0));
  const ValueId y = kb.fma(x, kb.fconst(DType::f32, {8, 16}, 2.0), kb.fconst(DType::f32, {8, 16}, 1.0));
  kb.store_piece(out, y);
  return kb.finish();
}

TEST(CpuMemory, LoadStoreNonDivisibleExtents) {
  const std::int64_t R = 37, C = 53, LD = 64;  // output rows padded to LD: columns C..LD-1 must stay poisoned
  auto in = random_floats(static_cast<std::size_t>(R * C), 1);
  std::vector<float> out(static_cast<std::size_t>((R + 3) * LD), kPoison);
  launch(affine_kernel(), {ceil_div(R, 8), ceil_div(C, 16)}, {targ(in, {R, C}), targ(out, {R, C}, {LD, 1})});
  for (std::int64_t i = 0; i < R + 3; ++i)
    for (std::int64_t j = 0; j < LD; ++j) {
      const float got = out[static_cast<std::size_t>(i * LD + j)];
      if (i < R && j < C)
        ASSERT_EQ(got, std::fma(in[static_cast<std::size_t>(i * C + j)], 2.0f, 1.0f)) << i << "," << j;
      else
        ASSERT_EQ(got, kPoison) << i << "," << j;
    }
}

TEST(CpuMemory, StridedViews) {
  // in: the transpose of a 50x70 matrix (shape [70, 50], strides [1, 70]) read through a column
  // slice; out: every other column of a wider buffer.
  const std::int64_t R = 70, C = 50;
  auto base = random_floats(static_cast<std::size_t>(R * C + 5), 2);
  std::vector<float> out(static_cast<std::size_t>(R * C * 2 + 10), kPoison);
  // in[i, j] = base[5 + i + j * R]
  launch(affine_kernel(), {ceil_div(R, 8), ceil_div(C, 16)},
         {targ(base.data() + 5, DType::f32, {R, C}, {1, R}), targ(out.data() + 1, DType::f32, {R, C}, {2 * C, 2})});
  for (std::int64_t i = 0; i < R; ++i)
    for (std::int64_t j = 0; j < C; ++j)
      ASSERT_EQ(out[static_cast<std::size_t>(1 + i * 2 * C + 2 * j)],
                std::fma(base[static_cast<std::size_t>(5 + i + j * R)], 2.0f, 1.0f));
  std::size_t poisoned = 0;
  for (float v : out) poisoned += v == kPoison;
  EXPECT_EQ(poisoned, out.size() - static_cast<std::size_t>(R * C));
}

TEST(CpuMemory, BroadcastViewsWithStrideZero) {
  // Shared::expand views: a row read for every row (strides [0, 1]) and a column read for every
  // column (strides [1, 0]); extents not multiples of the tile, so the pad and mask paths see them.
  const std::int64_t R = 37, C = 53;
  auto row = random_floats(static_cast<std::size_t>(C), 3);
  auto col = random_floats(static_cast<std::size_t>(R), 4);
  std::vector<float> out_r(static_cast<std::size_t>(R * C), kPoison), out_c(static_cast<std::size_t>(R * C), kPoison);
  launch(affine_kernel(), {ceil_div(R, 8), ceil_div(C, 16)}, {targ(row.data(), DType::f32, {R, C}, {0, 1}), targ(out_r, {R, C})});
  launch(affine_kernel(), {ceil_div(R, 8), ceil_div(C, 16)}, {targ(col.data(), DType::f32, {R, C}, {1, 0}), targ(out_c, {R, C})});
  for (std::int64_t i = 0; i < R; ++i)
    for (std::int64_t j = 0; j < C; ++j) {
      ASSERT_EQ(out_r[static_cast<std::size_t>(i * C + j)], std::fma(row[static_cast<std::size_t>(j)], 2.0f, 1.0f)) << i << "," << j;
      ASSERT_EQ(out_c[static_cast<std::size_t>(i * C + j)], std::fma(col[static_cast<std::size_t>(i)], 2.0f, 1.0f)) << i << "," << j;
    }
}

TEST(CpuMemory, PaddingValueAndNegativeIndices) {
  // out piece [8] of a [24] tensor: block 0 loads tile index -1 (all pad), block 1 tile 0 of a
  // 5-element input (5 values + 3 pad), block 2 tile 1 (all pad). Pad 7.5 for f32 and 9 for i32.
  for (DType d : {DType::f32, DType::i32}) {
    KB kb("pad");
    const ValueId in = kb.tensor("in", d, 1);
    const ValueId out = kb.piece("out", d, {8});
    const ValueId idx = kb.binary(ir::BinaryFn::Sub, kb.block_id(0), kb.i64c(1));
    const ir::Scalar pad = d == DType::f32 ? ir::Scalar::of_float(7.5) : ir::Scalar::of_int(9);
    kb.store_piece(out, kb.load(kb.partition(in, {8}), {idx}, pad));
    auto k = kb.finish();
    if (d == DType::f32) {
      std::vector<float> a{1, 2, 3, 4, 5}, o(24, 0);
      launch(k, {3}, {targ(a, {5}), targ(o, {24})});
      for (int i = 0; i < 24; ++i) EXPECT_EQ(o[static_cast<std::size_t>(i)], (i >= 8 && i < 13) ? float(i - 7) : 7.5f) << i;
    } else {
      std::vector<std::int32_t> a{1, 2, 3, 4, 5}, o(24, 0);
      launch(k, {3}, {targ(a, {5}), targ(o, {24})});
      for (int i = 0; i < 24; ++i) EXPECT_EQ(o[static_cast<std::size_t>(i)], (i >= 8 && i < 13) ? i - 7 : 9) << i;
    }
  }
}

TEST(CpuMemory, LoadPieceReadsOwnTile) {
  // inout piece [4, 4] of a [6, 7] tensor: x = load_piece(pad 0); store x * x.
  KB kb("square", 2);
  const ValueId io = kb.piece("io", DType::i64, {4, 4});
  const ValueId x = kb.load_piece(io);
  kb.store_piece(io, kb.binary(ir::BinaryFn::Mul, x, x));
  std::vector<std::int64_t> v(42);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::int64_t>(i) - 20;
  launch(kb.finish(), {2, 2}, {targ(v, {6, 7})});
  for (std::size_t i = 0; i < v.size(); ++i) EXPECT_EQ(v[i], (std::int64_t(i) - 20) * (std::int64_t(i) - 20));
}

TEST(CpuMemory, GridQueriesDimAndPartitionCount) {
  // out[b0, b1] (piece [1, 1]) = b0 * 1000 + b1 * 100 + nb0 * 10 + nb1, plus dims in a second output.
  KB kb("grid", 2);
  const ValueId in = kb.tensor("in", DType::f32, 2);
  const ValueId out = kb.piece("out", DType::i64, {1, 1});
  const ValueId info = kb.tensor("info", DType::i64, 1, ir::Access::Unchecked);
  auto mul = [&](ValueId a, std::int64_t c) { return kb.binary(ir::BinaryFn::Mul, a, kb.i64c(c)); };
  auto add = [&](ValueId a, ValueId b2) { return kb.binary(ir::BinaryFn::Add, a, b2); };
  const ValueId v = add(add(mul(kb.block_id(0), 1000), mul(kb.block_id(1), 100)), add(mul(kb.num_blocks(0), 10), kb.num_blocks(1)));
  kb.store_piece(out, kb.reshape(v, {1, 1}));
  const ValueId p = kb.partition(in, {4, 8});
  const ValueId vals = kb.cat(kb.cat(kb.reshape(kb.dim(in, 0), {1}), kb.reshape(kb.dim(in, 1), {1}), 0),
                              kb.cat(kb.reshape(kb.count(p, 0), {1}), kb.reshape(kb.count(p, 1), {1}), 0), 0);
  // only block (0, 0) writes in bounds: indices are offset by 1000 * (b0 + b1)
  const ValueId off = kb.broadcast(kb.reshape(mul(add(kb.block_id(0), kb.block_id(1)), 1000), {1}), {4});
  kb.scatter(OpKind::ScatterUnchecked, info, {kb.binary(ir::BinaryFn::Add, kb.iota(DType::i64, 4), off)}, vals);
  std::vector<float> a(9 * 17);
  std::vector<std::int64_t> o(6, -1), inf(4, -1);
  launch(kb.finish(), {2, 3}, {targ(a, {9, 17}), targ(o, {2, 3}), targ(inf, {4})});
  for (std::int64_t i = 0; i < 2; ++i)
    for (std::int64_t j = 0; j < 3; ++j) EXPECT_EQ(o[static_cast<std::size_t>(i * 3 + j)], i * 1000 + j * 100 + 23);
  EXPECT_EQ(inf, (std::vector<std::int64_t>{9, 17, 3, 3}));
}

TEST(CpuMemory, GatherWithOutOfBoundsIndices) {
  // table [5, 3] (i32); out[e] = table[r[e], c[e]] with pad -1 for out-of-bounds.
  KB kb("gather");
  const ValueId t = kb.tensor("table", DType::i32, 2);
  const ValueId r = kb.tensor("rows", DType::i64, 1);
  const ValueId c = kb.tensor("cols", DType::u8, 1);
  const ValueId out = kb.piece("out", DType::i32, {8});
  const ValueId ri = kb.load(kb.partition(r, {8}), {kb.block_id(0)});
  const ValueId ci = kb.load(kb.partition(c, {8}), {kb.block_id(0)});
  kb.store_piece(out, kb.gather(t, {ri, ci}, ir::Scalar::of_int(-1)));
  std::vector<std::int32_t> table(15);
  for (int i = 0; i < 15; ++i) table[static_cast<std::size_t>(i)] = 100 + i;
  std::vector<std::int64_t> rows{0, 4, -1, 5, 2, 3, std::int64_t(1) << 40, 1};
  std::vector<std::uint8_t> cols{0, 2, 0, 0, 3, 1, 0, 255};
  std::vector<std::int32_t> o(8, 0);
  launch(kb.finish(), {1}, {targ(table, {5, 3}), targ(rows, {8}), targ(cols, {8}), targ(o, {8})});
  EXPECT_EQ(o, (std::vector<std::int32_t>{100, 114, -1, -1, -1, 110, -1, -1}));
}

TEST(CpuMemory, ScatterPieceRelativeIndicesDuplicatesAndDrops) {
  // Each block owns piece [8] of a [20] tensor and scatters 8 values at relative indices
  // {7, 0, 3, 3, -1, 8, 100, 1}: -1, 8 and 100 are dropped, index 3 written twice (last wins),
  // and block 2's piece is cut at 20 (relative 7 is global 23: dropped).
  KB kb("scatter_piece");
  const ValueId out = kb.piece("out", DType::f64, {8});
  const ValueId idx = kb.tensor("idx", DType::i32, 1);
  const ValueId i = kb.load(kb.partition(idx, {8}), {kb.i64c(0)});
  const ValueId base = kb.convert(kb.broadcast(kb.reshape(kb.block_id(0), {1}), {8}), DType::f64);
  const ValueId v = kb.binary(ir::BinaryFn::Add, kb.binary(ir::BinaryFn::Mul, base, kb.fconst(DType::f64, {8}, 100.0)),
                              kb.convert(kb.iota(DType::i32, 8), DType::f64));
  kb.scatter(OpKind::ScatterPiece, out, {i}, v);
  std::vector<std::int32_t> ix{7, 0, 3, 3, -1, 8, 100, 1};
  std::vector<double> o(24, -1.0);
  launch(kb.finish(), {3}, {targ(o.data(), DType::f64, {20}), targ(ix, {8})});
  for (int b = 0; b < 3; ++b) {
    auto at = [&](int rel) { return o[static_cast<std::size_t>(b * 8 + rel)]; };
    EXPECT_EQ(at(0), b * 100 + 1);
    EXPECT_EQ(at(1), b * 100 + 7);
    EXPECT_EQ(at(3), b * 100 + 3);
    EXPECT_EQ(at(2), -1.0);
    if (b < 2) EXPECT_EQ(at(7), b * 100 + 0);
    else EXPECT_EQ(at(7), -1.0);  // global 23: outside the tensor
  }
}

TEST(CpuMemory, ScatterUncheckedPermutationFromManyBlocks) {
  // dst[perm[i]] = src[i] + 0.5 over 4096 elements in blocks of 256, with the race checker on
  // (the permutation makes the stores disjoint); out-of-range indices are dropped.
  const std::int64_t N = 4096;
  KB kb("permute_scatter");
  const ValueId src = kb.tensor("src", DType::f32, 1);
  const ValueId perm = kb.tensor("perm", DType::i64, 1);
  const ValueId dst = kb.tensor("dst", DType::f32, 1, ir::Access::Unchecked);
  const ValueId x = kb.load(kb.partition(src, {256}), {kb.block_id(0)});
  const ValueId p = kb.load(kb.partition(perm, {256}), {kb.block_id(0)}, ir::Scalar::of_int(-1));
  kb.scatter(OpKind::ScatterUnchecked, dst, {p},
             kb.binary(ir::BinaryFn::Add, x, kb.fconst(DType::f32, {256}, 0.5)));
  auto s = random_floats(N, 3);
  std::vector<std::int64_t> pm(N);
  for (std::int64_t i = 0; i < N; ++i) pm[static_cast<std::size_t>(i)] = i;
  std::shuffle(pm.begin(), pm.end(), std::mt19937(4));
  pm[17] = N + 3;  // dropped
  pm[18] = -2;     // dropped
  std::vector<float> d(N + 8, kPoison);
  launch(kb.finish(), {N / 256}, {targ(s, {N}), targ(pm, {N}), targ(d, {N})}, /*race_check=*/true);
  std::size_t written = 0;
  for (std::int64_t i = 0; i < N; ++i) {
    const std::int64_t j = pm[static_cast<std::size_t>(i)];
    if (j >= 0 && j < N) {
      EXPECT_EQ(d[static_cast<std::size_t>(j)], s[static_cast<std::size_t>(i)] + 0.5f);
      ++written;
    }
  }
  std::size_t poisoned = 0;
  for (float v : d) poisoned += v == kPoison;
  EXPECT_EQ(poisoned, d.size() - written);
}

TEST(CpuMemory, SixtyFourBitIndexing) {
  // A [2^33 + 5, 4] tensor over a 4-element buffer (row stride 0). Load row tile 2^33 / 2 of tile
  // [2, 4] (rows 2^33, 2^33 + 1: in bounds) and row tile (2^33 + 6) / 2 (past the end: pad), and
  // gather at row 2^32 + 7, storing all into out [3, 4 x 2]; also report Dim and PartitionCount.
  const std::int64_t big = (std::int64_t(1) << 33) + 5;
  KB kb("big");
  const ValueId t = kb.tensor("t", DType::i16, 2);
  const ValueId row = kb.scalar_param("row", DType::i64);
  const ValueId out = kb.tensor("out", DType::i64, 1, ir::Access::Unchecked);
  const ValueId p = kb.partition(t, {2, 4});
  const ValueId in_bounds = kb.load(p, {row, kb.i64c(0)}, ir::Scalar::of_int(-7));
  const ValueId past = kb.load(p, {kb.binary(ir::BinaryFn::Add, row, kb.i64c(3)), kb.i64c(0)}, ir::Scalar::of_int(-7));
  const ValueId gi = kb.constant(DType::i64, {4}, ir::Scalar::of_int((std::int64_t(1) << 32) + 7));
  const ValueId g = kb.gather(t, {gi, kb.iota(DType::i64, 4)});
  const ValueId A = kb.convert(kb.cat(kb.reshape(in_bounds, {8}), kb.reshape(past, {8}), 0), DType::i64);  // [16]
  const ValueId dims = kb.cat(kb.reshape(kb.dim(t, 0), {1}), kb.reshape(kb.count(p, 0), {1}), 0);
  const ValueId B = kb.cat(kb.convert(g, DType::i64), kb.cat(dims, kb.constant(DType::i64, {2}, ir::Scalar::of_int(0)), 0), 0);
  const ValueId vals = kb.cat(A, kb.cat(B, kb.constant(DType::i64, {8}, ir::Scalar::of_int(0)), 0), 0);  // [32]
  kb.scatter(OpKind::ScatterUnchecked, out, {kb.iota(DType::i64, 32)}, vals);
  std::vector<std::int16_t> buf{11, 22, 33, 44};
  std::vector<std::int64_t> o(32, 99);
  launch(kb.finish(), {1},
         {targ(buf.data(), DType::i16, {big, 4}, {0, 1}), sarg(ir::Scalar::of_int(std::int64_t(1) << 32)), targ(o, {32})});
  std::vector<std::int64_t> want{11, 22, 33, 44, 11, 22, 33, 44, -7, -7, -7, -7, -7, -7, -7, -7,
                                 11, 22, 33, 44, big, (big + 1) / 2, 0, 0};
  want.resize(32, 0);
  EXPECT_EQ(o, want);
}

TEST(CpuMemory, BoolTensorsAreBytes) {
  // Bytes other than 0/1 read as true; stores write 0/1.
  KB kb("bools");
  const ValueId in = kb.tensor("in", DType::b1, 1);
  const ValueId out = kb.piece("out", DType::b1, {4});
  kb.store_piece(out, kb.unary(ir::UnaryFn::Not, kb.load(kb.partition(in, {4}), {kb.block_id(0)})));
  std::vector<std::uint8_t> a{0, 1, 7, 255}, o(4, 9);
  launch(kb.finish(), {1}, {targ(a.data(), DType::b1, {4}), targ(o.data(), DType::b1, {4})});
  EXPECT_EQ(o, (std::vector<std::uint8_t>{1, 0, 0, 0}));
}

TEST(CpuMemory, VectorAddOneMillion) {
  const std::int64_t N = (1 << 20) + 3;
  KB kb("vadd");
  const ValueId a = kb.tensor("a", DType::f32, 1);
  const ValueId b = kb.tensor("b", DType::f32, 1);
  const ValueId out = kb.piece("out", DType::f32, {1024});
  const ValueId x = kb.load(kb.partition(a, {1024}), {kb.block_id(0)});
  const ValueId y = kb.load(kb.partition(b, {1024}), {kb.block_id(0)});
  kb.store_piece(out, kb.binary(ir::BinaryFn::Add, x, y));
  auto va = random_floats(N, 5), vb = random_floats(N, 6);
  std::vector<float> o(N, kPoison);
  launch(kb.finish(), {ceil_div(N, 1024)}, {targ(va, {N}), targ(vb, {N}), targ(o, {N})});
  for (std::int64_t i = 0; i < N; ++i) ASSERT_EQ(o[static_cast<std::size_t>(i)], va[static_cast<std::size_t>(i)] + vb[static_cast<std::size_t>(i)]);
}

TEST(CpuMemory, ConcurrentLaunchesFromSeveralThreads) {
  // run() may be called from several threads at once (streams); each launch completes correctly.
  auto k = affine_kernel();
  std::vector<std::thread> threads;
  std::vector<int> ok(6, 0);
  for (int t = 0; t < 6; ++t)
    threads.emplace_back([&, t] {
      const std::int64_t R = 40 + t, C = 70 - t;
      auto in = random_floats(static_cast<std::size_t>(R * C), 100 + static_cast<unsigned>(t));
      std::vector<float> out(static_cast<std::size_t>(R * C));
      for (int rep = 0; rep < 20; ++rep) launch(k, {ceil_div(R, 8), ceil_div(C, 16)}, {targ(in, {R, C}), targ(out, {R, C})});
      bool good = true;
      for (std::size_t i = 0; i < in.size(); ++i) good &= out[i] == std::fma(in[i], 2.0f, 1.0f);
      ok[static_cast<std::size_t>(t)] = good;
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok, std::vector<int>(6, 1));
}

}  // namespace
}  // namespace cpu_test
