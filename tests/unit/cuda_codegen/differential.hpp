// Shared by the differential tests (host emulation and real GPU): inputs for any kernel (pieces
// over a 2-per-axis grid with partial tiles, tensors sized from their partitions, every other view
// strided and misaligned), the tolerance of every written tensor derived from the error-bound table
// (error_bounds.hpp), and the comparison.
//
// Two kinds of input:
//   Fill::Clean    normal random floats (sigma 4, 1.5 for f16; no NaN, inf, subnormal or zero): the comparison sees
//                  real values; a NaN where the reference is finite is a failure.
//   Fill::Special  one element in eight is NaN, +-inf, +-0 or a subnormal (a separate seed): the
//                  special values must come out where the reference has them, and nowhere else.
//
// Tolerances (Tolerance, tolerances()). For each written tensor the ops it depends on are found in
// the IR, and the bound follows from the inexact ones:
//   none                    bit-identical (NaN matches any NaN; the signs of zeros must agree);
//   one exp/log/pow/...     feeding the store through shape ops and conversions only: the op's
//                           bound from the table, plus one ulp when rounded to a narrower type;
//   accumulations only      (sums and products to one element, mma, float atomics, contracted
//                           multiply-adds) over monotone ops (+, *, max, loads, shapes): with K
//                           terms, sqrt(K) ulps of sum |term|, where sum |term| comes from a second
//                           interpreter run on the absolute values of all inputs (the "magnitude
//                           run"), plus one ulp per rounding of a differing value;
//   anything else           a model declared for the case (declared_model()), built from the same
//                           table; a kernel with none fails: there is no default tolerance.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "../../../src/backend/cpu/numeric.hpp"
#include "cases.hpp"
#include "ctile/backend/backend.hpp"
#include "error_bounds.hpp"

namespace cuda_codegen_test {

using namespace ctile;
using backend::ArgValue;
namespace eb = error_bounds;

struct Buffer {
  DType d = DType::f32;
  Shape shape, strides;
  std::size_t offset = 0;  // elements before the view's first element (misaligns vector accesses)
  std::vector<std::byte> mem;
  void* data() { return mem.data() + offset * static_cast<std::size_t>(dtype_size(d)); }
  std::size_t count() const { return mem.size() / static_cast<std::size_t>(dtype_size(d)); }
  // Memory index of every element of the view.
  std::vector<std::size_t> view_indices() const {
    std::vector<std::size_t> out;
    if (shape.empty()) return out;
    for (auto e : shape)
      if (e == 0) return out;
    std::vector<std::int64_t> idx(shape.size(), 0);
    while (true) {
      std::int64_t at = static_cast<std::int64_t>(offset);
      for (std::size_t d = 0; d < shape.size(); ++d) at += idx[d] * strides[d];
      out.push_back(static_cast<std::size_t>(at));
      std::size_t d = shape.size();
      while (d > 0) {
        --d;
        if (++idx[d] < shape[d]) break;
        idx[d] = 0;
        if (d == 0) return out;
      }
    }
  }
};

enum class Fill { Clean, Special };
inline const char* fill_name(Fill f) { return f == Fill::Clean ? "clean" : "special values"; }

template <class T>
double min_subnormal() {
  if constexpr (std::is_same_v<T, f8e4m3>) return 0x1p-9;
  else if constexpr (std::is_same_v<T, f8e5m2>) return 0x1p-16;
  else if constexpr (std::is_same_v<T, f16>) return 0x1p-24;
  else if constexpr (std::is_same_v<T, bf16>) return 0x1p-133;
  else if constexpr (std::is_same_v<T, float>) return 0x1p-149;
  else return 0x1p-1074;
}

template <class T>
void fill_random(T* p, std::size_t n, std::mt19937_64& g, Fill fill) {
  std::uniform_int_distribution<int> small(-8, 23);
  // f16's range is narrow: with sigma 1.5 a product of 32 elements stays finite (with 4 it would
  // overflow in every row, and inf == inf would be all that is compared).
  std::normal_distribution<double> normal(0.0, std::is_same_v<T, f16> ? 1.5 : 4.0);
  for (std::size_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<T, bool>) {
      p[i] = (g() & 1) != 0;
    } else if constexpr (backend::cpu::is_float_v<T>) {
      double v = normal(g);
      if (fill == Fill::Special && g() % 8 == 0) {
        // A subnormal of T: a random significand below the normal range (fp8 has 7 and 3).
        constexpr std::uint64_t steps = std::is_same_v<T, f8e4m3> ? 7 : std::is_same_v<T, f8e5m2> ? 3 : 1000;
        const double sub = static_cast<double>(1 + g() % steps) * min_subnormal<T>();
        switch (g() % 7) {
          case 0: v = NAN; break;
          case 1: v = INFINITY; break;
          case 2: v = -INFINITY; break;
          case 3: v = -0.0; break;
          case 4: v = 0.0; break;
          case 5: v = sub; break;
          default: v = -sub; break;
        }
      }
      p[i] = backend::cpu::float_from_double<T>(v);
      // Rounding saturates an fp8 infinity to the largest finite value: e5m2 holds infinities as
      // data all the same (S.11111.00); e4m3 has none (the largest finite value stands in).
      if constexpr (std::is_same_v<T, f8e5m2>)
        if (std::isinf(v)) p[i] = f8e5m2::from_bits(v > 0 ? 0x7c : 0xfc);
    } else if constexpr (std::is_unsigned_v<T>) {
      p[i] = static_cast<T>(small(g) + 8);
    } else {
      p[i] = static_cast<T>(small(g));
    }
  }
}

