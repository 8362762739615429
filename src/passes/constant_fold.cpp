// constant-fold: an element-wise op whose operands are all constants (ct.constant: one value in
// every element) becomes a constant. Folding computes with the IR's numeric rules
// (src/core/numeric.hpp), the ones the CPU reference interpreter computes with, so a folded kernel
// gives the same bits. Transcendental functions, approximate roundings and float remainders are
// not folded (their device results differ from the reference within the documented bounds).
#include <algorithm>
#include <cmath>
#include <optional>

#include "../core/numeric.hpp"
#include "passes.hpp"
#include "rewrite.hpp"

namespace ctile::passes {
namespace {

using ir::BinaryFn;
using ir::OpKind;
using ir::Scalar;
using ir::UnaryFn;
namespace nm = ctile::numeric;

template <class T>
Scalar to_scalar(T x) {
  if constexpr (std::is_same_v<T, bool>) return Scalar::of_int(x ? 1 : 0);
  else if constexpr (nm::is_float_v<T>) return Scalar::of_float(nm::to_double(x));
  else if constexpr (std::is_unsigned_v<T>) return Scalar::of_int(static_cast<std::int64_t>(static_cast<std::uint64_t>(x)));
  else return Scalar::of_int(static_cast<std::int64_t>(x));
}

std::optional<Scalar> unary(UnaryFn f, DType d, const Scalar& a) {
  return nm::dispatch(d, [&]<class T>(std::type_identity<T>) -> std::optional<Scalar> {
    const T x = nm::scalar_to<T>(a);
    if constexpr (std::is_same_v<T, bool>) {
      if (f == UnaryFn::Not) return to_scalar<bool>(!x);
      return std::nullopt;
    } else if constexpr (nm::is_float_v<T>) {
      using A = nm::Arith<T>;
      using C = typename A::C;
      const C v = A::up(x);
      switch (f) {
        case UnaryFn::Neg: return to_scalar<T>(A::down(-v));
        case UnaryFn::Abs: return to_scalar<T>(A::down(std::fabs(v)));
        case UnaryFn::Floor: return to_scalar<T>(A::down(std::floor(v)));
        case UnaryFn::Ceil: return to_scalar<T>(A::down(std::ceil(v)));
        default: return std::nullopt;
      }
    } else {
      switch (f) {
        case UnaryFn::Neg: return to_scalar<T>(nm::wneg<T>(x));
        case UnaryFn::Abs:
          if constexpr (std::is_signed_v<T>) return to_scalar<T>(x < 0 ? nm::wneg<T>(x) : x);
          else return std::nullopt;
        case UnaryFn::Not: return to_scalar<T>(static_cast<T>(~x));
        default: return std::nullopt;
      }
    }
  });
}

std::optional<Scalar> binary(const ir::Op& op, DType d, const Scalar& a, const Scalar& b) {
  const BinaryFn f = op.binary;
  return nm::dispatch(d, [&]<class T>(std::type_identity<T>) -> std::optional<Scalar> {
    const T x = nm::scalar_to<T>(a), y = nm::scalar_to<T>(b);
    if constexpr (std::is_same_v<T, bool>) {
      switch (f) {
        case BinaryFn::And: return to_scalar<bool>(x && y);
        case BinaryFn::Or: return to_scalar<bool>(x || y);
        case BinaryFn::Xor: return to_scalar<bool>(x != y);
        default: return std::nullopt;
      }
    } else if constexpr (nm::is_float_v<T>) {
      using A = nm::Arith<T>;
      const auto u = A::up(x), v = A::up(y);
      switch (f) {
        case BinaryFn::Add: return to_scalar<T>(A::down(u + v));
        case BinaryFn::Sub: return to_scalar<T>(A::down(u - v));
        case BinaryFn::Mul: return to_scalar<T>(A::down(u * v));
        case BinaryFn::Div:
          if (op.rounding == ir::Rounding::Approx || op.rounding == ir::Rounding::Full || op.ftz) return std::nullopt;
          return to_scalar<T>(A::down(u / v));
        case BinaryFn::Min:
          if (op.propagate_nan) return std::nullopt;
          return to_scalar<T>(A::down(std::fmin(u, v)));
        case BinaryFn::Max:
          if (op.propagate_nan) return std::nullopt;
          return to_scalar<T>(A::down(std::fmax(u, v)));
        default: return std::nullopt;
      }
    } else {
      switch (f) {
        case BinaryFn::Add: return to_scalar<T>(nm::wadd<T>(x, y));
        case BinaryFn::Sub: return to_scalar<T>(nm::wsub<T>(x, y));
        case BinaryFn::Mul: return to_scalar<T>(nm::wmul<T>(x, y));
        case BinaryFn::Div: return to_scalar<T>(nm::idiv<T>(x, y));
        case BinaryFn::Rem: return to_scalar<T>(nm::irem<T>(x, y));
        case BinaryFn::Min: return to_scalar<T>(std::min(x, y));
        case BinaryFn::Max: return to_scalar<T>(std::max(x, y));
        case BinaryFn::And: return to_scalar<T>(static_cast<T>(x & y));
        case BinaryFn::Or: return to_scalar<T>(static_cast<T>(x | y));
        case BinaryFn::Xor: return to_scalar<T>(static_cast<T>(x ^ y));
        case BinaryFn::Shl: return to_scalar<T>(nm::ishl<T>(x, y));
        case BinaryFn::Shr: return to_scalar<T>(nm::ishr<T>(x, y));
        case BinaryFn::Pow: case BinaryFn::Atan2: return std::nullopt;
      }
      return std::nullopt;
    }
  });
}

std::optional<Scalar> compare(ir::CmpPred p, DType d, const Scalar& a, const Scalar& b) {
  return nm::dispatch(d, [&]<class T>(std::type_identity<T>) -> std::optional<Scalar> {
    using A = nm::Arith<T>;
    const auto x = A::up(nm::scalar_to<T>(a)), y = A::up(nm::scalar_to<T>(b));
    switch (p) {
      case ir::CmpPred::Eq: return to_scalar<bool>(x == y);
      case ir::CmpPred::Ne: return to_scalar<bool>(x != y);
      case ir::CmpPred::Lt: return to_scalar<bool>(x < y);
      case ir::CmpPred::Le: return to_scalar<bool>(x <= y);
      case ir::CmpPred::Gt: return to_scalar<bool>(x > y);
      case ir::CmpPred::Ge: return to_scalar<bool>(x >= y);
    }
    return std::nullopt;
  });
}

std::optional<Scalar> convert(DType from, DType to, const Scalar& a) {
  return nm::dispatch(from, [&]<class S>(std::type_identity<S>) {
    return nm::dispatch(to, [&]<class D>(std::type_identity<D>) -> std::optional<Scalar> {
      return to_scalar<D>(nm::convert_elem<D, S>(nm::scalar_to<S>(a)));
    });
  });
}

class ConstantFold : public Pass {
 public:
  std::string_view name() const override { return "constant-fold"; }
  void run(ir::Kernel& k, const PassContext&) override {
    Defs defs(k);
    for_each_region(k.body, [&](ir::Region& r) {
      for (std::size_t i = 0; i < r.ops.size(); ++i) {
        ir::Op& op = *r.ops[i];
        std::vector<const ir::Op*> c;
        for (ir::ValueId v : op.operands) c.push_back(defs.constant(v));
        if (op.operands.empty() || std::find(c.begin(), c.end(), nullptr) != c.end()) continue;
        const DType d = op.kind == OpKind::Select ? k.type(op.operands[1]).dtype : k.type(op.operands[0]).dtype;
        std::optional<Scalar> v;
        switch (op.kind) {
          case OpKind::Unary: v = unary(op.unary, d, c[0]->value); break;
          case OpKind::Binary: v = binary(op, d, c[0]->value, c[1]->value); break;
          case OpKind::Cmp: v = compare(op.cmp, d, c[0]->value, c[1]->value); break;
          case OpKind::Select: v = nm::scalar_to<bool>(c[0]->value) ? c[1]->value : c[2]->value; break;
          case OpKind::Convert: v = convert(d, k.type(op.results[0]).dtype, c[0]->value); break;
          case OpKind::Broadcast:
          case OpKind::Reshape:
          case OpKind::Permute:
          case OpKind::ConvertLayout: v = c[0]->value; break;
          default: break;
        }
        if (!v) continue;
        // The op becomes a constant of its own result type (and layout): uses stay as they are.
        ir::Op& folded = op;
        folded.kind = OpKind::Constant;
        folded.operands.clear();
        folded.value = ir::scalar_cast(*v, k.type(op.results[0]).dtype);
        folded.rounding = ir::Rounding::Default;
        folded.ftz = folded.propagate_nan = false;
        folded.perm.clear();
        defs.note(folded);
      }
    });
  }
};

}  // namespace

std::unique_ptr<Pass> make_constant_fold() { return std::make_unique<ConstantFold>(); }

}  // namespace ctile::passes
