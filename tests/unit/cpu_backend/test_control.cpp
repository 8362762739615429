// Structured control flow (for / if / while with carried values), shape ops, constants, errors
// raised inside blocks.
#include "helpers.hpp"

namespace cpu_test {
namespace {

using ir::BinaryFn;
using ir::CmpPred;

// out (piece [1] per block, i64) = the scalar `v` of every block
void store_scalar(KB& kb, ValueId out, ValueId v) { kb.store_piece(out, kb.reshape(v, {1})); }

TEST(CpuControl, ForSumsWithStepsAndEmptyRanges) {
  // out = 1000 + sum_{i = lb; i < ub; i += step} i * i
  KB kb("for_sum");
  const ValueId lb = kb.scalar_param("lb", DType::i64);
  const ValueId ub = kb.scalar_param("ub", DType::i64);
  const ValueId st = kb.scalar_param("step", DType::i64);
  const ValueId out = kb.piece("out", DType::i64, {1});
  auto r = kb.for_(lb, ub, st, {kb.i64c(1000)}, [&](ValueId iv, std::vector<ValueId> c) {
    return std::vector<ValueId>{kb.binary(BinaryFn::Add, c[0], kb.binary(BinaryFn::Mul, iv, iv))};
  });
  store_scalar(kb, out, r[0]);
  auto k = kb.finish();
  const std::int64_t cases[][3] = {{0, 10, 1}, {-7, 20, 3}, {5, 5, 1}, {9, 2, 1}, {0, 100000, 1}, {-3, 4, 100}};
  for (const auto& c : cases) {
    std::vector<std::int64_t> o(1);
    launch(k, {1}, {sarg(ir::Scalar::of_int(c[0])), sarg(ir::Scalar::of_int(c[1])), sarg(ir::Scalar::of_int(c[2])), targ(o, {1})});
    std::int64_t want = 1000;
    for (std::int64_t i = c[0]; i < c[1]; i += c[2]) want += i * i;
    EXPECT_EQ(o[0], want) << c[0] << " " << c[1] << " " << c[2];
  }
}

TEST(CpuControl, ForCarriesSeveralValuesAndNests) {
  // carried: (count: i32 scalar, acc: f32 [4]); inner loop adds iota * (i + j) for j in [0, i)
  KB kb("nested");
  const ValueId out = kb.piece("out", DType::f32, {4});
  const ValueId cnt_out = kb.tensor("cnt", DType::i32, 1, ir::Access::Unchecked);
  const ValueId n = kb.i64c(6);
  const ValueId io = kb.convert(kb.iota(DType::i32, 4), DType::f32);
  auto r = kb.for_(kb.i64c(0), n, kb.i64c(1), {kb.constant(DType::i32, {}, ir::Scalar::of_int(0)), kb.fconst(DType::f32, {4}, 0.5)},
                   [&](ValueId i, std::vector<ValueId> c) {
                     auto in = kb.for_(kb.i64c(0), i, kb.i64c(1), {c[0], c[1]}, [&](ValueId j, std::vector<ValueId> d) {
                       const ValueId ij = kb.convert(kb.broadcast(kb.reshape(kb.binary(BinaryFn::Add, i, j), {1}), {4}), DType::f32);
                       return std::vector<ValueId>{kb.binary(BinaryFn::Add, d[0], kb.constant(DType::i32, {}, ir::Scalar::of_int(1))),
                                                   kb.fma(io, ij, d[1])};
                     });
                     return in;
                   });
  kb.store_piece(out, r[1]);
  kb.scatter(OpKind::ScatterUnchecked, cnt_out, {kb.constant(DType::i64, {1}, ir::Scalar::of_int(0))}, kb.reshape(r[0], {1}));
  std::vector<float> o(4);
  std::vector<std::int32_t> cnt(1);
  launch(kb.finish(), {1}, {targ(o, {4}), targ(cnt, {1})});
  float want[4] = {0.5f, 0.5f, 0.5f, 0.5f};
  int wc = 0;
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < i; ++j) {
      ++wc;
      for (int e = 0; e < 4; ++e) want[e] += static_cast<float>(e * (i + j));
    }
  EXPECT_EQ(cnt[0], wc);
  for (int e = 0; e < 4; ++e) EXPECT_EQ(o[static_cast<std::size_t>(e)], want[e]);
}

TEST(CpuControl, IfSelectsARegionAndYieldsResults) {
  // per block b: if b % 3 == 0 -> tile * 2 else (if b odd -> -tile else tile + 100)
  KB kb("ifs");
  const ValueId in = kb.tensor("in", DType::i32, 1);
  const ValueId out = kb.piece("out", DType::i32, {8});
  const ValueId x = kb.load(kb.partition(in, {8}), {kb.block_id(0)});
  const ValueId b = kb.block_id(0);
  const ValueId c3 = kb.cmp(CmpPred::Eq, kb.binary(BinaryFn::Rem, b, kb.i64c(3)), kb.i64c(0));
  const Type t = kb.type(x);
  auto r = kb.if_(c3, {t}, [&] { return std::vector<ValueId>{kb.binary(BinaryFn::Add, x, x)}; },
                  [&] {
                    const ValueId odd = kb.cmp(CmpPred::Eq, kb.binary(BinaryFn::And, b, kb.i64c(1)), kb.i64c(1));
                    return kb.if_(odd, {t}, [&] { return std::vector<ValueId>{kb.unary(ir::UnaryFn::Neg, x)}; },
                                  [&] { return std::vector<ValueId>{kb.binary(BinaryFn::Add, x, kb.constant(DType::i32, {8}, ir::Scalar::of_int(100)))}; });
                  });
  kb.store_piece(out, r[0]);
  std::vector<std::int32_t> a(64), o(64);
  for (int i = 0; i < 64; ++i) a[static_cast<std::size_t>(i)] = i * 3 - 50;
  launch(kb.finish(), {8}, {targ(a, {64}), targ(o, {64})});
  for (int i = 0; i < 64; ++i) {
    const int blk = i / 8, v = a[static_cast<std::size_t>(i)];
    const int want = blk % 3 == 0 ? 2 * v : (blk % 2 ? -v : v + 100);
    EXPECT_EQ(o[static_cast<std::size_t>(i)], want) << i;
  }
}

TEST(CpuControl, WhileCollatzPerBlock) {
  // x = block + 1, steps = 0; while x != 1 { x = x even ? x / 2 : 3x + 1; steps++ }
  KB kb("collatz");
  const ValueId out = kb.piece("out", DType::i64, {1});
  const ValueId x0 = kb.binary(BinaryFn::Add, kb.block_id(0), kb.i64c(1));
  auto r = kb.while_(
      {x0, kb.i64c(0)}, [&](std::vector<ValueId> a) { return kb.cmp(CmpPred::Ne, a[0], kb.i64c(1)); },
      [&](std::vector<ValueId> a) {
        const ValueId even = kb.cmp(CmpPred::Eq, kb.binary(BinaryFn::Rem, a[0], kb.i64c(2)), kb.i64c(0));
        auto nx = kb.if_(even, {Type::scalar(DType::i64)},
                         [&] { return std::vector<ValueId>{kb.binary(BinaryFn::Div, a[0], kb.i64c(2))}; },
                         [&] { return std::vector<ValueId>{kb.binary(BinaryFn::Add, kb.binary(BinaryFn::Mul, a[0], kb.i64c(3)), kb.i64c(1))}; });
        return std::vector<ValueId>{nx[0], kb.binary(BinaryFn::Add, a[1], kb.i64c(1))};
      });
  store_scalar(kb, out, r[1]);
  const std::int64_t n = 500;
  std::vector<std::int64_t> o(n, -1);
  launch(kb.finish(), {n}, {targ(o, {n})});
  for (std::int64_t b = 0; b < n; ++b) {
    std::int64_t x = b + 1, s = 0;
    while (x != 1) {
      x = x % 2 == 0 ? x / 2 : 3 * x + 1;
      ++s;
    }
    ASSERT_EQ(o[static_cast<std::size_t>(b)], s) << b;
  }
}

TEST(CpuControl, WhileThatNeverRunsYieldsInit) {
  KB kb("while0");
  const ValueId out = kb.piece("out", DType::f64, {2});
  auto r = kb.while_({kb.fconst(DType::f64, {2}, 2.5)},
                     [&](std::vector<ValueId>) { return kb.constant(DType::b1, {}, ir::Scalar::of_int(0)); },
                     [&](std::vector<ValueId> a) { return std::vector<ValueId>{kb.binary(BinaryFn::Mul, a[0], a[0])}; });
  kb.store_piece(out, r[0]);
  std::vector<double> o(2);
  launch(kb.finish(), {1}, {targ(o, {2})});
  EXPECT_EQ(o, (std::vector<double>{2.5, 2.5}));
}

TEST(CpuControl, NonPositiveStepIsAUserErrorAtTheLoop) {
  // blocks 0..3 loop with step 1, blocks 4..7 with step 0: the launch fails with the loop's location.
  KB kb("bad_step");
  const ValueId out = kb.piece("out", DType::i64, {1});
  const ValueId step = kb.binary(BinaryFn::Sub, kb.i64c(1), kb.binary(BinaryFn::Div, kb.block_id(0), kb.i64c(4)));
  kb.loc = SourceLoc("my_kernel.cpp", 77);
  auto r = kb.for_(kb.i64c(0), kb.i64c(3), step, {kb.i64c(0)}, [&](ValueId iv, std::vector<ValueId> c) {
    return std::vector<ValueId>{kb.binary(BinaryFn::Add, c[0], iv)};
  });
  kb.loc = SourceLoc("kernel_test.cpp", 1);
  store_scalar(kb, out, r[0]);
  std::vector<std::int64_t> o(8);
  try {
    launch(kb.finish(), {8}, {targ(o, {8})});
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.message(), "ct.for step must be positive");
    EXPECT_EQ(e.where().str(), "my_kernel.cpp:77");
    EXPECT_NE(std::string(e.what()).find("my_kernel.cpp:77"), std::string::npos);
  }
  // the backend stays usable
  std::vector<std::int64_t> o2(4);
  launch(kb.k, {4}, {targ(o2, {4})});
  EXPECT_EQ(o2, (std::vector<std::int64_t>{3, 3, 3, 3}));
}

