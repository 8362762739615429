// The IR parser: every printed kernel parses back to the same text, and malformed text is a
// UserError that names the line and column of the problem.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cases.hpp"
#include "ctile/ir/ir.hpp"

namespace ir = ctile::ir;

namespace {

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void expect_round_trip(const ir::Kernel& k) {
  const std::string text = ir::print(k);
  const ir::Kernel back = ir::parse(text);
  EXPECT_EQ(ir::print(back), text);
  // Locations survive when printed.
  const std::string with_locs = ir::print(k, {.locations = true});
  EXPECT_EQ(ir::print(ir::parse(with_locs), {.locations = true}), with_locs);
}

void expect_parse_error(const std::string& text, const std::string& fragment) {
  try {
    (void)ir::parse(text);
    ADD_FAILURE() << "no error for:\n" << text;
  } catch (const ctile::UserError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

}  // namespace

TEST(IrParser, GoldenFilesRoundTrip) {
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(CTILE_GOLDEN_DIR)) {
    if (e.path().extension() != ".ir") continue;
    ++files;
    const std::string text = read_file(e.path());
    SCOPED_TRACE(e.path().string());
    EXPECT_EQ(ir::print(ir::parse(text)), text);
  }
  EXPECT_GE(files, 7);
}

TEST(IrParser, EveryTestKernelRoundTrips) {
  const auto& cases = cuda_codegen_test::all_cases();
  ASSERT_GT(cases.size(), 50u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    expect_round_trip(*c.make());
  }
}

TEST(IrParser, ConstantsKeepTheirValues) {
  const std::string text =
      "ct.kernel @k grid_rank 1 (%0: piece<f32, [4]> \"out\", %1: i64 \"n\" arg 3) {\n"
      "  %2 = ct.constant {value = -0} : tile<f32, [4]>\n"
      "  %3 = ct.constant {value = 1e+30} : f32\n"
      "  %4 = ct.constant {value = -inf} : f32\n"
      "  %5 = ct.constant {value = 18446744073709551615} : u64\n"
      "  %6 = ct.constant {value = true} : bool\n"
      "  %7 = ct.constant {value = 0.1} : bf16\n"
      "  ct.store_piece %0, %2\n"
      "  ct.yield\n"
      "}\n";
  const ir::Kernel k = ir::parse(text);
  EXPECT_EQ(k.params[1].arg_index, 3);
  EXPECT_TRUE(std::signbit(k.body.ops[0]->value.f));
  EXPECT_EQ(k.body.ops[1]->value.f, static_cast<double>(1e30f));
  EXPECT_EQ(k.body.ops[3]->value.i, -1);
  // A bf16 constant holds the value rounded to bf16.
  EXPECT_EQ(k.body.ops[5]->value.f, static_cast<double>(static_cast<float>(ctile::bf16(0.1f))));
  EXPECT_NE(ir::print(k).find("%5 = ct.constant {value = 18446744073709551615} : u64"), std::string::npos);
}

// The fp8 element types print and parse by name; a constant holds the value rounded once to the
// type (nearest even, saturating at the largest finite value).
TEST(IrParser, Fp8TypesAndConstants) {
  const std::string text =
      "ct.kernel @k grid_rank 2 (%0: piece<f32, [16, 16]> \"c\", %1: tensor<f8e4m3, rank 2, read> \"a\", "
      "%2: tensor<f8e5m2, rank 2, read> \"b\") {\n"
      "  %3 = ct.constant {value = 0.1} : tile<f8e4m3, [16, 16]>\n"
      "  %4 = ct.constant {value = 1000} : f8e4m3\n"
      "  %5 = ct.constant {value = -inf} : f8e5m2\n"
      "  %6 = ct.constant {value = nan} : f8e5m2\n"
      "  %7 = ct.make_partition %2 {tile = [16, 16]} : partition<f8e5m2, rank 2, tile [16, 16]>\n"
      "  %8 = ct.block_id {axis = 0} : i64\n"
      "  %9 = ct.load %7, %8, %8 {pad = 0} : tile<f8e5m2, [16, 16]>\n"
      "  %10 = ct.constant {value = 0} : tile<f32, [16, 16]>\n"
      "  %11 = ct.mma %3, %9, %10 : tile<f32, [16, 16]>\n"
      "  ct.store_piece %0, %11\n"
      "  ct.yield\n"
      "}\n";
  const ir::Kernel k = ir::parse(text);
  EXPECT_EQ(k.params[1].type, ir::Type::tensor(ctile::DType::f8e4m3, 2, ir::Access::Read));
  EXPECT_EQ(k.params[2].type, ir::Type::tensor(ctile::DType::f8e5m2, 2, ir::Access::Read));
  EXPECT_EQ(k.body.ops[0]->value.f, 0.1015625);  // 1.101b * 2^-4, the nearest e4m3
  EXPECT_EQ(k.body.ops[1]->value.f, 448.0);      // saturated
  EXPECT_EQ(k.body.ops[2]->value.f, -57344.0);   // saturated: cvt.satfinite makes no infinity
  EXPECT_TRUE(std::isnan(k.body.ops[3]->value.f));
  const std::string back = ir::print(k);
  EXPECT_NE(back.find("%4 = ct.constant {value = 448} : f8e4m3"), std::string::npos) << back;
  EXPECT_NE(back.find("ct.mma %3, %9, %10 : tile<f32, [16, 16]>"), std::string::npos) << back;
  EXPECT_EQ(ir::print(ir::parse(back)), back);
  expect_parse_error("ct.kernel @k grid_rank 1 (%0: piece<f8e4m2, [4]> \"out\") {\n  ct.yield\n}\n",
                     "unknown element type 'f8e4m2'");
}

TEST(IrParser, GpuLevelIrRoundTrips) {
  const std::string text =
      "#d0 = #dist<reg=[], lane=[*,*,*,*,*], warp=[*,*]>\n"
      "#d1 = #dist<reg=[0,1,2], lane=[3,4,5,6,7], warp=[8,9]>\n"
      "ct.kernel @k grid_rank 1 target {sm = 90, warps = 4, blocks_per_cta = 2, smem = 64, persistent} "
      "(%0: piece<f32, [1024]> \"out\" {align16, contig, div16=[0]}, %1: tensor<f32, rank 1, read> \"x\") {\n"
      "  %2 = ct.make_partition %1 {tile = [1024]} : partition<f32, rank 1, tile [1024]>\n"
      "  %3 = ct.block_id {axis = 0} : tile<i64, [], #d0>\n"
      "  %4 = ct.load %2, %3 {pad = 0, in_bounds} : tile<f32, [1024], #d1>\n"
      "  %5 = ct.unary %4 {fn = exp, rounding = approx, ftz} : tile<f32, [1024], #d1>\n"
      "  %6 = ct.reduce %5 {kind = max, axis = 0, propagate_nan, smem = [0, 64]} : tile<f32, [], #d0>\n"
      "  %7 = ct.reshape %6 : tile<f32, [1], #d0>\n"
      "  %8 = ct.broadcast %7 : tile<f32, [1024], #d1>\n"
      "  %9 = ct.convert_layout %8 : tile<f32, [1024], #d1>\n"
      "  ct.store_piece %0, %9\n"
      "  ct.yield\n"
      "}\n";
  const ir::Kernel k = ir::parse(text);
  EXPECT_TRUE(k.gpu_level());
  EXPECT_EQ(k.target.warps, 4);
  EXPECT_EQ(k.target.blocks_per_cta, 2);
  EXPECT_TRUE(k.target.persistent);
  EXPECT_EQ(ir::print(k), text);
}

TEST(IrParser, ErrorsNameTheLineAndColumn) {
  expect_parse_error("ct.kernel @k grid_rank 1 () {\n  %0 = ct.bogus : i64\n  ct.yield\n}\n",
                     "line 2, column 16: unknown op 'ct.bogus'");
  expect_parse_error("ct.kernel @k grid_rank 1 () {\n  ct.yield %9\n}\n", "value %9 is used before it is defined");
  expect_parse_error("ct.kernel @k grid_rank 1 () {\n  %0 = ct.constant {value = 1} : tile<f33, [4]>\n  ct.yield\n}\n",
                     "unknown element type 'f33'");
  expect_parse_error("ct.kernel @k grid_rank 1 () {\n  %0 = ct.block_id {axis = 0} : i64\n  %0 = ct.block_id {axis = 0} : i64\n  ct.yield\n}\n",
                     "value %0 is defined twice");
  expect_parse_error("ct.kernel @k grid_rank 1 () {\n  %0 = ct.block_id {axis = 0} : i64\n", "unexpected end of text");
  // Text that parses but breaks a type rule is rejected by the verifier, as a UserError.
  expect_parse_error("ct.kernel @k grid_rank 1 () {\n  %0 = ct.block_id {axis = 0} : f32\n  ct.yield\n}\n",
                     "result has type f32, expected i64");
  expect_parse_error("ct.kernel @k grid_rank 1 () {\n  %0 = ct.block_id {axis = 0, colour = 3} : i64\n  ct.yield\n}\n",
                     "unknown attribute 'colour'");
}

// An iota's floor (set by narrow-index): printed, parsed back, and checked by the verifier.
TEST(IrParser, IotaFloorRoundTripsAndIsVerified) {
  const std::string text =
      "ct.kernel @k grid_rank 1 (%0: piece<i32, [64]> \"a\") {\n"
      "  %1 = ct.iota {floor = 8} : tile<i32, [64]>\n"
      "  ct.store_piece %0, %1\n"
      "  ct.yield\n"
      "}\n";
  const ir::Kernel k = ir::parse(text);
  EXPECT_EQ(ir::print(k), text);
  expect_round_trip(k);
  expect_parse_error("ct.kernel @k grid_rank 1 () {\n  %0 = ct.iota {floor = 3} : tile<i32, [64]>\n  ct.yield\n}\n",
                     "floor 3 is not a power of two that divides the length 64");
  expect_parse_error("ct.kernel @k grid_rank 1 () {\n  %0 = ct.iota {floor = 128} : tile<i32, [64]>\n  ct.yield\n}\n",
                     "floor 128 is not a power of two that divides the length 64");
}
