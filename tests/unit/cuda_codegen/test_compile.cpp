// Every kernel of cases.hpp is generated and compiled by NVRTC to a cubin for sm_80 and sm_90a, and
// those with fp8 values for sm_89 too (the first target with the fp8 conversion instructions). The
// test fails (never skips) when NVRTC is missing: this machine and CI have it.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <vector>

#include "../../../src/backend/cuda/codegen.hpp"
#include "../../../src/backend/cuda/nvrtc.hpp"
#include "cases.hpp"

namespace cuda_codegen_test {
namespace {

using ctile::backend::cuda::CodegenOptions;
using ctile::backend::cuda::generate;
using ctile::backend::cuda::Nvrtc;
using ctile::backend::cuda::Output;

class Compile : public ::testing::TestWithParam<std::size_t> {};

// Whether kernel `k` holds a value of an fp8 type.
bool has_fp8(const ctile::ir::Kernel& k) {
  for (const ctile::ir::Type& t : k.values)
    if (ctile::is_fp8(t.dtype)) return true;
  return false;
}

TEST_P(Compile, Sm80AndSm90a) {
  const Case& c = all_cases()[GetParam()];
  Nvrtc* rtc = ctile::backend::cuda::nvrtc();
  ASSERT_NE(rtc, nullptr) << ctile::backend::cuda::nvrtc_unavailable_reason();
  const auto k = c.make();
  std::vector<int> sms{80, 90};
  if (has_fp8(*k)) sms.insert(sms.begin() + 1, 89);
  // A configuration for sm_90 alone (more shared memory than sm_80 gives a CTA): its name says so.
  if (c.name.ends_with("_sm90")) sms = {90};
  for (int sm : sms) {
    CodegenOptions opt;
    opt.sm = sm;
    const auto g = generate(*k, opt);
    EXPECT_GE(g.threads, 32);
    EXPECT_LE(g.threads, 1024);
    EXPECT_EQ(g.threads % 32, 0);
    // A power of two, or warps of whole warpgroups and a producer warpgroup (warp specialisation).
    if (g.threads & (g.threads - 1)) {
      EXPECT_EQ(g.threads % 128, 0) << g.threads;
    }
    EXPECT_EQ(g.smem_bytes % 16, 0u);
    if (const char* dir = std::getenv("CTILE_CUDA_DUMP"); dir && *dir)  // for reading the generated code
      std::ofstream(std::string(dir) + "/" + c.name + "_sm" + std::to_string(sm) + ".cu") << g.source;
    const auto r = rtc->compile(g, sm, Output::Cubin);
    EXPECT_FALSE(r.image.empty());
    EXPECT_EQ(r.log, "") << "NVRTC warnings for " << c.name << " (" << r.arch << "):\n" << g.source;
    std::printf("[ compile  ] %-36s %-7s %4d threads %6zu B smem %8.1f ms\n", c.name.c_str(), r.arch.c_str(), g.threads,
                g.smem_bytes, r.compile_ms);
  }
}

INSTANTIATE_TEST_SUITE_P(AllKernels, Compile, ::testing::Range<std::size_t>(0, all_cases().size()),
                         [](const ::testing::TestParamInfo<std::size_t>& i) { return all_cases()[i.param].name; });

TEST(Nvrtc, IsAvailable) {
  Nvrtc* rtc = ctile::backend::cuda::nvrtc();
  ASSERT_NE(rtc, nullptr) << ctile::backend::cuda::nvrtc_unavailable_reason();
  EXPECT_GE(rtc->version().major, 12);
  EXPECT_TRUE(ctile::backend::cuda::nvrtc_unavailable_reason().empty());
}

TEST(Nvrtc, PtxForBothTargets) {
  Nvrtc* rtc = ctile::backend::cuda::nvrtc();
  ASSERT_NE(rtc, nullptr) << ctile::backend::cuda::nvrtc_unavailable_reason();
  const auto k = all_cases().front().make();
  for (int sm : {80, 90}) {
    CodegenOptions opt;
    opt.sm = sm;
    const auto g = generate(*k, opt);
    const auto r = rtc->compile(g, sm, Output::Ptx);
    EXPECT_NE(r.image.find(".entry " + g.entry), std::string::npos);
    EXPECT_NE(r.image.find(sm == 90 ? ".target sm_90a" : ".target sm_80"), std::string::npos) << r.image.substr(0, 400);
  }
}

// fp8 conversions take PTX's cvt .e4m3x2 / .e5m2x2 instructions from sm_89 on (two elements each,
// the f32 -> fp8 ones saturating: .satfinite) and the software conversion before (device/types.h).
TEST(Nvrtc, Fp8ConversionsUseTheCvtInstructionsFromSm89) {
  Nvrtc* rtc = ctile::backend::cuda::nvrtc();
  ASSERT_NE(rtc, nullptr) << ctile::backend::cuda::nvrtc_unavailable_reason();
  const Case* conv = nullptr;
  for (const Case& c : all_cases())
    if (c.name == "convert_fp8") conv = &c;
  ASSERT_NE(conv, nullptr);
  const auto k = conv->make();
  for (int sm : {80, 89, 90}) {
    CodegenOptions opt;
    opt.sm = sm;
    const auto g = generate(*k, opt);
    EXPECT_NE(g.source.find("ct::pack_e4m3x2("), std::string::npos) << "f32 -> e4m3 in pairs:\n" << g.source;
    EXPECT_NE(g.source.find("ct::pack_e5m2x2("), std::string::npos) << g.source;
    const std::string ptx = rtc->compile(g, sm, Output::Ptx).image;
    for (const char* insn : {"cvt.rn.satfinite.e4m3x2.f32", "cvt.rn.satfinite.e5m2x2.f32", "cvt.rn.f16x2.e5m2x2"}) {
      if (sm >= 89) EXPECT_NE(ptx.find(insn), std::string::npos) << insn << " missing for sm_" << sm;
      else EXPECT_EQ(ptx.find(insn), std::string::npos) << insn << " on sm_" << sm;
    }
  }
}

// fp8 products with both operands K-major run on sm_90a's 8-bit wgmma (k32, the operand types in
// the instruction, mixed ones too), and on the CUDA cores elsewhere (no wgmma, no mma.sync).
TEST(Nvrtc, Fp8ProductsTakeTheK32WgmmaOnSm90a) {
  Nvrtc* rtc = ctile::backend::cuda::nvrtc();
  ASSERT_NE(rtc, nullptr) << ctile::backend::cuda::nvrtc_unavailable_reason();
  const std::vector<std::pair<std::string, std::string>> want = {
      {"matmul_fp8_e4m3_128", "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3"},
      {"mm_bt_f8e4m3_f8e5m2_f32", "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e5m2"},
      {"mm_bt_f8e5m2_f8e4m3_f32", "wgmma.mma_async.sync.aligned.m64n64k32.f32.e5m2.e4m3"},
      {"mm_bt_f8e5m2_f32_k32", "wgmma.mma_async.sync.aligned.m64n64k32.f32.e5m2.e5m2"}};
  for (const auto& [name, insn] : want) {
    const Case* c = nullptr;
    for (const Case& x : all_cases())
      if (x.name == name) c = &x;
    ASSERT_NE(c, nullptr) << name;
    const auto k = c->make();
    for (int sm : {89, 90}) {
      CodegenOptions opt;
      opt.sm = sm;
      const auto g = generate(*k, opt);
      const std::string ptx = rtc->compile(g, sm, Output::Ptx).image;
      if (sm == 90) EXPECT_NE(ptx.find(insn), std::string::npos) << name << ": " << insn << " missing";
      else EXPECT_EQ(ptx.find("wgmma"), std::string::npos) << name << " on sm_" << sm;
      EXPECT_EQ(ptx.find("mma.sync"), std::string::npos) << name << " on sm_" << sm;
    }
  }
}

TEST(Nvrtc, CompileErrorsCarryTheLogTheLineAndAReproducer) {
  Nvrtc* rtc = ctile::backend::cuda::nvrtc();
  ASSERT_NE(rtc, nullptr) << ctile::backend::cuda::nvrtc_unavailable_reason();
  ctile::backend::cuda::GeneratedKernel g;
  g.entry = "ctile_broken";
  g.source = "#include \"ctile/device/tile.h\"\n// line 2\nextern \"C\" __global__ void ctile_broken() {\n  undeclared_thing = 1;  // user.cpp:42 ct.binary add\n}\n";
  try {
    rtc->compile(g, 90, Output::Cubin);
    FAIL() << "expected an InternalError";
  } catch (const ctile::InternalError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("ctile_broken"), std::string::npos) << m;
    EXPECT_NE(m.find("undeclared_thing"), std::string::npos) << m;
    EXPECT_NE(m.find("user.cpp:42"), std::string::npos) << m;
    EXPECT_NE(m.find("at line 4 of the generated source"), std::string::npos) << m;
    EXPECT_NE(m.find("nvcc -arch=sm_90a -std=c++17 -I"), std::string::npos) << m;
    EXPECT_NE(m.find("-cubin "), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace cuda_codegen_test


namespace cuda_codegen_test {
namespace {
// Ping-pong (option pingpong = 1): each of the loop's two products is issued in its warpgroup's
// turn and hands the turn over before waiting; warpgroup 1 gives the first turn once, warpgroup 0
// takes the last one after the tile blocks, so no arrival is left behind. Without the option the
// same kernel has none of it.
TEST(Generate, PingPongBracketsTheLoopsProducts) {
  auto count = [](const std::string& s, const std::string& what) {
    int n = 0;
    for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
    return n;
  };
  for (const char* name : {"attention_bf16_d128_bn128_causal_pingpong_sm90", "attention_bf16_d128_bn128_causal_tma_ws_sm90"}) {
    const Case* c = nullptr;
    for (const Case& x : all_cases())
      if (x.name == name) c = &x;
    ASSERT_NE(c, nullptr) << name;
    CodegenOptions opt;
    opt.sm = 90;
    const auto g = generate(*c->make(), opt);
    const bool on = std::string(name).find("pingpong") != std::string::npos;
    EXPECT_EQ(count(g.source, "ct::bar_sync(2 + (team.tid >> 7), 256);"), on ? 2 : 0) << g.source;
    EXPECT_EQ(count(g.source, "ct::bar_arrive(2 + ((team.tid >> 7) ^ 1), 256);"), on ? 2 : 0);
    EXPECT_EQ(count(g.source, "if ((team.tid >> 7) == 1) ct::bar_arrive(2, 256);"), on ? 1 : 0);
    EXPECT_EQ(count(g.source, "if ((team.tid >> 7) == 0) ct::bar_sync(2, 256);"), on ? 1 : 0);
    EXPECT_EQ(g.threads, 384);  // a producer warpgroup either way
  }
}

}  // namespace
}  // namespace cuda_codegen_test
