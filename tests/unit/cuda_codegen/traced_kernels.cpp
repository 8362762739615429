// The shared test kernels (tests/kernels/test_kernels.hpp), traced with the specs the code
// generator's tests use.
#include <algorithm>
#include <cmath>

#include <ctile/ctile.hpp>
#include <ctile/kernels/attention.hpp>
#include <ctile/kernels/attention_decode.hpp>
#include <ctile/kernels/gemv.hpp>
#include <ctile/kernels/matmul_split_k.hpp>

#include "../../../bench/kernels.hpp"  // the benchmark's fused-epilogue GEMM, tested as it is measured
#include "cases.hpp"
#include "test_kernels.hpp"

namespace ct = ctile;

namespace cuda_codegen_test {
namespace {

using namespace test_kernels;  // NOLINT(google-build-using-namespace)

using Kind = ct::detail::ParamSpec::Kind;
ct::detail::ParamSpec piece(ct::DType d, ct::Shape tile) { return {Kind::Piece, d, static_cast<int>(tile.size()), tile, {}}; }
ct::detail::ParamSpec ref(ct::DType d, int rank) { return {Kind::Read, d, rank, {}, {}}; }
ct::detail::ParamSpec atomic(ct::DType d, int rank) { return {Kind::Atomic, d, rank, {}, {}}; }
ct::detail::ParamSpec unchecked(ct::DType d, int rank) { return {Kind::Unchecked, d, rank, {}, {}}; }
ct::detail::ParamSpec scalar(ct::DType d) { return {Kind::Scalar, d, 0, {}, {}}; }
ct::detail::ParamSpec constant_i(ct::DType d, std::int64_t v) { return {Kind::Const, d, 0, {}, ct::ir::Scalar::of_int(v)}; }

}  // namespace

void add_traced_cases(std::vector<Case>& out) {
  using D = ct::DType;
  auto add = [&](std::string name, std::function<std::shared_ptr<const ir::Kernel>()> make) {
    out.push_back({std::move(name), std::move(make)});
  };
  // examples
  add("example_hello", [] { return ct::trace(hello, "hello", {piece(D::i64, {1, 1})}, 2); });
  add("example_matmul", [] {
    return ct::trace(matmul<32>, "matmul<32>", {piece(D::f32, {64, 64}), ref(D::bf16, 2), ref(D::bf16, 2)}, 2);
  });
  add("example_reduce_sum", [] { return ct::trace(reduce_sum, "reduce_sum", {atomic(D::f64, 1), ref(D::f64, 1)}, 1); });
  add("example_rms_norm", [] {
    return ct::trace(rms_norm, "rms_norm", {piece(D::bf16, {1, 4096}), ref(D::bf16, 2), ref(D::bf16, 1), scalar(D::f32)}, 2);
  });
  add("example_saxpy", [] { return ct::trace(saxpy, "saxpy", {piece(D::bf16, {2048}), scalar(D::f32), ref(D::bf16, 1)}, 1); });
  add("example_softmax", [] { return ct::trace(softmax, "softmax", {piece(D::f32, {1, 1024}), ref(D::f32, 2)}, 2); });
  add("example_unsafe_scatter", [] {
    return ct::trace(scatter, "scatter", {unchecked(D::f32, 1), ref(D::i64, 1), ref(D::f32, 1)}, 1);
  });
  for (auto [name, fn] : {std::pair{"scatter_iota", &scatter_iota}, std::pair{"scatter_reversed", &scatter_reversed},
                           std::pair{"scatter_pairs", &scatter_pairs}})
    add(name, [name = std::string(name), fn = fn] {
      return ct::trace(fn, name, {unchecked(D::f32, 1), ref(D::f32, 1)}, 1);
    });
  add("scatter_block_2d", [] {  // a scatter of consecutive positions: a window store of the tensor after canonicalize
    return ct::trace(scatter_block_2d<32, 64>, "scatter_block_2d<32, 64>", {unchecked(D::f32, 2), ref(D::f32, 2), scalar(D::i64)}, 2);
  });
  add("example_vector_add", [] {
    return ct::trace(vector_add, "vector_add", {piece(D::f32, {1024}), ref(D::f32, 1), ref(D::f32, 1)}, 1);
  });
  // correctness
  add("axpby_f32", [] { return ct::trace(axpby<float>, "axpby<float>", {piece(D::f32, {512}), ref(D::f32, 1), ref(D::f32, 1)}, 1); });
  add("axpby_f64", [] { return ct::trace(axpby<double>, "axpby<double>", {piece(D::f64, {512}), ref(D::f64, 1), ref(D::f64, 1)}, 1); });
  add("axpby_f16", [] { return ct::trace(axpby<ct::f16>, "axpby<f16>", {piece(D::f16, {512}), ref(D::f16, 1), ref(D::f16, 1)}, 1); });
  add("axpby_bf16", [] {
    return ct::trace(axpby<ct::bf16>, "axpby<bf16>", {piece(D::bf16, {512}), ref(D::bf16, 1), ref(D::bf16, 1)}, 1);
  });
  add("int_ops", [] { return ct::trace(int_ops, "int_ops", {piece(D::i32, {256}), ref(D::i32, 1), ref(D::i32, 1)}, 1); });
  add("convert", [] { return ct::trace(convert_k, "convert_k", {piece(D::bf16, {1024}), piece(D::i8, {1024}), ref(D::f32, 1)}, 1); });
  add("reduce_rows", [] {
    return ct::trace(reduce_rows, "reduce_rows",
                     {piece(D::f32, {8, 1}), piece(D::i64, {8, 1}), piece(D::f32, {8, 64}), ref(D::f32, 2)}, 2);
  });
  add("row_stats_mixed_rank", [] {
    return ct::trace(row_stats, "row_stats", {piece(D::f32, {8}), piece(D::f32, {8}), piece(D::f32, {8, 64}), ref(D::f32, 2)}, 2);
  });
  // reductions and scans over a combine function
  add("combine_reduce_f32_rows", [] {
    return ct::trace(combine_reduce<float, 8, 64, 1>, "combine_reduce<float, 8, 64, 1>",
                     {piece(D::f32, {8, 1}), piece(D::f32, {8, 1}), piece(D::f32, {8, 1}), ref(D::f32, 2)}, 2);
  });
  add("combine_reduce_f32_cols_warps", [] {  // 2048 elements: the axis crosses warps
    return ct::trace(combine_reduce<float, 128, 16, 0>, "combine_reduce<float, 128, 16, 0>",
                     {piece(D::f32, {1, 16}), piece(D::f32, {1, 16}), piece(D::f32, {1, 16}), ref(D::f32, 2)}, 2);
  });
  add("combine_reduce_i32_cols", [] {
    return ct::trace(combine_reduce<std::int32_t, 16, 32, 0>, "combine_reduce<i32, 16, 32, 0>",
                     {piece(D::i32, {1, 32}), piece(D::i32, {1, 32}), piece(D::i32, {1, 32}), ref(D::i32, 2)}, 2);
  });
  add("combine_reduce_i32_rows", [] {
    return ct::trace(combine_reduce<std::int32_t, 4, 256, 1>, "combine_reduce<i32, 4, 256, 1>",
                     {piece(D::i32, {4, 1}), piece(D::i32, {4, 1}), piece(D::i32, {4, 1}), ref(D::i32, 2)}, 2);
  });
  add("combine_argmax_f32", [] {
    return ct::trace(combine_argmax<float, 8, 32>, "combine_argmax<float, 8, 32>",
                     {piece(D::f32, {8, 1}), piece(D::i64, {8, 1}), piece(D::i64, {8, 1}), ref(D::f32, 2)}, 2);
  });
  add("combine_argmax_i32", [] {
    return ct::trace(combine_argmax<std::int32_t, 16, 128>, "combine_argmax<i32, 16, 128>",
                     {piece(D::i32, {16, 1}), piece(D::i64, {16, 1}), piece(D::i64, {16, 1}), ref(D::i32, 2)}, 2);
  });
  add("combine_scan_f32_rows", [] {
    return ct::trace(combine_scan<float, 8, 32, 1>, "combine_scan<float, 8, 32, 1>",
                     {piece(D::f32, {8, 32}), piece(D::f32, {8, 32}), piece(D::f32, {8, 32}), piece(D::i32, {8, 32}),
                      ref(D::f32, 2)},
                     2);
  });
  add("combine_scan_i32_cols", [] {
    return ct::trace(combine_scan<std::int32_t, 32, 8, 0>, "combine_scan<i32, 32, 8, 0>",
                     {piece(D::i32, {32, 8}), piece(D::i32, {32, 8}), piece(D::i32, {32, 8}), piece(D::i32, {32, 8}),
                      ref(D::i32, 2)},
                     2);
  });
  add("combine_extremes_f32", [] {
    return ct::trace(combine_extremes<float, 1024>, "combine_extremes<float, 1024>",
                     {piece(D::f32, {1}), piece(D::f32, {1}), ref(D::f32, 1)}, 1);
  });
  add("combine_extremes_i32", [] {
    return ct::trace(combine_extremes<std::int32_t, 256>, "combine_extremes<i32, 256>",
                     {piece(D::i32, {1}), piece(D::i32, {1}), ref(D::i32, 1)}, 1);
  });
  add("combine_extremes_f16", [] {
    return ct::trace(combine_extremes<ct::f16, 512>, "combine_extremes<f16, 512>",
                     {piece(D::f16, {1}), piece(D::f16, {1}), ref(D::f16, 1)}, 1);
  });
  add("stencil3_f32", [] { return ct::trace(stencil3<float>, "stencil3<float>", {piece(D::f32, {256}), ref(D::f32, 1)}, 1); });
  add("stencil3_bf16", [] { return ct::trace(stencil3<ct::bf16>, "stencil3<bf16>", {piece(D::bf16, {1024}), ref(D::bf16, 1)}, 1); });
  add("shifted_difference_f32_4", [] {
    return ct::trace(shifted_difference<float, 4>, "shifted_difference<float, 4>", {piece(D::f32, {512}), ref(D::f32, 1)}, 1);
  });
  add("shifted_difference_bf16_24", [] {
    return ct::trace(shifted_difference<ct::bf16, 24>, "shifted_difference<bf16, 24>", {piece(D::bf16, {256}), ref(D::bf16, 1)}, 1);
  });
  add("window_at_offsets", [] {
    return ct::trace(window_at_offsets, "window_at_offsets", {piece(D::f32, {64}), ref(D::f32, 1), scalar(D::i64), scalar(D::i64)}, 1);
  });
  add("window_one_element", [] {
    return ct::trace(window_one_element, "window_one_element", {piece(D::f32, {16}), ref(D::f32, 1), scalar(D::i64)}, 1);
  });
  add("window_parts", [] { return ct::trace(window_parts, "window_parts", {piece(D::f32, {8, 32}), ref(D::f32, 2)}, 2); });
  add("bmm_bf16_f32", [] {
    return ct::trace(bmm<ct::bf16, float, 16>, "bmm<bf16,f32>", {piece(D::f32, {2, 32, 16}), ref(D::bf16, 3), ref(D::bf16, 3)}, 3);
  });
  add("bmm_f32_f32", [] {
    return ct::trace(bmm<float, float, 8>, "bmm<f32,f32>", {piece(D::f32, {4, 16, 16}), ref(D::f32, 3), ref(D::f32, 3)}, 3);
  });
  add("mm_f16_f32", [] { return ct::trace(mm<ct::f16, float, 16>, "mm<f16,f32>", {piece(D::f32, {32, 16}), ref(D::f16, 2), ref(D::f16, 2)}, 2); });
  add("mm_bf16_f32", [] { return ct::trace(mm<ct::bf16, float, 16>, "mm<bf16,f32>", {piece(D::f32, {32, 16}), ref(D::bf16, 2), ref(D::bf16, 2)}, 2); });
  add("mm_f32_f32", [] { return ct::trace(mm<float, float, 16>, "mm<f32,f32>", {piece(D::f32, {32, 16}), ref(D::f32, 2), ref(D::f32, 2)}, 2); });
  add("mm_f64_f64", [] { return ct::trace(mm<double, double, 16>, "mm<f64,f64>", {piece(D::f64, {32, 16}), ref(D::f64, 2), ref(D::f64, 2)}, 2); });
  add("gather_rows", [] {
    return ct::trace(gather_rows, "gather_rows", {piece(D::f32, {4, 8}), ref(D::f32, 2), ref(D::i32, 1)}, 2);
  });
  add("column_masks", [] {
    return ct::trace(column_masks, "column_masks", {piece(D::f32, {2, 64}), ref(D::f32, 2), scalar(D::i64)}, 2);
  });
  // The same with x's extents promised multiples of 16 (its facts): narrow-index floors the iotas
  // of the lt / ge masks against the extent (f32 vectors of 4: the floor spans lanes too).
  add("column_masks_div16", [] {
    auto k = std::make_shared<ir::Kernel>(
        ir::clone(*ct::trace(column_masks, "column_masks", {piece(D::f32, {2, 64}), ref(D::f32, 2), scalar(D::i64)}, 2)));
    k->params[1].facts.extent_div16 = 3u;
    k->params[1].facts.extent_div8 = 3u;
    return std::shared_ptr<const ir::Kernel>(k);
  });
  add("reverse_piece", [] { return ct::trace(reverse_piece, "reverse_piece", {piece(D::f32, {32}), ref(D::f32, 1)}, 1); });
  add("histogram", [] { return ct::trace(histogram, "histogram", {atomic(D::i64, 1), ref(D::i32, 1)}, 1); });
  add("collatz", [] { return ct::trace(collatz, "collatz", {piece(D::i64, {1}), ref(D::i64, 1)}, 1); });
  add("copy6", [] { return ct::trace(copy6, "copy6", {piece(D::f32, {2, 2, 4, 1, 2, 4}), ref(D::f32, 6)}, 6); });
  add("scale_by_3", [] { return ct::trace(scale_by, "scale_by", {piece(D::f32, {64}), ref(D::f32, 1), constant_i(D::i32, 3)}, 1); });
  add("pick_tile", [] { return ct::trace(pick_tile, "pick_tile", {piece(D::f32, {16}), ref(D::f32, 1), scalar(D::i64)}, 1); });
  add("async_add_scalar", [] { return ct::trace(add_scalar, "add_scalar", {piece(D::f32, {64}), scalar(D::f32)}, 1); });
  add("async_times2", [] { return ct::trace(times2, "times2", {piece(D::f32, {128}), ref(D::f32, 1)}, 1); });
  add("async_fill", [] { return ct::trace(fill, "fill", {piece(D::f32, {64}), scalar(D::f32)}, 1); });
  // golden
  add("golden_aliasing", [] { return ct::trace(aliasing, "aliasing", {piece(D::f32, {8}), scalar(D::i64)}, 1); });
  add("golden_branches", [] { return ct::trace(branches, "branches", {piece(D::i32, {16}), scalar(D::i32)}, 1); });
  add("golden_shapes", [] { return ct::trace(shapes, "shapes", {piece(D::f32, {4, 2}), ref(D::f32, 1)}, 2); });
  add("golden_memory", [] {
    return ct::trace(memory, "memory", {piece(D::f32, {16}), ref(D::f32, 2), ref(D::i32, 1), atomic(D::f32, 1)}, 1);
  });
  // larger shapes
  add("softmax_bf16_16k", [] { return ct::trace(softmax_bf16, "softmax_bf16", {piece(D::bf16, {1, 16384}), ref(D::bf16, 2)}, 2); });
  // The kernel option fast_math (approximate exp and division), on rows that take one warp and
  // rows spread over several.
  for (std::int64_t w : {1024, 8192}) {
    add("softmax_fast_" + std::to_string(w), [w] {
      auto k = std::make_shared<ir::Kernel>(ir::clone(*ct::trace(softmax_bf16, "softmax_fast", {piece(D::bf16, {1, w}), ref(D::bf16, 2)}, 2)));
      k->options.fast_math = true;
      return std::shared_ptr<const ir::Kernel>(k);
    });
  }
  add("approx_math", [] {
    return ct::trace(approx_math, "approx_math", {piece(D::f32, {4, 256}), ref(D::f32, 2)}, 2);
  });
  add("layer_norm_bf16_4k", [] {
    return ct::trace(layer_norm, "layer_norm",
                     {piece(D::bf16, {1, 4096}), ref(D::bf16, 2), ref(D::bf16, 1), ref(D::bf16, 1), scalar(D::f32)}, 2);
  });
  // LayerNorm with the row's extent promised a multiple of 16: its masks compare one index per
  // vector of 8 bf16 (narrow-index's floor), the rows of the second column block half masked.
  // `stages` 2: on a resident grid (below).
  auto layer_norm_div16 = [](int stages) {
    auto k = std::make_shared<ir::Kernel>(ir::clone(*ct::trace(
        layer_norm, "layer_norm", {piece(D::bf16, {1, 4096}), ref(D::bf16, 2), ref(D::bf16, 1), ref(D::bf16, 1), scalar(D::f32)}, 2)));
    for (std::size_t i = 1; i <= 3; ++i) {
      k->params[i].facts.extent_div16 = i == 1 ? 3u : 1u;
      k->params[i].facts.extent_div8 = k->params[i].facts.extent_div16;
    }
    k->options.stages = stages;
    return std::shared_ptr<const ir::Kernel>(k);
  };
  add("layer_norm_bf16_4k_div16", [=] { return layer_norm_div16(0); });
  // The option stages = 2 on row kernels: a resident grid whose CTAs load their next row while
  // computing this one (block-prefetch), with and without masked columns. Tiles of 4 warps or
  // more (one tile block a CTA): the emulation runs 3 CTAs over the grid's 4 tile blocks, so the
  // first CTA's second tile block comes prefetched (a prefetch of the wrong block fails these).
  add("layer_norm_bf16_prefetch", [=] { return layer_norm_div16(2); });
  add("example_rms_norm_prefetch", [] {
    auto k = std::make_shared<ir::Kernel>(ir::clone(
        *ct::trace(rms_norm, "rms_norm", {piece(D::bf16, {1, 4096}), ref(D::bf16, 2), ref(D::bf16, 1), scalar(D::f32)}, 2)));
    k->options.stages = 2;
    return std::shared_ptr<const ir::Kernel>(k);
  });
  add("example_softmax_prefetch", [] {
    auto k = std::make_shared<ir::Kernel>(ir::clone(*ct::trace(softmax, "softmax", {piece(D::f32, {1, 8192}), ref(D::f32, 2)}, 2)));
    k->options.stages = 2;
    return std::shared_ptr<const ir::Kernel>(k);
  });
  add("math_fns_f32", [] {
    return ct::trace(math_fns<float>, "math_fns<f32>",
                     {piece(D::f32, {256}), piece(D::f32, {256}), piece(D::f32, {256}), piece(D::f32, {256}),
                      piece(D::f32, {256}), piece(D::f32, {256}), ref(D::f32, 1), ref(D::f32, 1)}, 1);
  });
  add("math_fns_f64", [] {
    return ct::trace(math_fns<double>, "math_fns<f64>",
                     {piece(D::f64, {128}), piece(D::f64, {128}), piece(D::f64, {128}), piece(D::f64, {128}),
                      piece(D::f64, {128}), piece(D::f64, {128}), ref(D::f64, 1), ref(D::f64, 1)}, 1);
  });
  add("math_fns_bf16", [] {
    return ct::trace(math_fns<ct::bf16>, "math_fns<bf16>",
                     {piece(D::bf16, {512}), piece(D::bf16, {512}), piece(D::bf16, {512}), piece(D::bf16, {512}),
                      piece(D::bf16, {512}), piece(D::bf16, {512}), ref(D::bf16, 1), ref(D::bf16, 1)}, 1);
  });
  add("bit_ops", [] {
    return ct::trace(bit_ops, "bit_ops",
                     {piece(D::i32, {256}), piece(D::u8, {256}), piece(D::i64, {256}), piece(D::f32, {256}), ref(D::i32, 1),
                      ref(D::f32, 1)}, 1);
  });
  add("bool_reduce", [] {
    return ct::trace(bool_reduce, "bool_reduce",
                     {piece(D::b1, {8, 1}), piece(D::b1, {1, 32}), piece(D::b1, {8, 32}), ref(D::i32, 2)}, 2);
  });
  for (auto [dname, d] : {std::pair{"f32", D::f32}, std::pair{"i32", D::i32}, std::pair{"bf16", D::bf16}}) {
    add(std::string("scans_") + dname, [d = d, dname = std::string(dname)] {
      auto fn = d == D::f32 ? &scans<float> : nullptr;
      const std::vector<ct::detail::ParamSpec> specs{piece(d, {4, 64}), piece(d, {4, 64}), piece(d, {4, 64}), piece(d, {4, 64}), ref(d, 2)};
      if (d == D::i32) return ct::trace(scans<std::int32_t>, "scans<" + dname + ">", specs, 2);
      if (d == D::bf16) return ct::trace(scans<ct::bf16>, "scans<" + dname + ">", specs, 2);
      return ct::trace(fn, "scans<" + dname + ">", specs, 2);
    });
  }
  add("random_tiles", [] {
    return ct::trace(random_tiles, "random_tiles",
                     {piece(D::f32, {8, 64}), piece(D::f32, {8, 64}), piece(D::u32, {8, 64}), piece(D::f32, {8, 64}),
                      ref(D::f32, 2), scalar(D::i64)}, 2);
  });
  add("half_atomics", [] {
    return ct::trace(half_atomics, "half_atomics", {atomic(D::bf16, 1), atomic(D::f16, 1), ref(D::bf16, 1), ref(D::f16, 1)}, 1);
  });
  // OCP FP8 (f8e4m3, f8e5m2): conversions (in pairs where the target has the instructions),
  // arithmetic in f32 rounded once, sums and scans, shuffles, byte atomics, and products with fp8
  // operands (e4m3 and e5m2 mixed too) on the CUDA cores.
  add("convert_fp8", [] {
    return ct::trace(convert_fp8, "convert_fp8",
                     {piece(D::f8e4m3, {512}), piece(D::f8e5m2, {512}), piece(D::f32, {512}), piece(D::f8e4m3, {512}),
                      piece(D::b1, {512}), piece(D::i32, {512}), ref(D::f32, 1), ref(D::f8e5m2, 1)}, 1);
  });
  add("axpby_f8e4m3", [] {
    return ct::trace(axpby<ct::f8e4m3>, "axpby<f8e4m3>", {piece(D::f8e4m3, {512}), ref(D::f8e4m3, 1), ref(D::f8e4m3, 1)}, 1);
  });
  add("axpby_f8e5m2", [] {
    return ct::trace(axpby<ct::f8e5m2>, "axpby<f8e5m2>", {piece(D::f8e5m2, {512}), ref(D::f8e5m2, 1), ref(D::f8e5m2, 1)}, 1);
  });
  add("stencil3_f8e4m3", [] {
    return ct::trace(stencil3<ct::f8e4m3>, "stencil3<f8e4m3>", {piece(D::f8e4m3, {1024}), ref(D::f8e4m3, 1)}, 1);
  });
  add("math_fns_f8e5m2", [] {
    return ct::trace(math_fns<ct::f8e5m2>, "math_fns<f8e5m2>",
                     {piece(D::f8e5m2, {512}), piece(D::f8e5m2, {512}), piece(D::f8e5m2, {512}), piece(D::f8e5m2, {512}),
                      piece(D::f8e5m2, {512}), piece(D::f8e5m2, {512}), ref(D::f8e5m2, 1), ref(D::f8e5m2, 1)}, 1);
  });
  add("scans_f8e4m3", [] {
    const std::vector<ct::detail::ParamSpec> specs{piece(D::f8e4m3, {4, 64}), piece(D::f8e4m3, {4, 64}), piece(D::f8e4m3, {4, 64}),
                                                   piece(D::f8e4m3, {4, 64}), ref(D::f8e4m3, 2)};
    return ct::trace(scans<ct::f8e4m3>, "scans<f8e4m3>", specs, 2);
  });
  for (auto [dname, d] : {std::pair{"f8e4m3", D::f8e4m3}, std::pair{"f8e5m2", D::f8e5m2}})
    add(std::string("row_reductions_") + dname, [d = d, dname = std::string(dname)] {
      const std::vector<ct::detail::ParamSpec> specs{piece(d, {8, 1}), piece(d, {8, 1}), piece(D::i64, {8, 1}), ref(d, 2)};
      if (d == D::f8e4m3) return ct::trace(row_reductions<ct::f8e4m3>, "row_reductions<" + dname + ">", specs, 2);
      return ct::trace(row_reductions<ct::f8e5m2>, "row_reductions<" + dname + ">", specs, 2);
    });
  add("combine_extremes_f8e5m2", [] {
    return ct::trace(combine_extremes<ct::f8e5m2, 512>, "combine_extremes<f8e5m2, 512>",
                     {piece(D::f8e5m2, {1}), piece(D::f8e5m2, {1}), ref(D::f8e5m2, 1)}, 1);
  });
  add("fp8_atomics", [] {
    return ct::trace(fp8_atomics, "fp8_atomics", {atomic(D::f8e4m3, 1), atomic(D::f8e5m2, 1), ref(D::f8e4m3, 1), ref(D::f8e5m2, 1)}, 1);
  });
  add("mm_f8e4m3_f32", [] {
    return ct::trace(mm<ct::f8e4m3, float, 16>, "mm<f8e4m3,f32>", {piece(D::f32, {32, 16}), ref(D::f8e4m3, 2), ref(D::f8e4m3, 2)}, 2);
  });
  add("mm_f8e5m2_f32", [] {
    return ct::trace(mm<ct::f8e5m2, float, 32>, "mm<f8e5m2,f32>", {piece(D::f32, {64, 64}), ref(D::f8e5m2, 2), ref(D::f8e5m2, 2)}, 2);
  });
  add("mm_f8e4m3_f8e5m2_f32", [] {
    return ct::trace(mm<ct::f8e4m3, float, 32, ct::f8e5m2>, "mm<f8e4m3 x f8e5m2,f32>",
                     {piece(D::f32, {64, 32}), ref(D::f8e4m3, 2), ref(D::f8e5m2, 2)}, 2);
  });
  add("mm_f8e5m2_f8e4m3_f32", [] {
    return ct::trace(mm<ct::f8e5m2, float, 16, ct::f8e4m3>, "mm<f8e5m2 x f8e4m3,f32>",
                     {piece(D::f32, {16, 128}), ref(D::f8e5m2, 2), ref(D::f8e4m3, 2)}, 2);
  });
  // the kernel library's matrix-vector product (4 rows per tile block, K steps of 512)
  add("gemv_bf16", [] {
    return ct::trace(ct::kernels::gemv<ct::bf16, 512>, "gemv<bf16, 512>", {piece(D::bf16, {4}), ref(D::bf16, 2), ref(D::bf16, 1)}, 1);
  });
  add("matmul_128x128x32", [] {
    return ct::trace(matmul<32>, "matmul<32>", {piece(D::f32, {128, 128}), ref(D::bf16, 2), ref(D::bf16, 2)}, 2);
  });
  add("matmul_128x128x64", [] {
    return ct::trace(matmul<64>, "matmul<64>", {piece(D::f32, {128, 128}), ref(D::bf16, 2), ref(D::bf16, 2)}, 2);
  });
  // The benchmark's fused epilogue C = silu(A @ B + bias) (bench/kernels.hpp): bias broadcast over
  // the accumulator's rows, sigmoid and the conversion fused into the store's expression.
  add("matmul_bias_silu_bf16", [] {
    return ct::trace(bench::matmul_bias_silu<ct::bf16, 64>, "matmul_bias_silu<bf16, 64>",
                     {piece(D::bf16, {128, 128}), ref(D::bf16, 2), ref(D::bf16, 2), ref(D::bf16, 1)}, 2);
  });
  // The benchmark's GEMM stored through UncheckedMut (bench/kernels.hpp): the tile block's scatter
  // of consecutive positions becomes a window store of the whole tensor (canonicalize).
  add("matmul_unchecked_bf16", [] {
    return ct::trace(bench::matmul_unchecked<ct::bf16, 128, 128, 64>, "matmul_unchecked<bf16, 128, 128, 64>",
                     {unchecked(D::bf16, 2), ref(D::bf16, 2), ref(D::bf16, 2)}, 2);
  });
  // The benchmark's attention prefill stored through UncheckedMut (bench/kernels.hpp: the library's
  // query block, its tile scattered to its own rows of [B, H, S, D], which canonicalize turns into a
  // window store: scalar batch and head indices along the axes of extent 1).
  add("attention_unchecked_bf16_d128_causal", [] {
    return ct::trace(bench::attention_prefill_unchecked<ct::bf16, 64, 128, 64, true>, "attention_prefill_unchecked<bf16, 64, 128, 64>",
                     {unchecked(D::bf16, 4), ref(D::bf16, 4), ref(D::bf16, 4), ref(D::bf16, 4), scalar(D::f32)}, 3);
  });
  // The benchmark's FP8 product with per-tensor scales (bench/kernels.hpp: A [M, K], Bt [N, K] in
  // e4m3, C in bf16): on sm_90 on wgmma (k32 steps, both operands K-major), elsewhere on the CUDA
  // cores. K blocks of 64 (64-byte rows: the 64-byte swizzle) and of 128 (the 128-byte swizzle,
  // the benchmark's blocks; with the TMA variants of add_tma_cases).
  add("matmul_fp8_e4m3", [] {
    return ct::trace(bench::matmul_fp8<ct::f8e4m3, 64>, "matmul_fp8<e4m3, 64>",
                     {piece(D::bf16, {64, 64}), ref(D::f8e4m3, 2), ref(D::f8e4m3, 2), scalar(D::f32)}, 2);
  });
  add("matmul_fp8_e4m3_128", [] {
    return ct::trace(bench::matmul_fp8<ct::f8e4m3, 128>, "matmul_fp8<e4m3, 128>",
                     {piece(D::bf16, {128, 128}), ref(D::f8e4m3, 2), ref(D::f8e4m3, 2), scalar(D::f32)}, 2);
  });
  // fp8 products with Bt [N, K] (K-major, wgmma's form): mixed operand types both ways, K steps
  // of 32 bytes (the 32-byte swizzle, one instruction a step) and of 128 with two warpgroups.
  add("mm_bt_f8e4m3_f8e5m2_f32", [] {
    return ct::trace(mm_bt<ct::f8e4m3, float, 64, ct::f8e5m2>, "mm_bt<f8e4m3 x f8e5m2,f32>",
                     {piece(D::f32, {64, 128}), ref(D::f8e4m3, 2), ref(D::f8e5m2, 2)}, 2);
  });
  add("mm_bt_f8e5m2_f8e4m3_f32", [] {
    return ct::trace(mm_bt<ct::f8e5m2, float, 128, ct::f8e4m3>, "mm_bt<f8e5m2 x f8e4m3,f32>",
                     {piece(D::f32, {128, 64}), ref(D::f8e5m2, 2), ref(D::f8e4m3, 2)}, 2);
  });
  add("mm_bt_f8e5m2_f32_k32", [] {
    return ct::trace(mm_bt<ct::f8e5m2, float, 32>, "mm_bt<f8e5m2,f32>",
                     {piece(D::f32, {64, 64}), ref(D::f8e5m2, 2), ref(D::f8e5m2, 2)}, 2);
  });
  // The kernel option loop_prefetch: a K loop two and three iterations ahead (on sm_90 the loads
  // follow the product in flight, rings of D + 2 slots), and GEMV with its stream of W pipelined.
  for (int d : {2, 3}) {
    add("matmul_128x128x32_prefetch" + std::to_string(d), [d] {
      auto k = std::make_shared<ir::Kernel>(
          ir::clone(*ct::trace(matmul<32>, "matmul<32>", {piece(D::f32, {128, 128}), ref(D::bf16, 2), ref(D::bf16, 2)}, 2)));
      k->options.loop_prefetch = d;
      return std::shared_ptr<const ir::Kernel>(k);
    });
  }
  // The kernel library's attention (128 query rows, key blocks of 64, head dim 64), causal and not:
  // on sm_90 both products run on wgmma (Q, K and V in shared memory through the rank-4 blocks'
  // reshapes, P V with A in registers).
  for (bool causal : {false, true})
    add(std::string("attention_bf16") + (causal ? "_causal" : ""), [causal] {
      const std::vector<ct::detail::ParamSpec> specs = {piece(D::bf16, {1, 1, 128, 64}), ref(D::bf16, 4), ref(D::bf16, 4),
                                                        ref(D::bf16, 4), scalar(D::f32)};
      return causal ? ct::trace(ct::kernels::attention_prefill_kernel<ct::bf16, 64, true>, "attention<causal>", specs, 4)
                    : ct::trace(ct::kernels::attention_prefill_kernel<ct::bf16, 64, false>, "attention", specs, 4);
    });
  // The library's blocks on sm_90 (attention_prefill_block_n): key blocks of 128, at head dim 128
  // (S of [128, 128], 224 KB of rings) and 64, causal and not. More shared memory than sm_80 gives
  // a CTA: the names end in _sm90 (compiled for sm_90a only).
  add("attention_bf16_d128_bn128_causal_sm90", [] {
    return ct::trace(ct::kernels::attention_prefill_kernel<ct::bf16, 128, true>, "attention<128, causal>",
                     {piece(D::bf16, {1, 1, 128, 128}), ref(D::bf16, 4), ref(D::bf16, 4), ref(D::bf16, 4), scalar(D::f32)}, 4);
  });
  add("attention_bf16_bn128_sm90", [] {
    return ct::trace(ct::kernels::attention_prefill_kernel<ct::bf16, 128, false>, "attention<128>",
                     {piece(D::bf16, {1, 1, 128, 64}), ref(D::bf16, 4), ref(D::bf16, 4), ref(D::bf16, 4), scalar(D::f32)}, 4);
  });
  // f16 at head dim 128 over 64 query rows, the library's block on sm_80 (128 rows need 193 KB of
  // shared memory on its mma.sync path, above its 163 KB; attention_prefill_block_m).
  add("attention_f16_d128", [] {
    return ct::trace(ct::kernels::attention_prefill_kernel<ct::f16, 64, false>, "attention<f16>",
                     {piece(D::f16, {1, 1, 64, 128}), ref(D::f16, 4), ref(D::f16, 4), ref(D::f16, 4), scalar(D::f32)}, 4);
  });
  add("attention_lse_bf16_causal", [] {  // with the log-sum-exp output
    return ct::trace(ct::kernels::attention_prefill_kernel<ct::bf16, 64, true, ct::Mut<float, 4>>, "attention<causal, lse>",
                     {piece(D::bf16, {1, 1, 128, 64}), ref(D::bf16, 4), ref(D::bf16, 4), ref(D::bf16, 4), scalar(D::f32),
                      piece(D::f32, {1, 1, 128, 1})},
                     4);
  });
  // The library's split-K product: the partial products over a K range (mma.sync tiles of 16 rows
  // in K steps of 64, and wgmma tiles of 64 rows in K steps of 128 on sm_90) and their sum (row
  // pieces, the splits unrolled at trace time).
  add("matmul_split_k_partial_bf16", [] {
    return ct::trace(ct::kernels::matmul_split_k_partial<ct::bf16, 64>, "matmul_split_k_partial",
                     {piece(D::f32, {1, 16, 64}), ref(D::bf16, 2), ref(D::bf16, 2), scalar(D::i64)}, 3);
  });
  add("matmul_split_k_partial64_bf16", [] {
    return ct::trace(ct::kernels::matmul_split_k_partial<ct::bf16, 128>, "matmul_split_k_partial",
                     {piece(D::f32, {1, 64, 128}), ref(D::bf16, 2), ref(D::bf16, 2), scalar(D::i64)}, 3);
  });
  add("matmul_split_k_sum_bf16", [] {
    return ct::trace(ct::kernels::matmul_split_k_sum<ct::bf16>, "matmul_split_k_sum",
                     {piece(D::bf16, {1, 256}), ref(D::f32, 3), constant_i(D::i64, 4)}, 2);
  });
  // Decode attention's two kernels: a group of 16 query-head rows over key blocks of 64 (split),
  // and the merge of the splits.
  add("attention_decode_split_bf16", [] {
    return ct::trace(ct::kernels::attention_decode_split_kernel<ct::bf16, 64>, "attention_decode_split",
                     {piece(D::f32, {1, 1, 16, 64}), piece(D::f32, {1, 1, 16, 1}), ref(D::bf16, 4), ref(D::bf16, 4),
                      ref(D::bf16, 4), ref(D::i64, 1), scalar(D::f32), scalar(D::i64)},
                     4);
  });
  add("attention_decode_split_rows64_bf16", [] {  // one warpgroup's 64 rows: wgmma on sm_90
    return ct::trace(ct::kernels::attention_decode_split_kernel<ct::bf16, 64>, "attention_decode_split",
                     {piece(D::f32, {1, 1, 64, 64}), piece(D::f32, {1, 1, 64, 1}), ref(D::bf16, 4), ref(D::bf16, 4),
                      ref(D::bf16, 4), ref(D::i64, 1), scalar(D::f32), scalar(D::i64)},
                     4);
  });
  add("attention_decode_merge_bf16", [] {  // one query row, the splits two per load
    return ct::trace(ct::kernels::attention_decode_merge_kernel<ct::bf16, 2>, "attention_decode_merge",
                     {piece(D::bf16, {1, 1, 1, 64}), ref(D::f32, 4), ref(D::f32, 4), scalar(D::i64)}, 4);
  });
  add("attention_decode_merge32_bf16", [] {  // 32 splits per load (the library's largest chunk)
    return ct::trace(ct::kernels::attention_decode_merge_kernel<ct::bf16, 32>, "attention_decode_merge",
                     {piece(D::bf16, {1, 1, 1, 128}), ref(D::f32, 4), ref(D::f32, 4), scalar(D::i64)}, 4);
  });
  add("gemv_bf16_prefetch", [] {
    auto k = std::make_shared<ir::Kernel>(ir::clone(
        *ct::trace(ct::kernels::gemv<ct::bf16, 512>, "gemv<bf16, 512>", {piece(D::bf16, {4}), ref(D::bf16, 2), ref(D::bf16, 1)}, 1)));
    k->options.loop_prefetch = 1;
    return std::shared_ptr<const ir::Kernel>(k);
  });
}

void add_tma_cases(std::vector<Case>& out) {
  const std::vector<std::string> names = {"example_matmul", "matmul_128x128x32", "matmul_128x128x32_prefetch2",
                                          "matmul_128x128x64", "mma_tc_bias_relu_bt_bf16", "matmul_bias_silu_bf16",
                                          "matmul_unchecked_bf16", "mma_tc_long_k_bf16", "matmul_fp8_e4m3_128"};
  std::vector<Case> more;
  for (const Case& c : out) {
    if (std::find(names.begin(), names.end(), c.name) == names.end()) continue;
    // variant 0: TMA; 1: TMA and a producer warpgroup; 2: cp.async with the last extents also
    // divisible by 16 (whole vectors in every tile: no element-by-element copy is compiled)
    for (int variant : {0, 1, 2})
      more.push_back({c.name + (variant == 0 ? "_tma" : variant == 1 ? "_tma_ws" : "_whole"), [make = c.make, variant] {
                      auto k = std::make_shared<ir::Kernel>(ir::clone(*make()));
                      k->options.tma = variant == 2 ? -1 : 1;
                      k->options.warp_specialize = variant == 1 ? 1 : -1;  // -1: the compiler would choose a producer
                      promise_tma_facts(*k, 2, 1u);
                      if (variant == 2)
                        for (ir::Param& p : k->params)
                          if (p.type.kind == ir::TypeKind::Tensor && p.type.access == ir::Access::Read && p.type.rank == 2) {
                            p.facts.extent_div16 |= 2u;
                            p.facts.extent_div8 |= 2u;
                          }
                      return std::shared_ptr<const ir::Kernel>(k);
                    }});
    // acc-split (option acc_split = 1: the K loop's iterations alternate between two accumulators)
    // with the producer warpgroup, and without it (TMA copies issued by the tile block's thread 0).
    const std::vector<std::string> split = {"matmul_128x128x64", "mma_tc_long_k_bf16", "mma_tc_bias_relu_bt_bf16"};
    if (std::find(split.begin(), split.end(), c.name) != split.end())
      for (int ws : {1, -1})
        more.push_back({c.name + (ws == 1 ? "_tma_ws_acc_split" : "_tma_acc_split"), [make = c.make, ws] {
                          auto k = std::make_shared<ir::Kernel>(ir::clone(*make()));
                          k->options.tma = 1;
                          k->options.warp_specialize = ws;
                          k->options.acc_split = 1;
                          promise_tma_facts(*k, 2, 1u);
                          return std::shared_ptr<const ir::Kernel>(k);
                        }});
  }
  // Attention prefill with its K and V blocks ([1, 1, 64, D] of [B, H, S, D]) copied by TMA
  // through rank-4 tensor maps (Q too, its wait hoisted before the loop), q, k and v promised
  // aligned with 16-element strides; the causal one with a producer warpgroup issuing them. The
  // library's sm_90 blocks (key blocks of 128) with the producer, and with ping-pong on top (the
  // option pingpong: the two consumer warpgroups take turns on the tensor cores).
  struct AttentionVariant {
    std::string base, name;
    int ws, pingpong;
  };
  const std::vector<AttentionVariant> variants = {
      {"attention_bf16", "attention_bf16_tma", -1, 0},
      {"attention_bf16_causal", "attention_bf16_causal_tma_ws", 1, 0},
      {"attention_bf16_d128_bn128_causal_sm90", "attention_bf16_d128_bn128_causal_tma_ws_sm90", 1, 0},
      {"attention_bf16_d128_bn128_causal_sm90", "attention_bf16_d128_bn128_causal_pingpong_sm90", 1, 1}};
  for (const AttentionVariant& v : variants)
    for (const Case& c : out) {
      if (c.name != v.base) continue;
      more.push_back({v.name, [make = c.make, ws = v.ws, pingpong = v.pingpong] {
                        auto k = std::make_shared<ir::Kernel>(ir::clone(*make()));
                        k->options.tma = 1;
                        k->options.warp_specialize = ws;
                        k->options.pingpong = pingpong;
                        promise_tma_facts(*k, 4, 7u);
                        return std::shared_ptr<const ir::Kernel>(k);
                      }});
    }
  // The benchmark's 128 x 256 x 64 GEMM (bf16 C) with TMA and the producer, its rings above the
  // epilogue's scratch at a slot's cost (option epilogue_overlap = 1: 3 slots a ring), so the
  // producer copies the next tile block's operands during the epilogue; 208 KiB of shared memory,
  // sm_90 only. Its grid is resident (warp-specialize), and with the option stages = 1 one CTA a
  // tile block, so both grids run on the GPU.
  for (const int stages : {0, 1})
    more.push_back({stages ? "matmul_bf16_128x256x64_one_block_per_cta_sm90" : "matmul_bf16_128x256x64_overlap_sm90", [stages] {
                      auto k = std::make_shared<ir::Kernel>(ir::clone(*ct::trace(
                          bench::matmul<ct::bf16, 64>, "matmul<bf16, 64>",
                          {piece(ct::DType::bf16, {128, 256}), ref(ct::DType::bf16, 2), ref(ct::DType::bf16, 2)}, 2)));
                      k->options.tma = 1;
                      k->options.warp_specialize = 1;
                      k->options.epilogue_overlap = 1;
                      k->options.stages = stages;
                      promise_tma_facts(*k, 0, 1u);
                      return std::shared_ptr<const ir::Kernel>(k);
                    }});
  // A decode-shaped GEMM (64 x 64 tiles of C: one consumer warpgroup) with TMA copies, deep rings
  // (option ring_slots = 13: the producer runs up to 13 K steps ahead) and two accumulators
  // (acc_split = 1), sm_90 only.
  more.push_back({"matmul_bf16_64x64x64_deep_rings_sm90", [] {
                    auto k = std::make_shared<ir::Kernel>(ir::clone(*ct::trace(
                        bench::matmul<ct::bf16, 64>, "matmul<bf16, 64>",
                        {piece(ct::DType::bf16, {64, 64}), ref(ct::DType::bf16, 2), ref(ct::DType::bf16, 2)}, 2)));
                    k->options.tma = 1;
                    k->options.ring_slots = 13;
                    k->options.acc_split = 1;
                    promise_tma_facts(*k, 0, 1u);
                    return std::shared_ptr<const ir::Kernel>(k);
                  }});
  // The K split (acc_split = 2): a second consumer warpgroup takes the odd K steps of a 64 x 64
  // tile into its own accumulator, handed over through shared memory before the epilogue; with the
  // 6 slots the split gives the rings, with 4 (option ring_slots: each warpgroup on its own two),
  // with 5 (the warpgroups share slots in turns: each keeps the other's phases in step), K steps of
  // 128, and one CTA a tile block (stages = 1).
  struct KSplitVariant {
    std::string name;
    int bk, ring_slots, stages;
  };
  for (const KSplitVariant& v : {KSplitVariant{"matmul_bf16_64x64x64_k_split_sm90", 64, 0, 0},
                                 KSplitVariant{"matmul_bf16_64x64x64_k_split_four_slots_sm90", 64, 4, 0},
                                 KSplitVariant{"matmul_bf16_64x64x64_k_split_five_slots_sm90", 64, 5, 0},
                                 KSplitVariant{"matmul_bf16_64x64x128_k_split_one_block_per_cta_sm90", 128, 0, 1}})
    more.push_back({v.name, [v] {
                      auto k = std::make_shared<ir::Kernel>(ir::clone(*(
                          v.bk == 64 ? ct::trace(bench::matmul<ct::bf16, 64>, "matmul<bf16, 64>",
                                                 {piece(ct::DType::bf16, {64, 64}), ref(ct::DType::bf16, 2), ref(ct::DType::bf16, 2)}, 2)
                                     : ct::trace(bench::matmul<ct::bf16, 128>, "matmul<bf16, 128>",
                                                 {piece(ct::DType::bf16, {64, 64}), ref(ct::DType::bf16, 2), ref(ct::DType::bf16, 2)}, 2))));
                      k->options.tma = 1;
                      k->options.acc_split = 2;
                      k->options.ring_slots = v.ring_slots;
                      k->options.stages = v.stages;
                      promise_tma_facts(*k, 0, 1u);
                      return std::shared_ptr<const ir::Kernel>(k);
                    }});
  out.insert(out.end(), more.begin(), more.end());
}

}  // namespace cuda_codegen_test
