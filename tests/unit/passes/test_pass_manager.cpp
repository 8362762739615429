// The pass manager: named passes, verification after each, dumps after each.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "ctile/ir/ir.hpp"
#include "ctile/passes/pass.hpp"
#include "golden_harness.hpp"

namespace ir = ctile::ir;
namespace passes = ctile::passes;

namespace {

const char* kKernel =
    "ct.kernel @dump_me grid_rank 1 (%0: piece<f32, [8]> \"out\") {\n"
    "  %1 = ct.constant {value = 2} : tile<f32, [8]>\n"
    "  %2 = ct.constant {value = 3} : tile<f32, [8]>\n"
    "  %3 = ct.binary %1, %2 {fn = mul} : tile<f32, [8]>\n"
    "  %4 = ct.binary %1, %2 {fn = mul} : tile<f32, [8]>\n"
    "  ct.store_piece %0, %3\n"
    "  ct.yield\n"
    "}\n";

// A broken pass: it deletes the kernel's yield.
class Breaker : public passes::Pass {
 public:
  std::string_view name() const override { return "breaker"; }
  void run(ir::Kernel& k, const passes::PassContext&) override { k.body.ops.pop_back(); }
};

}  // namespace

TEST(PassManager, UnknownPassNamesTheKnownOnes) {
  try {
    (void)passes::make_pass("loop-unswitch");
    ADD_FAILURE() << "no error";
  } catch (const ctile::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown pass 'loop-unswitch' (known: acc-split, batch-mma, block-prefetch, bounds, canonicalize, constant-fold, cse, dce,"), std::string::npos) << e.what();
  }
}

TEST(PassManager, DumpsTheIrAfterEveryPass) {
  const auto dir = std::filesystem::temp_directory_path() / ("ctile_dump_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  ir::Kernel k = ir::parse(kKernel);
  passes::PassManager pm;
  pm.add("constant-fold").add("cse").add("dce");
  passes::PassContext ctx;
  ctx.dump_dir = dir.string();
  pm.run(k, ctx);
  const auto sub = dir / "dump_me";
  for (const char* f : {"00-input.ir", "01-constant-fold.ir", "02-cse.ir", "03-dce.ir"})
    EXPECT_TRUE(std::filesystem::exists(sub / f)) << f;
  // The last dump is the result (with locations) and parses back.
  std::ifstream in(sub / "03-dce.ir");
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ir::print(ir::parse(ss.str())), ir::print(k));
  EXPECT_NE(ir::print(k).find("ct.constant {value = 6}"), std::string::npos) << ir::print(k);
  std::filesystem::remove_all(dir);
}

TEST(PassManager, ABrokenPassIsCaughtByTheVerifier) {
  ir::Kernel k = ir::parse(kKernel);
  passes::PassManager pm;
  pm.add(std::make_unique<Breaker>());
  try {
    pm.run(k, {});
    ADD_FAILURE() << "no error";
  } catch (const ctile::InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("after pass 'breaker' on kernel 'dump_me'"), std::string::npos) << e.what();
  }
}

namespace {
// The expected IR of a golden case (golden/<pass>/<case>.ir).
std::string expected_ir(const std::string& file) {
  return pass_golden::parse_case(pass_golden::read_file(std::string(CTILE_PASS_GOLDEN_DIR) + "/" + file)).expected;
}
}  // namespace

// The verifier holds warp specialisation's shared-memory promise: without scratch_over_rings the
// producer copies the next tile block's operands during this one's epilogue, so a ring lying over
// the epilogue's scratch is rejected (here: the GEMM of 128 x 256 tiles, whose rings and f32
// scratch do not fit side by side, with the flag taken away); the flag needs a producer.
TEST(Verifier, RingsOverTheScratchNeedTheProducerToWaitForTheTileBlock) {
  const std::string text = expected_ir("warp-specialize/gemm_producer.ir");
  ASSERT_NE(text.find(", scratch_over_rings}"), std::string::npos) << text;
  EXPECT_NO_THROW((void)ir::parse(text));
  auto without = [&](const std::string& what, const std::string& with) {
    std::string t = text;
    t.replace(t.find(what), what.size(), with);
    return t;
  };
  try {
    (void)ir::parse(without(", scratch_over_rings}", "}"));
    ADD_FAILURE() << "no error";
  } catch (const ctile::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("lie over the scratch"), std::string::npos) << e.what();
  }
  try {
    (void)ir::parse(without(", producer_warps = 4, producer_bar = 196672", ""));
    ADD_FAILURE() << "no error";
  } catch (const ctile::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("scratch_over_rings needs a producer warpgroup"), std::string::npos) << e.what();
  }
}

// The K split's target (acc-split with acc_split = 2): it needs the producer warpgroup and exactly
// one loop marked acc_split = 2, and its scratch inside the tile block's shared memory.
TEST(Verifier, TheKSplitNeedsAProducerAMarkedLoopAndItsScratch) {
  const std::string text = expected_ir("acc-split/gemm_64x64_k_split.ir");
  ASSERT_FALSE(text.empty());
  EXPECT_NO_THROW((void)ir::parse(text));
  auto replaced = [&](const std::string& what, const std::string& with) {
    std::string t = text;
    const std::size_t p = t.find(what);
    EXPECT_NE(p, std::string::npos) << what;
    if (p != std::string::npos) t.replace(p, what.size(), with);
    return t;
  };
  auto fails_with = [](const std::string& t, const std::string& message) {
    try {
      (void)ir::parse(t);
      ADD_FAILURE() << "no error";
    } catch (const ctile::UserError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  };
  fails_with(replaced(", acc_split = 2}", "}"), "exactly one loop marked acc_split = 2");
  fails_with(replaced("k_split_scratch = 106704", "k_split_scratch = 123088"), "k_split_scratch 123088 is not");
  fails_with(replaced("k_split = 2,", "k_split = 3,"), "target k_split 3 needs 2");
}
