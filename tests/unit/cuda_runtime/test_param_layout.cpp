// The parameter block the launch path writes (src/platform/kernel.hpp, through the CUDA backend's
// param_layout_of) is byte for byte the code generator's own packing (pack_params), for kernels
// with tensors of several ranks and scalars of every element type, also after the arguments
// change between launches (the block is rewritten only where they changed). No GPU needed.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include <ctile/ctile.hpp>

#include "../../../src/backend/cuda/codegen.hpp"
#include "../../../src/backend/cuda/cuda_backend.hpp"
#include "../../../src/runtime/kernel_cache.hpp"

namespace ct = ctile;
namespace cg = ctile::backend::cuda;

namespace {

void k_mixed(ct::Mut<float, 2> z, ct::Scalar<std::int8_t> a, ct::Ref<ct::bf16, 3> x, ct::Const<int> c, ct::Scalar<double> b,
             ct::Atomic<std::int64_t, 1> acc, ct::Scalar<bool> f, ct::Scalar<ct::f16> h, ct::Scalar<std::uint32_t> u) {
  (void)a, (void)x, (void)c, (void)b, (void)acc, (void)f, (void)h, (void)u;
  z.store(ct::Tile<float>::full({1, 16}, 1.0f));
}

// The platform kernel of a record, for packing without a GPU.
struct LayoutOnly final : ct::platform::NativeKernel {
  ct::platform::ParamLayout l;
  ct::Device device() const override { return ct::cpu(); }
  const ct::platform::ParamLayout& layout() const override { return l; }
  std::int64_t blocks_for(std::int64_t n) const override { return n; }
};

template <class... A>
void check_packing(const std::vector<ct::detail::ParamSpec>& specs, const ct::ir::Kernel& k, ct::detail::PackedBlock& pb,
                   const ct::detail::LaunchRecord& rec, A&&... args) {
  ct::detail::LaunchArgs la;
  const auto t = std::forward_as_tuple(args...);
  ct::detail::collect_arguments<ct::Mut<float, 2>, ct::Scalar<std::int8_t>, ct::Ref<ct::bf16, 3>, ct::Const<int>,
                                ct::Scalar<double>, ct::Atomic<std::int64_t, 1>, ct::Scalar<bool>, ct::Scalar<ct::f16>,
                                ct::Scalar<std::uint32_t>>(la, "k_mixed", t);
  const std::int64_t grid[2] = {ct::ceil_div(std::get<0>(t).shape()[0], 1), ct::ceil_div(std::get<0>(t).shape()[1], 16)};
  pb.pack(rec, la, grid, 2);
  // The code generator's packing of the same arguments.
  std::vector<ct::backend::ArgValue> av;
  for (const auto& a : la) {
    if (a.kind == ct::detail::ParamSpec::Kind::Const) continue;
    ct::backend::ArgValue v;
    if (a.core) v.tensor = a.core->arg();
    else v.scalar = a.scalar;
    av.push_back(v);
  }
  ct::backend::LaunchConfig cfg;
  cfg.grid = {grid[0], grid[1]};
  const std::vector<std::byte> want = cg::pack_params(k, cfg, av);
  ASSERT_EQ(want.size(), rec.native->layout().bytes);
  EXPECT_EQ(0, std::memcmp(want.data(), pb.block.get(), want.size())) << "the parameter blocks differ";
  (void)specs;
}

TEST(ParamLayout, TheLaunchPathPacksLikeTheCodeGenerator) {
  auto z = ct::zeros<float>({4, 48}, ct::cpu()).partition({1, 16});
  auto x = ct::zeros<ct::bf16>({2, 3, 5}, ct::cpu()).share();
  auto acc = ct::zeros<std::int64_t>({7}, ct::cpu());
  ct::detail::LaunchPlan plan;
  ct::detail::plan_argument<ct::Mut<float, 2>>(plan, "k_mixed", 0, z);
  ct::detail::plan_argument<ct::Scalar<std::int8_t>>(plan, "k_mixed", 1, std::int8_t{-3});
  ct::detail::plan_argument<ct::Ref<ct::bf16, 3>>(plan, "k_mixed", 2, x);
  ct::detail::plan_argument<ct::Const<int>>(plan, "k_mixed", 3, 5);
  ct::detail::plan_argument<ct::Scalar<double>>(plan, "k_mixed", 4, 2.5);
  ct::detail::plan_argument<ct::Atomic<std::int64_t, 1>>(plan, "k_mixed", 5, acc);
  ct::detail::plan_argument<ct::Scalar<bool>>(plan, "k_mixed", 6, true);
  ct::detail::plan_argument<ct::Scalar<ct::f16>>(plan, "k_mixed", 7, ct::f16(1.5f));
  ct::detail::plan_argument<ct::Scalar<std::uint32_t>>(plan, "k_mixed", 8, 4000000000u);
  auto k = ct::trace(&k_mixed, "k_mixed", plan.specs, 2);
  LayoutOnly nk;
  nk.l = cg::param_layout_of(*k, cg::GeneratedKernel{});
  ASSERT_EQ(nk.l.slots.size(), k->params.size());
  ct::detail::LaunchRecord rec;
  rec.native = &nk;
  rec.specs = plan.specs;
  rec.arg_slot.assign(plan.specs.size(), -1);
  for (std::size_t i = 0; i < k->params.size(); ++i) rec.arg_slot[static_cast<std::size_t>(k->params[i].arg_index)] = static_cast<int>(i);
  ct::detail::PackedBlock pb;
  pb.reset(rec);
  check_packing(plan.specs, *k, pb, rec, z, std::int8_t{-3}, x, 5, 2.5, acc, true, ct::f16(1.5f), 4000000000u);
  // New views and values: the block follows (tensors by view id, scalars always).
  auto z2 = ct::zeros<float>({8, 48}, ct::cpu()).partition({1, 16});
  auto x2 = ct::zeros<ct::bf16>({2, 3, 9}, ct::cpu()).share();
  check_packing(plan.specs, *k, pb, rec, z2, std::int8_t{100}, x2, 5, -1e300, acc, false, ct::f16(-0.25f), 7u);
  check_packing(plan.specs, *k, pb, rec, z, std::int8_t{-128}, x2, 5, 0.0, acc, true, ct::f16(65504.0f), 0u);
  // A deliberately stale block (the previous arguments' pointer) is caught by the comparison.
  ct::detail::PackedBlock stale;
  stale.reset(rec);
  check_packing(plan.specs, *k, stale, rec, z, std::int8_t{1}, x, 5, 1.0, acc, true, ct::f16(1.0f), 1u);
  std::memset(stale.block.get() + nk.l.slots[0].offset, 0xab, 8);  // corrupt z's data pointer, keep its view id
  EXPECT_NONFATAL_FAILURE(check_packing(plan.specs, *k, stale, rec, z, std::int8_t{1}, x, 5, 1.0, acc, true, ct::f16(1.0f), 1u),
                          "the parameter blocks differ");
}

}  // namespace

