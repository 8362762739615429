// pack_params layout, and the generator's choices and errors (threads, vector width, shared memory,
// limits), independent of NVRTC.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>

#include "../../../src/backend/cuda/codegen.hpp"
#include "../cpu_backend/helpers.hpp"
#include "cases.hpp"

namespace cuda_codegen_test {
namespace {

using namespace ctile;
using backend::ArgValue;
using backend::cuda::CodegenOptions;
using backend::cuda::generate;
using backend::cuda::pack_params;
using cpu_test::KB;
using ir::ValueId;

CodegenOptions sm90() {
  CodegenOptions o;
  o.sm = 90;
  return o;
}

template <class T>
T at(const std::vector<std::byte>& b, std::size_t off) {
  T v;
  std::memcpy(&v, b.data() + off, sizeof v);
  return v;
}

ArgValue tensor_arg(void* data, DType d, Shape shape, Shape strides) {
  ArgValue a;
  a.tensor.data = data;
  a.tensor.dtype = d;
  a.tensor.shape = std::move(shape);
  a.tensor.strides = std::move(strides);
  return a;
}
ArgValue scalar_arg(ir::Scalar s) {
  ArgValue a;
  a.scalar = s;
  return a;
}

TEST(PackParams, LayoutGridTensorsThenScalars) {
  // params: scalar f32, piece bf16 [1, 64] (rank 2), scalar i8, tensor f64 rank 3, scalar bool, scalar f16, scalar u64
  KB kb("layout", 2);
  kb.scalar_param("a", DType::f32);
  kb.piece("y", DType::bf16, {1, 64});
  kb.scalar_param("b", DType::i8);
  kb.tensor("x", DType::f64, 3);
  kb.scalar_param("c", DType::b1);
  kb.scalar_param("h", DType::f16);
  kb.scalar_param("u", DType::u64);
  auto k = kb.finish();

  int y = 0, x = 0;
  std::vector<ArgValue> args = {
      scalar_arg(ir::Scalar::of_float(1.5)),
      tensor_arg(&y, DType::bf16, {7, 130}, {130, 1}),
      scalar_arg(ir::Scalar::of_int(-3)),
      tensor_arg(&x, DType::f64, {2, 3, 4}, {12, 4, 1}),
      scalar_arg(ir::Scalar::of_int(1)),
      scalar_arg(ir::Scalar::of_float(-2.0)),
      scalar_arg(ir::Scalar::of_int(-1)),  // u64 max as its bit pattern
  };
  backend::LaunchConfig cfg;
  cfg.grid = {7, 3};
  const auto b = pack_params(*k, cfg, args);
  const auto g = generate(*k, sm90());
  ASSERT_EQ(b.size(), 48u + 2 * 104 + 5 * 8);
  EXPECT_EQ(g.params_bytes, b.size());
  // grid
  EXPECT_EQ(at<std::int64_t>(b, 0), 7);
  EXPECT_EQ(at<std::int64_t>(b, 8), 3);
  for (int d = 2; d < 6; ++d) EXPECT_EQ(at<std::int64_t>(b, 8 * static_cast<std::size_t>(d)), 1);
  // t[0] = y (the piece: the whole tensor), t[1] = x
  EXPECT_EQ(at<void*>(b, 48), static_cast<void*>(&y));
  EXPECT_EQ(at<std::int64_t>(b, 48 + 8), 7);
  EXPECT_EQ(at<std::int64_t>(b, 48 + 16), 130);
  EXPECT_EQ(at<std::int64_t>(b, 48 + 24), 1);  // unused axes: extent 1, stride 0
  EXPECT_EQ(at<std::int64_t>(b, 48 + 56), 130);
  EXPECT_EQ(at<std::int64_t>(b, 48 + 64), 1);
  EXPECT_EQ(at<std::int64_t>(b, 48 + 72), 0);
  const std::size_t t1 = 48 + 104;
  EXPECT_EQ(at<void*>(b, t1), static_cast<void*>(&x));
  EXPECT_EQ(at<std::int64_t>(b, t1 + 8), 2);
  EXPECT_EQ(at<std::int64_t>(b, t1 + 16), 3);
  EXPECT_EQ(at<std::int64_t>(b, t1 + 24), 4);
  EXPECT_EQ(at<std::int64_t>(b, t1 + 56), 12);
  EXPECT_EQ(at<std::int64_t>(b, t1 + 64), 4);
  EXPECT_EQ(at<std::int64_t>(b, t1 + 72), 1);
  // s[0..4] = a, b, c, h, u
  const std::size_t s0 = 48 + 2 * 104;
  EXPECT_EQ(at<std::uint64_t>(b, s0), std::bit_cast<std::uint32_t>(1.5f));
  EXPECT_EQ(at<std::uint64_t>(b, s0 + 8), 0xfdu);  // i8 -3, zero-extended
  EXPECT_EQ(at<std::uint64_t>(b, s0 + 16), 1u);
  EXPECT_EQ(at<std::uint64_t>(b, s0 + 24), 0xc000u);  // f16 -2
  EXPECT_EQ(at<std::uint64_t>(b, s0 + 32), ~std::uint64_t{0});
  // the generated struct declares the same members
  EXPECT_NE(g.source.find("struct ctile_layout_params {\n  long long grid[6];\n  ct::TensorDesc t[2];\n  unsigned long long s[5];\n};"),
            std::string::npos)
      << g.source;
}

TEST(PackParams, ScalarsAreCastLikeTheInterpreter) {
  KB kb("casts");
  kb.scalar_param("i", DType::i32);
  kb.scalar_param("f", DType::f32);
  kb.scalar_param("b", DType::bf16);
  kb.scalar_param("d", DType::f64);
  kb.piece("o", DType::f32, {4});
  auto k = kb.finish();
  float o = 0;
  std::vector<ArgValue> args = {scalar_arg(ir::Scalar::of_float(1e20)),   // saturates to INT32_MAX
                                scalar_arg(ir::Scalar::of_float(0.1)),    // rounded to f32
                                scalar_arg(ir::Scalar::of_float(1.00390625)),  // ties to even in bf16: 1.0
                                scalar_arg(ir::Scalar::of_int(-7)), tensor_arg(&o, DType::f32, {1}, {1})};
  backend::LaunchConfig cfg;
  cfg.grid = {1};
  const auto b = pack_params(*k, cfg, args);
  ASSERT_EQ(b.size(), 48u + 104 + 4 * 8);
  const std::size_t s0 = 48 + 104;
  EXPECT_EQ(at<std::uint64_t>(b, s0), 0x7fffffffu);
  EXPECT_EQ(at<std::uint64_t>(b, s0 + 8), std::bit_cast<std::uint32_t>(0.1f));
  EXPECT_EQ(at<std::uint64_t>(b, s0 + 16), 0x3f80u);
  EXPECT_EQ(at<std::uint64_t>(b, s0 + 24), std::bit_cast<std::uint64_t>(-7.0));
}

TEST(PackParams, NoTensorsOrNoScalars) {
  KB kb("scalars_only");
  kb.scalar_param("n", DType::i64);
  auto k = kb.finish();
  backend::LaunchConfig cfg;
  cfg.grid = {4};
  const auto b = pack_params(*k, cfg, std::vector<ArgValue>{scalar_arg(ir::Scalar::of_int(5))});
  EXPECT_EQ(b.size(), 56u);
  EXPECT_EQ(at<std::int64_t>(b, 48), 5);
  const auto g = generate(*k, CodegenOptions{80, {}});
  EXPECT_EQ(g.source.find("TensorDesc t["), std::string::npos);
  EXPECT_EQ(g.params_bytes, 56u);
}

TEST(PackParams, RejectsMismatchedLaunches) {
  KB kb("bad", 2);
  kb.piece("o", DType::f32, {4, 4});
  auto k = kb.finish();
  float o = 0;
  backend::LaunchConfig cfg;
  cfg.grid = {1};
  EXPECT_THROW(pack_params(*k, cfg, std::vector<ArgValue>{tensor_arg(&o, DType::f32, {4, 4}, {4, 1})}), UserError);
  cfg.grid = {1, 1};
  EXPECT_THROW(pack_params(*k, cfg, std::vector<ArgValue>{}), UserError);
  EXPECT_THROW(pack_params(*k, cfg, std::vector<ArgValue>{tensor_arg(&o, DType::f32, {4}, {1})}), UserError);
}

// out = in over tiles of `n` elements of dtype d
std::shared_ptr<const ir::Kernel> copy_kernel(DType d, Shape tile) {
  KB kb("copy", static_cast<int>(tile.size()));
  const ValueId t = kb.tensor("in", d, static_cast<int>(tile.size()));
  const ValueId o = kb.piece("out", d, tile);
  std::vector<ValueId> idx;
  for (std::size_t i = 0; i < tile.size(); ++i) idx.push_back(kb.block_id(static_cast<int>(i)));
  kb.store_piece(o, kb.load(kb.partition(t, tile), idx));
  return kb.finish();
}

TEST(Generate, WarpsAndVectorsFollowTheTilesAndTypes) {
  struct Want {
    DType d;
    Shape tile;
    int warps, blocks_per_cta, vec;
  };
  // About two 16-byte vectors per thread of the largest tile, 1 to 16 warps per tile block, CTAs of
  // at least 4 warps (small tile blocks share one).
  for (const Want& w : {Want{DType::f32, {1024}, 4, 1, 4}, Want{DType::bf16, {1, 4096}, 8, 1, 8},
                        Want{DType::f32, {1, 16384}, 16, 1, 4}, Want{DType::f64, {16}, 1, 4, 2},
                        Want{DType::i8, {64, 64}, 8, 1, 8}, Want{DType::b1, {8}, 1, 4, 8}}) {
    const auto k = copy_kernel(w.d, w.tile);
    const ir::Kernel g = ctile::backend::cuda::lower(*k, sm90());
    EXPECT_EQ(g.target.warps, w.warps) << dtype_name(w.d) << " " << shape_str(w.tile);
    EXPECT_EQ(g.target.blocks_per_cta, w.blocks_per_cta) << dtype_name(w.d) << " " << shape_str(w.tile);
    const auto gk = generate(*k, sm90());
    EXPECT_EQ(gk.threads, 32 * w.warps * w.blocks_per_cta);
    EXPECT_EQ(gk.blocks_per_cta, w.blocks_per_cta);
    EXPECT_NE(gk.source.find("vec = " + std::to_string(w.vec) + ";"), std::string::npos) << gk.source;
    EXPECT_EQ(gk.smem_bytes, 0u);
  }
}

TEST(Generate, DeterministicAndLocated) {
  const auto k = copy_kernel(DType::f32, {256});
  const auto a = generate(*k, sm90());
  const auto b = generate(*k, sm90());
  EXPECT_EQ(a.source, b.source);
  EXPECT_EQ(a.entry, "ctile_copy");
  EXPECT_NE(a.source.find("// kernel_test.cpp:1 ct.load"), std::string::npos) << a.source;
  EXPECT_NE(a.source.find("extern \"C\" __global__ void __launch_bounds__(128) ctile_copy("), std::string::npos) << a.source;
}

TEST(Generate, SharedMemoryComesFromTheConversions) {
  KB kb("smem", 2);
  const ValueId t = kb.tensor("in", DType::f32, 2);
  const ValueId o = kb.piece("out", DType::f32, {64, 64});
  const ValueId x = kb.load(kb.partition(t, {64, 64}), {kb.block_id(0), kb.block_id(1)});
  // The transpose relabels registers; the store needs the canonical layout: one conversion
  // through 16 KB of shared memory.
  kb.store_piece(o, kb.permute(x, {1, 0}));
  const auto g = generate(*kb.finish(), sm90());
  EXPECT_EQ(g.smem_bytes, 64u * 64 * 4);
  EXPECT_NE(g.source.find("ct::relayout<"), std::string::npos) << g.source;
}

TEST(Generate, SharedMemoryOverTheLimitIsAUserErrorAtTheOp) {
  KB kb("big", 2);
  kb.loc = SourceLoc("user_kernel.cpp", 77);
  const ValueId t = kb.tensor("in", DType::f64, 2);
  const ValueId o = kb.piece("out", DType::f64, {256, 128});
  const ValueId x = kb.load(kb.partition(t, {128, 256}), {kb.block_id(0), kb.block_id(1)});
  kb.store_piece(o, kb.permute(x, {1, 0}));  // a 256 KB conversion
  try {
    generate(*kb.finish(), sm90());
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(e.where().line, 77u);
    EXPECT_NE(std::string(e.what()).find("262144 bytes of shared memory"), std::string::npos) << e.what();
  }
}

TEST(Generate, TilesTooLargeForRegistersAreAUserError) {
  // 16 warps (512 threads) hold at most 512 elements each.
  EXPECT_THROW(generate(*copy_kernel(DType::f32, {1, 1 << 19}), sm90()), UserError);
  EXPECT_NO_THROW(generate(*copy_kernel(DType::f32, {1, 1 << 16}), sm90()));
}

TEST(Generate, WarpsOptionIsAPowerOfTwoFrom1To32) {
  CodegenOptions o = sm90();
  o.options.warps = 16;
  EXPECT_EQ(generate(*copy_kernel(DType::f32, {1024}), o).threads, 512);
  for (int bad : {3, 64, -2}) {
    o.options.warps = bad;
    try {
      generate(*copy_kernel(DType::f32, {1024}), o);
      ADD_FAILURE() << "no error for warps = " << bad;
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("kernel 'copy': compile option warps = " + std::to_string(bad)), std::string::npos)
          << e.what();
    }
  }
}

// On sm_90 every kernel waits for the grid it depends on before its first global memory access, so
// that graphs may join kernel nodes by programmatic edges (GeneratedKernel::programmatic); sm_80 has
// no griddepcontrol.
TEST(Generate, Sm90KernelsWaitForTheirProgrammaticDependencyFirst) {
  const auto g90 = generate(*copy_kernel(DType::f32, {256}), sm90());
  EXPECT_TRUE(g90.programmatic);
  const std::size_t wait = g90.source.find("ct::grid_dependency_sync();");
  ASSERT_NE(wait, std::string::npos) << g90.source;
  EXPECT_LT(wait, g90.source.find("ct::load<")) << g90.source;
  EXPECT_LT(wait, g90.source.find("for (long long lin")) << g90.source;
  const auto g80 = generate(*copy_kernel(DType::f32, {256}), CodegenOptions{80, {}});
  EXPECT_FALSE(g80.programmatic);
  EXPECT_EQ(g80.source.find("grid_dependency_sync"), std::string::npos) << g80.source;
}

TEST(Generate, OccupancyTargetGoesToLaunchBounds) {
  CodegenOptions o = sm90();
  o.options.min_ctas_per_sm = 2;
  const auto g = generate(*copy_kernel(DType::f32, {256}), o);
  EXPECT_NE(g.source.find("__launch_bounds__(128, 2) ctile_copy("), std::string::npos) << g.source;
  for (int bad : {9, -1}) {
    o.options.min_ctas_per_sm = bad;
    try {
      generate(*copy_kernel(DType::f32, {256}), o);
      ADD_FAILURE() << "no error for min_ctas_per_sm = " << bad;
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("compile option min_ctas_per_sm = " + std::to_string(bad)), std::string::npos)
          << e.what();
    }
  }
}

