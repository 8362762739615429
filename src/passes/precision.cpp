// precision: gives every float op that takes a rounding (op_info.hpp) a concrete one. An op the
// user left at its default gets the op's default (rn for division and square root, full for the
// transcendental functions), or with the kernel option fast_math the hardware approximation with
// subnormals flushed to zero (f16, bf16, fp8 and f32; f64 has no approximations). A rounding the user
// chose stays. docs/ir.md ("Numerics") gives the error bound of each.
#include "ctile/ir/op_info.hpp"
#include "passes.hpp"

namespace ctile::passes {
namespace {

class Precision : public Pass {
 public:
  std::string_view name() const override { return "precision"; }
  void run(ir::Kernel& k, const PassContext& ctx) override {
    ir::walk_mut(k.body, [&](ir::Op& op) {
      if (!ir::takes_rounding(op) || op.rounding != ir::Rounding::Default) return;
      const DType d = k.type(op.operands[0]).dtype;
      if (!is_float(d)) return;  // integer division has no rounding
      if (ctx.options.fast_math && d != DType::f64) {
        op.rounding = ir::Rounding::Approx;
        op.ftz = true;
      } else {
        op.rounding = ir::default_rounding(op);
      }
    });
  }
};

}  // namespace

std::unique_ptr<Pass> make_precision() { return std::make_unique<Precision>(); }

}  // namespace ctile::passes
