// The documented error bounds of the CUDA backend against the CPU interpreter (the reference), per
// op family and element type: the one place tests take their floating-point tolerances from.
// docs/ir.md ("Numerics: error bounds") is this table in prose, with its sources; keep them
// together. A precision mode added later (approximate exp, flush-to-zero, ...) adds its own column
// here (a mode argument to ulps()), and every test that includes this header follows.
//
// Units: `eps(d)` is the spacing of floats just above 1 (2^-23 for f32): one ulp of x is at most
// eps(d) * |x|. An op's bound is in ulps of its compute type: f32 for f16, bf16, fp8 and f32
// elements (narrow values are widened, computed in f32 and rounded back after each op), f64 for f64.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "ctile/core/dtype.hpp"
#include "ctile/ir/ir.hpp"

namespace error_bounds {

using ctile::DType;

// Machine epsilon of a float type (0 for integer and bool types: they compare exactly).
constexpr double eps(DType d) {
  switch (d) {
    case DType::f16: return 0x1p-10;
    case DType::bf16: return 0x1p-7;
    case DType::f32: return 0x1p-23;
    case DType::f64: return 0x1p-52;
    case DType::f8e4m3: return 0x1p-3;
    case DType::f8e5m2: return 0x1p-2;
    default: return 0;
  }
}

// The type float ops on elements of `d` compute in.
constexpr DType compute_type(DType d) { return d == DType::f64 ? DType::f64 : DType::f32; }

// Op families with a bound other than 0. Everything else is exact on both backends: + - * / sqrt
// rem fma (IEEE, one rounding), rsqrt (1 / sqrt, two correct roundings on both), floor ceil abs neg
// min max, comparisons, selects, conversions, shapes, loads and stores, integer arithmetic, and the
// reductions and scans along an axis that both accumulate in f64 in index order.
enum class Fn { Exp, Exp2, Log, Log2, Tanh, Sin, Cos, Pow, Div, Sqrt, Rsqrt, Erf, Erfc, Sigmoid, Log1p, Expm1, Atan2 };

// Worst case of one op, in ulps of the compute type: CUDA's documented maximum ulp error (CUDA
// Programming Guide, "Mathematical Functions", default -prec-div/-prec-sqrt, no fast math) plus the
// host libm's (glibc libm-test-ulps, x86_64), since both sides round.
struct FnBound {
  double cuda_f32, cpu_f32, cuda_f64, cpu_f64;
};
constexpr FnBound fn_bound(Fn f) {
  switch (f) {
    case Fn::Exp: return {2, 1, 1, 1};
    case Fn::Exp2: return {2, 1, 1, 1};
    case Fn::Log: return {1, 1, 1, 1};
    case Fn::Log2: return {1, 1, 1, 1};
    case Fn::Tanh: return {2, 2, 2, 2};
    case Fn::Sin: return {2, 1, 2, 1};
    case Fn::Cos: return {2, 1, 2, 1};
    case Fn::Pow: return {4, 1, 2, 1};
    case Fn::Erf: return {2, 1, 2, 1};
    case Fn::Erfc: return {4, 3, 5, 5};
    case Fn::Log1p: return {1, 1, 1, 1};
    case Fn::Expm1: return {1, 1, 1, 1};
    case Fn::Atan2: return {3, 2, 2, 1};
    // 1 / (1 + e^-x) or e^x / (1 + e^x): exp's error (the sum and the quotient add an ulp each;
    // the quotient's sensitivity to e is at most 1).
    case Fn::Sigmoid: return {2 + 2, 1 + 2, 1 + 2, 1 + 2};
    // Exact (correctly rounded) in the default rounding (rn); inexact only in the modes below.
    case Fn::Div: case Fn::Sqrt: case Fn::Rsqrt: return {0, 0, 0, 0};
  }
  return {0, 0, 0, 0};
}
constexpr double ulps(Fn f, DType compute) {
  const FnBound b = fn_bound(f);
  return compute == DType::f64 ? b.cuda_f64 + b.cpu_f64 : b.cuda_f32 + b.cpu_f32;
}

// The precision modes (docs/ir.md, "Numerics"; op attribute `rounding`, kernel option fast_math).
// full: CUDA's accurate functions (the table above) and div.full.f32 (2 ulps for |y| in
// [2^-126, 2^126]). approx (f32 compute only; subnormal inputs and results flushed): the PTX ISA's
// documented maxima: ex2.approx 2^-22.5 relative (2 ulps); exp(x) = ex2(x * log2 e), whose
// rounded product adds |x| * 2^-24 relative, at most 45 ulps for a finite result (|x| < 88.8);
// lg2.approx 2^-22 absolute (log multiplies it by ln 2); sqrt.approx 2^-23 and rsqrt.approx
// 2^-22.9 relative (1 and 2 ulps); tanh.approx 2^-10.987 relative (4096 ulps); div.approx 2 ulps
// for |y| in [2^-126, 2^126]. Flushing adds at most the smallest normal (2^-126), absolutely.
struct Bound {
  double ulps = 0;  // in ulps of the compute type, at the reference value
  double abs = 0;   // an absolute term
};
inline Bound bound(Fn f, DType compute, ctile::ir::Rounding r) {
  using ctile::ir::Rounding;
  const double cpu = compute == DType::f64 ? fn_bound(f).cpu_f64 : fn_bound(f).cpu_f32;
  if (r != Rounding::Approx) {
    if (r == Rounding::Full && f == Fn::Div) return {2 + cpu, 0};
    if (r == Rounding::Full && f == Fn::Rsqrt) return {2 + cpu, 0};  // rsqrtf
    return {ulps(f, compute), 0};
  }
  constexpr double flush = 0x1p-126;
  switch (f) {
    case Fn::Exp: return {2 + 45 + cpu, flush};
    case Fn::Exp2: return {2 + cpu, flush};
    case Fn::Log: return {cpu, 0x1p-22 * 0.6931471805599453 + flush};
    case Fn::Log2: return {cpu, 0x1p-22 + flush};
    case Fn::Sqrt: return {1 + cpu, flush};
    case Fn::Rsqrt: return {2 + cpu, flush};
    case Fn::Tanh: return {4096 + cpu, flush};
    case Fn::Div: return {2 + cpu, flush};
    default: return {ulps(f, compute), flush};
  }
}
// The rounding an op runs with: its own, else what the precision pass gives it (approx with the
// kernel option fast_math on f16/bf16/f32, else the op's default).
inline ctile::ir::Rounding effective_rounding(const ctile::ir::Kernel& k, const ctile::ir::Op& op, DType d) {
  using ctile::ir::Rounding;
  if (op.rounding != Rounding::Default) return op.rounding;
  if (k.options.fast_math && d != DType::f64) return Rounding::Approx;
  const bool rn = (op.kind == ctile::ir::OpKind::Binary && op.binary == ctile::ir::BinaryFn::Div) ||
                  (op.kind == ctile::ir::OpKind::Unary && op.unary == ctile::ir::UnaryFn::Sqrt);
  return rn ? Rounding::Rn : Rounding::Full;
}

// The family of an IR op on floats, or false when the op is exact.
inline bool family(ctile::ir::UnaryFn u, Fn& out) {
  using ctile::ir::UnaryFn;
  switch (u) {
    case UnaryFn::Exp: out = Fn::Exp; return true;
    case UnaryFn::Exp2: out = Fn::Exp2; return true;
    case UnaryFn::Log: out = Fn::Log; return true;
    case UnaryFn::Log2: out = Fn::Log2; return true;
    case UnaryFn::Tanh: out = Fn::Tanh; return true;
    case UnaryFn::Sin: out = Fn::Sin; return true;
    case UnaryFn::Cos: out = Fn::Cos; return true;
    case UnaryFn::Sqrt: out = Fn::Sqrt; return true;
    case UnaryFn::Rsqrt: out = Fn::Rsqrt; return true;
    case UnaryFn::Erf: out = Fn::Erf; return true;
    case UnaryFn::Erfc: out = Fn::Erfc; return true;
    case UnaryFn::Sigmoid: out = Fn::Sigmoid; return true;
    case UnaryFn::Log1p: out = Fn::Log1p; return true;
    case UnaryFn::Expm1: out = Fn::Expm1; return true;
    default: return false;
  }
}
inline bool family(ctile::ir::BinaryFn b, Fn& out) {
  if (b == ctile::ir::BinaryFn::Div) {
    out = Fn::Div;
    return true;
  }
  if (b == ctile::ir::BinaryFn::Atan2) {
    out = Fn::Atan2;
    return true;
  }
  if (b != ctile::ir::BinaryFn::Pow) return false;
  out = Fn::Pow;
  return true;
}
// An op with a nonzero bound in the rounding it runs with (sqrt, rsqrt and division are exact in
// their defaults).
inline bool inexact(const ctile::ir::Kernel& k, const ctile::ir::Op& op, DType d, Fn& out) {
  const bool fam = op.kind == ctile::ir::OpKind::Unary ? family(op.unary, out)
                   : op.kind == ctile::ir::OpKind::Binary ? family(op.binary, out)
                                                           : false;
  if (!fam) return false;
  const ctile::ir::Rounding r = effective_rounding(k, op, d);
  const Bound b = bound(out, compute_type(d), r);
  return b.ulps > 0 || b.abs > 0;
}

// Accumulations whose order or precision differs between the backends (reductions to one element
// in an f32 tree on the GPU vs in order in f64 on the CPU; f32 mma sums; float atomics in any
// order): |got - want| <= accumulation_ulps(K) * eps(acc) * sum |term_i| for K terms. sqrt(K) is
// the statistical growth of K independent roundings (Higham, "Accuracy and Stability of Numerical
// Algorithms", 2nd ed., sec. 2.8); the worst case of the GPU's tree is about log2(K) + K / threads
// roundings of every term.
inline double accumulation_ulps(std::int64_t k) { return std::sqrt(static_cast<double>(k < 1 ? 1 : k)); }

// fp8 products on sm_90's tensor cores (wgmma m64nNk32): the accumulator of the 8-bit instructions
// is reported to keep about 14 significant bits (DeepSeek-V3 technical report, on the H800), far
// fewer than f32's 24. The tests allow one 2^-13 of sum |term| per instruction step (32 terms of K),
// added in the worst case, until a GPU run measures it (docs/ir.md, "Numerics").
inline constexpr double kFp8WgmmaAccumulationEps = 0x1p-13;

// f32 atomic adds on the GPU (PTX atom/red.add.f32) flush subnormal inputs and results to zero:
// each changes the sum by less than the smallest normal f32.
constexpr double kAtomicAddF32FlushBound = 0x1p-126;

// NVRTC contracts a float multiply feeding an add into one FMA (-fmad=true, its default), which
// skips the product's rounding: at most one ulp of the product's magnitude, in f32 and f64 (16-bit
// arithmetic rounds to 16 bits between the two ops, so nothing is contracted there).
constexpr double kContractionUlps = 1;

// A value that differs between the backends, rounded to a narrower type, may round to neighbours:
// one ulp of the narrow type at most (on top of the difference itself).
constexpr double kNarrowingUlps = 1;

// Bounds of the normalisations, in ulps of f32 (the kernels compute in f32). K is the row length.
// Derivations in docs/ir.md: softmax and RMSNorm sum positive terms, so their bounds are relative
// to the result; LayerNorm subtracts the mean, so its bound is relative to the output's scale.
inline double softmax_rel_ulps(std::int64_t k) {
  const double e = ulps(Fn::Exp, DType::f32);
  return e + (e + accumulation_ulps(k) + 1) + 1;  // e_i, the sum of the e_i, the division
}
// The same softmax with fast_math (approximate exp and division, bound() above).
inline double softmax_fast_rel_ulps(std::int64_t k) {
  const double e = bound(Fn::Exp, DType::f32, ctile::ir::Rounding::Approx).ulps;
  const double d = bound(Fn::Div, DType::f32, ctile::ir::Rounding::Approx).ulps;
  return e + (e + accumulation_ulps(k) + 1) + d;
}
inline double rms_norm_rel_ulps(std::int64_t k) {
  const double ss = accumulation_ulps(k) + kContractionUlps + 1;  // sum of x^2
  return (ss + 2) / 2 + 2 + 2;  // / n, + eps, then sqrt halves it; 1 / sqrt; * inv * w
}
inline double layer_norm_scale_ulps(std::int64_t k) {
  const double mean = accumulation_ulps(k) + 1;
  return mean + 1 + rms_norm_rel_ulps(k) + kContractionUlps + 2;  // d = x - mean, rstd, d * rstd * w + b
}

// One ulp of |x| in type d (the spacing at x; the smallest subnormal below the normal range).
inline double ulp(DType d, double x) {
  const double e = eps(d);
  if (e == 0) return 0;
  int min_exp = -126;  // f32 and bf16
  if (d == DType::f16 || d == DType::f8e5m2) min_exp = -14;
  if (d == DType::f8e4m3) min_exp = -6;
  if (d == DType::f64) min_exp = -1022;
  x = std::fabs(x);
  int ex = 0;
  if (x > 0 && std::isfinite(x)) (void)std::frexp(x, &ex);  // x = m * 2^ex, m in [0.5, 1)
  const int e_unit = x > 0 && std::isfinite(x) ? std::max(ex - 1, min_exp) : min_exp;  // x in [2^e_unit, 2^(e_unit+1))
  return std::ldexp(e, e_unit);
}

// The largest finite value of type d (overflow to inf is compared as this plus one ulp; fp8
// saturates there instead).
inline double max_finite(DType d) {
  switch (d) {
    case DType::f8e4m3: return 448.0;
    case DType::f8e5m2: return 57344.0;
    case DType::f16: return 65504.0;
    case DType::bf16: return 0x1.fep127;
    case DType::f32: return 0x1.fffffep127;
    default: return 0x1.fffffffffffffp1023;
  }
}

}  // namespace error_bounds
