// Helpers for the CPU backend tests: build kernels by hand with ir::Builder and launch them.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ctile/backend/backend.hpp"
#include "ctile/ir/builder.hpp"
#include "ctile/ir/ir.hpp"

namespace cpu_test {

using namespace ctile;
using ir::OpKind;
using ir::Type;
using ir::ValueId;

// A kernel under construction. Ops get the source location "test.cpp:<line>" (line = a counter)
// unless given one.
struct KB {
  std::shared_ptr<ir::Kernel> k = std::make_shared<ir::Kernel>();
  ir::Builder b{*k};
  SourceLoc loc{"kernel_test.cpp", 1};

  explicit KB(std::string name, int grid_rank = 1) {
    k->name = std::move(name);
    k->grid_rank = grid_rank;
  }

  ValueId param(const std::string& name, const Type& t) {
    const ValueId v = b.new_value(t);
    ir::Param p;
    p.name = name;
    p.arg_index = static_cast<int>(k->params.size());
    p.value = v;
    p.type = t;
    k->params.push_back(p);
    k->body.args.push_back(v);
    return v;
  }
  ValueId tensor(const std::string& name, DType d, int rank, ir::Access a = ir::Access::Read) {
    return param(name, Type::tensor(d, rank, a));
  }
  ValueId piece(const std::string& name, DType d, Shape tile) { return param(name, Type::piece(d, std::move(tile))); }
  ValueId scalar_param(const std::string& name, DType d) { return param(name, Type::scalar(d)); }

  ir::Op& op(OpKind kind, std::vector<ValueId> operands, std::vector<Type> results) {
    return b.create(kind, std::move(operands), results, loc);
  }
  ValueId op1(OpKind kind, std::vector<ValueId> operands, const Type& t) { return op(kind, std::move(operands), {t}).results[0]; }
  const Type& type(ValueId v) const { return k->type(v); }

  // grid
  ValueId block_id(int axis) {
    auto& o = op(OpKind::BlockId, {}, {Type::scalar(DType::i64)});
    o.axis = axis;
    return o.results[0];
  }
  ValueId num_blocks(int axis) {
    auto& o = op(OpKind::NumBlocks, {}, {Type::scalar(DType::i64)});
    o.axis = axis;
    return o.results[0];
  }
  ValueId dim(ValueId t, int axis) {
    auto& o = op(OpKind::Dim, {t}, {Type::scalar(DType::i64)});
    o.axis = axis;
    return o.results[0];
  }
  ValueId partition(ValueId t, Shape tile) {
    const Type& tt = type(t);
    auto& o = op(OpKind::MakePartition, {t}, {Type::partition(tt.dtype, tt.rank, tile)});
    o.shape = tile;
    return o.results[0];
  }
  ValueId count(ValueId p, int axis) {
    auto& o = op(OpKind::PartitionCount, {p}, {Type::scalar(DType::i64)});
    o.axis = axis;
    return o.results[0];
  }
  ValueId load(ValueId part, std::vector<ValueId> idx, ir::Scalar pad = ir::Scalar::of_int(0)) {
    const Type& p = type(part);
    std::vector<ValueId> ops{part};
    ops.insert(ops.end(), idx.begin(), idx.end());
    auto& o = op(OpKind::Load, ops, {Type::tile(p.dtype, p.shape)});
    o.value = pad;
    return o.results[0];
  }
  ValueId load_piece(ValueId piece, ir::Scalar pad = ir::Scalar::of_int(0)) {
    const Type& p = type(piece);
    auto& o = op(OpKind::LoadPiece, {piece}, {Type::tile(p.dtype, p.shape)});
    o.value = pad;
    return o.results[0];
  }
  void store_piece(ValueId piece, ValueId v) { op(OpKind::StorePiece, {piece, v}, {}); }
  ValueId gather(ValueId t, std::vector<ValueId> idx, ir::Scalar pad = ir::Scalar::of_int(0)) {
    std::vector<ValueId> ops{t};
    ops.insert(ops.end(), idx.begin(), idx.end());
    auto& o = op(OpKind::Gather, ops, {Type::tile(type(t).dtype, type(idx[0]).shape)});
    o.value = pad;
    return o.results[0];
  }
  void scatter(OpKind kind, ValueId t, std::vector<ValueId> idx, ValueId v) {
    std::vector<ValueId> ops{t};
    ops.insert(ops.end(), idx.begin(), idx.end());
    ops.push_back(v);
    op(kind, ops, {});
  }
  ValueId atomic(ir::AtomicKind kind, ValueId t, std::vector<ValueId> idx, ValueId v) {
    std::vector<ValueId> ops{t};
    ops.insert(ops.end(), idx.begin(), idx.end());
    ops.push_back(v);
    auto& o = op(OpKind::AtomicRMW, ops, {type(v)});
    o.atomic = kind;
    return o.results[0];
  }
  ValueId cas(ValueId t, std::vector<ValueId> idx, ValueId expected, ValueId desired) {
    std::vector<ValueId> ops{t};
    ops.insert(ops.end(), idx.begin(), idx.end());
    ops.push_back(expected);
    ops.push_back(desired);
    return op1(OpKind::AtomicCAS, ops, type(desired));
  }