// Largest tile of each axis over the partitions made of tensor value `t`.
inline Shape partition_tiles(const ir::Kernel& k, ir::ValueId t, int rank) {
  Shape s(static_cast<std::size_t>(rank), 0);
  ir::walk(k.body, [&](const ir::Op& op) {
    if (op.kind == ir::OpKind::MakePartition && op.operands[0] == t)
      for (int d = 0; d < rank; ++d) s[static_cast<std::size_t>(d)] = std::max(s[static_cast<std::size_t>(d)], op.shape[static_cast<std::size_t>(d)]);
  });
  return s;
}

struct Inputs {
  Shape grid;
  std::vector<Buffer> bufs;  // per param (scalars: unused)
  std::vector<ArgValue> args;
  // A deep copy (the arguments point into the copy's buffers).
  Inputs clone() const {
    Inputs c = *this;
    for (std::size_t i = 0; i < c.bufs.size(); ++i)
      if (!c.bufs[i].mem.empty()) c.args[i].tensor.data = c.bufs[i].data();
    return c;
  }
};

inline bool aligned_inputs() {
  const char* e = std::getenv("CTILE_TEST_ALIGNED");
  return e && *e && *e != '0';
}

inline Inputs make_inputs(const ir::Kernel& k, bool one_block, std::uint64_t seed, Fill fill) {
  std::mt19937_64 g(seed);
  std::mt19937_64 gs(seed ^ 0x9e3779b97f4a7c15ull);  // shape choices: their own stream (values stay as before)
  Inputs s;
  s.grid.assign(static_cast<std::size_t>(k.grid_rank), one_block ? 1 : 2);
  // A piece of lower rank than the grid needs extent 1 along the further axes (merge_grid).
  for (const ir::Param& p : k.params)
    if (p.type.kind == ir::TypeKind::Piece)
      for (std::size_t d = static_cast<std::size_t>(p.type.rank); d < s.grid.size(); ++d) s.grid[d] = 1;
  s.bufs.resize(k.params.size());
  s.args.resize(k.params.size());
  for (std::size_t i = 0; i < k.params.size(); ++i) {
    const ir::Param& p = k.params[i];
    if (p.type.kind == ir::TypeKind::Tile) {
      s.args[i].scalar = is_float(p.type.dtype) ? ir::Scalar::of_float(0.5 + static_cast<double>(g() % 4) * 0.5)
                                                 : ir::Scalar::of_int(static_cast<std::int64_t>(1 + g() % 4));
      continue;
    }
    Buffer& b = s.bufs[i];
    b.d = p.type.dtype;
    const int r = p.type.rank;
    b.shape.resize(static_cast<std::size_t>(r));
    if (p.type.kind == ir::TypeKind::Piece) {
      for (int d = 0; d < r; ++d) {
        const std::int64_t t = p.type.shape[static_cast<std::size_t>(d)];
        const std::int64_t gd = s.grid[static_cast<std::size_t>(d)];
        // The last tile block is partial: 3 short (element by element), or half (whole vectors).
        const std::int64_t part = (gs() & 1) != 0 && t >= 16 ? t / 2 : std::max<std::int64_t>(1, t - 3);
        b.shape[static_cast<std::size_t>(d)] = t * (gd - 1) + part;
      }
    } else {
      const Shape tiles = partition_tiles(k, p.value, r);
      for (int d = 0; d < r; ++d) {
        const std::int64_t t = tiles[static_cast<std::size_t>(d)];
        // (CTILE_TEST_ALIGNED=1: always the half tile, so rows of 16-bit elements stay 16-byte multiples.)
        const bool half = ((gs() & 1) != 0 || aligned_inputs() || p.facts.any()) && t >= 16;
        b.shape[static_cast<std::size_t>(d)] = t == 0 ? 19 : half ? t + t / 2 : std::max<std::int64_t>(1, 2 * t - 3);
        // (A tensor with facts read in blocks of extent 1 along an axis (attention's [1, 1, S, D]
        // of [B, H, S, D]): 2 along it, so the second coordinate is read too.)
        if (t == 1 && p.facts.any()) b.shape[static_cast<std::size_t>(d)] = 2;
        // An extent the facts promise a multiple of 16 (or 8) is one, rounded up, and an odd multiple
        // (a kernel that relied on more than the promise, as a mask compared once per group of 2m,
        // would go wrong).
        const std::int64_t m = (p.facts.extent_div16 >> d) & 1u ? 16 : (p.facts.extent_div8 >> d) & 1u ? 8 : 1;
        std::int64_t& e = b.shape[static_cast<std::size_t>(d)];
        e = (e + m - 1) / m * m;
        if (m > 1 && e % (2 * m) == 0) e += m;
      }
    }
    // Every other tensor gets padded rows and an odd base offset: strided and misaligned views
    // (CTILE_TEST_ALIGNED=1: none, so every full tile takes the vector paths).
    const bool coin = (g() & 1) != 0;
    // (A tensor whose facts promise alignment or strides: never, the kernel may rely on them.)
    const bool odd = coin && r >= 1 && !aligned_inputs() && !p.facts.any();
    b.strides = contiguous_strides(b.shape);
    if (odd && r >= 2) {
      const std::int64_t ld = b.shape.back() + 3;
      std::int64_t acc = 1;
      for (int d = r - 1; d >= 0; --d) {
        b.strides[static_cast<std::size_t>(d)] = acc;
        acc *= d == r - 1 ? ld : b.shape[static_cast<std::size_t>(d)];
      }
    }
    b.offset = odd ? 1 : 0;
    std::int64_t span = 1;
    for (int d = 0; d < r; ++d) span += (b.shape[static_cast<std::size_t>(d)] - 1) * b.strides[static_cast<std::size_t>(d)];
    const std::size_t n = static_cast<std::size_t>(span) + b.offset + 8;
    b.mem.resize(n * static_cast<std::size_t>(dtype_size(b.d)));
    backend::cpu::dispatch(b.d, [&]<class T>(std::type_identity<T>) { fill_random(reinterpret_cast<T*>(b.mem.data()), n, g, fill); });
    if (b.d == DType::b1)
      for (auto& x : b.mem) x = static_cast<std::byte>(static_cast<unsigned>(x) & 1u);
    s.args[i].tensor.data = b.data();
    s.args[i].tensor.dtype = b.d;
    s.args[i].tensor.shape = b.shape;
    s.args[i].tensor.strides = b.strides;
  }
  return s;
}

