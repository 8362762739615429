// IR analyses that passes decide on: ir::uniform_tile_blocks (warp-specialize's resident grid).
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "cases.hpp"
#include "ctile/ir/ir.hpp"

namespace {

using namespace ctile;

// Whether the test kernel `name` (the shared catalogue) has uniform tile blocks.
bool uniform(const std::string& name) {
  for (const auto& c : cuda_codegen_test::all_cases())
    if (c.name == name) return ir::uniform_tile_blocks(*c.make());
  ADD_FAILURE() << "no test kernel " << name;
  return false;
}

// A kernel with one loop: its upper bound is `ub`, its body adds 1 to the carried tile when `cond`.
std::string loop_kernel(const std::string& ub, const std::string& cond) {
  return "ct.kernel @k grid_rank 1 (%0: piece<f32, [4]> \"out\", %1: i64 \"n\", %2: tensor<i64, rank 1, read> \"lens\") {\n"
         "  %3 = ct.block_id {axis = 0} : i64\n"
         "  %4 = ct.constant {value = 0} : i64\n"
         "  %5 = ct.constant {value = 1} : i64\n"
         "  %6 = ct.constant {value = 0} : tile<f32, [4]>\n"
         "  %7 = ct.binary %1, %3 {fn = min} : i64\n"
         "  %8 = ct.make_partition %2 {tile = [1]} : partition<i64, rank 1, tile [1]>\n"
         "  %9 = ct.load %8, %3 {pad = 0} : tile<i64, [1]>\n"
         "  %10 = ct.reshape %9 : i64\n"
         "  %11 = ct.for %4, " + ub + ", %5, %6 : tile<f32, [4]>\n"
         "    region(%12: i64, %13: tile<f32, [4]>) {\n"
         "      %14 = ct.cmp " + cond + ", %1 {pred = ge} : bool\n"
         "      %15 = ct.if %14 : tile<f32, [4]>\n"
         "        region() {\n"
         "          %16 = ct.constant {value = 1} : tile<f32, [4]>\n"
         "          %17 = ct.binary %13, %16 {fn = add} : tile<f32, [4]>\n"
         "          ct.yield %17\n"
         "        }\n"
         "        region() {\n"
         "          ct.yield %13\n"
         "        }\n"
         "      ct.yield %15\n"
         "    }\n"
         "  ct.store_piece %0, %11\n"
         "  ct.yield\n"
         "}\n";
}

TEST(UniformTileBlocks, BoundsAndConditionsFromParametersAndInductionVariables) {
  EXPECT_TRUE(ir::uniform_tile_blocks(ir::parse(loop_kernel("%1", "%12"))));
  EXPECT_TRUE(ir::uniform_tile_blocks(ir::parse(loop_kernel("%1", "%4"))));
}

TEST(UniformTileBlocks, ABlockIdOrAMemoryReadInABoundOrACondition) {
  EXPECT_FALSE(ir::uniform_tile_blocks(ir::parse(loop_kernel("%7", "%12"))));   // min(n, block id)
  EXPECT_FALSE(ir::uniform_tile_blocks(ir::parse(loop_kernel("%3", "%12"))));   // the block id
  EXPECT_FALSE(ir::uniform_tile_blocks(ir::parse(loop_kernel("%10", "%12"))));  // a loaded length
  EXPECT_FALSE(ir::uniform_tile_blocks(ir::parse(loop_kernel("%1", "%3"))));    // a branch on the block id
  EXPECT_FALSE(ir::uniform_tile_blocks(ir::parse(loop_kernel("%1", "%10"))));   // a branch on a loaded value
}

TEST(UniformTileBlocks, TheLibrarysKernels) {
  EXPECT_TRUE(uniform("matmul_128x128x64"));
  EXPECT_TRUE(uniform("attention_bf16"));
  EXPECT_TRUE(uniform("attention_bf16_bn128_sm90"));
  // Causal: the key loop ends at the block's diagonal.
  EXPECT_FALSE(uniform("attention_bf16_causal"));
  EXPECT_FALSE(uniform("attention_bf16_d128_bn128_causal_sm90"));
  EXPECT_FALSE(uniform("control_nested"));  // a while loop
}

}  // namespace