  // tiles
  ValueId constant(DType d, Shape s, ir::Scalar v) {
    auto& o = op(OpKind::Constant, {}, {Type::tile(d, std::move(s))});
    o.value = v;
    return o.results[0];
  }
  ValueId i64c(std::int64_t v) { return constant(DType::i64, {}, ir::Scalar::of_int(v)); }
  ValueId fconst(DType d, Shape s, double v) { return constant(d, std::move(s), ir::Scalar::of_float(v)); }
  ValueId iota(DType d, std::int64_t n) { return op1(OpKind::Iota, {}, Type::tile(d, {n})); }
  ValueId broadcast(ValueId x, Shape s) { return op1(OpKind::Broadcast, {x}, Type::tile(type(x).dtype, std::move(s))); }
  ValueId reshape(ValueId x, Shape s) { return op1(OpKind::Reshape, {x}, Type::tile(type(x).dtype, std::move(s))); }
  ValueId permute(ValueId x, std::vector<int> perm) {
    Shape s;
    for (int p : perm) s.push_back(type(x).shape[static_cast<std::size_t>(p)]);
    auto& o = op(OpKind::Permute, {x}, {Type::tile(type(x).dtype, s)});
    o.perm = perm;
    return o.results[0];
  }
  ValueId cat(ValueId a, ValueId b2, int axis) {
    Shape s = type(a).shape;
    s[static_cast<std::size_t>(axis)] += type(b2).shape[static_cast<std::size_t>(axis)];
    auto& o = op(OpKind::Cat, {a, b2}, {Type::tile(type(a).dtype, s)});
    o.axis = axis;
    return o.results[0];
  }
  ValueId extract(ValueId x, Shape offsets, Shape s) {
    auto& o = op(OpKind::Extract, {x}, {Type::tile(type(x).dtype, std::move(s))});
    o.offsets = std::move(offsets);
    return o.results[0];
  }
  ValueId unary(ir::UnaryFn f, ValueId x) {
    auto& o = op(OpKind::Unary, {x}, {type(x)});
    o.unary = f;
    return o.results[0];
  }
  ValueId binary(ir::BinaryFn f, ValueId x, ValueId y) {
    auto& o = op(OpKind::Binary, {x, y}, {type(x)});
    o.binary = f;
    return o.results[0];
  }
  ValueId fma(ValueId x, ValueId y, ValueId z) { return op1(OpKind::Fma, {x, y, z}, type(x)); }
  ValueId cmp(ir::CmpPred p, ValueId x, ValueId y) {
    auto& o = op(OpKind::Cmp, {x, y}, {Type::tile(DType::b1, type(x).shape)});
    o.cmp = p;
    return o.results[0];
  }
  ValueId select(ValueId c, ValueId x, ValueId y) { return op1(OpKind::Select, {c, x, y}, type(x)); }
  ValueId convert(ValueId x, DType d) { return op1(OpKind::Convert, {x}, Type::tile(d, type(x).shape)); }
  ValueId reduce(ir::ReduceKind r, ValueId x, int axis) {
    Shape s = type(x).shape;
    s.erase(s.begin() + axis);
    const bool arg = r == ir::ReduceKind::ArgMax || r == ir::ReduceKind::ArgMin;
    auto& o = op(OpKind::Reduce, {x}, {Type::tile(arg ? DType::i64 : type(x).dtype, s)});
    o.reduce = r;
    o.axis = axis;
    return o.results[0];
  }
  ValueId scan(ValueId x, int axis, ir::ReduceKind kind = ir::ReduceKind::Sum, bool exclusive = false, bool reverse = false) {
    auto& o = op(OpKind::Scan, {x}, {type(x)});
    o.axis = axis;
    o.reduce = kind;
    o.exclusive = exclusive;
    o.reverse = reverse;
    return o.results[0];
  }
  ValueId mma(ValueId a, ValueId b2, ValueId acc) { return op1(OpKind::Mma, {a, b2, acc}, type(acc)); }