// The same inputs with every float replaced by its absolute value (tensors and scalars): the
// interpreter on these computes sum |term| for kernels built from monotone ops.
inline Inputs absolute_values(const Inputs& in) {
  Inputs a = in.clone();
  for (std::size_t i = 0; i < a.bufs.size(); ++i) {
    if (a.bufs[i].mem.empty()) {
      if (a.args[i].scalar.is_float) a.args[i].scalar.f = std::fabs(a.args[i].scalar.f);
      continue;
    }
    Buffer& b = a.bufs[i];
    backend::cpu::dispatch(b.d, [&]<class T>(std::type_identity<T>) {
      if constexpr (backend::cpu::is_float_v<T>) {
        T* p = reinterpret_cast<T*>(b.mem.data());
        for (std::size_t j = 0; j < b.count(); ++j)
          p[j] = backend::cpu::float_from_double<T>(std::fabs(backend::cpu::to_double(p[j])));
      }
    });
  }
  return a;
}

// ---- tolerances -------------------------------------------------------------------------------------

// |got - want| <= ulps * ulp_out(want) + c_ulps * ulp_c(want) + mag * M + scale * S: ulps of the
// output type and of the compute type c at the reference value, M the element of the magnitude run,
// S the largest finite |want| of the tensor's view. `exact`: bit-identical (NaN matches any NaN).
struct Tolerance {
  bool exact = true;
  bool compare = true;       // false: the case only runs (order-dependent results, see declared_model)
  bool signed_zeros = true;  // false: -0 and +0 match (the sign of a zero from float min/max, or of a float sum of zeros, is unspecified)
  DType c = DType::f32;
  double ulps = 0, c_ulps = 0, mag = 0, scale = 0;
  double abs = 0;  // an absolute floor (f32 atomic adds flush subnormals on the GPU)
  // true: a reference with no finite element is accepted (decode's log-sum-exp is -inf when every
  // sequence of the random inputs, lengths in [-8, 23], is empty; its output is compared anyway)
  bool all_nonfinite_ok = false;
  std::string model = "exact";
};

// How each tensor a kernel writes is compared (Tolerance per param, in param order), or why no
// bound could be derived (`error` non-empty: the test fails).
struct Tolerances {
  std::vector<Tolerance> per_param;
  bool needs_magnitudes = false;
  std::string error;
};