// out[128 x 128] (f32) = a @ b over a run-time K loop of 128 x 32 and 32 x 128 tiles.
// (bt: B given as Bt [N, K] and transposed in the kernel, K-major like A; n, ks: the tile's N and
// the K loop's step.)
std::shared_ptr<const ir::Kernel> product_kernel(const char* name, DType da, DType db, bool bt = false, std::int64_t n = 128,
                                                 std::int64_t ks = 32) {
  KB kb(name, 2);
  const ValueId a = kb.tensor("a", da, 2), b = kb.tensor("b", db, 2);
  const ValueId o = kb.piece("out", DType::f32, {128, n});
  const ValueId i = kb.block_id(0), j = kb.block_id(1);
  const auto pa = kb.partition(a, {128, ks});
  const auto pb = bt ? kb.partition(b, {n, ks}) : kb.partition(b, {ks, n});
  auto res = kb.for_(kb.i64c(0), kb.count(pa, 1), kb.i64c(1), {kb.fconst(DType::f32, {128, n}, 0.0)},
                     [&](ValueId kk, std::vector<ValueId> cv) {
                       const ValueId tb = bt ? kb.permute(kb.load(pb, {j, kk}), {1, 0}) : kb.load(pb, {kk, j});
                       return std::vector<ValueId>{kb.mma(kb.load(pa, {i, kk}), tb, cv[0])};
                     });
  kb.store_piece(o, res[0]);
  return kb.finish();
}