  // control flow: body(iv, carried) returns the values to yield.
  std::vector<ValueId> for_(ValueId lb, ValueId ub, ValueId step, std::vector<ValueId> init,
                            const std::function<std::vector<ValueId>(ValueId, std::vector<ValueId>)>& body) {
    std::vector<ValueId> ops{lb, ub, step};
    std::vector<Type> rt;
    for (ValueId v : init) {
      ops.push_back(v);
      rt.push_back(type(v));
    }
    ir::Op& o = op(OpKind::For, ops, rt);
    o.regions.emplace_back();
    ir::Region& r = o.regions[0];
    const ValueId iv = b.new_value(Type::scalar(DType::i64));
    r.args.push_back(iv);
    std::vector<ValueId> carried;
    for (const Type& t : rt) {
      carried.push_back(b.new_value(t));
      r.args.push_back(carried.back());
    }
    b.push(r);
    yield(body(iv, carried));
    b.pop();
    return o.results;
  }
  std::vector<ValueId> if_(ValueId c, std::vector<Type> rt, const std::function<std::vector<ValueId>()>& then_fn,
                           const std::function<std::vector<ValueId>()>& else_fn) {
    ir::Op& o = op(OpKind::If, {c}, rt);
    o.regions.resize(2);
    b.push(o.regions[0]);
    yield(then_fn());
    b.pop();
    b.push(o.regions[1]);
    yield(else_fn());
    b.pop();
    return o.results;
  }
  std::vector<ValueId> while_(std::vector<ValueId> init,
                              const std::function<ValueId(std::vector<ValueId>)>& cond,
                              const std::function<std::vector<ValueId>(std::vector<ValueId>)>& body) {
    std::vector<Type> rt;
    for (ValueId v : init) rt.push_back(type(v));
    ir::Op& o = op(OpKind::While, init, rt);
    o.regions.resize(2);
    for (int r = 0; r < 2; ++r) {
      std::vector<ValueId> args;
      for (const Type& t : rt) {
        args.push_back(b.new_value(t));
        o.regions[static_cast<std::size_t>(r)].args.push_back(args.back());
      }
      b.push(o.regions[static_cast<std::size_t>(r)]);
      if (r == 0) yield({cond(args)});
      else yield(body(args));
      b.pop();
    }
    return o.results;
  }
  void yield(std::vector<ValueId> v) { op(OpKind::Yield, std::move(v), {}); }