namespace detail_tol {

using ir::OpKind;
using ir::ValueId;

struct Def {
  const ir::Op* op = nullptr;  // defining op, or the control-flow op owning the region argument
};

inline void index_defs(const ir::Region& r, std::vector<Def>& defs, const ir::Op* owner) {
  for (ValueId a : r.args)
    if (owner) defs[static_cast<std::size_t>(a)].op = owner;
  for (const auto& op : r.ops) {
    for (ValueId v : op->results) defs[static_cast<std::size_t>(v)].op = op.get();
    for (const auto& sub : op->regions) index_defs(sub, defs, op.get());
  }
}

// Every op that the values `roots` depend on (a control-flow op counts with all its nested ops).
inline std::set<const ir::Op*> slice(const ir::Kernel& k, const std::vector<Def>& defs, std::vector<ValueId> roots) {
  std::set<const ir::Op*> ops;
  std::set<ValueId> seen;
  std::function<void(const ir::Op&)> add_op = [&](const ir::Op& op) {
    if (!ops.insert(&op).second) return;
    for (ValueId v : op.operands) roots.push_back(v);
    for (const auto& r : op.regions)
      for (const auto& o : r.ops) add_op(*o);
  };
  while (!roots.empty()) {
    const ValueId v = roots.back();
    roots.pop_back();
    if (v < 0 || !seen.insert(v).second) continue;
    if (const ir::Op* d = defs[static_cast<std::size_t>(v)].op) add_op(*d);
  }
  (void)k;
  return ops;
}

inline bool is_float_value(const ir::Kernel& k, ValueId v) {
  const ir::Type& t = k.type(v);
  return t.kind == ir::TypeKind::Tile && is_float(t.dtype);
}
inline bool float_result(const ir::Kernel& k, const ir::Op& op) {
  return !op.results.empty() && is_float_value(k, op.results[0]);
}
inline DType result_dtype(const ir::Kernel& k, const ir::Op& op) { return k.type(op.results[0]).dtype; }

// A multiply in f32/f64 whose result feeds `op` (an add, a subtract, a sum or a scan): NVRTC may
// fuse them.
inline bool contracts(const ir::Kernel& k, const std::vector<Def>& defs, const ir::Op& op) {
  const bool adds = (op.kind == OpKind::Binary && (op.binary == ir::BinaryFn::Add || op.binary == ir::BinaryFn::Sub)) ||
                    (op.kind == OpKind::Reduce && op.reduce == ir::ReduceKind::Sum) || op.kind == OpKind::Scan;
  if (!adds || !float_result(k, op)) return false;
  const DType d = result_dtype(k, op);
  if (d != DType::f32 && d != DType::f64) return false;
  for (ValueId v : op.operands) {
    const ir::Op* p = defs[static_cast<std::size_t>(v)].op;
    while (p && (p->kind == OpKind::Reshape || p->kind == OpKind::Broadcast)) p = defs[static_cast<std::size_t>(p->operands[0])].op;
    if (p && p->kind == OpKind::Binary && p->binary == ir::BinaryFn::Mul && float_result(k, *p)) return true;
  }
  return false;
}

// A reduction over a combine function that does float arithmetic (+, -, *, /, fma): its result
// depends on the order of combination (the reference's left to right, the generated code's tree)
// as a sum's does. One that only compares and selects is exact in any order.
inline bool combine_accumulates(const ir::Kernel& k, const ir::Op& op) {
  if (op.kind != OpKind::ReduceWith || op.regions.empty()) return false;
  for (const auto& inner : op.regions[0].ops)
    if ((inner->kind == OpKind::Fma || (inner->kind == OpKind::Binary && (inner->binary == ir::BinaryFn::Add ||
                                                                          inner->binary == ir::BinaryFn::Sub ||
                                                                          inner->binary == ir::BinaryFn::Mul ||
                                                                          inner->binary == ir::BinaryFn::Div))) &&
        float_result(k, *inner))
      return true;
  return false;
}

// Ops under which the magnitude run bounds sum |term| from above (inputs replaced by |x|).
inline bool monotone(const ir::Kernel& k, const ir::Op& op) {
  switch (op.kind) {
    case OpKind::Constant: return !op.value.is_float || !(op.value.f < 0);
    case OpKind::Unary: return !float_result(k, op) || op.unary == ir::UnaryFn::Abs;
    case OpKind::Binary:
      if (!float_result(k, op)) return true;
      return op.binary == ir::BinaryFn::Add || op.binary == ir::BinaryFn::Mul || op.binary == ir::BinaryFn::Max;
    case OpKind::Reduce:
      return op.reduce == ir::ReduceKind::Sum || op.reduce == ir::ReduceKind::Prod || op.reduce == ir::ReduceKind::Max ||
             !float_result(k, op);
    case OpKind::AtomicRMW: return op.atomic == ir::AtomicKind::Add || op.atomic == ir::AtomicKind::Max;
    case OpKind::Select: return !float_result(k, op);
    case OpKind::Cmp: return true;  // bools: feed only indices and masks of integer data here
    case OpKind::If: case OpKind::While: case OpKind::AtomicCAS: return false;
    default: return true;  // loads, gathers, stores, shapes, conversions, fma, mma, scan, for, ids
  }
}

// The tensor value behind a tile loaded by Load(MakePartition(t)) (kNoValue when it is not one).
inline ValueId loaded_tensor(const std::vector<Def>& defs, ValueId v) {
  const ir::Op* p = defs[static_cast<std::size_t>(v)].op;
  while (p && (p->kind == OpKind::Convert || p->kind == OpKind::Reshape)) p = defs[static_cast<std::size_t>(p->operands[0])].op;
  if (!p || p->kind != OpKind::Load) return ir::kNoValue;
  const ir::Op* part = defs[static_cast<std::size_t>(p->operands[0])].op;
  return part && part->kind == OpKind::MakePartition ? part->operands[0] : ir::kNoValue;
}

inline std::string dn(DType d) { return std::string(dtype_name(d)); }

}  // namespace detail_tol

