// Tracing behaviour: source locations, carried-value discovery, trace-time metaprogramming.
#include <gtest/gtest.h>

#include <ctile/ctile.hpp>

namespace ct = ctile;
using Kind = ct::detail::ParamSpec::Kind;

namespace {

ct::detail::ParamSpec piece(ct::DType d, ct::Shape tile) {
  return {Kind::Piece, d, static_cast<int>(tile.size()), tile, {}};
}
ct::detail::ParamSpec ref(ct::DType d, int rank) { return {Kind::Read, d, rank, {}, {}}; }

int g_add_line = 0;
void located(ct::Mut<float, 1> z, ct::Ref<float, 1> x) {
  auto t = ct::load_like(x, z);
  g_add_line = __LINE__ + 1;
  auto u = t + t;
  z.store(u);
}

const ct::ir::Op* find(const ct::ir::Region& r, ct::ir::OpKind k) {
  const ct::ir::Op* found = nullptr;
  ct::ir::walk(r, [&](const ct::ir::Op& op) {
    if (!found && op.kind == k) found = &op;
  });
  return found;
}

int count(const ct::ir::Region& r, ct::ir::OpKind k) {
  int n = 0;
  ct::ir::walk(r, [&](const ct::ir::Op& op) { n += op.kind == k; });
  return n;
}

// Plain C++ loops run at trace time: this unrolls into 4 adds.
void unrolled(ct::Mut<float, 1> z) {
  auto acc = ct::Tile<float>::zeros({16});
  for (int i = 0; i < 4; ++i) acc = acc + static_cast<float>(i);
  z.store(acc);
}

// Two run-time loops nested; the inner one carries `inner`, the outer one carries `total`.
void nested(ct::Mut<float, 1> z, ct::Scalar<std::int64_t> n) {
  auto total = ct::Tile<float>::zeros({16});
  for (auto i : ct::range(n)) {
    (void)i;
    auto inner = ct::Tile<float>::zeros({16});
    for (auto j : ct::range(n)) {
      (void)j;
      inner = inner + 1.0f;
    }
    total = total + inner;
  }
  z.store(total);
}

// A helper function inlines naturally.
ct::Tile<float> square(const ct::Tile<float>& t) { return t * t; }
void with_helper(ct::Mut<float, 1> z, ct::Ref<float, 1> x) { z.store(square(ct::load_like(x, z))); }

// Swapping two carried variables through a temporary.
void swapper(ct::Mut<float, 1> z, ct::Scalar<std::int64_t> n) {
  auto a = ct::Tile<float>::full({4}, 1.0f);
  auto b = ct::Tile<float>::full({4}, 2.0f);
  for (auto k : ct::range(n)) {
    (void)k;
    auto t = a;
    a = b;
    b = t;
  }
  z.store(a - b);
}

}  // namespace

TEST(Trace, OperatorsRecordTheUsersLine) {
  auto k = ct::trace(located, "located", {piece(ct::DType::f32, {64}), ref(ct::DType::f32, 1)}, 1);
  const ct::ir::Op* add = find(k->body, ct::ir::OpKind::Binary);
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->loc.line, static_cast<unsigned>(g_add_line));
  EXPECT_NE(add->loc.file.find("test_trace.cpp"), std::string::npos);
}

TEST(Trace, PlainCppLoopsUnrollAtTraceTime) {
  auto k = ct::trace(unrolled, "unrolled", {piece(ct::DType::f32, {16})}, 1);
  EXPECT_EQ(count(k->body, ct::ir::OpKind::Binary), 4);
  EXPECT_EQ(count(k->body, ct::ir::OpKind::For), 0);
}

TEST(Trace, NestedLoopsCarryTheirOwnVariables) {
  auto k = ct::trace(nested, "nested", {piece(ct::DType::f32, {16}), {Kind::Scalar, ct::DType::i64, 0, {}, {}}}, 1);
  const ct::ir::Op* outer = find(k->body, ct::ir::OpKind::For);
  ASSERT_NE(outer, nullptr);
  EXPECT_EQ(outer->results.size(), 1u);  // total
  const ct::ir::Op* inner = find(outer->regions[0], ct::ir::OpKind::For);
  ASSERT_NE(inner, nullptr);
  EXPECT_EQ(inner->results.size(), 1u);  // inner
}

