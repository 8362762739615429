// Every SIMT kernel of the tests and the examples compiles with NVRTC for sm_80 and sm_90a without
// a single warning, its PTX carries the contract's exact block (.reqntid), and nvJitLink makes a
// cubin of it. Fails (never skips) without NVRTC: CI has it. A kernel body that uses a host-only
// name is a UserError at the kernel's file:line.
#include <regex>
#include <vector>

#include "../../../examples/simt_kernels.hpp"
#include "helpers.hpp"
#include "kernels.hpp"

namespace simt_test {
namespace {

int host_only_helper(int x) { return x + 1; }

// Compiles on the host (host_only_helper is in this translation unit), not on the GPU.
CTILE_SIMT_KERNEL(k_uses_host_code, (DisjointSpan<i32> out), Contract().block(32), (), {
  out.get_mut(index_1d()).set(host_only_helper(1));
})

// NVRTC warns about this comparison (an unsigned value is never negative); the host compiler does
// not, without -Wextra. It proves that warnings reach CompileResult::log, so that check() can fail.
CTILE_SIMT_KERNEL(k_nvrtc_warns, (DisjointSpan<u32> out), Contract().block(32), (), {
  const u32 t = thread_in_block();
  out.get_mut(index_1d()).set(t < 0u ? 1u : 0u);
})

template <class K>
void check(const K& k) {
  const auto& info = k.info();
  const cs::Dims b = info.contract.block_dims();
  const std::string reqntid = ".reqntid " + std::to_string(b.x) + ", " + std::to_string(b.y) + ", " + std::to_string(b.z);
  for (const char* arch : {"sm_80", "sm_90a"}) {
    // Every grid rank on Hopper; the 1-D module (the most folded) on Ampere too.
    for (int grid_rank : std::string(arch) == "sm_80" ? std::vector<int>{1} : std::vector<int>{1, 2, 3}) {
      const cs::CompileResult r = cs::compile_only(k, arch, grid_rank);
      EXPECT_EQ(r.log, "") << info.name << " " << arch << ": warnings\n" << r.cuda_source;
      EXPECT_NE(r.ptx.find(reqntid), std::string::npos) << info.name << " " << arch;
      EXPECT_EQ(r.ptx.find(".maxntid"), std::string::npos) << info.name;
      EXPECT_NE(r.ptx.find(".entry " + r.entry), std::string::npos);
      EXPECT_FALSE(r.cubin.empty()) << info.name << ": " << r.linker;
      EXPECT_EQ(r.cubin.substr(0, 4), "\x7f" "ELF");
      EXPECT_NE(r.linker.find("nvJitLink"), std::string::npos) << r.linker;
      EXPECT_NE(r.cuda_source.find("__launch_bounds__("), std::string::npos);
      // The host packs the parameters in a struct of exactly the size NVRTC gave the entry's one
      // parameter (the layouts agree: the launch copies the host's bytes).
      std::smatch m;
      ASSERT_TRUE(std::regex_search(r.ptx, m, std::regex(r.entry + "_param_0\\[([0-9]+)\\]"))) << info.name;
      EXPECT_EQ(std::stoul(m[1].str()), info.pack_bytes) << info.name;
    }
  }
  std::printf("[ compiled ] %-28s sm_80, sm_90a: %s\n", info.name.c_str(), reqntid.c_str());
}

TEST(SimtNvrtc, ExampleKernels) {
  using namespace simt_examples;
  check(simt_vector_add);
  check(simt_vector_add4);
  check(simt_sum);
  check(simt_histogram);
  check(simt_stencil);
  check(simt_transpose);
}

TEST(SimtNvrtc, TestKernels) {
  check(k_index_1d);
  check(k_grid_stride);
  check(k_index_2d);
  check(k_tile);
  check(k_tile_transposed);
  check(k_leaders);
  check(k_uniform_and_fallbacks);
  check(k_vec4);
  check(k_small_ints);
  check(k_plus_one_2d);
  check(k_double_own);
  check(k_neighbours);
  check(k_atomics);
  check(k_shared_atomics);
  check(k_reverse);
  check(k_warp_ops);
  check(k_warp_sum);
  check(k_barrier_early_return);
  check(k_barrier_two_sites);
  check(k_warp_divergent);
  check(k_warp_partial);
  check(k_warp_bad_width);
  check(k_race_ww);
  check(k_race_neighbour);
  check(k_race_warp);
  check(k_race_atomic);
  check(k_race_global);
  check(k_unchecked_own);
  check(k_race_mixed);
  check(k_oob_unchecked);
  check(k_oob_shared);
  check(k_oob_read);
  check(k_slow_scale);
  check(k_contract);
  check(k_bad_requires);
}

TEST(SimtNvrtc, WarningsAreReported) {
  const cs::CompileResult r = cs::compile_only(k_nvrtc_warns, "sm_90a");
  EXPECT_NE(r.log, "");
  EXPECT_NE(r.log.find("pointless comparison of unsigned integer with zero"), std::string::npos) << r.log;
}

TEST(SimtNvrtc, TheContractShapesTheSource) {
  const cs::CompileResult r = cs::compile_only(k_contract, "sm_90a");
  EXPECT_NE(r.cuda_source.find("__launch_bounds__(128, 2)"), std::string::npos);
  EXPECT_NE(r.cuda_source.find("#define CTILE_SIMT_DYN_SMEM 1024"), std::string::npos);
  EXPECT_NE(r.cuda_source.find("#define CTILE_SIMT_GRID_RANK 1"), std::string::npos);
  // The body is the kernel's own text, at its own file:line.
  EXPECT_NE(r.cuda_source.find("if (i.get() < n) out.get_mut(i).set(in.get_or(i, 0.0f));"), std::string::npos);
  EXPECT_NE(r.cuda_source.find("#line " + std::to_string(k_contract.info().line) + " \""), std::string::npos);
}

TEST(SimtNvrtc, HostOnlyCodeIsAUserErrorAtTheKernel) {
  const std::string m = user_error_of([] { (void)cs::compile_only(k_uses_host_code, "sm_90a"); });
  EXPECT_NE(m.find("SIMT kernel 'k_uses_host_code'"), std::string::npos) << m;
  EXPECT_NE(m.find("does not compile for the GPU (sm_90a)"), std::string::npos) << m;
  EXPECT_NE(m.find("host_only_helper"), std::string::npos) << m;
  EXPECT_NE(m.find("test_nvrtc.cpp(" + std::to_string(k_uses_host_code.info().line) + ")"), std::string::npos) << m;
  // ... and on the host it is a fine kernel.
  auto [o] = cs::prepare(k_uses_host_code, cs::cover(4), ct::zeros<std::int32_t>({4})).sync();
  EXPECT_EQ(o.to_host()[3], 2);
}

TEST(SimtNvrtc, CheckedLaunchesAssumeTheRequiresRelations) {
  const std::string assumed = "if (!(out.size() == in.size())) __builtin_unreachable();";
  EXPECT_NE(cs::compile_only(k_contract, "sm_80", 1, true).cuda_source.find(assumed), std::string::npos);
  // The module of unchecked launches (prepare(unchecked, ...)) may not assume them.
  EXPECT_EQ(cs::compile_only(k_contract, "sm_80", 1, false).cuda_source.find(assumed), std::string::npos);
  EXPECT_EQ(cs::compile_only(k_contract, "sm_80", 1, false).log, "");
}

TEST(SimtNvrtc, GridRanks) {
  EXPECT_NE(cs::compile_only(k_index_2d, "sm_80", 3).cuda_source.find("#define CTILE_SIMT_GRID_RANK 3"), std::string::npos);
  EXPECT_USER_ERROR((void)cs::compile_only(k_index_2d, "sm_80", 4), "the grid rank must be 1, 2 or 3, not 4");
}

TEST(SimtNvrtc, AnUnknownArchitecture) {
  EXPECT_USER_ERROR((void)cs::compile_only(k_index_1d, "sm_7"), "sm_7");
  EXPECT_USER_ERROR((void)cs::compile_only(k_index_1d, "gfx90a"), "unknown GPU architecture 'gfx90a'");
}

}  // namespace
}  // namespace simt_test