// Cases whose bound cannot be derived op by op: their model, from the same table. `width` is the
// longest row (tile extent) of the kernel's output.
inline bool declared_model(const std::string& name, DType out, std::int64_t width, Tolerance& t) {
  auto narrow = [&] { return out != DType::f32 && out != DType::f64 ? eb::kNarrowingUlps : 0.0; };
  t.exact = false;
  if (name == "approx_math") {
    // Four approximate functions selected per row: the widest of their bounds (bound()).
    using R = ctile::ir::Rounding;
    t.c_ulps = eb::bound(eb::Fn::Exp, DType::f32, R::Approx).ulps;
    t.abs = eb::bound(eb::Fn::Log2, DType::f32, R::Approx).abs;
    t.model = "approx exp/log2/rsqrt/div: " + std::to_string(t.c_ulps) + " ulps f32 + 2^-22 absolute";
    return true;
  }
  if (name.rfind("softmax_fast", 0) == 0) {
    t.c_ulps = eb::softmax_fast_rel_ulps(width);
    t.ulps = narrow();
    t.model = "softmax (fast_math): " + std::to_string(eb::softmax_fast_rel_ulps(width)) + " ulps f32 relative";
    return true;
  }
  if (name == "example_softmax" || name == "example_softmax_prefetch" || name.rfind("softmax_bf16", 0) == 0) {
    t.c_ulps = eb::softmax_rel_ulps(width);
    t.ulps = narrow();
    t.model = "softmax: " + std::to_string(eb::softmax_rel_ulps(width)) + " ulps f32 relative";
    return true;
  }
  if (name == "example_rms_norm" || name == "example_rms_norm_prefetch") {
    t.c_ulps = eb::rms_norm_rel_ulps(width);
    t.ulps = narrow();
    t.model = "rms_norm: " + std::to_string(eb::rms_norm_rel_ulps(width)) + " ulps f32 relative";
    return true;
  }
  if (name.rfind("layer_norm", 0) == 0) {
    t.scale = eb::layer_norm_scale_ulps(width) * eb::eps(DType::f32);
    t.ulps = narrow();
    t.model = "layer_norm: " + std::to_string(eb::layer_norm_scale_ulps(width)) + " ulps f32 of the output's scale";
    return true;
  }
  if (name.rfind("axpby_", 0) == 0) {
    // exp(a / 2) - b * b + max(a, b) in f32: exp's bound, the contracted b * b, two roundings of
    // sums of differing values; relative to the output's scale (the terms can cancel).
    const double u = eb::ulps(eb::Fn::Exp, DType::f32) + eb::kContractionUlps + 2;
    t.scale = u * eb::eps(DType::f32);
    t.ulps = narrow();
    t.model = "axpby: " + std::to_string(u) + " ulps f32 of the output's scale";
    return true;
  }
  if (name.rfind("attention_", 0) == 0) {
    // P = exp2(S - m) is rounded to bf16 before P V on both sides; exp2 and the order of the
    // sums may move a rounding of P by one bf16 ulp (2^-8 relative): the output, a weighted mean
    // of V over the weights P / l, moves by at most 2^-8 of V's largest magnitude, which the
    // output's scale (the largest |mean|) bounds within a few times.
    t.scale = std::ldexp(1.0, -5);
    t.ulps = narrow();
    t.all_nonfinite_ok = name.rfind("attention_decode_split", 0) == 0;
    t.model = "attention: 2^-5 of the output's scale (P rounded to bf16 on both sides)";
    return true;
  }
  if (name.rfind("matmul_bias_silu", 0) == 0) {
    // h = A @ B + bias in f32 (the product's sums reassociated: sqrt(K) ulps of sum |term|, under
    // 2^-16 of sum |term| for the suite's K <= 4096, and sum |term| stays within a few times the
    // largest |h| for its normal inputs), then silu(h) = h * sigmoid(h) (|silu'| <= 1.1; sigmoid's
    // few f32 ulps), rounded to bf16 once on both sides: 2^-12 of the output's scale, plus the
    // narrowing's ulp.
    t.scale = std::ldexp(1.0, -12);
    t.ulps = narrow();
    t.model = "matmul + bias + silu: 2^-12 of the output's scale, + 1 ulp of the narrowing";
    return true;
  }
  if (name == "control_nested") {
    // Its sums (over iota * 2^-k) are small dyadic rationals: exact in any order and precision.
    t = Tolerance{};
    t.model = "exact (dyadic sums)";
    return true;
  }
  if (name.rfind("atomics_", 0) == 0 && name.find("commutative") == std::string::npos) {
    // add, max, min, exch and cas on the same elements: the final values and the old values depend
    // on the order the blocks' atomics land in. They run for crashes and hangs; atomics_commutative_*
    // and the histogram compare exactly, the CPU suite checks the semantics (CpuAtomics.*).
    t = Tolerance{};
    t.compare = false;
    t.model = "order-dependent: not compared";
    return true;
  }
  t.exact = true;
  return false;
}

