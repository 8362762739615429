// The op registry: one row per op kind, traits that the passes rely on, and the type rules (the
// same function the front end builds with and the verifier checks with).
#include <gtest/gtest.h>

#include <set>

#include "ctile/ir/builder.hpp"
#include "ctile/ir/op_info.hpp"

namespace ir = ctile::ir;
using ctile::DType;

TEST(OpInfo, EveryKindHasADistinctName) {
  std::set<std::string> names;
  for (int i = 0; i <= static_cast<int>(ir::OpKind::Yield); ++i) {
    const auto k = static_cast<ir::OpKind>(i);
    const std::string n = ir::traits(k).name;
    EXPECT_EQ(n.rfind("ct.", 0), 0u) << n;
    EXPECT_TRUE(names.insert(n).second) << "duplicate name " << n;
    EXPECT_EQ(n, ir::op_name(k));
  }
}

TEST(OpInfo, EffectsDecideWhatMayBeRemoved) {
  ir::Op store;
  store.kind = ir::OpKind::StorePiece;
  ir::Op load;
  load.kind = ir::OpKind::Load;
  ir::Op add;
  add.kind = ir::OpKind::Binary;
  ir::Op loop;
  loop.kind = ir::OpKind::For;
  ir::Op atomic;
  atomic.kind = ir::OpKind::AtomicRMW;
  EXPECT_FALSE(ir::removable_if_unused(store));
  EXPECT_FALSE(ir::removable_if_unused(atomic));  // it returns old values, but it writes
  EXPECT_FALSE(ir::removable_if_unused(loop));
  EXPECT_TRUE(ir::removable_if_unused(load));
  EXPECT_TRUE(ir::removable_if_unused(add));
  EXPECT_TRUE(ir::is_pure(add));
  EXPECT_FALSE(ir::is_pure(load));  // a load may not be merged with another across a store
  EXPECT_TRUE(ir::traits(ir::OpKind::Reduce).crosses_threads);
  EXPECT_FALSE(ir::traits(ir::OpKind::Binary).crosses_threads);
}

TEST(OpInfo, TheBuilderInfersResultTypes) {
  ir::Kernel k;
  ir::Builder b(k);
  const auto x = b.build(ir::OpKind::Constant, {}, {}, {ir::Type::tile(DType::f32, {4, 8})}, [](ir::Op& op) {
                   op.value = ir::Scalar::of_float(1.0);
                 }).results[0];
  const auto r = b.build(ir::OpKind::Reduce, {x}, {}, {}, [](ir::Op& op) {
                   op.reduce = ir::ReduceKind::ArgMax;
                   op.axis = 1;
                 }).results[0];
  EXPECT_EQ(k.type(r), ir::Type::tile(DType::i64, {4}));
  const auto c = b.build(ir::OpKind::Cmp, {x, x}, {}).results[0];
  EXPECT_EQ(k.type(c), ir::Type::tile(DType::b1, {4, 8}));
  // A type error while building is a bug in the caller: an InternalError naming the problem.
  try {
    b.build(ir::OpKind::Binary, {x, r}, {});
    ADD_FAILURE() << "no error";
  } catch (const ctile::InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("operand 1 has type tile<i64, [4]>, expected tile<f32, [4, 8]>"), std::string::npos)
        << e.what();
  }
}

TEST(OpInfo, RoundingAttributesAreCheckedPerOp) {
  ir::Kernel k;
  ir::Builder b(k);
  const auto x = b.build(ir::OpKind::Constant, {}, {}, {ir::Type::tile(DType::f32, {4})}).results[0];
  EXPECT_NO_THROW(b.build(ir::OpKind::Binary, {x, x}, {}, {}, [](ir::Op& op) {
    op.binary = ir::BinaryFn::Div;
    op.rounding = ir::Rounding::Rn;
  }));
  // exp is never correctly rounded on the GPU; add takes no rounding at all.
  EXPECT_THROW(b.build(ir::OpKind::Unary, {x}, {}, {}, [](ir::Op& op) {
                 op.unary = ir::UnaryFn::Exp;
                 op.rounding = ir::Rounding::Rn;
               }),
               ctile::InternalError);
  EXPECT_THROW(b.build(ir::OpKind::Binary, {x, x}, {}, {}, [](ir::Op& op) {
                 op.binary = ir::BinaryFn::Add;
                 op.rounding = ir::Rounding::Approx;
               }),
               ctile::InternalError);
  EXPECT_THROW(b.build(ir::OpKind::Binary, {x, x}, {}, {}, [](ir::Op& op) {
                 op.binary = ir::BinaryFn::Add;
                 op.propagate_nan = true;
               }),
               ctile::InternalError);
}