// The tensor-core path: the mma is marked; on sm_90 the 128 x 128 x 32 product runs on wgmma with
// its operands swizzled in cp.async rings, with sync_mma (and on sm_80) on mma.sync with padded
// rings, and the simt_mma option takes the CUDA-core path instead.
TEST(Generate, BFloat16ProductsRunOnTheTensorCores) {
  const auto k = product_kernel("mm", DType::bf16, DType::bf16);
  const ir::Kernel g = ctile::backend::cuda::lower(*k, sm90());
  int tc = 0;
  ir::walk(g.body, [&](const ir::Op& op) { tc += op.kind == ir::OpKind::Mma && op.tensor_core; });
  EXPECT_EQ(tc, 1);
  EXPECT_EQ(g.target.warps, 8);
  const auto gk90 = generate(*k, sm90());
  EXPECT_TRUE(gk90.notes.empty()) << gk90.notes.front();  // on the fast path: nothing to say
  const auto& src = gk90.source;
  // The K loop's product accumulates into the loop's state in place and stays in flight: it waits
  // for the previous iteration's products, the loop for the last ones.
  EXPECT_NE(src.find("ct::mma_wg_issue<"), std::string::npos) << src;
  EXPECT_NE(src.find("ct::wgmma_wait<1>()"), std::string::npos) << src;
  EXPECT_NE(src.find("ct::wgmma_wait<0>()"), std::string::npos) << src;
  EXPECT_EQ(src.find("ct::mma_tc<"), std::string::npos) << src;
  // The operands, read only by the product, are copied into swizzled rings in shared memory (no
  // staging through registers), fenced for the async proxy, and the product waits for its copies.
  EXPECT_NE(src.find("ct::load_async<"), std::string::npos) << src;
  EXPECT_NE(src.find("ct::Swizzled<128, 32, 64>"), std::string::npos) << src;
  EXPECT_NE(src.find("ct::Swizzled<32, 128, 128>"), std::string::npos) << src;
  EXPECT_NE(src.find("ct::wgmma_smem_fence()"), std::string::npos) << src;
  EXPECT_NE(src.find("ct::align_smem<1024>"), std::string::npos) << src;
  EXPECT_NE(src.find("ct::cp_async_wait<"), std::string::npos) << src;
  EXPECT_EQ(src.find("ct::stage_rows<"), std::string::npos) << src;
  CodegenOptions sync = sm90();
  sync.options.sync_mma = true;
  // Off the fast path, the kernel says where the product runs and why, once (the source's header,
  // CTILE_TIMINGS).
  const auto gsync = generate(*k, sync);
  ASSERT_EQ(gsync.notes.size(), 1u);
  EXPECT_NE(gsync.notes[0].find("on mma.sync, not wgmma (the kernel option sync_mma)"), std::string::npos) << gsync.notes[0];
  EXPECT_NE(gsync.source.find("// note: mma at "), std::string::npos);
  EXPECT_TRUE(generate(*k, CodegenOptions{80, {}}).notes.empty());  // mma.sync is sm_80's fast path
  for (const CodegenOptions& opt : {sync, CodegenOptions{80, {}}}) {
    const auto s1 = generate(*k, opt).source;
    EXPECT_NE(s1.find("ct::mma_tc<"), std::string::npos) << s1;
    EXPECT_EQ(s1.find("ct::mma_wg"), std::string::npos) << s1;
    EXPECT_NE(s1.find("ct::RowPad<32, 8>"), std::string::npos) << s1;
  }
  CodegenOptions simt = sm90();
  simt.options.simt_mma = true;
  const auto s2 = generate(*k, simt).source;
  EXPECT_EQ(s2.find("ct::mma_tc<"), std::string::npos);
  EXPECT_EQ(s2.find("ct::mma_wg"), std::string::npos);
  EXPECT_NE(s2.find("ct::mma<"), std::string::npos);
  EXPECT_NE(generate(*k, simt).notes.at(0).find("on the CUDA cores (the kernel option simt_mma)"), std::string::npos);
  // sm_75 has no m16n8k16 bf16: the CUDA cores.
  const auto g75 = generate(*k, CodegenOptions{75, {}});
  EXPECT_EQ(g75.source.find("ct::mma_tc<"), std::string::npos);
  ASSERT_EQ(g75.notes.size(), 1u);
  EXPECT_NE(g75.notes[0].find("on the CUDA cores (sm_75 has no 16-bit tensor-core mma)"), std::string::npos) << g75.notes[0];
}