inline Tolerances tolerances(const std::string& name, const ir::Kernel& k, const Inputs& in) {
  using namespace detail_tol;
  Tolerances out;
  out.per_param.resize(k.params.size());
  std::vector<Def> defs(k.values.size());
  index_defs(k.body, defs, nullptr);
  std::map<ValueId, std::size_t> param_of;
  for (std::size_t i = 0; i < k.params.size(); ++i) param_of[k.params[i].value] = i;
  std::int64_t blocks = 1;
  for (auto e : in.grid) blocks *= e;

  for (std::size_t pi = 0; pi < k.params.size(); ++pi) {
    const ir::Param& p = k.params[pi];
    if (p.type.kind == ir::TypeKind::Tile || p.type.access == ir::Access::Read) continue;
    Tolerance& tol = out.per_param[pi];
    // The values written into this param.
    std::vector<ValueId> roots;
    ir::walk(k.body, [&](const ir::Op& op) {
      const bool writes = op.kind == OpKind::StorePiece || op.kind == OpKind::ScatterPiece ||
                          op.kind == OpKind::ScatterUnchecked || op.kind == OpKind::AtomicRMW || op.kind == OpKind::AtomicCAS;
      if (writes && !op.operands.empty() && op.operands[0] == p.value)
        for (std::size_t j = 1; j < op.operands.size(); ++j) roots.push_back(op.operands[j]);
    });
    std::set<const ir::Op*> ops = slice(k, defs, roots);
    // The write ops themselves (atomics accumulate).
    ir::walk(k.body, [&](const ir::Op& op) {
      if (op.kind == OpKind::AtomicRMW && op.operands[0] == p.value) ops.insert(&op);
    });
    const std::int64_t width = p.type.kind == ir::TypeKind::Piece && !p.type.shape.empty() ? p.type.shape.back() : 0;
    bool min_max = false;
    for (const ir::Op* op : ops)
      min_max = min_max || (float_result(k, *op) && ((op->kind == OpKind::Binary && (op->binary == ir::BinaryFn::Min ||
                                                                                    op->binary == ir::BinaryFn::Max)) ||
                                                     (op->kind == OpKind::Reduce && (op->reduce == ir::ReduceKind::Min ||
                                                                                    op->reduce == ir::ReduceKind::Max)))) ||
                (op->kind == OpKind::AtomicRMW && is_float(k.type(op->operands[0]).dtype) &&
                 (op->atomic == ir::AtomicKind::Min || op->atomic == ir::AtomicKind::Max));
    // A float sum of zeros is -0 only when every addend (and the identity, if it joins) is -0: the
    // interpreter starts its sums at +0, the generated code's trees start at an element, so the
    // sign of a zero sum is not compared (found as a rare failure of reduce_scan_f32 with special
    // values).
    bool zero_sum = false;
    for (const ir::Op* op : ops)
      zero_sum = zero_sum || (float_result(k, *op) && ((op->kind == OpKind::Reduce && op->reduce == ir::ReduceKind::Sum) ||
                                                       op->kind == OpKind::Scan || op->kind == OpKind::Mma));
    if (declared_model(name, p.type.dtype, width, tol)) {
      tol.signed_zeros = !min_max && !zero_sum;
      continue;
    }
    tol.signed_zeros = !min_max && !zero_sum;

    std::vector<const ir::Op*> fns, accs, contracted;
    bool mono = true;
    for (const ir::Op* op : ops) {
      eb::Fn f;
      if ((op->kind == OpKind::Unary || op->kind == OpKind::Binary) && float_result(k, *op) &&
          eb::inexact(k, *op, result_dtype(k, *op), f))
        fns.push_back(op);
      if ((op->kind == OpKind::Reduce && float_result(k, *op) &&
           (op->reduce == ir::ReduceKind::Sum || op->reduce == ir::ReduceKind::Prod)) || combine_accumulates(k, *op) ||
          (op->kind == OpKind::Mma && float_result(k, *op)) ||
          (op->kind == OpKind::AtomicRMW && op->atomic == ir::AtomicKind::Add && is_float(k.type(op->operands[0]).dtype)))
        accs.push_back(op);
      if (contracts(k, defs, *op)) contracted.push_back(op);
      mono = mono && monotone(k, *op);
    }
    if (fns.empty() && accs.empty() && contracted.empty()) continue;  // exact
    tol.exact = false;
    if (!is_float(p.type.dtype)) {
      out.error = "parameter '" + p.name + "' (" + dn(p.type.dtype) +
                  ") depends on inexact float ops (a comparison or conversion of them may flip): declare a model";
      return out;
    }

    if (accs.empty() && contracted.empty() && fns.size() == 1) {
      // One inexact op; everything after it must pass its value on unchanged.
      const ir::Op& f = *fns[0];
      std::set<ValueId> tainted(f.results.begin(), f.results.end());
      bool plain = true;
      for (bool grew = true; grew;) {
        grew = false;
        for (const ir::Op* op : ops) {
          bool uses = false;
          for (ValueId v : op->operands) uses = uses || tainted.count(v);
          if (!uses || op == &f) continue;
          const bool passes = op->kind == OpKind::Reshape || op->kind == OpKind::Broadcast || op->kind == OpKind::Permute ||
                              op->kind == OpKind::Extract || op->kind == OpKind::Cat ||
                              (op->kind == OpKind::Convert && float_result(k, *op));
          if (!passes) plain = false;
          for (ValueId r : op->results) grew = tainted.insert(r).second || grew;
        }
      }
      if (plain) {
        eb::Fn fam;
        (void)eb::inexact(k, f, result_dtype(k, f), fam);
        const DType c = eb::compute_type(result_dtype(k, f));
        const eb::Bound b = eb::bound(fam, c, eb::effective_rounding(k, f, result_dtype(k, f)));
        const double u = b.ulps;
        tol.c = c;
        tol.c_ulps = u;
        tol.abs += b.abs;
        // 16-bit results of an f32 computation, or any narrowing conversion after it.
        tol.ulps = eb::eps(p.type.dtype) > eb::eps(c) ? eb::kNarrowingUlps : 0.0;
        tol.model = std::string(f.kind == OpKind::Unary ? ir::unary_name(f.unary) : ir::binary_name(f.binary)) + " " +
                    dn(c) + ": " + std::to_string(u) + " ulps" + (tol.ulps > 0 ? " + 1 ulp " + dn(p.type.dtype) : "");
        continue;
      }
    }

    if (fns.empty() && mono) {
      // Accumulations over monotone ops: sqrt(K) ulps of sum |term| (the magnitude run) plus one
      // ulp per rounding of a differing value.
      double terms = 1;
      int roundings = static_cast<int>(contracted.size());
      bool all_f64 = true;
      double narrowest = 0;
      for (const ir::Op* op : contracted) {
        all_f64 = all_f64 && result_dtype(k, *op) == DType::f64;
        narrowest = std::max(narrowest, eb::eps(result_dtype(k, *op)));
      }
      std::int64_t mma_k = 0, mma_tile_k = 0;
      bool fp8_mma = false;
      for (const ir::Op* op : accs) {
        const DType acc_t = op->kind == OpKind::AtomicRMW ? k.type(op->operands[0]).dtype : result_dtype(k, *op);
        all_f64 = all_f64 && acc_t == DType::f64;
        narrowest = std::max(narrowest, eb::eps(acc_t));
        if (op->kind == OpKind::Reduce || op->kind == OpKind::ReduceWith) {
          const Shape& s = k.type(op->operands[0]).shape;
          terms *= static_cast<double>(s.empty() ? 1 : s[static_cast<std::size_t>(op->axis)]);
          ++roundings;
        } else if (op->kind == OpKind::AtomicRMW) {
          const ValueId val = op->operands.back();
          const double contributions = static_cast<double>(numel(k.type(val).shape)) * static_cast<double>(blocks);
          terms *= contributions;
          // A narrow float atomic add (f16, bf16, fp8: a CAS loop, device/atomic16.h) rounds the
          // element to the narrow type at every add, in whatever order the adds land, where the
          // reference rounds once: the roundings of the partial sums grow like sqrt(adds), the same
          // statistical growth as the f32 term above (accumulation_ulps), but in the narrow type's
          // eps. (Seen: half_atomics, 512 adds, off by 1.4 eps of sum|term| in one emulated run
          // against a one-rounding bound.)
          roundings += dtype_size(acc_t) <= 2 && is_float(acc_t)
                           ? static_cast<int>(std::ceil(eb::accumulation_ulps(static_cast<std::int64_t>(contributions))))
                           : 1;
          if (acc_t == DType::f32) tol.abs += 2 * contributions * eb::kAtomicAddF32FlushBound;
        } else {  // Mma: K of the whole product (the last axis), from the tensor the a operand is loaded from
          const ValueId t = loaded_tensor(defs, op->operands[0]);
          const auto it = param_of.find(t);
          const std::size_t r = k.type(op->operands[0]).shape.size();  // 2, or 3 for a batched product
          if (it == param_of.end() || in.bufs[it->second].shape.size() != r) {
            out.error = "parameter '" + p.name + "': an mma whose a operand is not a loaded tensor of its rank: declare a model";
            return out;
          }
          mma_k = std::max(mma_k, in.bufs[it->second].shape[r - 1]);
          mma_tile_k = std::max(mma_tile_k, k.type(op->operands[0]).shape[r - 1]);
          fp8_mma = fp8_mma || is_fp8(k.type(op->operands[0]).dtype);
        }
      }
      if (mma_k > 0) {
        terms *= static_cast<double>(mma_k);
        roundings += static_cast<int>((mma_k + mma_tile_k - 1) / mma_tile_k);
      }
      const DType c = all_f64 ? DType::f64 : DType::f32;
      if (narrowest == 0) narrowest = eb::eps(c);
      const double sq = eb::accumulation_ulps(static_cast<std::int64_t>(terms));
      tol.mag = sq * eb::eps(c) + roundings * narrowest;
      // fp8 products on sm_90's tensor cores (wgmma k32): the accumulator is reported to keep about
      // 14 bits (eb::kFp8WgmmaAccumulationEps per instruction step of 32 terms), not f32's 24.
      if (fp8_mma) tol.mag += static_cast<double>((mma_k + 31) / 32) * eb::kFp8WgmmaAccumulationEps;
      // Each rounding of a partial sum in the subnormal range errs by up to half the smallest
      // subnormal: an absolute floor the relative terms do not cover.
      tol.abs += (terms + roundings) * eb::ulp(c, 0.0) / 2;
      tol.ulps = eb::eps(p.type.dtype) > narrowest ? eb::kNarrowingUlps : 0.0;
      char m[200];
      std::snprintf(m, sizeof m, "accumulation of %lld terms in %s: %.2f ulps of sum|term| + %d roundings (eps %g)%s",
                    static_cast<long long>(terms), dn(c).c_str(), sq, roundings, narrowest,
                    tol.ulps > 0 ? ", + 1 ulp of the output" : "");
      tol.model = m;
      out.needs_magnitudes = true;
      continue;
    }
    out.error = "parameter '" + p.name + "' depends on " + std::to_string(fns.size()) + " transcendental op(s) and " +
                std::to_string(accs.size()) + " accumulation(s)" + (mono ? "" : " through non-monotone ops") +
                ": no bound follows op by op; declare a model for this kernel (declared_model)";
    return out;
  }
  return out;
}