  std::shared_ptr<const ir::Kernel> finish() {
    yield({});
    return k;
  }
};

inline backend::ArgValue targ(void* data, DType d, Shape shape, Shape strides = {}) {
  backend::ArgValue a;
  a.tensor.data = data;
  a.tensor.dtype = d;
  if (strides.empty()) strides = contiguous_strides(shape);
  a.tensor.shape = std::move(shape);
  a.tensor.strides = std::move(strides);
  return a;
}
template <class T>
backend::ArgValue targ(std::vector<T>& v, Shape shape, Shape strides = {}) {
  return targ(v.data(), dtype_of<T>, std::move(shape), std::move(strides));
}
inline backend::ArgValue sarg(ir::Scalar s) {
  backend::ArgValue a;
  a.scalar = s;
  return a;
}

inline void launch(const std::shared_ptr<const ir::Kernel>& k, Shape grid, const std::vector<backend::ArgValue>& args,
                   bool race_check = false) {
  auto be = backend::cpu_backend();
  auto ck = be->compile(k);
  backend::LaunchConfig cfg;
  cfg.grid = std::move(grid);
  cfg.race_check = race_check;
  cfg.kernel_name = k->name;
  be->run(*ck, cfg, args);
}

inline std::vector<float> random_floats(std::size_t n, unsigned seed, float lo = -4.0f, float hi = 4.0f) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) {
    do x = u(g);
    while (x == 0.0f);
  }
  return v;
}

inline std::uint32_t bits(float f) { return std::bit_cast<std::uint32_t>(f); }

}  // namespace cpu_test

namespace cpu_test {

// A 1-D input of run_map: data and element type (bool data as bytes).
struct In {
  void* data;
  DType d;
};
template <class T>
In in(std::vector<T>& v) {
  return {v.data(), dtype_of<T>};
}

// Runs out[i] = f(x_0[i], x_1[i], ...) over n elements in tiles of `tile` (one block per tile);
// f builds the IR from the loaded tiles. Out is the storage type of `out_d` (bool: uint8_t).
template <class Out>
std::vector<Out> run_map(std::int64_t n, std::int64_t tile, std::vector<In> ins, DType out_d,
                         const std::function<ValueId(KB&, const std::vector<ValueId>&)>& f) {
  KB kb("map");
  std::vector<ValueId> ts, xs;
  for (std::size_t i = 0; i < ins.size(); ++i) ts.push_back(kb.tensor("in" + std::to_string(i), ins[i].d, 1));
  const ValueId out = kb.piece("out", out_d, {tile});
  for (ValueId t : ts) xs.push_back(kb.load(kb.partition(t, {tile}), {kb.block_id(0)}));
  kb.store_piece(out, f(kb, xs));
  std::vector<Out> o(static_cast<std::size_t>(n));
  std::vector<backend::ArgValue> args;
  for (const In& i : ins) args.push_back(targ(i.data, i.d, {n}));
  args.push_back(targ(o.data(), out_d, {n}));
  launch(kb.finish(), {ceil_div(n, tile)}, args);
  return o;
}
template <class Out>
std::vector<Out> run_map(std::int64_t n, std::int64_t tile, std::vector<In> ins,
                         const std::function<ValueId(KB&, const std::vector<ValueId>&)>& f) {
  return run_map<Out>(n, tile, std::move(ins), dtype_of<Out>, f);
}

inline f16 h(float v) { return f16(v); }
inline bf16 bh(float v) { return bf16(v); }

// Loads the whole [R, C] input as one tile, applies f, stores the result (shape out_shape, rank
// >= 1) as the single piece of a 1-block grid.
template <class Out>
std::vector<Out> run_tile(In input, Shape shape, DType out_d, Shape out_shape,
                          const std::function<ValueId(KB&, ValueId)>& f) {
  KB kb("tile_fn", static_cast<int>(out_shape.size()));
  const ValueId t = kb.tensor("in", input.d, static_cast<int>(shape.size()));
  const ValueId out = kb.piece("out", out_d, out_shape);
  std::vector<ValueId> zeros(shape.size(), kb.i64c(0));
  kb.store_piece(out, f(kb, kb.load(kb.partition(t, shape), zeros)));
  std::vector<Out> o(static_cast<std::size_t>(numel(out_shape)));
  launch(kb.finish(), Shape(out_shape.size(), 1), {targ(input.data, input.d, shape), targ(o.data(), out_d, out_shape)});
  return o;
}

}  // namespace cpu_test
