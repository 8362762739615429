// The op registry: one row per op kind, traits that the passes rely on, and the type rules (the
// same function the front end builds with and the verifier checks with).
#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>

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

// The fp8 types (f8e4m3, f8e5m2): floats for every element-wise rule; ct.mma takes two fp8
// operands (the formats may mix) into f32 only; atomics read-modify-write them but do not
// compare-and-swap; bitcasts pair them with the 8-bit integers.
TEST(OpInfo, Fp8TypeRules) {
  ir::Kernel k;
  ir::Builder b(k);
  auto tile = [&](DType d, ctile::Shape s) { return b.build(ir::OpKind::Constant, {}, {}, {ir::Type::tile(d, s)}).results[0]; };
  const auto a4 = tile(DType::f8e4m3, {16, 32}), b5 = tile(DType::f8e5m2, {32, 16}), b4 = tile(DType::f8e4m3, {32, 16});
  const auto acc = tile(DType::f32, {16, 16}), acc16 = tile(DType::f16, {16, 16}), bb = tile(DType::bf16, {32, 16});
  const auto mma = [&](ir::ValueId x, ir::ValueId y, ir::ValueId c) { return b.build(ir::OpKind::Mma, {x, y, c}, {}).results[0]; };
  EXPECT_EQ(k.type(mma(a4, b5, acc)), ir::Type::tile(DType::f32, {16, 16}));
  EXPECT_EQ(k.type(mma(a4, b4, acc)), ir::Type::tile(DType::f32, {16, 16}));
  auto rejects = [&](const std::function<void()>& f, const std::string& what) {
    try {
      f();
      ADD_FAILURE() << "no error, expected: " << what;
    } catch (const ctile::InternalError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  rejects([&] { mma(a4, b5, acc16); }, "unsupported dtypes f8e4m3 x f8e5m2 -> f16");
  rejects([&] { mma(a4, bb, acc); }, "unsupported dtypes f8e4m3 x bf16 -> f32");
  // Element-wise: the float rules (exp yes, bitwise and no).
  const auto v = tile(DType::f8e5m2, {8});
  EXPECT_EQ(k.type(b.build(ir::OpKind::Unary, {v}, {}, {}, [](ir::Op& op) { op.unary = ir::UnaryFn::Exp; }).results[0]),
            ir::Type::tile(DType::f8e5m2, {8}));
  rejects([&] { b.build(ir::OpKind::Binary, {v, v}, {}, {}, [](ir::Op& op) { op.binary = ir::BinaryFn::And; }); },
          "and is not defined on f8e5m2");
  rejects([&] { b.build(ir::OpKind::Unary, {v}, {}, {}, [](ir::Op& op) { op.unary = ir::UnaryFn::Popcount; }); },
          "popcount is not defined on f8e5m2");
  // Bitcasts keep the width: u8 yes, i16 no.
  EXPECT_NO_THROW(b.build(ir::OpKind::Bitcast, {v}, {}, {ir::Type::tile(DType::u8, {8})}));
  rejects([&] { b.build(ir::OpKind::Bitcast, {v}, {}, {ir::Type::tile(DType::i16, {8})}); }, "cannot bitcast f8e5m2 to i16");
  // Atomics: read-modify-writes, no compare-and-swap.
  const auto t = b.new_value(ir::Type::tensor(DType::f8e4m3, 1, ir::Access::Atomic));
  const auto idx = tile(DType::i64, {8}), val = tile(DType::f8e4m3, {8});
  EXPECT_NO_THROW(b.build(ir::OpKind::AtomicRMW, {t, idx, val}, {}, {}, [](ir::Op& op) { op.atomic = ir::AtomicKind::Add; }));
  rejects([&] { b.build(ir::OpKind::AtomicCAS, {t, idx, val, val}, {}); }, "atomics on f8e4m3 are not supported");
  EXPECT_EQ(ctile::dtype_size(DType::f8e4m3), 1);
  EXPECT_EQ(ctile::dtype_size(DType::f8e5m2), 1);
  EXPECT_TRUE(ctile::is_float(DType::f8e4m3) && ctile::is_fp8(DType::f8e5m2) && !ctile::is_fp8(DType::bf16));
}