// ---- comparison -------------------------------------------------------------------------------------

// Compares the memory of a written tensor element by element against the reference `want`.
// Returns "" or a description of the first mismatches. `mag`: the magnitude run's buffer (when
// the tolerance uses it). `vacuity`: fail when no element of the view has a finite reference.
inline std::string compare(const Buffer& want, const Buffer& got, const Tolerance& tol, const Buffer* mag = nullptr,
                           bool vacuity = false) {
  std::string err;
  int shown = 0;
  std::size_t bad = 0;
  backend::cpu::dispatch(want.d, [&]<class T>(std::type_identity<T>) {
    const T* w = reinterpret_cast<const T*>(want.mem.data());
    const T* o = reinterpret_cast<const T*>(got.mem.data());
    const std::size_t n = want.count();
    auto report = [&](std::size_t i, const std::string& why) {
      ++bad;
      if (shown++ >= 3) return;
      char b[400];
      if constexpr (backend::cpu::is_float_v<T>)
        std::snprintf(b, sizeof b, "element %zu: reference %.17g, generated code %.17g (%s)", i,
                      backend::cpu::to_double(w[i]), backend::cpu::to_double(o[i]), why.c_str());
      else
        std::snprintf(b, sizeof b, "element %zu: reference %lld, generated code %lld (%s)", i, static_cast<long long>(w[i]),
                      static_cast<long long>(o[i]), why.c_str());
      err += std::string(err.empty() ? "" : "; ") + b;
    };
    if constexpr (!backend::cpu::is_float_v<T>) {
      for (std::size_t i = 0; i < n; ++i)
        if (std::memcmp(&w[i], &o[i], sizeof(T)) != 0) report(i, "integers compare exactly");
    } else {
      double scale = 0;
      std::size_t finite = 0;
      for (std::size_t i : want.view_indices()) {
        const double a = backend::cpu::to_double(w[i]);
        if (std::isfinite(a)) scale = std::max(scale, std::fabs(a)), ++finite;
      }
      if (vacuity && finite == 0 && !want.view_indices().empty()) {
        err = "no element of the reference is finite: the comparison would be vacuous";
        bad = 1;
        return;
      }
      const double top = eb::max_finite(want.d) + eb::ulp(want.d, eb::max_finite(want.d));  // overflow threshold
      for (std::size_t i = 0; i < n; ++i) {
        const double a = backend::cpu::to_double(w[i]), b = backend::cpu::to_double(o[i]);
        if (std::isnan(a) || std::isnan(b)) {
          if (!(std::isnan(a) && std::isnan(b))) report(i, std::isnan(b) ? "NaN where the reference is not" : "the reference is NaN");
          continue;
        }
        if (tol.exact) {
          const bool zeros = a == 0 && b == 0 && !tol.signed_zeros;
          if (!zeros && std::memcmp(&w[i], &o[i], sizeof(T)) != 0) report(i, "must be bit-identical: " + tol.model);
          continue;
        }
        if (a == b) continue;
        double m = 0;
        if (mag && tol.mag > 0) {
          const double v = backend::cpu::to_double(reinterpret_cast<const T*>(mag->mem.data())[i]);
          m = std::isfinite(v) ? std::fabs(v) : 0;
        }
        const double aa = std::isinf(a) ? top : std::fabs(a);
        const double bound =
            tol.ulps * eb::ulp(want.d, aa) + tol.c_ulps * eb::ulp(tol.c, aa) + tol.mag * m + tol.scale * scale + tol.abs;
        const double da = std::isinf(a) ? std::copysign(top, a) : a, db = std::isinf(b) ? std::copysign(top, b) : b;
        if (!(std::fabs(da - db) <= bound)) {
          char why[200];
          std::snprintf(why, sizeof why, "|diff| %.3g > bound %.3g = %s", std::fabs(da - db), bound, tol.model.c_str());
          report(i, why);
        }
      }
    }
  });
  if (bad > 3) err += "; " + std::to_string(bad) + " elements differ in all";
  return err;
}

