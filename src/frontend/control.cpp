// Tracing of run-time loops and branches: discovering loop-carried values and branch results from
// the C++ variables a construct reassigns.
#include <exception>

#include "ctile/frontend/control.hpp"
#include "ctile/frontend/emit.hpp"

namespace ctile::detail {
namespace {

// One tracked variable: its identity (serial), the object, its value before the construct, and
// the placeholder (region argument) it names inside the construct, if any.
struct Tracked {
  std::uint64_t serial;
  TileBase* var;
  ValueId outer;
  ValueId inner = ir::kNoValue;
};

std::vector<Tracked> snapshot(TraceContext& ctx) {
  std::vector<Tracked> r;
  for (const auto& [serial, var] : ctx.live()) r.push_back({serial, var, var->value()});
  return r;
}

bool still_live(TraceContext& ctx, const Tracked& t) {
  auto it = ctx.live().find(t.serial);
  return it != ctx.live().end() && it->second == t.var;
}

// Tiles created inside a construct and still alive at its end would name values of its region
// outside of it.
void check_no_escape(TraceContext& ctx, std::uint64_t first_inner_serial, const char* what, const SourceLoc& loc) {
  auto it = ctx.live().lower_bound(first_inner_serial);
  if (it != ctx.live().end())
    user_error(std::string("a tile created inside ") + what +
                   " is still alive after it (e.g. stored in a container declared outside); "
                   "declare the variable before the construct and assign it inside",
               loc);
}

void check_same_type(ValueId before, ValueId after, const char* what, const SourceLoc& loc) {
  const ir::Type& a = type_of(before);
  const ir::Type& b = type_of(after);
  if (!(a == b))
    user_error(std::string("a tile variable assigned inside ") + what + " changes its type from " + ir::type_str(a) +
                   " to " + ir::type_str(b) + "; a carried value must keep its element type and shape",
               loc);
}

ValueId fresh_arg(TraceContext& ctx, ir::Region& r, ValueId like) {
  const ValueId v = ctx.b().new_value(type_of(like));
  r.args.push_back(v);
  return v;
}

void remove_arg(ir::Region& r, ValueId v) { std::erase(r.args, v); }

void yield(TraceContext& ctx, std::vector<ValueId> vals, const SourceLoc& loc) {
  ctx.b().create(ir::OpKind::Yield, std::move(vals), {}, loc);
}

}  // namespace

struct LoopTrace::Impl {
  TraceContext* ctx;
  ir::Op* op = nullptr;
  std::vector<Tracked> vars;
  std::uint64_t first_inner_serial = 0;
  std::size_t depth = 0;
};

LoopTrace::LoopTrace(ValueId lb, ValueId ub, ValueId step, const SourceLoc& loc) : impl_(new Impl), loc_(loc) {
  TraceContext& ctx = TraceContext::current(loc);
  ctx.raise_deferred();
  impl_->ctx = &ctx;
  ir::Op& op = ctx.b().create(ir::OpKind::For, {lb, ub, step}, {}, loc);
  op.regions.emplace_back();
  impl_->op = &op;
  iv_ = ctx.b().new_value(ir::Type::scalar(DType::i64));
  op.regions[0].args.push_back(iv_);
}

LoopTrace::~LoopTrace() {
  if (opened_ && !closed_ && std::uncaught_exceptions() == 0 && TraceContext::current_or_null() == impl_->ctx) {
    impl_->ctx->defer_error(UserError(
        "C++ break, return or goto left a ctile::range loop while it was traced; a traced loop always runs "
        "its whole body (use ctile::while_ or ctile::if_ for run-time exits)",
        loc_));
    // Leave the builder consistent: close the region as if the body had ended.
    if (impl_->ctx->b().depth() == impl_->depth) impl_->ctx->b().pop();
    --impl_->ctx->open_constructs;
  }
}

void LoopTrace::begin_body() {
  TraceContext& ctx = *impl_->ctx;
  opened_ = true;
  ++ctx.open_constructs;
  ir::Region& r = impl_->op->regions[0];
  impl_->vars = snapshot(ctx);
  for (Tracked& t : impl_->vars) {
    t.inner = fresh_arg(ctx, r, t.outer);
    t.var->set_value(t.inner);
  }
  impl_->first_inner_serial = ctx.next_serial();
  ctx.b().push(r);
  impl_->depth = ctx.b().depth();
}

void LoopTrace::end_body() {
  TraceContext& ctx = *impl_->ctx;
  ctx.raise_deferred();
  closed_ = true;
  --ctx.open_constructs;
  CTILE_CHECK(ctx.b().depth() == impl_->depth, "unbalanced regions in ct.for");
  check_no_escape(ctx, impl_->first_inner_serial, "a ctile::range loop", loc_);
  ir::Region& r = impl_->op->regions[0];
  std::vector<Tracked*> carried;
  for (Tracked& t : impl_->vars) {
    CTILE_CHECK(still_live(ctx, t), "a variable outside the loop died inside it");
    if (t.var->value() != t.inner) {
      check_same_type(t.inner, t.var->value(), "a ctile::range loop", loc_);
      carried.push_back(&t);
    }
  }
  std::vector<ValueId> yields;
  for (Tracked* t : carried) yields.push_back(t->var->value());
  yield(ctx, yields, loc_);
  ctx.b().pop();
  for (Tracked& t : impl_->vars) {
    if (t.var->value() == t.inner) {
      remove_arg(r, t.inner);
      ctx.b().replace_all_uses(t.inner, t.outer);
      t.var->set_value(t.outer);
    }
  }
  for (Tracked* t : carried) {
    impl_->op->operands.push_back(t->outer);
    const ValueId res = ctx.b().new_value(type_of(t->inner));
    impl_->op->results.push_back(res);
    t->var->set_value(res);
  }
}

void trace_if(ValueId cond, const std::function<void()>& then_fn, const std::function<void()>* else_fn,
              const SourceLoc& loc) {
  TraceContext& ctx = TraceContext::current(loc);
  ctx.raise_deferred();
  const ir::Type& ct = type_of(cond);
  if (!ct.is_scalar() || ct.dtype != DType::b1)
    user_error("ctile::if_ needs a bool scalar condition, got " + ir::type_str(ct) +
                   " (reduce a tile condition first, or use ctile::where for element-wise selection)",
               loc);
  ir::Op& op = ctx.b().create(ir::OpKind::If, {cond}, {}, loc);
  op.regions.resize(2);
  std::vector<Tracked> vars = snapshot(ctx);
  const std::uint64_t first_inner = ctx.next_serial();
  // Run one branch; record what each variable ended with, then restore the values.
  auto run_branch = [&](ir::Region& r, const std::function<void()>* fn) {
    std::vector<ValueId> ends(vars.size());
    ctx.b().push(r);
    const std::size_t depth = ctx.b().depth();
    if (fn) (*fn)();
    ctx.raise_deferred();
    CTILE_CHECK(ctx.b().depth() == depth, "unbalanced regions in ct.if");
    check_no_escape(ctx, first_inner, "a ctile::if_ branch", loc);
    for (std::size_t i = 0; i < vars.size(); ++i) {
      CTILE_CHECK(still_live(ctx, vars[i]), "a variable outside the branch died inside it");
      ends[i] = vars[i].var->value();
      if (ends[i] != vars[i].outer) check_same_type(vars[i].outer, ends[i], "a ctile::if_ branch", loc);
      vars[i].var->set_value(vars[i].outer);
    }
    ctx.b().pop();
    return ends;
  };
  const std::vector<ValueId> then_end = run_branch(op.regions[0], &then_fn);
  const std::vector<ValueId> else_end = run_branch(op.regions[1], else_fn);
  std::vector<ValueId> then_y, else_y;
  std::vector<std::size_t> changed;
  for (std::size_t i = 0; i < vars.size(); ++i) {
    if (then_end[i] != vars[i].outer || else_end[i] != vars[i].outer) {
      changed.push_back(i);
      then_y.push_back(then_end[i]);
      else_y.push_back(else_end[i]);
    }
  }
  ctx.b().push(op.regions[0]);
  yield(ctx, then_y, loc);
  ctx.b().pop();
  ctx.b().push(op.regions[1]);
  yield(ctx, else_y, loc);
  ctx.b().pop();
  for (std::size_t i : changed) {
    const ValueId res = ctx.b().new_value(type_of(vars[i].outer));
    op.results.push_back(res);
    vars[i].var->set_value(res);
  }
}

void trace_while(const std::function<ValueId()>& cond_fn, const std::function<void()>& body_fn, const SourceLoc& loc) {
  TraceContext& ctx = TraceContext::current(loc);
  ctx.raise_deferred();
  ir::Op& op = ctx.b().create(ir::OpKind::While, {}, {}, loc);
  op.regions.resize(2);
  std::vector<Tracked> vars = snapshot(ctx);
  const std::uint64_t first_inner = ctx.next_serial();
  std::vector<ValueId> cond_args(vars.size()), body_args(vars.size());

  // Condition region: every variable names a fresh argument; the condition must not assign any.
  for (std::size_t i = 0; i < vars.size(); ++i) {
    cond_args[i] = fresh_arg(ctx, op.regions[0], vars[i].outer);
    vars[i].var->set_value(cond_args[i]);
  }
  ctx.b().push(op.regions[0]);
  const ValueId c = cond_fn();
  ctx.raise_deferred();
  const ir::Type& ct = type_of(c);
  if (!ct.is_scalar() || ct.dtype != DType::b1)
    user_error("the condition of ctile::while_ must return a bool scalar tile, got " + ir::type_str(ct), loc);
  check_no_escape(ctx, first_inner, "a ctile::while_ condition", loc);
  for (std::size_t i = 0; i < vars.size(); ++i)
    if (vars[i].var->value() != cond_args[i])
      user_error("the condition of ctile::while_ assigns a tile variable; assign it in the body instead", loc);
  yield(ctx, {c}, loc);
  ctx.b().pop();

  // Body region.
  for (std::size_t i = 0; i < vars.size(); ++i) {
    body_args[i] = fresh_arg(ctx, op.regions[1], vars[i].outer);
    vars[i].var->set_value(body_args[i]);
  }
  ctx.b().push(op.regions[1]);
  const std::size_t depth = ctx.b().depth();
  body_fn();
  ctx.raise_deferred();
  CTILE_CHECK(ctx.b().depth() == depth, "unbalanced regions in ct.while");
  check_no_escape(ctx, first_inner, "a ctile::while_ body", loc);
  std::vector<std::size_t> carried;
  std::vector<ValueId> yields;
  for (std::size_t i = 0; i < vars.size(); ++i) {
    if (vars[i].var->value() != body_args[i]) {
      check_same_type(body_args[i], vars[i].var->value(), "a ctile::while_ body", loc);
      carried.push_back(i);
      yields.push_back(vars[i].var->value());
    }
  }
  yield(ctx, yields, loc);
  ctx.b().pop();

  std::vector<bool> is_carried(vars.size(), false);
  for (std::size_t i : carried) is_carried[i] = true;
  for (std::size_t i = 0; i < vars.size(); ++i) {
    if (!is_carried[i]) {
      remove_arg(op.regions[0], cond_args[i]);
      remove_arg(op.regions[1], body_args[i]);
      ctx.b().replace_all_uses(cond_args[i], vars[i].outer);
      ctx.b().replace_all_uses(body_args[i], vars[i].outer);
      vars[i].var->set_value(vars[i].outer);
    }
  }
  for (std::size_t i : carried) {
    op.operands.push_back(vars[i].outer);
    const ValueId res = ctx.b().new_value(type_of(vars[i].outer));
    op.results.push_back(res);
    vars[i].var->set_value(res);
  }
}

}  // namespace ctile::detail
