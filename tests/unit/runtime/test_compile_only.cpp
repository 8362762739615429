// compile_only: argument specs -> IR (with the specialisation facts) -> CUDA C++ -> NVRTC PTX and
// cubin for a chosen architecture, without a GPU. Like tests/unit/cuda_codegen, this fails (never
// skips) without NVRTC: CI has it.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

#include <ctile/ctile.hpp>

#include "test_helpers.hpp"
#include "test_kernels.hpp"

namespace ct = ctile;
namespace spec = ctile::spec;

namespace {

void vector_add(ct::Mut<float, 1> z, ct::Ref<float, 1> x, ct::Ref<float, 1> y) {
  z.store(ct::load_like(x, z) + ct::load_like(y, z));
}

void softmax_rows(ct::Mut<float, 2> out, ct::Ref<float, 2> x) {
  auto row = ct::load_like(x, out, -INFINITY);
  auto e = ct::exp(row - ct::max(row, 1, true));
  out.store(e / ct::sum(e, 1, true));
}

// mode 0: x * s, otherwise x + s (a trace-time choice).
void scale_or_shift(ct::Mut<ct::bf16, 2> out, ct::Ref<ct::bf16, 2> x, ct::Scalar<float> s, ct::Const<int> mode) {
  auto t = ct::load_like(x, out).to<float>();
  if (mode == 0) out.store((t * s).to<ct::bf16>());
  else out.store((t + s).to<ct::bf16>());
}

void block_sums(ct::Atomic<float, 1> acc, ct::Ref<float, 1> x) {
  acc.add({0}, ct::sum(x.tiles({16}).load({ct::block_id(0)}), 0));
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

bool is_elf(const std::vector<std::byte>& b) {
  return b.size() > 4 && b[0] == std::byte{0x7f} && b[1] == std::byte{'E'} && b[2] == std::byte{'L'} &&
         b[3] == std::byte{'F'};
}

void expect_sane(const ct::CompileOnlyResult& r, const std::string& arch) {
  EXPECT_EQ(r.arch, arch);
  EXPECT_FALSE(r.entry.empty());
  EXPECT_TRUE(has(r.ptx, ".target " + arch + "\n")) << r.ptx.substr(0, 400);
  EXPECT_TRUE(has(r.ptx, ".entry " + r.entry)) << r.ptx.substr(0, 400);
  EXPECT_TRUE(has(r.cuda_source, r.entry));
  EXPECT_TRUE(is_elf(r.cubin)) << r.cubin.size() << " bytes";
  EXPECT_GE(r.threads_per_block, 32);
  EXPECT_LE(r.threads_per_block, 1024);
  EXPECT_EQ(r.threads_per_block & (r.threads_per_block - 1), 0);
  EXPECT_EQ(r.dynamic_smem_bytes % 16, 0u);
  EXPECT_LE(r.dynamic_smem_bytes, 163u * 1024);
  EXPECT_GT(r.params_bytes, 0u);
  EXPECT_FALSE(r.nvrtc_version.empty());
  // (NVRTC warnings, r.nvrtc_log, are the code generator's business: tests/unit/cuda_codegen.)
  ASSERT_NE(r.ir_kernel, nullptr);
  EXPECT_EQ(r.ir, ct::ir::print(*r.ir_kernel));
}

TEST(CompileOnly, VectorAddForSm80AndSm90a) {
  const auto k = ct::kernel(vector_add, "vector_add");
  for (const std::string arch : {"sm_80", "sm_90a"}) {
    const auto r = ct::compile_only(k, ct::CompileOptions{.arch = arch}, spec::partition<float>({4096}, {1024}),
                                    spec::shared<float>({4096}), spec::shared<float>({4096}).misaligned());
    expect_sane(r, arch);
    EXPECT_EQ(r.kernel, "vector_add");
    EXPECT_EQ(r.grid_rank, 1);
    EXPECT_TRUE(has(r.ir, "ct.kernel @vector_add grid_rank 1 (%0: piece<f32, [1024]> \"arg0\" {align16, contig, div16=[0], small}, "
                          "%1: tensor<f32, rank 1, read> \"arg1\" {align16, contig, div16=[0], small}, "
                          "%2: tensor<f32, rank 1, read> \"arg2\" {contig, div16=[0], small}) {"))
        << r.ir;
  }
}

// CompileOptions::kernel reaches the compiler: the IR carries the options, the threads follow
// `warps`, ptxas gets the occupancy target, and fast_math changes the division.
TEST(CompileOnly, KernelOptionsReachTheGeneratedCode) {
  const auto k = ct::kernel(softmax_rows, "softmax_rows");
  auto compile = [&](const ct::KernelOptions& o) {
    return ct::compile_only(k, ct::CompileOptions{.arch = "sm_90a", .kernel = o}, spec::partition<float>({300, 1024}, {1, 1024}),
                            spec::shared<float>({300, 1024}));
  };
  const auto base = compile({});
  const auto tuned = compile({.warps = 2, .blocks_per_cta = 1, .min_ctas_per_sm = 3});
  expect_sane(tuned, "sm_90a");
  EXPECT_TRUE(has(tuned.ir, "options {warps=2,blocks_per_cta=1,min_ctas_per_sm=3}")) << tuned.ir.substr(0, 400);
  EXPECT_FALSE(has(base.ir, "options {"));
  EXPECT_EQ(tuned.threads_per_block, 64);
  EXPECT_TRUE(has(tuned.ptx, ".minnctapersm 3")) << "the occupancy target did not reach ptxas";
  // Without the option the occupancy pass may choose a target (a row kernel): never 3 here.
  EXPECT_FALSE(has(base.ptx, ".minnctapersm 3"));
  const auto fast = compile({.fast_math = true});
  EXPECT_TRUE(has(base.ptx, "div.rn.f32"));
  EXPECT_FALSE(has(fast.ptx, "div.rn.f32")) << "fast_math kept the IEEE division";
  ct::test::expect_user_error([&] { (void)compile({.warps = 48}); }, {"softmax_rows", "warps = 48"});
}

// RMSNorm over 16384 bf16 columns: remat converts x again after the reduction (through
// ct::opaque), which leaves 32 registers of tiles across it, and the occupancy pass asks ptxas for
// two 512-thread CTAs per SM; min_ctas_per_sm = 1 turns the target off, not the remat.
TEST(CompileOnly, RowKernelsGetRematAndAnOccupancyTarget) {
  const auto k = ct::kernel(test_kernels::rms_norm, "rms_norm");
  auto compile = [&](const ct::KernelOptions& o) {
    return ct::compile_only(k, ct::CompileOptions{.arch = "sm_90a", .kernel = o},
                            spec::partition<ct::bf16>({64, 16384}, {1, 16384}), spec::shared<ct::bf16>({64, 16384}),
                            spec::shared<ct::bf16>({16384}), 1e-5f);
  };
  const auto r = compile({});
  expect_sane(r, "sm_90a");
  EXPECT_EQ(r.threads_per_block, 512);
  EXPECT_TRUE(has(r.cuda_source, "ct::opaque(")) << r.cuda_source;
  EXPECT_TRUE(has(r.cuda_source, "__launch_bounds__(512, 2)")) << r.cuda_source;
  EXPECT_TRUE(has(r.ptx, ".minnctapersm 2"));
  const auto off = compile({.min_ctas_per_sm = 1});
  EXPECT_FALSE(has(off.ptx, ".minnctapersm 2"));
  EXPECT_TRUE(has(off.cuda_source, "ct::opaque("));
  EXPECT_TRUE(has(off.cuda_source, "__launch_bounds__(512, 1)"));
}

// A row of 5120 bf16 columns in a tile of 8192: partial tiles, but the facts (aligned rows, an
// extent that is a multiple of 16) prove every window whole vectors, so the loads and the store
// compile without the element-by-element path (WHOLE). 1000 columns prove nothing of the kind.
TEST(CompileOnly, WholeVectorWindowsDropTheElementPath) {
  const auto k = ct::kernel(test_kernels::rms_norm, "rms_norm");
  auto compile = [&](std::int64_t cols) {
    return ct::compile_only(k, ct::CompileOptions{.arch = "sm_90a"}, spec::partition<ct::bf16>({64, cols}, {1, 8192}),
                            spec::shared<ct::bf16>({64, cols}), spec::shared<ct::bf16>({cols}), 1e-5f);
  };
  // 5120 columns: a multiple of 16; 1000: of 8, one 16-byte bf16 vector (the div8 fact); 1004: of 4.
  const auto whole = compile(5120), whole8 = compile(1000), ragged = compile(1004);
  expect_sane(whole, "sm_90a");
  expect_sane(whole8, "sm_90a");
  expect_sane(ragged, "sm_90a");
  EXPECT_TRUE(has(whole.cuda_source, ", ct::bf16, true>(")) << whole.cuda_source;
  EXPECT_TRUE(has(whole8.cuda_source, ", ct::bf16, true>(")) << whole8.cuda_source;
  EXPECT_FALSE(has(ragged.cuda_source, ", ct::bf16, true>(")) << ragged.cuda_source;
  EXPECT_LT(whole.ptx.size(), ragged.ptx.size());
  EXPECT_LT(whole8.ptx.size(), ragged.ptx.size());
}

// The alignment a store of 1-row pieces may assume (its ALIGNED template argument: no run-time
// test of the vectors' addresses) holds only when the row stride keeps every row start on a vector
// boundary: pieces of different rows start a stride apart even though the tile has one row. A
// bf16 row of 1000 elements (2000 bytes) keeps it, rows of 1004 or 300 do not (the split-K sum's
// C of 300 columns stored misaligned 16-byte vectors on the GPU before this was checked).
TEST(CompileOnly, RowPiecesAreAlignedOnlyWhenTheRowStrideIs) {
  const auto k = ct::kernel(test_kernels::rms_norm, "rms_norm");
  auto store_aligned = [&](std::int64_t cols) {
    const auto r = ct::compile_only(k, ct::CompileOptions{.arch = "sm_90a"}, spec::partition<ct::bf16>({64, cols}, {1, 8192}),
                                    spec::shared<ct::bf16>({64, cols}), spec::shared<ct::bf16>({cols}), 1e-5f);
    // ct::store<D, ct::Shape<...>, VM, FULL, ALIGNED, ...>(: the fifth argument.
    const std::size_t at = r.cuda_source.find("ct::store<");
    EXPECT_NE(at, std::string::npos) << r.cuda_source;
    std::size_t i = r.cuda_source.find(">, ", r.cuda_source.find("ct::Shape<", at)) + 3;
    for (int skip = 0; skip < 2; ++skip) i = r.cuda_source.find(", ", i) + 2;  // VM, FULL
    return r.cuda_source.compare(i, 4, "true") == 0;
  };
  EXPECT_TRUE(store_aligned(5120));
  EXPECT_TRUE(store_aligned(1000));
  EXPECT_FALSE(store_aligned(1004));
  EXPECT_FALSE(store_aligned(300));
}

TEST(CompileOnly, PlainSm90IsNotSm90a) {
  const auto r = ct::compile_only(vector_add, ct::CompileOptions{.arch = "sm_90"}, spec::partition<float>({100}, {64}),
                                  spec::shared<float>({100}), spec::shared<float>({100}));
  expect_sane(r, "sm_90");
  EXPECT_FALSE(has(r.ptx, ".target sm_90a"));
  EXPECT_TRUE(has(r.kernel, "vector_add")) << r.kernel;  // named after the function
  EXPECT_TRUE(has(r.ir, "{align16, contig, small}")) << r.ir;  // 100 is not a multiple of 16
}

TEST(CompileOnly, RowSoftmax) {
  for (const std::string arch : {"sm_80", "sm_90a"}) {
    const auto r = ct::compile_only(ct::kernel(softmax_rows, "softmax_rows"), ct::CompileOptions{.arch = arch},
                                    spec::partition<float>({300, 1024}, {1, 1024}),
                                    spec::shared<float>({300, 2048}).strides({4096, 1}));
    expect_sane(r, arch);
    EXPECT_EQ(r.grid_rank, 2);
    EXPECT_TRUE(has(r.ir, "\"arg0\" {align16, contig, div16=[1], stride16=[0], small}")) << r.ir;
    EXPECT_TRUE(has(r.ir, "\"arg1\" {align16, contig, div16=[1], stride16=[0], small}")) << r.ir;
    EXPECT_TRUE(has(r.ir, "ct.reduce")) << r.ir;
  }
}

TEST(CompileOnly, ConstAndScalarParameters) {
  const auto k = ct::kernel(scale_or_shift, "scale_or_shift");
  const auto base = [&](int mode, const std::string& arch) {
    return ct::compile_only(k, ct::CompileOptions{.arch = arch}, spec::partition<ct::bf16>({64, 64}, {16, 64}),
                            spec::shared<ct::bf16>({64, 64}), 1.0f, mode);
  };
  for (const std::string arch : {"sm_80", "sm_90a"}) {
    const auto mul = base(0, arch);
    const auto add = base(1, arch);
    expect_sane(mul, arch);
    expect_sane(add, arch);
    // The Const is folded at trace time; the Scalar is a run-time parameter.
    EXPECT_TRUE(has(mul.ir, "{fn = mul}")) << mul.ir;
    EXPECT_FALSE(has(mul.ir, "{fn = add}")) << mul.ir;
    EXPECT_TRUE(has(add.ir, "{fn = add}")) << add.ir;
    EXPECT_TRUE(has(mul.ir, "%2: f32 \"arg2\")")) << mul.ir;
    EXPECT_EQ(mul.ir_kernel->params.size(), 3u);
  }
}

TEST(CompileOnly, KernelWithoutMutTakesTheGridRankFromTheOptions) {
  const auto r = ct::compile_only(block_sums, ct::CompileOptions{.arch = "sm_80", .grid_rank = 1},
                                  spec::tensor<float>({1}), spec::shared<float>({1 << 20}));
  expect_sane(r, "sm_80");
  EXPECT_TRUE(has(r.ir, "tensor<f32, rank 1, atomic> \"arg0\" {align16, contig, small}")) << r.ir;
}

TEST(CompileOnly, NvrtcArchitecturesNewerThanSm90) {
  // Newer targets in the same form compile when the installed NVRTC knows them (CUDA 13 does).
  try {
    const auto r = ct::compile_only(vector_add, ct::CompileOptions{.arch = "sm_100a"}, spec::partition<float>({64}, {64}),
                                    spec::shared<float>({64}), spec::shared<float>({64}));
    expect_sane(r, "sm_100a");
  } catch (const ct::UserError& e) {
    if (!has(e.what(), "cannot compile for sm_100a") && !has(e.what(), "does not accept -arch=sm_100a")) throw;
    GTEST_SKIP() << "this NVRTC predates sm_100a: " << e.what();
  }
}

TEST(CompileOnly, ArchitectureTheInstalledNvrtcDoesNotKnow) {
  // sm_85 has the accepted form, but no GPU has it: NVRTC's list of architectures decides.
  try {
    (void)ct::compile_only(vector_add, ct::CompileOptions{.arch = "sm_85"}, spec::partition<float>({64}, {64}),
                           spec::shared<float>({64}), spec::shared<float>({64}));
    FAIL() << "expected a UserError";
  } catch (const ct::InternalError& e) {
    FAIL() << "an InternalError instead of a UserError: " << e.what();
  } catch (const ct::UserError& e) {
    EXPECT_TRUE(has(e.what(), "compile_only of kernel")) << e.what();
    EXPECT_TRUE(has(e.what(), "sm_85")) << e.what();
  }
}

}  // namespace

namespace {
// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value, 1);
    else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

ct::CompileOnlyResult compile_vector_add() {
  return ct::compile_only(ct::kernel(vector_add, "vector_add"), ct::CompileOptions{.arch = "sm_80"},
                          spec::partition<float>({4096}, {1024}), spec::shared<float>({4096}), spec::shared<float>({4096}));
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}
}  // namespace

// The dump and timing variables work with compile_only as with a launch's compile.
TEST(CompileOnly, DumpAndTimingVariablesToStderr) {
  ScopedEnv dir("CTILE_DUMP_DIR", nullptr);
  ScopedEnv ir("CTILE_DUMP_IR", "1"), cu("CTILE_DUMP_CUDA", "1"), ptx("CTILE_DUMP_PTX", "1"), t("CTILE_TIMINGS", "1");
  testing::internal::CaptureStderr();
  const auto r = compile_vector_add();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(has(err, r.ir)) << err.substr(0, 2000);
  EXPECT_TRUE(has(err, "// ---- ctile: CUDA source of kernel 'vector_add' (entry " + r.entry + ") ----\n" + r.cuda_source))
      << err.substr(0, 2000);
  EXPECT_TRUE(has(err, "// ---- ctile: PTX of kernel 'vector_add' (entry " + r.entry + ") ----\n" + r.ptx)) << err.substr(0, 2000);
  EXPECT_TRUE(has(err, "ctile: timings of kernel 'vector_add' (compile_only, sm_80): trace ")) << err.substr(0, 2000);
  EXPECT_TRUE(has(err, " ms, codegen ")) << err;
  EXPECT_TRUE(has(err, " ms, nvrtc ")) << err;
}

TEST(CompileOnly, DumpDirGetsTheSourceAndPtxFiles) {
  const std::filesystem::path d =
      std::filesystem::temp_directory_path() / ("ctile_dump_" + std::to_string(::getpid()) + "_compile_only");
  std::filesystem::remove_all(d);
  ScopedEnv dir("CTILE_DUMP_DIR", d.c_str());
  ScopedEnv cu("CTILE_DUMP_CUDA", "1"), ptx("CTILE_DUMP_PTX", "1"), q("CTILE_QUIET", "1");
  ScopedEnv ir("CTILE_DUMP_IR", nullptr), t("CTILE_TIMINGS", nullptr);
  testing::internal::CaptureStderr();
  const auto r = compile_vector_add();
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");  // quiet: no "wrote ..." lines
  EXPECT_EQ(read_file(d / (r.entry + ".cu")), r.cuda_source);
  EXPECT_EQ(read_file(d / (r.entry + ".ptx")), r.ptx);
  std::filesystem::remove_all(d);
}

TEST(CompileOnly, NothingOnStderrWithoutTheVariables) {
  ScopedEnv ir("CTILE_DUMP_IR", nullptr), cu("CTILE_DUMP_CUDA", nullptr), ptx("CTILE_DUMP_PTX", nullptr),
      t("CTILE_TIMINGS", "0");
  testing::internal::CaptureStderr();
  (void)compile_vector_add();
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}