TEST(CpuShape, BroadcastReshapePermuteCatExtractIota) {
  KB kb("shapes");
  const ValueId out = kb.piece("out", DType::i32, {512});
  const ValueId x = kb.reshape(kb.iota(DType::i32, 64), {2, 4, 8});          // x[a,b,c] = 32a + 8b + c
  const ValueId p = kb.permute(x, {2, 0, 1});                                // p[c,a,b] = x[a,b,c]  [8,2,4]
  const ValueId col = kb.reshape(kb.iota(DType::i32, 8), {8, 1, 1});
  const ValueId bc = kb.broadcast(col, {8, 2, 4});                           // bc[c,a,b] = c
  const ValueId s = kb.binary(BinaryFn::Add, p, kb.binary(BinaryFn::Mul, bc, kb.constant(DType::i32, {8, 2, 4}, ir::Scalar::of_int(1000))));
  const ValueId ex = kb.extract(s, {4, 1, 0}, {4, 1, 4});                     // ex[i,0,k] = s[4+i, 1, k]
  const ValueId cat = kb.cat(kb.reshape(s, {64, 1}), kb.reshape(s, {64, 1}), 1);  // [64, 2]
  auto minus1 = [&](std::int64_t n) { return kb.constant(DType::i32, {n}, ir::Scalar::of_int(-1)); };
  const ValueId second = kb.cat(kb.cat(kb.cat(kb.reshape(ex, {16}), minus1(16), 0), minus1(32), 0), minus1(64), 0);  // 128
  const ValueId all = kb.cat(kb.reshape(cat, {128}), second, 0);  // 256
  kb.store_piece(out, kb.cat(all, all, 0));
  std::vector<std::int32_t> o(512);
  auto k = kb.finish();
  launch(k, {1}, {targ(o, {512})});
  auto S = [](int c, int a, int b) { return 32 * a + 8 * b + c + 1000 * c; };
  for (int c = 0; c < 8; ++c)
    for (int a = 0; a < 2; ++a)
      for (int b = 0; b < 4; ++b) {
        const int lin = (c * 2 + a) * 4 + b;
        EXPECT_EQ(o[static_cast<std::size_t>(2 * lin)], S(c, a, b));
        EXPECT_EQ(o[static_cast<std::size_t>(2 * lin + 1)], S(c, a, b));
      }
  for (int i = 0; i < 4; ++i)
    for (int kk = 0; kk < 4; ++kk) EXPECT_EQ(o[static_cast<std::size_t>(128 + i * 4 + kk)], S(4 + i, 1, kk));
  for (int i = 144; i < 256; ++i) EXPECT_EQ(o[static_cast<std::size_t>(i)], -1);
  for (int i = 0; i < 256; ++i) EXPECT_EQ(o[static_cast<std::size_t>(256 + i)], o[static_cast<std::size_t>(i)]);
}

TEST(CpuShape, ConstantsAndIotaInEveryDtype) {
  // constants are cast to the element type; iota counts in the element type
  KB kb("consts");
  const ValueId out = kb.piece("out", DType::f64, {8});
  auto f = [&](DType d, ir::Scalar v) { return kb.convert(kb.constant(d, {2}, v), DType::f64); };
  const ValueId a = kb.cat(f(DType::u8, ir::Scalar::of_int(300)), f(DType::f16, ir::Scalar::of_float(1.0 / 3.0)), 0);
  const ValueId b = kb.cat(f(DType::i16, ir::Scalar::of_float(-7.9)), kb.convert(kb.iota(DType::bf16, 2), DType::f64), 0);
  kb.store_piece(out, kb.cat(a, b, 0));
  std::vector<double> o(8);
  launch(kb.finish(), {1}, {targ(o, {8})});
  const double third = static_cast<float>(h(1.0f / 3.0f));
  EXPECT_EQ(o, (std::vector<double>{44, 44, third, third, -7, -7, 0, 1}));
}

}  // namespace
}  // namespace cpu_test
