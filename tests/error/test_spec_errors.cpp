// compile_only / warm_up with argument specs that do not fit the kernel: each failure is a
// UserError naming the kernel and, for an argument, its position and parameter, like a launch's.
// None of these reach NVRTC, so they run anywhere.
#include "error_util.hpp"

namespace ct = ctile;
namespace spec = ctile::spec;

namespace {

void add1(ct::Mut<float, 1> z, ct::Ref<float, 1> x) { z.store(ct::load_like(x, z) + 1.0f); }
void fixed_tile(ct::Mut<float, 1, 64> z) { z.store(0.0f); }
void fill_u8(ct::Mut<std::uint8_t, 1> z, ct::Scalar<std::uint8_t> v) { z.store(v); }
void two_outputs(ct::Mut<float, 1> a, ct::Mut<float, 1> b) {
  a.store(1.0f);
  b.store(2.0f);
}

const auto kAdd1 = ct::kernel(add1, "add1");

ct::CompileOptions arch(const char* a) { return ct::CompileOptions{.arch = a}; }

}  // namespace

TEST(SpecErrors, UnsupportedArchitectures) {
  for (const char* bad : {"sm_75", "sm_70", "compute_90", "sm90", "sm_", "sm_90b", "sm_80a", "SM_90", "sm_090", ""}) {
    const std::string msg = EXPECT_USER_ERROR(
        (void)ct::compile_only(kAdd1, arch(bad), spec::partition<float>({64}, {16}), spec::shared<float>({64})),
        "unsupported architecture '" + std::string(bad) + "'");
    EXPECT_NE(msg.find("compile_only of kernel 'add1'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("sm_80, sm_86, sm_89, sm_90, sm_90a"), std::string::npos) << msg;
  }
}

TEST(SpecErrors, WrongRankOfAPartitionSpec) {
  const std::string msg = EXPECT_USER_ERROR(
      (void)ct::compile_only(kAdd1, arch("sm_90a"), spec::partition<float>({4, 16}, {1, 16}), spec::shared<float>({64})),
      "rank-1");
  EXPECT_NE(msg.find("compile_only of kernel 'add1', argument 0 (Mut<f32, 1>)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("got rank 2 with shape [4, 16]"), std::string::npos) << msg;
}

TEST(SpecErrors, WrongRankOfASharedSpec) {
  const std::string msg = EXPECT_USER_ERROR(
      (void)ct::warm_up(kAdd1, spec::partition<float>({64}, {16}), spec::shared<float>({4, 16})), "argument 1");
  EXPECT_NE(msg.find("warm_up of kernel 'add1', argument 1 (Ref<f32, 1>)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("rank 2"), std::string::npos) << msg;
}

TEST(SpecErrors, WrongTileRank) {
  for (bool compile : {true, false}) {
    const std::string msg =
        compile ? EXPECT_USER_ERROR((void)ct::compile_only(kAdd1, arch("sm_80"), spec::partition<float>({64}, {16, 16}),
                                                           spec::shared<float>({64})),
                                    "tile shape [16, 16] has rank 2")
                : EXPECT_USER_ERROR((void)ct::warm_up(kAdd1, spec::partition<float>({64}, {16, 16}), spec::shared<float>({64})),
                                    "tile shape [16, 16] has rank 2");
    EXPECT_NE(msg.find("of kernel 'add1', argument 0 (Mut<f32, 1>)"), std::string::npos) << msg;
  }
}

TEST(SpecErrors, TileExtentNotAPowerOfTwo) {
  EXPECT_USER_ERROR((void)ct::warm_up(kAdd1, spec::partition<float>({64}, {24}), spec::shared<float>({64})),
                    "tile extent 24 at axis 0 is not a power of two");
}

TEST(SpecErrors, DeclaredTileShapeDiffers) {
  const std::string msg =
      EXPECT_USER_ERROR((void)ct::warm_up(fixed_tile, spec::partition<float>({256}, {32})), "tile shape [64]");
  EXPECT_NE(msg.find("fixed_tile"), std::string::npos) << msg;
}

TEST(SpecErrors, StridesAndExtents) {
  EXPECT_USER_ERROR(
      (void)ct::warm_up(kAdd1, spec::partition<float>({64}, {16}), spec::shared<float>({64}).strides({1, 1})),
      "do not match the rank");
  EXPECT_USER_ERROR(
      (void)ct::warm_up(kAdd1, spec::partition<float>({64}, {16}), spec::shared<float>({64}).strides({-1})),
      "negative stride");
  EXPECT_USER_ERROR((void)ct::warm_up(kAdd1, spec::partition<float>({-4}, {16}), spec::shared<float>({64})),
                    "negative extent");
}

TEST(SpecErrors, GridsOfTwoPartitionSpecsDisagree) {
  EXPECT_USER_ERROR(
      (void)ct::warm_up(two_outputs, spec::partition<float>({64}, {16}), spec::partition<float>({64}, {32})),
      "the grids of the Mut arguments must be equal");
}

TEST(SpecErrors, GridRankOption) {
  EXPECT_USER_ERROR((void)ct::warm_up(kAdd1, ct::WarmUpOptions{.grid_rank = 2}, spec::partition<float>({64}, {16}),
                                      spec::shared<float>({64})),
                    "grid_rank 2 was given");
}

TEST(SpecErrors, ScalarThatDoesNotFit) {
  const std::string msg =
      EXPECT_USER_ERROR((void)ct::warm_up(fill_u8, spec::partition<std::uint8_t>({64}, {16}), 300), "does not fit in u8");
  EXPECT_NE(msg.find("warm_up of kernel"), std::string::npos) << msg;
  EXPECT_NE(msg.find("argument 1"), std::string::npos) << msg;
}
