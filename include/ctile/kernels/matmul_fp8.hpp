// ctile kernel library: the FP8 product with per-tensor scales, as torch._scaled_mm computes it:
//
//   C = (A @ B) * scale_a * scale_b
//
// A [M, K] and B given as Bt [N, K] (both K-contiguous: the layout 8-bit tensor-core products
// read), each f8e4m3 or f8e5m2, quantized as x / scale_x; the products summed in f32, the scales
// applied to the f32 sum, C rounded once to bf16, f16 or f32.
//
//   #include <ctile/kernels/matmul_fp8.hpp>
//   auto [c2, a2, bt2, s] = ctile::kernels::matmul_fp8(std::move(c), a8, bt8, scale_a, scale_b).sync();
//   // c2: c partitioned in {block_m, block_n} pieces (.unpartition() gives the tensor back)
//
// The scales are part of the call, not optional: fp8 values are quantized, and a product of them
// without the scales that put it back in the data's range is a wrong result that looks right.
// Neither this entry nor matmul_split_k compiles for fp8 operands without them
// (tests/compile_fail/matmul_fp8_without_scales.cpp, split_k_fp8.cpp).
//
// The kernel is the natural matmul kernel in the tile language (a K loop of `mma` over tile loads,
// B transposed in the kernel): on sm_90a the compiler runs it on wgmma's 8-bit form (m64nNk32),
// with TMA copies and a producer warpgroup (docs/compiler.md, "fp8 on wgmma"); elsewhere on the
// CUDA cores (every fp8 product is exact in f32 there).
#pragma once

#include <cmath>
#include <cstdint>
#include <source_location>
#include <string>

#include "ctile/ctile.hpp"

namespace ctile::kernels {

// K step of the product: 128 one-byte elements, the 128-byte rows of wgmma's widest swizzle.
inline constexpr std::int64_t kFp8BlockK = 128;

template <class TA, class TB, class TC, std::int64_t BK>
void matmul_fp8_kernel(Mut<TC, 2> c, Ref<TA, 2> a, Ref<TB, 2> bt, Scalar<float> scale) {
  const auto [bm, bn] = c.tile_shape();
  auto [i, j] = c.tile_index();
  auto pa = a.tiles({bm, BK});
  auto pb = bt.tiles({bn, BK});
  auto acc = Tile<float>::zeros({bm, bn});
  for (auto k : range(pa.count(1))) {
    auto at = pa.load({i, k});
    auto bk = pb.load({j, k});
    acc = mma(at, transpose(bk), acc);
  }
  c.store((acc * scale).template to<TC>());
}

struct Fp8MatmulOptions {
  std::int64_t block_m = 0;  // rows of a tile of C: 64 or 128; 0: 128
  std::int64_t block_n = 0;  // columns: 64, 128 or 256; 0: 128
};

namespace detail {
template <class T>
inline constexpr bool is_fp8_operand = std::is_same_v<T, f8e4m3> || std::is_same_v<T, f8e5m2>;
}  // namespace detail

// Checks the shapes, scales and options and returns the lazy launch, which gives back (c
// partitioned in {block_m, block_n} pieces, a, bt, the combined scale).
template <class TA, class TB, class TC>
auto matmul_fp8(Tensor<TC> c, Shared<TA> a, Shared<TB> bt, float scale_a, float scale_b, Fp8MatmulOptions opt = {},
                std::source_location loc = std::source_location::current()) {
  static_assert(detail::is_fp8_operand<TA> && detail::is_fp8_operand<TB>,
                "matmul_fp8: a and bt hold f8e4m3 or f8e5m2 (for 16-bit products, write the matmul kernel or use matmul_split_k)");
  static_assert(std::is_same_v<TC, bf16> || std::is_same_v<TC, f16> || std::is_same_v<TC, float>,
                "matmul_fp8: c holds bf16, f16 or float");
  const Shape &as = a.shape(), &bs = bt.shape(), &cs = c.shape();
  auto fail = [&](const std::string& what) {
    throw UserError("matmul_fp8: " + what + " (a " + shape_str(as) + ", bt " + shape_str(bs) + ", c " + shape_str(cs) + ")",
                    SourceLoc(loc));
  };
  if (as.size() != 2 || bs.size() != 2 || cs.size() != 2) fail("a, bt and c must be rank 2, a [M, K], bt [N, K], c [M, N]");
  if (as[1] != bs[1]) fail("a has K = " + std::to_string(as[1]) + ", bt has K = " + std::to_string(bs[1]));
  if (cs[0] != as[0] || cs[1] != bs[0]) fail("c must be [M, N] = [" + std::to_string(as[0]) + ", " + std::to_string(bs[0]) + "]");
  if (!std::isfinite(scale_a) || !std::isfinite(scale_b) || scale_a <= 0 || scale_b <= 0)
    fail("the scales must be finite and positive, got scale_a " + std::to_string(scale_a) + ", scale_b " + std::to_string(scale_b));
  if (opt.block_m != 0 && opt.block_m != 64 && opt.block_m != 128)
    fail("block_m " + std::to_string(opt.block_m) + " is not 64 or 128 (0: the library's choice)");
  if (opt.block_n != 0 && opt.block_n != 64 && opt.block_n != 128 && opt.block_n != 256)
    fail("block_n " + std::to_string(opt.block_n) + " is not 64, 128 or 256 (0: the library's choice)");
  const std::int64_t bm = opt.block_m ? opt.block_m : 128, bn = opt.block_n ? opt.block_n : 128;
  return launch(matmul_fp8_kernel<TA, TB, TC, kFp8BlockK>, std::move(c).partition({bm, bn}), std::move(a), std::move(bt),
                scale_a * scale_b);
}

}  // namespace ctile::kernels