TEST(Trace, HelperFunctionsInline) {
  auto k = ct::trace(with_helper, "with_helper", {piece(ct::DType::f32, {64}), ref(ct::DType::f32, 1)}, 1);
  EXPECT_EQ(count(k->body, ct::ir::OpKind::Binary), 1);
}

TEST(Trace, SwapThroughTemporaryCarriesBoth) {
  auto k = ct::trace(swapper, "swapper", {piece(ct::DType::f32, {4}), {Kind::Scalar, ct::DType::i64, 0, {}, {}}}, 1);
  const ct::ir::Op* loop = find(k->body, ct::ir::OpKind::For);
  ASSERT_NE(loop, nullptr);
  ASSERT_EQ(loop->results.size(), 2u);
  const ct::ir::Op& y = *loop->regions[0].ops.back();
  ASSERT_EQ(y.kind, ct::ir::OpKind::Yield);
  // a' = b, b' = a: the yields are the region arguments in swapped order.
  EXPECT_EQ(y.operands[0], loop->regions[0].args[2]);
  EXPECT_EQ(y.operands[1], loop->regions[0].args[1]);
}

TEST(Trace, TilesOutsideATraceAreAUserError) {
  EXPECT_THROW((void)ct::Tile<float>::zeros({4}), ct::UserError);
}

TEST(Trace, PrinterNumbersValuesDensely) {
  auto k = ct::trace(nested, "nested", {piece(ct::DType::f32, {16}), {Kind::Scalar, ct::DType::i64, 0, {}, {}}}, 1);
  const std::string text = ct::ir::print(*k);
  EXPECT_EQ(text.find("%?"), std::string::npos);
  EXPECT_NE(text.find("ct.kernel @nested grid_rank 1 (%0: piece<f32, [16]> \"arg0\", %1: i64 \"arg1\")"), std::string::npos)
      << text;
}

// The scan spellings record their combine and mode in ct.scan, and print them.
namespace {
void scan_modes(ct::Mut<float, 1> z, ct::Ref<float, 1> x) {
  auto t = ct::load_like(x, z);
  auto a = ct::cumsum(t, 0);  // named: the order of operands of + is unspecified
  auto b = ct::cumprod(t, 0, ct::exclusive);
  auto c = ct::cummax(t, -1, ct::reverse);
  auto d = ct::cummin(t, 0, ct::exclusive | ct::reverse);
  z.store(a + b + c + d);
}
}  // namespace
TEST(Trace, ScanSpellingsRecordTheCombineAndTheMode) {
  auto k = ct::trace(scan_modes, "scan_modes", {piece(ct::DType::f32, {16}), ref(ct::DType::f32, 1)}, 1);
  std::vector<const ct::ir::Op*> scans;
  ct::ir::walk(k->body, [&](const ct::ir::Op& op) {
    if (op.kind == ct::ir::OpKind::Scan) scans.push_back(&op);
  });
  ASSERT_EQ(scans.size(), 4u);
  EXPECT_EQ(scans[0]->reduce, ct::ir::ReduceKind::Sum);
  EXPECT_FALSE(scans[0]->exclusive || scans[0]->reverse);
  EXPECT_EQ(scans[1]->reduce, ct::ir::ReduceKind::Prod);
  EXPECT_TRUE(scans[1]->exclusive && !scans[1]->reverse);
  EXPECT_EQ(scans[2]->reduce, ct::ir::ReduceKind::Max);
  EXPECT_TRUE(!scans[2]->exclusive && scans[2]->reverse);
  EXPECT_EQ(scans[2]->axis, 0);  // -1 normalised
  EXPECT_EQ(scans[3]->reduce, ct::ir::ReduceKind::Min);
  EXPECT_TRUE(scans[3]->exclusive && scans[3]->reverse);
  const std::string text = ct::ir::print(*k);
  EXPECT_NE(text.find("ct.scan %4 {axis = 0}"), std::string::npos) << text;
  EXPECT_NE(text.find("{kind = prod, axis = 0, exclusive}"), std::string::npos) << text;
  EXPECT_NE(text.find("{kind = max, axis = 0, reverse}"), std::string::npos) << text;
  EXPECT_NE(text.find("{kind = min, axis = 0, exclusive, reverse}"), std::string::npos) << text;
  EXPECT_EQ(ct::ir::print(ct::ir::parse(text)), text);
}