inline bool starts(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

// Kernels whose blocks write each other's elements (scatters through the whole tensor) run as one
// block, so the result does not depend on the order of the blocks.
inline bool one_block(const std::string& name) { return starts(name, "gather_scatter") || name == "example_unsafe_scatter"; }

// Runs a kernel on the code under test: `in` holds the launch's arguments, the written tensors
// are compared afterwards.
using Runner = std::function<void(const std::shared_ptr<const ir::Kernel>&, const backend::LaunchConfig&, Inputs&)>;

// Runs case `c` on the interpreter and on `run` from identical inputs and compares every written
// tensor with its tolerance. Returns the failures (empty: it matches).
inline std::vector<std::string> check_case(const Case& c, const std::shared_ptr<const ir::Kernel>& k, const Runner& run,
                                           std::uint64_t seed, Fill fill) {
  std::vector<std::string> fails;
  const bool ob = one_block(c.name);
  Inputs ref = make_inputs(*k, ob, seed, fill);
  Inputs test = ref.clone();
  const Tolerances tols = tolerances(c.name, *k, ref);
  if (!tols.error.empty()) return {c.name + ": " + tols.error};
  if (const char* v = std::getenv("CTILE_TEST_VERBOSE"); v && *v && fill == Fill::Clean && seed == 1)
    for (std::size_t i = 0; i < k->params.size(); ++i)
      if (k->params[i].type.kind != ir::TypeKind::Tile && k->params[i].type.access != ir::Access::Read)
        std::printf("[ bound    ] %s.%s: %s%s\n", c.name.c_str(), k->params[i].name.c_str(), tols.per_param[i].model.c_str(),
                    tols.per_param[i].signed_zeros ? "" : " (zeros of either sign)");
  backend::LaunchConfig cfg;
  cfg.grid = ref.grid;
  cfg.kernel_name = c.name;
  auto cb = backend::cpu_backend();
  const auto ck = cb->compile(k);
  Inputs mags;
  if (tols.needs_magnitudes) {
    mags = absolute_values(ref);
    cb->run(*ck, cfg, mags.args);
  }
  cb->run(*ck, cfg, ref.args);
  run(k, cfg, test);
  for (std::size_t i = 0; i < k->params.size(); ++i) {
    const ir::Param& p = k->params[i];
    if (p.type.kind == ir::TypeKind::Tile || p.type.access == ir::Access::Read) continue;
    const Tolerance& t = tols.per_param[i];
    if (!t.compare) continue;
    const std::string e = compare(ref.bufs[i], test.bufs[i], t, tols.needs_magnitudes ? &mags.bufs[i] : nullptr,
                                  fill == Fill::Clean && !t.exact && !t.all_nonfinite_ok);
    if (!e.empty())
      fails.push_back(c.name + ", parameter '" + p.name + "' (" + type_str(p.type) + "), " + fill_name(fill) + " seed " +
                      std::to_string(seed) + ": " + e);
  }
  return fails;
}

// The seeds of one run: a fixed one, one drawn fresh for every run (CTILE_TEST_SEED=n repeats a
// run; failures print the seed), and the special-values seed derived from it.
inline std::uint64_t run_seed() {
  static const std::uint64_t s = [] {
    if (const char* e = std::getenv("CTILE_TEST_SEED"); e && *e) return static_cast<std::uint64_t>(std::strtoull(e, nullptr, 0));
    return (static_cast<std::uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  }();
  return s;
}
struct SeededFill {
  std::uint64_t seed;
  Fill fill;
};
inline std::vector<SeededFill> run_inputs() {
  return {{1, Fill::Clean}, {run_seed(), Fill::Clean}, {run_seed() ^ 0x5bd1e995u, Fill::Special}};
}

}  // namespace cuda_codegen_test