// ---- TMA tensor maps: what the platform hands cuTensorMapEncodeTiled (no driver needed) ----------
namespace {

ct::platform::TensorMapSlot map_slot(std::uint32_t rank, std::uint32_t rows, std::uint32_t cols) {
  ct::platform::TensorMapSlot m;
  m.dtype = ct::DType::bf16;
  m.rank = rank;
  m.box_rows = rows;
  m.box_cols = cols;
  m.swizzle = 128;
  return m;
}
alignas(16) unsigned char g_data[64];

}  // namespace

TEST(TensorMapEncoding, Rank2RowMajor) {
  const std::int64_t shape[] = {4096, 1000}, strides[] = {1024, 1};
  const auto e = ct::platform::tensor_map_encoding(map_slot(2, 128, 64), g_data, shape, strides, 2);
  ASSERT_EQ(e.error, "");
  EXPECT_EQ(e.rank, 2u);
  EXPECT_EQ(e.data_type, 9u);  // bf16
  EXPECT_EQ(e.swizzle, 3u);    // 128 bytes
  EXPECT_EQ(e.dims[0], 1000u);
  EXPECT_EQ(e.dims[1], 4096u);
  EXPECT_EQ(e.strides_bytes[0], 2048u);
  EXPECT_EQ(e.box[0], 64u);
  EXPECT_EQ(e.box[1], 128u);
}