// The same product with fp8 operands (e4m3 x e4m3, e4m3 x e5m2) and B N-major declines the tensor
// cores on every target: wgmma takes 8-bit operands K-major only, and sm_80 / sm_89 have no fp8
// path here. It runs on the portable path (ct::mma, operands staged and converted to f32), no
// mma.sync or wgmma, no operand rings in shared memory, with a note saying where it runs and why.
TEST(Generate, Fp8ProductsWithNMajorBDeclineTheTensorCores) {
  for (DType db : {DType::f8e4m3, DType::f8e5m2}) {
    const auto k = product_kernel("mm_fp8", DType::f8e4m3, db);
    for (int sm : {80, 89, 90}) {
      const ir::Kernel g = ctile::backend::cuda::lower(*k, CodegenOptions{sm, {}});
      int tc = 0;
      ir::walk(g.body, [&](const ir::Op& op) { tc += op.kind == ir::OpKind::Mma && op.tensor_core; });
      EXPECT_EQ(tc, 0) << "sm_" << sm;
      const auto gk = generate(*k, CodegenOptions{sm, {}});
      EXPECT_NE(gk.source.find("ct::mma<"), std::string::npos) << gk.source;
      EXPECT_EQ(gk.source.find("ct::mma_tc<"), std::string::npos) << gk.source;
      EXPECT_EQ(gk.source.find("ct::mma_wg"), std::string::npos) << gk.source;
      EXPECT_EQ(gk.source.find("ct::load_async<"), std::string::npos) << gk.source;
      ASSERT_EQ(gk.notes.size(), 1u) << "sm_" << sm;
      const std::string want = sm == 90 ? "on the CUDA cores (fp8 products on wgmma need A [M, K] and B K-major, a transposed [N, K] tile"
                                        : "on the CUDA cores (fp8 products run on the tensor cores through sm_90's wgmma only)";
      EXPECT_NE(gk.notes[0].find(want), std::string::npos) << gk.notes[0];
    }
  }
}

