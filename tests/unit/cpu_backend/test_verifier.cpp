// The IR verifier: a valid kernel passes; malformed ones throw InternalError naming the op and
// its location.
#include "helpers.hpp"

namespace cpu_test {
namespace {

using ir::BinaryFn;

// A valid kernel: out piece [8] = load(in) + 1, with a loop, an if and a while.
KB good_kernel() {
  KB kb("good");
  const ValueId in = kb.tensor("in", DType::f32, 1);
  const ValueId out = kb.piece("out", DType::f32, {8});
  const ValueId x = kb.load(kb.partition(in, {8}), {kb.block_id(0)});
  auto r = kb.for_(kb.i64c(0), kb.i64c(3), kb.i64c(1), {x}, [&](ValueId, std::vector<ValueId> c) {
    return std::vector<ValueId>{kb.binary(BinaryFn::Add, c[0], kb.fconst(DType::f32, {8}, 1.0))};
  });
  auto w = kb.while_({r[0]}, [&](std::vector<ValueId>) { return kb.constant(DType::b1, {}, ir::Scalar::of_int(0)); },
                     [&](std::vector<ValueId> a) { return a; });
  auto i = kb.if_(kb.constant(DType::b1, {}, ir::Scalar::of_int(1)), {kb.type(x)}, [&] { return w; },
                  [&] { return std::vector<ValueId>{x}; });
  kb.store_piece(out, i[0]);
  return kb;
}

void expect_invalid(const ir::Kernel& k, const std::string& needle) {
  try {
    ir::verify(k);
    ADD_FAILURE() << "verify accepted a malformed kernel (expected: " << needle << ")";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << "message: " << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

TEST(Verifier, AcceptsAWellFormedKernelAndCompiles) {
  KB kb = good_kernel();
  auto k = kb.finish();
  EXPECT_NO_THROW(ir::verify(*k));
  std::vector<float> a{1, 2, 3, 4, 5, 6, 7, 8}, o(8);
  launch(k, {1}, {targ(a, {8}), targ(o, {8})});
  EXPECT_EQ(o, (std::vector<float>{4, 5, 6, 7, 8, 9, 10, 11}));
}

TEST(Verifier, RegionStructure) {
  {  // body without a yield
    KB kb = good_kernel();
    expect_invalid(*kb.k, "does not end with ct.yield");
  }
  {  // yield in the middle of a region
    KB kb = good_kernel();
    kb.yield({});
    kb.i64c(1);
    kb.yield({});
    expect_invalid(*kb.k, "ct.yield: ct.yield is not the last op of its region at kernel_test.cpp:1");
  }
  {  // for body yields the wrong type
    KB kb("bad_yield");
    auto r = kb.for_(kb.i64c(0), kb.i64c(3), kb.i64c(1), {kb.i64c(0)}, [&](ValueId, std::vector<ValueId>) {
      return std::vector<ValueId>{kb.fconst(DType::f32, {}, 1.0)};
    });
    (void)r;
    expect_invalid(*kb.finish(), "ct.yield: yielded value 0 has type");
  }
  {  // for body yields too many values
    KB kb("bad_yield2");
    kb.for_(kb.i64c(0), kb.i64c(3), kb.i64c(1), {}, [&](ValueId iv, std::vector<ValueId>) { return std::vector<ValueId>{iv}; });
    expect_invalid(*kb.finish(), "yields 1 values, expected 0");
  }
  {  // while cond yields an i32
    KB kb("bad_cond");
    kb.while_({kb.i64c(0)}, [&](std::vector<ValueId>) { return kb.constant(DType::i32, {}, ir::Scalar::of_int(1)); },
              [&](std::vector<ValueId> a) { return a; });
    expect_invalid(*kb.finish(), "ct.yield: yielded value 0 has type");
  }
  {  // for region argument with a wrong type (iv is f32)
    KB kb("bad_iv");
    kb.for_(kb.i64c(0), kb.i64c(3), kb.i64c(1), {}, [&](ValueId, std::vector<ValueId>) { return std::vector<ValueId>{}; });
    ir::Op& f = *kb.k->body.ops.back();
    kb.k->values[static_cast<std::size_t>(f.regions[0].args[0])] = Type::scalar(DType::f32);
    expect_invalid(*kb.finish(), "ct.for: region argument 0 has type");
  }
  {  // if with one region
    KB kb("bad_if");
    kb.if_(kb.constant(DType::b1, {}, ir::Scalar::of_int(1)), {}, [] { return std::vector<ValueId>{}; },
           [] { return std::vector<ValueId>{}; });
    kb.k->body.ops.back()->regions.pop_back();
    expect_invalid(*kb.finish(), "ct.if: has 1 regions, expected 2");
  }
  {  // if on an i64 condition
    KB kb("bad_if2");
    kb.if_(kb.i64c(1), {}, [] { return std::vector<ValueId>{}; }, [] { return std::vector<ValueId>{}; });
    expect_invalid(*kb.finish(), "ct.if: condition has type");
  }
}

TEST(Verifier, DefinitionsAndDominance) {
  {  // use before definition: swap two ops
    KB kb("use_before_def");
    const ValueId a = kb.i64c(1);
    kb.binary(BinaryFn::Add, a, a);
    std::swap(kb.k->body.ops[0], kb.k->body.ops[1]);
    expect_invalid(*kb.finish(), "ct.binary: operand 0 (%0) is not defined before this use");
  }
  {  // a value of a loop body used after the loop
    KB kb("escape");
    ValueId inner = ir::kNoValue;
    kb.for_(kb.i64c(0), kb.i64c(3), kb.i64c(1), {}, [&](ValueId iv, std::vector<ValueId>) {
      inner = kb.binary(BinaryFn::Add, iv, iv);
      return std::vector<ValueId>{};
    });
    kb.binary(BinaryFn::Mul, inner, inner);
    expect_invalid(*kb.finish(), "is not defined before this use");
  }
  {  // a value defined twice
    KB kb("twice");
    const ValueId a = kb.i64c(1);
    ir::Op& o = kb.op(OpKind::Constant, {}, {});
    o.results.push_back(a);
    expect_invalid(*kb.finish(), "ct.constant: result %0 is defined more than once");
  }
  {  // value id out of range
    KB kb("range");
    kb.op(OpKind::Binary, {99, 0}, {Type::scalar(DType::i64)});
    expect_invalid(*kb.finish(), "ct.binary: operand 0 has value id %99 out of range [0, 1)");
  }
  {  // body arguments do not match the parameters
    KB kb("args");
    kb.tensor("a", DType::f32, 1);
    kb.tensor("b", DType::f32, 1);
    std::swap(kb.k->body.args[0], kb.k->body.args[1]);
    expect_invalid(*kb.finish(), "kernel 'args': parameter 'a' is value %0 but body argument 0 is %1");
  }
  {  // a partition parameter
    KB kb("param_kind");
    kb.param("p", Type::partition(DType::f32, 1, {8}));
    expect_invalid(*kb.finish(), "parameter 'p' has type");
  }
  {  // a piece whose rank differs from the grid's
    KB kb("piece_rank", 1);
    kb.piece("p", DType::f32, {8, 8});
    expect_invalid(*kb.finish(), "piece parameter 'p' has rank 2 but the grid has only 1 axes");
  }
}

TEST(Verifier, OperandTypesAndAttributes) {
  auto check = [](const std::function<void(KB&)>& build, const std::string& needle) {
    KB kb("ops");
    build(kb);
    expect_invalid(*kb.finish(), needle);
  };
  check([](KB& kb) { kb.op(OpKind::Binary, {kb.i64c(1), kb.fconst(DType::f32, {}, 1)}, {Type::scalar(DType::i64)}).binary = BinaryFn::Add; },
        "ct.binary: operand 1 has type");
  check([](KB& kb) { kb.fconst(DType::f32, {3}, 1.0); }, "tile extent 3 is not a power of two");
  check([](KB& kb) {
    auto& o = kb.op(OpKind::Permute, {kb.fconst(DType::f32, {2, 4}, 1.0)}, {Type::tile(DType::f32, {2, 2})});
    o.perm = {0, 0};
  }, "ct.permute: perm is not a permutation");
  check([](KB& kb) { kb.extract(kb.fconst(DType::f32, {8}, 1.0), {6}, {4}); }, "ct.extract: extracting [4] at [6]");
  check([](KB& kb) { kb.reshape(kb.fconst(DType::f32, {8}, 1.0), {4}); }, "ct.reshape: cannot reshape");
  check([](KB& kb) { (void)kb.reduce(ir::ReduceKind::Sum, kb.fconst(DType::f32, {8}, 1.0), 0); kb.k->body.ops.back()->axis = 1; },
        "ct.reduce: axis 1 out of range [0, 1)");
  check([](KB& kb) { kb.broadcast(kb.fconst(DType::f32, {2}, 1.0), {4}); }, "ct.broadcast: cannot broadcast");
  check([](KB& kb) { kb.cat(kb.fconst(DType::f32, {2, 2}, 1.0), kb.fconst(DType::f32, {2, 4}, 1.0), 0); }, "ct.cat: cannot concatenate");
  check([](KB& kb) { kb.mma(kb.fconst(DType::f16, {4, 4}, 1.0), kb.fconst(DType::f16, {4, 4}, 1.0), kb.constant(DType::i32, {4, 4}, ir::Scalar::of_int(0))); },
        "ct.mma: unsupported dtypes f16 x f16 -> i32");
  check([](KB& kb) { kb.mma(kb.fconst(DType::f32, {4, 8}, 1.0), kb.fconst(DType::f32, {4, 4}, 1.0), kb.fconst(DType::f32, {4, 4}, 0)); },
        "ct.mma: shapes");
  check([](KB& kb) { kb.unary(ir::UnaryFn::Exp, kb.i64c(1)); }, "ct.unary: exp is not defined on i64");
  check([](KB& kb) { kb.binary(BinaryFn::Shl, kb.fconst(DType::f32, {}, 1), kb.fconst(DType::f32, {}, 1)); }, "is not defined on f32");
  check([](KB& kb) { kb.block_id(1); }, "ct.block_id: axis 1 out of range [0, 1)");
  check([](KB& kb) {
    const ValueId t = kb.tensor("t", DType::f32, 2);
    kb.load(kb.partition(t, {4, 4}), {kb.i64c(0)});
  }, "ct.load: expected 3 operands, got 2");
  check([](KB& kb) {
    const ValueId t = kb.tensor("t", DType::f32, 1);
    kb.scatter(OpKind::ScatterUnchecked, t, {kb.iota(DType::i32, 4)}, kb.fconst(DType::f32, {4}, 1.0));
  }, "ct.scatter_unchecked: operand has type");
  check([](KB& kb) {
    const ValueId t = kb.tensor("t", DType::i16, 1, ir::Access::Atomic);
    kb.atomic(ir::AtomicKind::Add, t, {kb.iota(DType::i32, 4)}, kb.constant(DType::i16, {4}, ir::Scalar::of_int(1)));
  }, "ct.atomic_rmw: atomics on i16 are not supported");
  check([](KB& kb) {
    const ValueId p = kb.piece("p", DType::f32, {8});
    kb.store_piece(p, kb.fconst(DType::f32, {4}, 1.0));
  }, "ct.store_piece: operand 1 has type");
  check([](KB& kb) {
    const ValueId t = kb.tensor("t", DType::f32, 1);
    kb.gather(t, {kb.fconst(DType::f32, {4}, 1.0)});
  }, "expected integers");
  check([](KB& kb) {
    const ValueId t = kb.tensor("t", DType::f32, 1, ir::Access::Unchecked);
    kb.partition(t, {8});
  }, "ct.make_partition: operand has type");
  check([](KB& kb) { kb.select(kb.i64c(1), kb.i64c(2), kb.i64c(3)); }, "ct.select: operand 0 has type");
  check([](KB& kb) { kb.scan(kb.constant(DType::b1, {4}, ir::Scalar::of_int(1)), 0); }, "ct.scan: sum scan is not defined on bool");
}

// ct.reduce_with over `x` along `axis` whose region is built by body(kb, region args) (which
// returns the values to yield); `args` scalar arguments of x's element type.
ValueId reduce_with(KB& kb, ValueId x, int axis, std::size_t args,
                    const std::function<std::vector<ValueId>(KB&, const std::vector<ValueId>&)>& body) {
  Shape s = kb.type(x).shape;
  s.erase(s.begin() + axis);
  ir::Op& op = kb.op(OpKind::ReduceWith, {x}, {Type::tile(kb.type(x).dtype, s)});
  op.axis = axis;
  op.regions.emplace_back();
  ir::Region& r = op.regions[0];
  for (std::size_t i = 0; i < args; ++i) r.args.push_back(kb.b.new_value(Type::scalar(kb.type(x).dtype)));
  const std::vector<ValueId> a = r.args;
  kb.b.push(r);
  kb.yield(body(kb, a));
  kb.b.pop();
  return op.results[0];
}

TEST(Verifier, CombineRegions) {
  auto kernel = [](const std::function<std::vector<ValueId>(KB&, const std::vector<ValueId>&, ValueId)>& body,
                   std::size_t args = 2) {
    KB kb("combine");
    const ValueId in = kb.tensor("in", DType::i32, 2);
    const ValueId out = kb.piece("out", DType::i32, {4});
    const ValueId x = kb.load(kb.partition(in, {4, 8}), {kb.block_id(0), kb.i64c(0)});
    const ValueId outer = kb.constant(DType::i32, {}, ir::Scalar::of_int(3));
    kb.store_piece(out, reduce_with(kb, x, 1, args, [&](KB& k, const std::vector<ValueId>& a) { return body(k, a, outer); }));
    return kb;
  };
  {  // valid: "take the right operand" is associative; the reference gives each row's last element
    KB kb = kernel([](KB&, const std::vector<ValueId>& a, ValueId) { return std::vector<ValueId>{a[1]}; });
    auto k = kb.finish();
    EXPECT_NO_THROW(ir::verify(*k));
    std::vector<std::int32_t> x(32), o(4);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<std::int32_t>(i * 5 % 32);
    launch(k, {1}, {targ(x.data(), DType::i32, {4, 8}), targ(o.data(), DType::i32, {4})});
    for (std::size_t r = 0; r < 4; ++r) EXPECT_EQ(o[r], x[r * 8 + 7]) << "row " << r;
  }
  {  // a value from outside the region
    KB kb = kernel([](KB& k, const std::vector<ValueId>& a, ValueId outer) {
      return std::vector<ValueId>{k.binary(BinaryFn::Add, a[0], outer)};
    });
    expect_invalid(*kb.finish(), "is not defined before this use (dominance)");
  }
  {  // an op that is not element-wise
    KB kb = kernel([](KB& k, const std::vector<ValueId>& a, ValueId) {
      (void)k.block_id(0);
      return std::vector<ValueId>{a[0]};
    });
    expect_invalid(*kb.finish(), "ct.block_id: a combine region holds element-wise ops only");
  }
  {  // a tile inside
    KB kb = kernel([](KB& k, const std::vector<ValueId>& a, ValueId) {
      (void)k.constant(DType::i32, {4}, ir::Scalar::of_int(0));
      return std::vector<ValueId>{a[0]};
    });
    expect_invalid(*kb.finish(), "a combine region computes on scalars, not on tile<i32, [4]>");
  }
  {  // one argument for one tile
    KB kb = kernel([](KB&, const std::vector<ValueId>& a, ValueId) { return std::vector<ValueId>{a[0]}; }, 1);
    expect_invalid(*kb.finish(), "the combine region has 1 arguments, expected 2");
  }
  {  // a yield of another type
    KB kb = kernel([](KB& k, const std::vector<ValueId>& a, ValueId) {
      return std::vector<ValueId>{k.cmp(ir::CmpPred::Lt, a[0], a[1])};
    });
    expect_invalid(*kb.finish(), "yielded value 0 has type bool, expected i32");
  }
}

TEST(Verifier, CompileRejectsMalformedKernels) {
  KB kb("bad");
  kb.fconst(DType::f32, {6}, 1.0);
  auto k = kb.finish();
  EXPECT_THROW(backend::cpu_backend()->compile(k), InternalError);
}

}  // namespace
}  // namespace cpu_test
