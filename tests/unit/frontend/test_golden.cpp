// Golden IR text: each kernel below is traced and printed; the text must equal the file in
// golden/. After an intended change of the IR or printer, regenerate with CTILE_UPDATE_GOLDEN=1
// (the tests whose file changed fail, saying so), review the diff, and run again without it.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

#include <gtest/gtest.h>

#include <ctile/ctile.hpp>

#include "test_kernels.hpp"

namespace ct = ctile;
using namespace test_kernels;  // NOLINT(google-build-using-namespace): the shared test kernels
using Kind = ct::detail::ParamSpec::Kind;

namespace {

ct::detail::ParamSpec piece(ct::DType d, ct::Shape tile) {
  return {Kind::Piece, d, static_cast<int>(tile.size()), tile, {}};
}
ct::detail::ParamSpec ref(ct::DType d, int rank) { return {Kind::Read, d, rank, {}, {}}; }
ct::detail::ParamSpec scalar(ct::DType d) { return {Kind::Scalar, d, 0, {}, {}}; }
// A spec with the launcher's specialisation facts (ir::TensorFacts), printed on the kernel line.
ct::detail::ParamSpec with(ct::detail::ParamSpec s, bool aligned16, bool contig, std::uint32_t div16,
                           std::uint32_t stride16 = 0) {
  s.facts = {aligned16, contig, div16, stride16};
  return s;
}

void check_golden(const std::string& name, const std::string& text) {
  const std::string path = std::string(CTILE_GOLDEN_DIR) + "/" + name + ".ir";
  const auto read = [&]() -> std::optional<std::string> {
    std::ifstream in(path);
    if (!in.good()) return std::nullopt;
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  // With CTILE_UPDATE_GOLDEN=1 a file that differs is rewritten, and the test FAILS loudly, so an
  // update can never pass silently (in CI or anywhere): review the diff, then run again without
  // it. Files that already match are compared as usual.
  if (const char* u = std::getenv("CTILE_UPDATE_GOLDEN"); u && *u == '1' && read() != text) {
    std::ofstream(path) << text;
    ADD_FAILURE() << "CTILE_UPDATE_GOLDEN=1: rewrote " << path
                  << "; review the change (git diff) and run the test again without CTILE_UPDATE_GOLDEN";
    return;
  }
  const std::optional<std::string> golden = read();
  ASSERT_TRUE(golden.has_value()) << "missing golden file " << path << " (run with CTILE_UPDATE_GOLDEN=1)";
  EXPECT_EQ(*golden, text) << "IR of " << name << " differs from " << path;
}

}  // namespace

TEST(GoldenIR, VectorAdd) {
  // z and x as a launch on aligned, contiguous tensors of 4096 elements sees them; y misaligned,
  // with an extent that is not a multiple of 16.
  check_golden("vector_add", ct::ir::print(*ct::trace(vector_add, "vector_add",
                                                      {with(piece(ct::DType::f32, {1024}), true, true, 0b1),
                                                       with(ref(ct::DType::f32, 1), true, true, 0b1),
                                                       with(ref(ct::DType::f32, 1), false, true, 0)}, 1)));
}
TEST(GoldenIR, MatmulWithRunTimeKLoop) {
  check_golden("matmul", ct::ir::print(*ct::trace(matmul<32>, "matmul",
                                                  {piece(ct::DType::f32, {64, 64}), ref(ct::DType::bf16, 2),
                                                   ref(ct::DType::bf16, 2)}, 2)));
}
TEST(GoldenIR, Softmax) {
  // out: a contiguous [300, 1024] tensor; x: columns [0, 1024) of a [300, 2048] tensor.
  check_golden("softmax", ct::ir::print(*ct::trace(softmax, "softmax",
                                                   {with(piece(ct::DType::f32, {1, 1024}), true, true, 0b10, 0b01),
                                                    with(ref(ct::DType::f32, 2), true, true, 0b10, 0b01)}, 2)));
}
TEST(GoldenIR, LoopCarriedWithAliases) {
  check_golden("aliasing", ct::ir::print(*ct::trace(aliasing, "aliasing",
                                                    {piece(ct::DType::f32, {8}), scalar(ct::DType::i64)}, 1)));
}
TEST(GoldenIR, WhileAndIf) {
  check_golden("branches", ct::ir::print(*ct::trace(branches, "branches",
                                                    {piece(ct::DType::i32, {16}), scalar(ct::DType::i32)}, 1)));
}
TEST(GoldenIR, ShapeOps) {
  check_golden("shapes", ct::ir::print(*ct::trace(shapes, "shapes",
                                                  {piece(ct::DType::f32, {4, 2}), ref(ct::DType::f32, 1)}, 2)));
}
TEST(GoldenIR, GatherScatterAtomics) {
  check_golden("memory", ct::ir::print(*ct::trace(memory, "memory",
                                                  {piece(ct::DType::f32, {16}), ref(ct::DType::f32, 2),
                                                   ref(ct::DType::i32, 1),
                                                   // hist: an aligned, strided view
                                                   with({Kind::Atomic, ct::DType::f32, 1, {}, {}}, true, false, 0)},
                                                  1)));
}
TEST(GoldenIR, ReduceAndScanOverCombineFunctions) {
  // Each combine function is a region of scalars: the argmax pairs' comparisons and selects, the
  // product of the exclusive scan with its identity operand, the running max of |x|.
  check_golden("combine", ct::ir::print(*ct::trace(combine_scan<float, 8, 32, 1>, "combine_scan",
                                                   {piece(ct::DType::f32, {8, 32}), piece(ct::DType::f32, {8, 32}),
                                                    piece(ct::DType::f32, {8, 32}), piece(ct::DType::i32, {8, 32}),
                                                    ref(ct::DType::f32, 2)},
                                                   2)));
}
TEST(GoldenIR, Fp8ConversionsAndMixedProduct) {
  // The fp8 element types in the printed IR: conversions to and from f32, bf16, integers and bool,
  // and a K loop of e4m3 x e5m2 products into f32.
  check_golden("fp8_convert", ct::ir::print(*ct::trace(convert_fp8, "convert_fp8",
                                                       {piece(ct::DType::f8e4m3, {512}), piece(ct::DType::f8e5m2, {512}),
                                                        piece(ct::DType::f32, {512}), piece(ct::DType::f8e4m3, {512}),
                                                        piece(ct::DType::b1, {512}), piece(ct::DType::i32, {512}),
                                                        ref(ct::DType::f32, 1), ref(ct::DType::f8e5m2, 1)},
                                                       1)));
  check_golden("fp8_mma", ct::ir::print(*ct::trace(mm<ct::f8e4m3, float, 32, ct::f8e5m2>, "mm_fp8",
                                                   {piece(ct::DType::f32, {64, 32}), ref(ct::DType::f8e4m3, 2),
                                                    ref(ct::DType::f8e5m2, 2)},
                                                   2)));
}