// With B given as Bt [N, K] and transposed in the kernel (torch._scaled_mm's layout), both
// operands are K-major and the fp8 product runs on wgmma (m64nNk32) on sm_90: both tiles copied
// into swizzled rings of 1-byte elements (32-byte rows: K = 32), B read transposed (TB = 0), no
// note. sm_80 / sm_89 still decline (the note), and sync_mma turns wgmma off.
TEST(Generate, Fp8ProductsWithKMajorOperandsRunOnWgmma) {
  for (DType db : {DType::f8e4m3, DType::f8e5m2}) {
    const auto k = product_kernel("mm_fp8_bt", DType::f8e4m3, db, /*bt=*/true);
    const ir::Kernel g = ctile::backend::cuda::lower(*k, sm90());
    int tc = 0;
    ir::walk(g.body, [&](const ir::Op& op) { tc += op.kind == ir::OpKind::Mma && op.tensor_core; });
    EXPECT_EQ(tc, 1);
    const auto gk = generate(*k, sm90());
    EXPECT_TRUE(gk.notes.empty()) << gk.notes.front();
    const auto& src = gk.source;
    EXPECT_NE(src.find("ct::mma_wg_issue<"), std::string::npos) << src;
    EXPECT_NE(src.find(", 32, 0>("), std::string::npos) << src;  // swizzle 32, B K-major (TB = 0)
    EXPECT_NE(src.find("ct::Swizzled<128, 32, 32, 1>"), std::string::npos) << src;
    EXPECT_NE(src.find("ct::load_async<"), std::string::npos) << src;
    EXPECT_EQ(src.find("ct::mma<"), std::string::npos) << src;
    for (int sm : {80, 89}) {
      const auto gs = generate(*k, CodegenOptions{sm, {}});
      EXPECT_NE(gs.source.find("ct::mma<"), std::string::npos) << gs.source;
      ASSERT_EQ(gs.notes.size(), 1u);
      EXPECT_NE(gs.notes[0].find("through sm_90's wgmma only)"), std::string::npos) << gs.notes[0];
    }
    CodegenOptions sync = sm90();
    sync.options.sync_mma = true;
    const auto gsync = generate(*k, sync);
    EXPECT_NE(gsync.source.find("ct::mma<"), std::string::npos);
    ASSERT_EQ(gsync.notes.size(), 1u);
    EXPECT_NE(gsync.notes[0].find("which the kernel option sync_mma turns off)"), std::string::npos) << gsync.notes[0];
  }
}

