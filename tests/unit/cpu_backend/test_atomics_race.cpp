// Atomics from many blocks and the race checker of ScatterUnchecked.
#include <numeric>

#include "helpers.hpp"

namespace cpu_test {
namespace {

using ir::AtomicKind;

TEST(CpuAtomics, SumOfOneMillionI64ViaBlockPartialSums) {
  const std::int64_t N = 1 << 20;
  KB kb("atomic_sum");
  const ValueId x = kb.tensor("x", DType::i64, 1);
  const ValueId total = kb.tensor("total", DType::i64, 1, ir::Access::Atomic);
  const ValueId t = kb.load(kb.partition(x, {1024}), {kb.block_id(0)});
  const ValueId s = kb.reshape(kb.reduce(ir::ReduceKind::Sum, t, 0), {1});
  kb.atomic(AtomicKind::Add, total, {kb.constant(DType::i64, {1}, ir::Scalar::of_int(0))}, s);
  std::mt19937_64 g(70);
  std::vector<std::int64_t> v(N);
  for (auto& e : v) e = static_cast<std::int64_t>(g() % 2000001) - 1000000;
  std::vector<std::int64_t> tot{5};
  launch(kb.finish(), {N / 1024}, {targ(v, {N}), targ(tot, {1})});
  EXPECT_EQ(tot[0], 5 + std::accumulate(v.begin(), v.end(), std::int64_t{0}));
}

TEST(CpuAtomics, ElementwiseF64AddsIntoOneElement) {
  // every element is added atomically (index tile of zeros): 2^18 contended adds of integers
  const std::int64_t N = 1 << 18;
  KB kb("atomic_f64");
  const ValueId x = kb.tensor("x", DType::f64, 1);
  const ValueId total = kb.tensor("total", DType::f64, 1, ir::Access::Atomic);
  const ValueId t = kb.load(kb.partition(x, {1024}), {kb.block_id(0)});
  kb.atomic(AtomicKind::Add, total, {kb.constant(DType::i32, {1024}, ir::Scalar::of_int(0))}, t);
  std::vector<double> v(N);
  double want = 0;
  for (std::int64_t i = 0; i < N; ++i) want += v[static_cast<std::size_t>(i)] = static_cast<double>(i % 1000 - 300);
  std::vector<double> tot{0.0, -1.0};
  launch(kb.finish(), {N / 1024}, {targ(v, {N}), targ(tot.data(), DType::f64, {1})});
  EXPECT_EQ(tot[0], want);
  EXPECT_EQ(tot[1], -1.0);
}

TEST(CpuAtomics, MaxMinExchReturnOldValuesInElementOrder) {
  // one block: slot[0] updated by the 4 values in order; olds are returned; index 5 (out of
  // bounds of a [2] tensor) is skipped with old = 0.
  for (AtomicKind kind : {AtomicKind::Add, AtomicKind::Max, AtomicKind::Min, AtomicKind::Exch}) {
    KB kb("atomic_old");
    const ValueId slot = kb.tensor("slot", DType::i32, 1, ir::Access::Atomic);
    const ValueId val = kb.tensor("val", DType::i32, 1);
    const ValueId idx = kb.tensor("idx", DType::u32, 1);
    const ValueId out = kb.piece("old", DType::i32, {8});
    const ValueId v = kb.load(kb.partition(val, {8}), {kb.i64c(0)});
    const ValueId i = kb.load(kb.partition(idx, {8}), {kb.i64c(0)});
    kb.store_piece(out, kb.atomic(kind, slot, {i}, v));
    std::vector<std::int32_t> s{10, 100}, vals{5, 20, -3, 15, 7, 1, 2, 3}, old(8, -99);
    std::vector<std::uint32_t> ix{0, 0, 0, 0, 5, 1, 1, 1};
    launch(kb.finish(), {1}, {targ(s, {2}), targ(vals, {8}), targ(ix, {8}), targ(old, {8})});
    std::int32_t ref[2] = {10, 100};
    std::vector<std::int32_t> want_old;
    for (std::size_t e = 0; e < 8; ++e) {
      if (ix[e] >= 2) {
        want_old.push_back(0);
        continue;
      }
      std::int32_t& r = ref[ix[e]];
      want_old.push_back(r);
      switch (kind) {
        case AtomicKind::Add: r += vals[e]; break;
        case AtomicKind::Max: r = std::max(r, vals[e]); break;
        case AtomicKind::Min: r = std::min(r, vals[e]); break;
        case AtomicKind::Exch: r = vals[e]; break;
      }
    }
    EXPECT_EQ(old, want_old) << ir::atomic_name(kind);
    EXPECT_EQ(s, (std::vector<std::int32_t>{ref[0], ref[1]})) << ir::atomic_name(kind);
  }
}

TEST(CpuAtomics, MaxMinAcrossBlocksF32AndU64) {
  const std::int64_t N = 1 << 16;
  auto x = random_floats(N, 71, -1e6f, 1e6f);
  std::vector<std::uint64_t> u(N);
  std::mt19937_64 g(72);
  for (auto& e : u) e = g();
  KB kb("atomic_minmax");
  const ValueId xf = kb.tensor("xf", DType::f32, 1);
  const ValueId xu = kb.tensor("xu", DType::u64, 1);
  const ValueId rf = kb.tensor("rf", DType::f32, 1, ir::Access::Atomic);
  const ValueId ru = kb.tensor("ru", DType::u64, 1, ir::Access::Atomic);
  const ValueId tf = kb.load(kb.partition(xf, {256}), {kb.block_id(0)});
  const ValueId tu = kb.load(kb.partition(xu, {256}), {kb.block_id(0)});
  const ValueId z = kb.constant(DType::i64, {256}, ir::Scalar::of_int(0));
  const ValueId one = kb.constant(DType::i64, {256}, ir::Scalar::of_int(1));
  kb.atomic(AtomicKind::Max, rf, {z}, tf);
  kb.atomic(AtomicKind::Min, rf, {one}, tf);
  kb.atomic(AtomicKind::Max, ru, {z}, tu);
  kb.atomic(AtomicKind::Min, ru, {one}, tu);
  std::vector<float> rfv{-std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()};
  std::vector<std::uint64_t> ruv{0, ~0ull};
  launch(kb.finish(), {N / 256}, {targ(x, {N}), targ(u, {N}), targ(rfv, {2}), targ(ruv, {2})});
  EXPECT_EQ(rfv[0], *std::max_element(x.begin(), x.end()));
  EXPECT_EQ(rfv[1], *std::min_element(x.begin(), x.end()));  // a NaN start is replaced (fmin)
  EXPECT_EQ(ruv[0], *std::max_element(u.begin(), u.end()));
  EXPECT_EQ(ruv[1], *std::min_element(u.begin(), u.end()));
}

TEST(CpuAtomics, CompareExchangeClaimsOnce) {
  // 300 blocks try CAS(flag[0], 0 -> block + 1); exactly one sees old 0, the rest see the winner.
  const std::int64_t n = 300;
  KB kb("claim");
  const ValueId flag = kb.tensor("flag", DType::u32, 1, ir::Access::Atomic);
  const ValueId out = kb.piece("old", DType::u32, {1});
  const ValueId mine = kb.convert(kb.reshape(kb.binary(ir::BinaryFn::Add, kb.block_id(0), kb.i64c(1)), {1}), DType::u32);
  const ValueId old = kb.cas(flag, {kb.constant(DType::i64, {1}, ir::Scalar::of_int(0))},
                             kb.constant(DType::u32, {1}, ir::Scalar::of_int(0)), mine);
  kb.cas(flag, {kb.constant(DType::i64, {1}, ir::Scalar::of_int(-1))}, mine, mine);  // out of bounds: no-op
  kb.store_piece(out, old);
  std::vector<std::uint32_t> f{0}, o(n, 12345);
  launch(kb.finish(), {n}, {targ(f, {1}), targ(o, {n})});
  ASSERT_GE(f[0], 1u);
  ASSERT_LE(f[0], static_cast<std::uint32_t>(n));
  int zeros = 0;
  for (std::int64_t b = 0; b < n; ++b) {
    if (o[static_cast<std::size_t>(b)] == 0) {
      ++zeros;
      EXPECT_EQ(f[0], static_cast<std::uint32_t>(b + 1));
    } else {
      EXPECT_EQ(o[static_cast<std::size_t>(b)], f[0]);
    }
  }
  EXPECT_EQ(zeros, 1);
}

// dst[rows[b], cols[b]] = b for block b = (b0, b1) of a [2, 3] grid (linear b = 3 b0 + b1); each
// block also stores its element `twice` times (same block: not a race).
std::shared_ptr<const ir::Kernel> scatter_kernel(int twice = 1) {
  KB kb("scatter", 2);
  const ValueId rows = kb.tensor("rows", DType::i64, 1);
  const ValueId dst = kb.tensor("dst", DType::i32, 2, ir::Access::Unchecked);
  const ValueId cols = kb.tensor("cols", DType::i64, 1);
  const ValueId lin = kb.binary(ir::BinaryFn::Add, kb.binary(ir::BinaryFn::Mul, kb.block_id(0), kb.i64c(3)), kb.block_id(1));
  const std::int64_t n = twice;
  auto rep = [&](ValueId one) { return n == 1 ? one : kb.broadcast(one, {n}); };
  const ValueId r = rep(kb.load(kb.partition(rows, {1}), {lin}));
  const ValueId c = rep(kb.load(kb.partition(cols, {1}), {lin}));
  kb.scatter(OpKind::ScatterUnchecked, dst, {r, c}, rep(kb.convert(kb.reshape(lin, {1}), DType::i32)));
  return kb.finish();
}

// f16/bf16 atomics: every element adds into one of 3 bins (neighbouring 16-bit elements of one
// 32-bit word, and one more), from 64 blocks. Within a block the addends of a bin come in pairs
// +a, -a (multiples of 1/4), so whatever the order of the blocks' updates every partial sum stays
// a small multiple of 1/4 that the 16-bit type holds exactly: the result does not depend on it.
template <class H>
void half_atomic_add_bins(int mags) {
  const std::int64_t N = 1 << 14;
  KB kb("atomic_half_add");
  const ValueId x = kb.tensor("x", dtype_of<H>, 1);
  const ValueId bins = kb.tensor("bins", dtype_of<H>, 1, ir::Access::Atomic);
  const ValueId t = kb.load(kb.partition(x, {256}), {kb.block_id(0)});
  const ValueId ix = kb.binary(ir::BinaryFn::Rem, kb.iota(DType::i32, 256), kb.constant(DType::i32, {256}, ir::Scalar::of_int(3)));
  kb.atomic(AtomicKind::Add, bins, {ix}, t);
  std::vector<H> v(N);
  double want[3] = {1, 2, 3};
  for (std::int64_t e = 0; e < N; ++e) {
    const std::int64_t j = (e % 256) / 3;  // the element's index within its bin and block
    const double a = (j % 2 ? -0.25 : 0.25) * static_cast<double>((j / 2 + e / 256) % mags + 1);
    v[static_cast<std::size_t>(e)] = H(static_cast<float>(a));
    want[(e % 256) % 3] += a;
  }
  std::vector<H> b{H(1.0f), H(2.0f), H(3.0f), H(-7.0f)};  // the 4th is untouched (same word as the 3rd)
  launch(kb.finish(), {N / 256}, {targ(v, {N}), targ(b.data(), dtype_of<H>, {3})});
  for (int k = 0; k < 3; ++k) EXPECT_EQ(static_cast<float>(b[static_cast<std::size_t>(k)]), want[k]) << dtype_name(dtype_of<H>) << " bin " << k;
  EXPECT_EQ(static_cast<float>(b[3]), -7.0f);
}
TEST(CpuAtomics, HalfFloatAddsAreExactWhenTheSumsAre) {
  half_atomic_add_bins<f16>(4);   // partial sums within 64 * 1 + 3
  half_atomic_add_bins<bf16>(1);  // within 64 * 0.25 + 3
}

// Max, min, exchange and the old values, in element order within one block (as for i32 above).
template <class H>
void half_atomic_kinds() {
  for (AtomicKind kind : {AtomicKind::Add, AtomicKind::Max, AtomicKind::Min, AtomicKind::Exch}) {
    KB kb("atomic_half_old");
    const ValueId slot = kb.tensor("slot", dtype_of<H>, 1, ir::Access::Atomic);
    const ValueId val = kb.tensor("val", dtype_of<H>, 1);
    const ValueId out = kb.piece("old", dtype_of<H>, {4});
    const ValueId v = kb.load(kb.partition(val, {4}), {kb.i64c(0)});
    kb.store_piece(out, kb.atomic(kind, slot, {kb.constant(DType::i64, {4}, ir::Scalar::of_int(1))}, v));
    std::vector<H> s{H(9.0f), H(0.5f)}, vals{H(2.0f), H(-1.5f), H(NAN), H(0.75f)}, old(4, H(-99.0f));
    launch(kb.finish(), {1}, {targ(s.data(), dtype_of<H>, {2}), targ(vals, {4}), targ(old, {4})});
    float ref = 0.5f;
    for (int e = 0; e < 4; ++e) {
      const float x = static_cast<float>(vals[static_cast<std::size_t>(e)]);
      const float got_old = static_cast<float>(old[static_cast<std::size_t>(e)]);
      if (std::isnan(ref)) {
        EXPECT_TRUE(std::isnan(got_old)) << ir::atomic_name(kind) << " " << e;
      } else {
        EXPECT_EQ(got_old, ref) << ir::atomic_name(kind) << " " << e;
      }
      switch (kind) {
        case AtomicKind::Add: ref = static_cast<float>(H(ref + x)); break;
        case AtomicKind::Max: ref = std::fmax(ref, x); break;
        case AtomicKind::Min: ref = std::fmin(ref, x); break;
        case AtomicKind::Exch: ref = x; break;
      }
    }
    const float fin = static_cast<float>(s[1]);
    if (std::isnan(ref)) {
      EXPECT_TRUE(std::isnan(fin)) << ir::atomic_name(kind);
    } else {
      EXPECT_EQ(fin, ref) << ir::atomic_name(kind);
    }
    EXPECT_EQ(static_cast<float>(s[0]), 9.0f) << "the other half of the word";
  }
}
TEST(CpuAtomics, HalfFloatMaxMinExchAndOldValues) {
  half_atomic_kinds<f16>();
  half_atomic_kinds<bf16>();
}

TEST(CpuRaceChecker, ReportsOverlappingUncheckedStores) {
  std::vector<std::int64_t> rows{0, 1, 3, 3, 5, 6}, cols{0, 1, 7, 7, 2, 0};  // blocks (0, 2) and (1, 0) overlap
  std::vector<std::int32_t> d(64, -1);
  try {
    launch(scatter_kernel(), {2, 3}, {targ(rows, {6}), targ(d, {8, 8}), targ(cols, {6})}, true);
    FAIL() << "race not reported";
  } catch (const RaceError& e) {
    EXPECT_EQ(e.message(),
              "race in kernel 'scatter': element [3, 7] of parameter 'dst' (argument 1) was stored by tile block (0, "
              "2) and tile block (1, 0)");
  }
  // the launch finished: every block stored its element
  EXPECT_EQ(d[0], 0);
  EXPECT_EQ(d[9], 1);
  EXPECT_TRUE(d[3 * 8 + 7] == 2 || d[3 * 8 + 7] == 3);
  EXPECT_EQ(d[5 * 8 + 2], 4);
  EXPECT_EQ(d[6 * 8 + 0], 5);
}

TEST(CpuRaceChecker, SilentForDisjointStoresAndRepeatedStoresOfOneBlock) {
  std::vector<std::int64_t> rows{0, 1, 3, 4, 5, 6}, cols{0, 1, 7, 7, 2, 0};
  for (int twice : {1, 2}) {
    std::vector<std::int32_t> d(64, -1);
    EXPECT_NO_THROW(launch(scatter_kernel(twice), {2, 3}, {targ(rows, {6}), targ(d, {8, 8}), targ(cols, {6})}, true));
    EXPECT_EQ(d[3 * 8 + 7], 2);
    EXPECT_EQ(d[4 * 8 + 7], 3);
  }
  // and off by default: the overlapping kernel runs without a report
  std::vector<std::int64_t> rows2{0, 1, 3, 3, 5, 6};
  std::vector<std::int32_t> d(64, -1);
  EXPECT_NO_THROW(launch(scatter_kernel(), {2, 3}, {targ(rows2, {6}), targ(d, {8, 8}), targ(cols, {6})}, false));
}

TEST(CpuRaceChecker, ManyBlocksOverlappingPicksTheSmallestElement) {
  // 1-D: 64 blocks each store 64 elements at [b * 32, b * 32 + 64): neighbours overlap; the report
  // names the first overlapping element, 32, stored by blocks (0) and (1).
  KB kb("overlap");
  const ValueId dst = kb.tensor("out", DType::f32, 1, ir::Access::Unchecked);
  const ValueId base = kb.broadcast(kb.reshape(kb.binary(ir::BinaryFn::Mul, kb.block_id(0), kb.i64c(32)), {1}), {64});
  const ValueId idx = kb.binary(ir::BinaryFn::Add, base, kb.iota(DType::i64, 64));
  kb.scatter(OpKind::ScatterUnchecked, dst, {idx}, kb.fconst(DType::f32, {64}, 1.0));
  std::vector<float> d(64 * 32 + 32);
  try {
    launch(kb.finish(), {64}, {targ(d, {64 * 32 + 32})}, true);
    FAIL() << "race not reported";
  } catch (const RaceError& e) {
    EXPECT_EQ(e.message(), "race in kernel 'overlap': element [32] of parameter 'out' (argument 0) was stored by tile block (0) and tile block (1)");
  }
}

}  // namespace
}  // namespace cpu_test
