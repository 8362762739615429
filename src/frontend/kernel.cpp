#include "ctile/frontend/kernel.hpp"

namespace ctile::detail {

std::string param_kind_name(ParamSpec::Kind k) {
  switch (k) {
    case ParamSpec::Kind::Piece: return "Mut";
    case ParamSpec::Kind::Read: return "Ref";
    case ParamSpec::Kind::Atomic: return "Atomic";
    case ParamSpec::Kind::Unchecked: return "UncheckedMut";
    case ParamSpec::Kind::Scalar: return "Scalar";
    case ParamSpec::Kind::Const: return "Const";
  }
  return "?";
}

TraceSession::TraceSession(std::string name, int grid_rank, const std::vector<ParamSpec>& specs)
    : kernel(std::make_shared<ir::Kernel>()) {
  kernel->name = std::move(name);
  kernel->grid_rank = grid_rank;
  ctx = std::make_unique<TraceContext>(*kernel);
  ir::Builder& b = ctx->b();
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const ParamSpec& s = specs[i];
    ir::Type t;
    switch (s.kind) {
      case ParamSpec::Kind::Piece: t = ir::Type::piece(s.dtype, s.tile_shape); break;
      case ParamSpec::Kind::Read: t = ir::Type::tensor(s.dtype, s.rank, ir::Access::Read); break;
      case ParamSpec::Kind::Atomic: t = ir::Type::tensor(s.dtype, s.rank, ir::Access::Atomic); break;
      case ParamSpec::Kind::Unchecked: t = ir::Type::tensor(s.dtype, s.rank, ir::Access::Unchecked); break;
      case ParamSpec::Kind::Scalar: t = ir::Type::scalar(s.dtype); break;
      case ParamSpec::Kind::Const: values.push_back(ir::kNoValue); continue;
    }
    const ir::ValueId v = b.new_value(t);
    values.push_back(v);
    kernel->body.args.push_back(v);
    ir::Param p{"arg" + std::to_string(i), static_cast<int>(i), v, t, {}};
    if (s.kind != ParamSpec::Kind::Scalar) p.facts = s.facts;  // the launcher's facts of the tensor argument
    kernel->params.push_back(std::move(p));
  }
}

std::shared_ptr<const ir::Kernel> TraceSession::finish() {
  {
    TraceScope scope(*ctx);
    ctx->raise_deferred();
    CTILE_CHECK(ctx->open_constructs == 0 && ctx->b().depth() == 1, "a control construct was left open");
    ctx->b().create(ir::OpKind::Yield, {}, {}, SourceLoc{});
  }
  ir::verify(*kernel);
  return kernel;
}

}  // namespace ctile::detail