// With a producer warpgroup, the next tile block's copies wait for this one's end only where the
// epilogue's scratch lies over the rings (target scratch_over_rings): the producer's wait on the
// tile block's barrier, the consumers' arrival and the fence before the copies are there exactly
// then. The 128 x 128 x 64 GEMM's rings move above its scratch (warp-specialize); those of a
// 128 x 256 x 64 one with f32 C cannot (128 KiB of scratch beside 192 KiB of rings).
TEST(Generate, TheProducerWaitsForTheTileBlockOnlyWhenItsScratchLiesOverTheRings) {
  for (std::int64_t n : {128, 256}) {
    auto k = std::make_shared<ir::Kernel>(ir::clone(*product_kernel("mm_ws", DType::bf16, DType::bf16, false, n, 64)));
    k->options.tma = 1;
    k->options.warp_specialize = 1;
    promise_tma_facts(*k, 0, 1u);
    const ir::Kernel g = ctile::backend::cuda::lower(*k, sm90());
    ASSERT_EQ(g.target.producer_warps, 4) << n;
    const bool over = n == 256;
    EXPECT_EQ(g.target.scratch_over_rings, over) << n;
    const std::string src = generate(*k, sm90()).source;
    EXPECT_EQ(src.find("ct::mbar_wait(tfree, free_phase);") != std::string::npos, over) << src;
    EXPECT_EQ(src.find("ct::mbar_arrive(tfree);") != std::string::npos, over) << src;
    EXPECT_EQ(src.find("this tile block's shared stores, before the next one's TMA copies") != std::string::npos, over) << src;
  }
}

