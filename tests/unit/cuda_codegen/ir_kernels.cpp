// Kernels built by hand with the IR builder so that every op kind meets every element type it
// accepts, in both tile representations (spread over the block, or one replicated element).
#include "../cpu_backend/helpers.hpp"
#include "cases.hpp"

namespace cuda_codegen_test {
namespace {

using cpu_test::KB;
using ctile::DType;
using ctile::Shape;
using ir::BinaryFn;
using ir::CmpPred;
using ir::OpKind;
using ir::ReduceKind;
using ir::Type;
using ir::UnaryFn;
using ir::ValueId;

constexpr DType kAll[] = {DType::b1,  DType::i8,  DType::i16, DType::i32, DType::i64,  DType::u8, DType::u16,
                          DType::u32, DType::u64, DType::f16, DType::bf16, DType::f32, DType::f64};

std::string dn(DType d) { return std::string(ctile::dtype_name(d)); }

bool unary_ok(UnaryFn f, DType d) {
  if (ctile::is_float(d)) return f != UnaryFn::Not;
  if (ctile::is_signed_int(d)) return f == UnaryFn::Neg || f == UnaryFn::Abs || f == UnaryFn::Not;
  return f == UnaryFn::Not;
}
bool binary_ok(BinaryFn f, DType d) {
  switch (f) {
    case BinaryFn::Pow: return ctile::is_float(d);
    case BinaryFn::And: case BinaryFn::Or: case BinaryFn::Xor: return ctile::is_integer(d) || ctile::is_bool(d);
    case BinaryFn::Shl: case BinaryFn::Shr: return ctile::is_integer(d);
    default: return ctile::is_float(d) || ctile::is_integer(d);
  }
}

// A 1-D kernel: inputs `in<k>` of dtype d loaded as tiles of `n` at the block id, results stored to
// pieces of `n`. With n == 1 every tile is a replicated single element.
struct Map1D {
  KB kb;
  std::int64_t n;
  std::vector<ValueId> x;
  Map1D(const std::string& name, std::int64_t n_, std::vector<DType> ins) : kb(name), n(n_) {
    std::vector<ValueId> ts;
    for (std::size_t i = 0; i < ins.size(); ++i) ts.push_back(kb.tensor("in" + std::to_string(i), ins[i], 1));
    for (ValueId t : ts) x.push_back(kb.load(kb.partition(t, {n}), {kb.block_id(0)}, ir::Scalar::of_int(1)));
  }
  int outs = 0;
  void out(ValueId v) {
    const ValueId p = kb.piece("out" + std::to_string(outs++), kb.type(v).dtype, {n});
    kb.store_piece(p, kb.type(v).shape == Shape{n} ? v : kb.reshape(v, {n}));
  }
};

void elementwise_cases(std::vector<Case>& out) {
  for (std::int64_t n : {std::int64_t{256}, std::int64_t{1}}) {
    const std::string sfx = n == 1 ? "_rep" : "";
    for (DType d : kAll) {
      out.push_back({"convert_from_" + dn(d) + sfx, [=] {
                       Map1D m("convert_" + dn(d), n, {d});
                       for (DType to : kAll) m.out(m.kb.convert(m.x[0], to));
                       return m.kb.finish();
                     }});
      out.push_back({"unary_" + dn(d) + sfx, [=] {
                       Map1D m("unary_" + dn(d), n, {d});
                       for (int f = 0; f <= static_cast<int>(UnaryFn::Not); ++f)
                         if (unary_ok(static_cast<UnaryFn>(f), d)) m.out(m.kb.unary(static_cast<UnaryFn>(f), m.x[0]));
                       return m.kb.finish();
                     }});
      out.push_back({"binary_" + dn(d) + sfx, [=] {
                       Map1D m("binary_" + dn(d), n, {d, d});
                       for (int f = 0; f <= static_cast<int>(BinaryFn::Shr); ++f)
                         if (binary_ok(static_cast<BinaryFn>(f), d)) m.out(m.kb.binary(static_cast<BinaryFn>(f), m.x[0], m.x[1]));
                       return m.kb.finish();
                     }});
      out.push_back({"cmp_select_fma_" + dn(d) + sfx, [=] {
                       Map1D m("cmp_select_fma_" + dn(d), n, {d, d, d});
                       for (int p = 0; p <= static_cast<int>(CmpPred::Ge); ++p) {
                         const ValueId c = m.kb.cmp(static_cast<CmpPred>(p), m.x[0], m.x[1]);
                         m.out(c);
                         m.out(m.kb.select(c, m.x[1], m.x[2]));
                       }
                       if (d != DType::b1) m.out(m.kb.fma(m.x[0], m.x[1], m.x[2]));
                       // constants of the type, and iota
                       m.out(m.kb.constant(d, {n}, ctile::is_float(d) ? ir::Scalar::of_float(-2.75) : ir::Scalar::of_int(-3)));
                       m.out(m.kb.constant(d, {n}, ctile::is_float(d) ? ir::Scalar::of_float(INFINITY) : ir::Scalar::of_int(INT64_MIN)));
                       m.out(m.kb.constant(d, {n}, ctile::is_float(d) ? ir::Scalar::of_float(NAN) : ir::Scalar::of_int(-1)));
                       m.out(m.kb.constant(d, {n}, ctile::is_float(d) ? ir::Scalar::of_float(1e-310) : ir::Scalar::of_int(INT64_MAX)));
                       if (d != DType::b1) m.out(m.kb.iota(d, n));
                       return m.kb.finish();
                     }});
    }
  }
}

// Reductions and scans of a [8, 32] tile along each axis, over all of it, and of a replicated element.
void reduce_cases(std::vector<Case>& out) {
  for (DType d : kAll) {
    out.push_back({"reduce_scan_" + dn(d), [=] {
                     KB kb("reduce_" + dn(d));
                     const ValueId t = kb.tensor("x", d, 2);
                     const ValueId x = kb.load(kb.partition(t, {8, 32}), {kb.block_id(0), kb.i64c(0)});
                     int k = 0;
                     auto put = [&](ValueId v) {
                       const std::int64_t n = ctile::numel(kb.type(v).shape);
                       const ValueId p = kb.piece("out" + std::to_string(k++), kb.type(v).dtype, {n});
                       kb.store_piece(p, kb.reshape(v, {n}));
                     };
                     for (int r = 0; r <= static_cast<int>(ReduceKind::ArgMin); ++r) {
                       const auto rk = static_cast<ReduceKind>(r);
                       if (d == DType::b1 && (rk == ReduceKind::Sum || rk == ReduceKind::Prod)) continue;
                       put(kb.reduce(rk, x, 0));
                       put(kb.reduce(rk, x, 1));
                       put(kb.reduce(rk, kb.reshape(x, {256}), 0));                 // full, spread
                       put(kb.reduce(rk, kb.reshape(kb.reduce(rk == ReduceKind::ArgMax || rk == ReduceKind::ArgMin ? ReduceKind::Max : rk, x, 1), {8, 1}), 1));  // [8,1] -> [8]
                       put(kb.reduce(rk, kb.extract(x, {3, 5}, {1, 1}), 1));  // replicated [1,1] -> [1]
                     }
                     if (d != DType::b1) {
                       put(kb.scan(x, 0));
                       put(kb.scan(x, 1));
                       put(kb.scan(kb.extract(x, {0, 0}, {1, 1}), 0));
                     }
                     return kb.finish();
                   }});
  }
}

void shape_cases(std::vector<Case>& out) {
  for (DType d : kAll) {
    out.push_back({"shapes_" + dn(d), [=] {
                     KB kb("shapes_" + dn(d));
                     const ValueId t = kb.tensor("x", d, 3);
                     const ValueId x = kb.load(kb.partition(t, {2, 4, 8}), {kb.i64c(0), kb.i64c(0), kb.block_id(0)});
                     int k = 0;
                     auto put = [&](ValueId v) {
                       const std::int64_t n = ctile::numel(kb.type(v).shape);
                       const ValueId p = kb.piece("out" + std::to_string(k++), d, {n});
                       kb.store_piece(p, n == 1 ? kb.reshape(v, {1}) : kb.reshape(v, {n}));
                     };
                     put(kb.permute(x, {2, 0, 1}));
                     put(kb.permute(x, {1, 2, 0}));
                     put(kb.cat(x, x, 0));
                     put(kb.cat(kb.extract(x, {0, 0, 4}, {2, 4, 4}), kb.extract(x, {0, 0, 0}, {2, 4, 4}), 2));
                     put(kb.cat(kb.extract(x, {1, 2, 3}, {1, 1, 1}), kb.extract(x, {0, 3, 7}, {1, 1, 1}), 2));  // replicated operands
                     put(kb.extract(x, {1, 0, 4}, {1, 4, 4}));
                     put(kb.extract(x, {1, 3, 6}, {1, 1, 1}));  // replicated result
                     put(kb.broadcast(kb.extract(x, {0, 1, 0}, {1, 1, 8}), {2, 4, 8}));
                     put(kb.broadcast(kb.extract(x, {0, 0, 2}, {2, 4, 1}), {2, 4, 8}));
                     put(kb.broadcast(kb.extract(x, {1, 1, 1}, {1, 1, 1}), {2, 4, 8}));  // from a replicated element
                     put(kb.broadcast(x, {2, 4, 8}));                                    // same shape
                     put(kb.permute(kb.extract(x, {0, 0, 0}, {1, 1, 1}), {2, 1, 0}));
                     put(kb.reshape(x, {8, 8}));
                     return kb.finish();
                   }});
  }
}

// A product of loaded tiles plus a loaded accumulator, then a run-time K loop carrying it.
void mma_case(std::vector<Case>& out, DType ab, DType acc, std::array<std::int64_t, 3> mnk, const std::string& prefix) {
  const auto [M, N, K] = mnk;
  out.push_back({prefix + dn(ab) + "_" + dn(acc) + "_" + std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K),
                 [=] {
                   KB kb("mma", 2);
                   const ValueId a = kb.tensor("a", ab, 2), b = kb.tensor("b", ab, 2), c = kb.tensor("c", acc, 2);
                   const ValueId o = kb.piece("out", acc, {M, N});
                   const ValueId i = kb.block_id(0), j = kb.block_id(1);
                   const auto pa = kb.partition(a, {M, K});
                   const auto pb = kb.partition(b, {K, N});
                   ValueId r = kb.mma(kb.load(pa, {i, kb.i64c(0)}), kb.load(pb, {kb.i64c(0), j}),
                                      kb.load(kb.partition(c, {M, N}), {i, j}));
                   // again with a run-time K loop carrying the accumulator
                   auto res = kb.for_(kb.i64c(1), kb.count(pa, 1), kb.i64c(1), {r}, [&](ValueId kk, std::vector<ValueId> cv) {
                     return std::vector<ValueId>{kb.mma(kb.load(pa, {i, kk}), kb.load(pb, {kk, j}), cv[0])};
                   });
                   kb.store_piece(o, res[0]);
                   return kb.finish();
                 }});
}

// The tensor-core product with an epilogue on the fragment registers (a broadcast bias row, a ReLU,
// a conversion to bf16) and B given transposed ([N, K] tiles, permuted): the K loop, the fragment
// layout meeting a broadcast and a permuted operand.
void mma_epilogue_cases(std::vector<Case>& out) {
  out.push_back({"mma_tc_bias_relu_bt_bf16", [] {
                   KB kb("mma_epi", 2);
                   const ValueId a = kb.tensor("a", DType::bf16, 2), bt = kb.tensor("bt", DType::bf16, 2);
                   const ValueId bias = kb.tensor("bias", DType::f32, 1);
                   const ValueId o = kb.piece("out", DType::bf16, {64, 64});
                   const ValueId i = kb.block_id(0), j = kb.block_id(1);
                   const auto pa = kb.partition(a, {64, 32});
                   const auto pb = kb.partition(bt, {64, 32});
                   auto res = kb.for_(kb.i64c(0), kb.count(pa, 1), kb.i64c(1), {kb.fconst(DType::f32, {64, 64}, 0.0)},
                                      [&](ValueId kk, std::vector<ValueId> cv) {
                                        const ValueId b = kb.permute(kb.load(pb, {j, kk}), {1, 0});
                                        return std::vector<ValueId>{kb.mma(kb.load(pa, {i, kk}), b, cv[0])};
                                      });
                   const ValueId row = kb.reshape(kb.load(kb.partition(bias, {64}), {j}), {1, 64});
                   const ValueId y = kb.binary(BinaryFn::Add, res[0], kb.broadcast(row, {64, 64}));
                   const ValueId relu = kb.binary(BinaryFn::Max, y, kb.fconst(DType::f32, {64, 64}, 0.0));
                   kb.store_piece(o, kb.convert(relu, DType::bf16));
                   return kb.finish();
                 }});
}

// A K loop long enough that every ring slot is reused many times within one tile block (24
// iterations of 64: the unused partitions only make the generated inputs' K extent 1536), so a
// copy into a slot that a product still reads shows in the differential comparison.
void mma_long_k_case(std::vector<Case>& out) {
  out.push_back({"mma_tc_long_k_bf16", [] {
                   KB kb("mma_long_k", 2);
                   const ValueId a = kb.tensor("a", DType::bf16, 2), b = kb.tensor("b", DType::bf16, 2);
                   const ValueId o = kb.piece("out", DType::f32, {64, 64});
                   const ValueId i = kb.block_id(0), j = kb.block_id(1);
                   const auto pa = kb.partition(a, {64, 64});
                   const auto pb = kb.partition(b, {64, 64});
                   (void)kb.partition(a, {64, 1024});
                   (void)kb.partition(b, {1024, 64});
                   auto res = kb.for_(kb.i64c(0), kb.count(pa, 1), kb.i64c(1), {kb.fconst(DType::f32, {64, 64}, 0.0)},
                                      [&](ValueId kk, std::vector<ValueId> cv) {
                                        const ValueId at = kb.load(pa, {i, kk});
                                        const ValueId bt = kb.load(pb, {kk, j});
                                        return std::vector<ValueId>{kb.mma(at, bt, cv[0])};
                                      });
                   kb.store_piece(o, res[0]);
                   return kb.finish();
                 }});
}

void mma_cases(std::vector<Case>& out) {
  mma_epilogue_cases(out);
  mma_long_k_case(out);
  const std::pair<DType, DType> combos[] = {{DType::f16, DType::f32}, {DType::f16, DType::f16}, {DType::bf16, DType::f32},
                                            {DType::f32, DType::f32}, {DType::f64, DType::f64}, {DType::i8, DType::i32},
                                            {DType::u8, DType::i32}};
  // The tensor-core path (16-bit operands): one warp tile, and warp grids of 4 warps (2 x 2, 2 x 2 of 64 x 32).
  // (The 4-warp cases run 128 emulated threads for seconds each: bf16 into f32 only.)
  const std::pair<DType, DType> tc[] = {{DType::bf16, DType::f32}, {DType::f16, DType::f32}, {DType::f16, DType::f16}};
  for (auto [ab, acc] : tc)
    for (const auto& mnk : {std::array<std::int64_t, 3>{16, 16, 16}, std::array<std::int64_t, 3>{32, 32, 32},
                            std::array<std::int64_t, 3>{128, 64, 32}, std::array<std::int64_t, 3>{64, 64, 32}})
      if (mnk[0] < 64 || ab == DType::bf16) mma_case(out, ab, acc, mnk, "mma_tc_");
  for (auto [ab, acc] : combos) {
    for (const auto& mnk : {std::array<std::int64_t, 3>{16, 8, 32}, std::array<std::int64_t, 3>{1, 1, 64},
                            std::array<std::int64_t, 3>{64, 64, 16}, std::array<std::int64_t, 3>{4, 2, 1}}) {
      mma_case(out, ab, acc, mnk, "mma_");
    }
  }
}

void memory_cases(std::vector<Case>& out) {
  const DType atomics[] = {DType::i32, DType::i64, DType::u32, DType::u64, DType::f32, DType::f64};
  for (std::int64_t n : {std::int64_t{64}, std::int64_t{1}}) {
    const std::string sfx = n == 1 ? "_rep" : "";
    for (DType idx_t : {DType::i32, DType::u64, DType::i8}) {
      out.push_back({"gather_scatter_" + dn(idx_t) + sfx, [=] {
                       KB kb("gather_scatter");
                       const ValueId rd = kb.tensor("table", DType::f32, 2);
                       const ValueId at = kb.tensor("acc", DType::f32, 2, ir::Access::Atomic);
                       const ValueId un = kb.tensor("dst", DType::f16, 2, ir::Access::Unchecked);
                       const ValueId ids = kb.tensor("ids", idx_t, 1);
                       const ValueId o = kb.piece("out", DType::f32, {n});
                       const ValueId ob = kb.piece("flags", DType::b1, {n});
                       const ValueId iv = kb.load(kb.partition(ids, {n}), {kb.block_id(0)});
                       const ValueId col = kb.convert(kb.iota(DType::i64, n), idx_t);
                       const ValueId g1 = kb.gather(rd, {iv, col}, ir::Scalar::of_float(-1.5));
                       const ValueId g2 = kb.gather(at, {iv, col});
                       const ValueId g3 = kb.gather(un, {col, iv}, ir::Scalar::of_float(0.25));
                       kb.scatter(OpKind::ScatterUnchecked, un, {iv, col}, kb.convert(g1, DType::f16));
                       kb.scatter(OpKind::ScatterPiece, o, {col}, kb.binary(BinaryFn::Add, g1, kb.convert(g3, DType::f32)));
                       kb.scatter(OpKind::ScatterPiece, ob, {iv}, kb.cmp(CmpPred::Gt, g2, g1));
                       kb.store_piece(ob, kb.cmp(CmpPred::Lt, g2, g1));
                       return kb.finish();
                     }});
    }
    for (DType d : atomics) {
      out.push_back({"atomics_" + dn(d) + sfx, [=] {
                       KB kb("atomics_" + dn(d));
                       const ValueId t = kb.tensor("t", d, 1, ir::Access::Atomic);
                       const ValueId src = kb.tensor("src", d, 1);
                       const ValueId o = kb.piece("old", d, {n});
                       const ValueId v = kb.load(kb.partition(src, {n}), {kb.block_id(0)});
                       const ValueId idx = kb.binary(BinaryFn::Rem, kb.iota(DType::i64, n), kb.constant(DType::i64, {n}, ir::Scalar::of_int(5)));
                       ValueId acc = v;
                       for (int a = 0; a <= static_cast<int>(ir::AtomicKind::Exch); ++a)
                         acc = kb.binary(BinaryFn::Add, acc, kb.atomic(static_cast<ir::AtomicKind>(a), t, {idx}, v));
                       acc = kb.binary(BinaryFn::Add, acc, kb.cas(t, {idx}, v, acc));
                       kb.atomic(ir::AtomicKind::Add, t, {idx}, v);  // result unused
                       kb.store_piece(o, acc);
                       return kb.finish();
                     }});
      // Only add, max and min, each into its own tensor, results unused: the final values do
      // not depend on the order the blocks' atomics land in (float adds up to rounding).
      out.push_back({"atomics_commutative_" + dn(d) + sfx, [=] {
                       KB kb("atomics_commutative_" + dn(d));
                       const ValueId src = kb.tensor("src", d, 1);
                       const ValueId v = kb.load(kb.partition(src, {n}), {kb.block_id(0)});
                       const ValueId idx = kb.binary(BinaryFn::Rem, kb.iota(DType::i64, n), kb.constant(DType::i64, {n}, ir::Scalar::of_int(5)));
                       for (auto a : {ir::AtomicKind::Add, ir::AtomicKind::Max, ir::AtomicKind::Min}) {
                         const ValueId t = kb.tensor(std::string("t_") + ir::atomic_name(a), d, 1, ir::Access::Atomic);
                         kb.atomic(a, t, {idx}, v);
                       }
                       return kb.finish();
                     }});
    }
  }
}

void control_cases(std::vector<Case>& out) {
  out.push_back({"control_nested", [] {
                   KB kb("control");
                   const ValueId lb = kb.scalar_param("lb", DType::i64);
                   const ValueId ub = kb.scalar_param("ub", DType::i64);
                   const ValueId st = kb.scalar_param("step", DType::i64);
                   const ValueId out = kb.piece("out", DType::f32, {128});
                   const ValueId cnt = kb.piece("count", DType::i32, {1});
                   const ValueId io = kb.convert(kb.iota(DType::i32, 128), DType::f32);
                   auto r = kb.for_(lb, ub, st, {kb.constant(DType::i32, {}, ir::Scalar::of_int(0)), io},
                                    [&](ValueId i, std::vector<ValueId> c) {
                                      auto w = kb.while_({c[0], c[1]},
                                                         [&](std::vector<ValueId> a) {
                                                           return kb.cmp(CmpPred::Lt, kb.convert(a[0], DType::i64), i);
                                                         },
                                                         [&](std::vector<ValueId> a) {
                                                           return std::vector<ValueId>{
                                                               kb.binary(BinaryFn::Add, a[0], kb.constant(DType::i32, {}, ir::Scalar::of_int(1))),
                                                               kb.binary(BinaryFn::Mul, a[1], kb.fconst(DType::f32, {128}, 0.5))};
                                                         });
                                      auto f = kb.if_(kb.cmp(CmpPred::Gt, kb.reduce(ReduceKind::Sum, w[1], 0), kb.fconst(DType::f32, {}, 10.0)),
                                                      {kb.type(w[1])},
                                                      [&] { return std::vector<ValueId>{kb.unary(UnaryFn::Neg, w[1])}; },
                                                      [&] { return std::vector<ValueId>{w[1]}; });
                                      return std::vector<ValueId>{w[0], f[0]};
                                    });
                   // a loop whose carried values swap every iteration
                   auto s = kb.for_(kb.i64c(0), kb.i64c(3), kb.i64c(1), {r[1], io}, [&](ValueId, std::vector<ValueId> c) {
                     return std::vector<ValueId>{c[1], c[0]};
                   });
                   kb.store_piece(out, kb.binary(BinaryFn::Add, s[0], s[1]));
                   kb.store_piece(cnt, kb.reshape(r[0], {1}));
                   return kb.finish();
                 }});
  for (int g = 1; g <= 6; ++g) {
    out.push_back({"grid_rank_" + std::to_string(g), [g] {
                     KB kb("grid", g);
                     Shape tile(static_cast<std::size_t>(g), 2);
                     tile.back() = 8;
                     const ValueId t = kb.tensor("x", DType::i64, g);
                     const ValueId o = kb.piece("out", DType::i64, tile);
                     ValueId acc = kb.i64c(0);
                     for (int a = 0; a < g; ++a) {
                       acc = kb.binary(BinaryFn::Add, acc, kb.binary(BinaryFn::Mul, kb.block_id(a), kb.num_blocks(a)));
                       acc = kb.binary(BinaryFn::Add, acc, kb.binary(BinaryFn::Mul, kb.dim(t, a), kb.count(kb.partition(t, tile), a)));
                       acc = kb.binary(BinaryFn::Add, acc, kb.count(o, a));
                     }
                     std::vector<ValueId> ix;
                     for (int a = 0; a < g; ++a) ix.push_back(kb.block_id(a));
                     const ValueId x = kb.load(kb.partition(t, tile), ix, ir::Scalar::of_int(-1));
                     kb.store_piece(o, kb.binary(BinaryFn::Add, x, kb.broadcast(kb.reshape(acc, Shape(static_cast<std::size_t>(g), 1)), tile)));
                     return kb.finish();
                   }});
  }
}

}  // namespace

void add_ir_cases(std::vector<Case>& out) {
  elementwise_cases(out);
  reduce_cases(out);
  shape_cases(out);
  mma_cases(out);
  memory_cases(out);
  control_cases(out);
}

}  // namespace cuda_codegen_test