// fp8 tiles (wgmma's 8-bit operands) copy their bytes as UINT8: 128 elements a 128-byte box row.
TEST(TensorMapEncoding, Fp8AsBytes) {
  for (ct::DType d : {ct::DType::f8e4m3, ct::DType::f8e5m2}) {
    ct::platform::TensorMapSlot m = map_slot(2, 128, 128);
    m.dtype = d;
    const std::int64_t shape[] = {256, 4096}, strides[] = {4096, 1};
    const auto e = ct::platform::tensor_map_encoding(m, g_data, shape, strides, 2);
    ASSERT_EQ(e.error, "");
    EXPECT_EQ(e.data_type, 0u);  // CU_TENSOR_MAP_DATA_TYPE_UINT8
    EXPECT_EQ(e.strides_bytes[0], 4096u);
    EXPECT_EQ(e.box[0], 128u);
    // Rows of 8 bytes are not 16-byte aligned.
    const std::int64_t narrow[] = {256, 8}, nstrides[] = {8, 1};
    EXPECT_NE(ct::platform::tensor_map_encoding(m, g_data, narrow, nstrides, 2).error, "");
  }
  // A 4-byte type has no TMA copies here.
  ct::platform::TensorMapSlot f = map_slot(2, 128, 32);
  f.dtype = ct::DType::f32;
  const std::int64_t shape[] = {256, 4096}, strides[] = {4096, 1};
  EXPECT_NE(ct::platform::tensor_map_encoding(f, g_data, shape, strides, 2).error.find("f32 elements are not supported"),
            std::string::npos);
}

TEST(TensorMapEncoding, Rank4BlocksOfAttention) {
  // q of [B, H, S, D] = [2, 32, 4096, 128], boxes of [1, 1, 64, 64]: dims innermost first.
  const std::int64_t shape[] = {2, 32, 4096, 128}, strides[] = {32 * 4096 * 128, 4096 * 128, 128, 1};
  const auto e = ct::platform::tensor_map_encoding(map_slot(4, 64, 64), g_data, shape, strides, 4);
  ASSERT_EQ(e.error, "");
  EXPECT_EQ(e.rank, 4u);
  const std::uint64_t dims[] = {128, 4096, 32, 2}, st[] = {256, 4096 * 256, 32ull * 4096 * 256};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(e.dims[i], dims[i]) << i;
  for (int i = 0; i < 3; ++i) EXPECT_EQ(e.strides_bytes[i], st[i]) << i;
  const unsigned box[] = {64, 64, 1, 1};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(e.box[i], box[i]) << i;
  // A head of its own (H = 1) is never stepped along: its stride is the span inside it.
  const std::int64_t one[] = {2, 1, 100, 128}, one_st[] = {7 * 100 * 128, 999, 128, 1};
  const auto o = ct::platform::tensor_map_encoding(map_slot(4, 64, 64), g_data, one, one_st, 4);
  ASSERT_EQ(o.error, "");
  EXPECT_EQ(o.strides_bytes[1], 100u * 256);
  EXPECT_EQ(o.strides_bytes[2], 7u * 100 * 256);
}

TEST(TensorMapEncoding, ViewsAMapCannotDescribeAreErrorsThatNameTheFix) {
  const auto m4 = map_slot(4, 64, 64);
  // Rows not a multiple of 16 bytes (a padded view by 3 elements).
  const std::int64_t shape[] = {2, 4, 64, 128}, bad_rows[] = {4 * 64 * 131, 64 * 131, 131, 1};
  auto e = ct::platform::tensor_map_encoding(m4, g_data, shape, bad_rows, 4);
  EXPECT_NE(e.error.find("16-byte aligned rows"), std::string::npos) << e.error;
  EXPECT_NE(e.error.find("tma = -1"), std::string::npos) << e.error;
  // Columns not contiguous.
  const std::int64_t strided[] = {4 * 64 * 256, 64 * 256, 256, 2};
  e = ct::platform::tensor_map_encoding(m4, g_data, shape, strided, 4);
  EXPECT_NE(e.error.find("row-major"), std::string::npos) << e.error;
  // A misaligned base.
  const std::int64_t ok_strides[] = {4 * 64 * 128, 64 * 128, 128, 1};
  e = ct::platform::tensor_map_encoding(m4, g_data + 2, shape, ok_strides, 4);
  EXPECT_NE(e.error.find("16-byte aligned"), std::string::npos) << e.error;
  // Another rank than the kernel was compiled for.
  e = ct::platform::tensor_map_encoding(map_slot(2, 64, 64), g_data, shape, ok_strides, 4);
  EXPECT_NE(e.error.find("rank 2, this one has rank 4"), std::string::npos) << e.error;
  // An extent above 2^30.
  const std::int64_t huge[] = {2, 4, std::int64_t{1} << 31, 128};
  e = ct::platform::tensor_map_encoding(m4, g_data, huge, ok_strides, 4);
  EXPECT_NE(e.error.find("above 2^30"), std::string::npos) << e.error;
  // No elements: never read, nothing to encode, no error.
  const std::int64_t none[] = {2, 0, 64, 128};
  e = ct::platform::tensor_map_encoding(m4, g_data, none, ok_strides, 4);
  EXPECT_EQ(e.error, "");
  EXPECT_TRUE(e.empty);
}