// The consumers of a producer kernel take the registers the producer gives back, within the CTA's
// share of the SM. A 128 x 128 GEMM runs 8 consumer warps and 4 producer warps (384 threads): one
// CTA per SM enters with 168 registers a thread and its consumers grow to
// (168 * 384 - 128 * 40) / 256 = 232; with an occupancy target of two CTAs each enters with 80 and
// its consumers grow only to (80 * 384 - 128 * 40) / 256 = 100, 96 in steps of 8 (a setmaxnreg.inc
// past what the CTA holds waits forever).
TEST(Generate, TheConsumersRegistersFitTheCtasShareOfTheSm) {
  for (int min_ctas : {0, 2}) {
    auto k = std::make_shared<ir::Kernel>(ir::clone(*product_kernel("mm_ws", DType::bf16, DType::bf16, false, 128, 64)));
    k->options.tma = 1;
    k->options.warp_specialize = 1;
    k->options.min_ctas_per_sm = min_ctas;
    promise_tma_facts(*k, 0, 1u);
    const std::string src = generate(*k, sm90()).source;
    EXPECT_NE(src.find("ct::setmaxnreg_dec<40>();"), std::string::npos) << src;
    EXPECT_NE(src.find(min_ctas == 2 ? "ct::setmaxnreg_inc<96>();" : "ct::setmaxnreg_inc<232>();"), std::string::npos) << src;
    EXPECT_NE(src.find(min_ctas == 2 ? "__launch_bounds__(384, 2)" : "__launch_bounds__(384, 1)"), std::string::npos) << src;
  }
}

}  // namespace
}  // namespace cuda_codegen_test
