// Kernels traced from C++: every example (examples/*.cpp), the end-to-end correctness kernels
// (tests/correctness/*.cpp) and the golden-IR kernels, copied here so the CUDA code generator sees
// what users write.
#include <cmath>

#include <ctile/ctile.hpp>

#include "cases.hpp"

namespace ct = ctile;

namespace cuda_codegen_test {
namespace {

using Kind = ct::detail::ParamSpec::Kind;
ct::detail::ParamSpec piece(ct::DType d, ct::Shape tile) { return {Kind::Piece, d, static_cast<int>(tile.size()), tile, {}}; }
ct::detail::ParamSpec ref(ct::DType d, int rank) { return {Kind::Read, d, rank, {}, {}}; }
ct::detail::ParamSpec atomic(ct::DType d, int rank) { return {Kind::Atomic, d, rank, {}, {}}; }
ct::detail::ParamSpec unchecked(ct::DType d, int rank) { return {Kind::Unchecked, d, rank, {}, {}}; }
ct::detail::ParamSpec scalar(ct::DType d) { return {Kind::Scalar, d, 0, {}, {}}; }
ct::detail::ParamSpec constant_i(ct::DType d, std::int64_t v) { return {Kind::Const, d, 0, {}, ct::ir::Scalar::of_int(v)}; }

// ---- examples/*.cpp -------------------------------------------------------------------------------------
void hello(ct::Mut<std::int64_t, 2> ids) {
  auto [i, j] = ids.tile_index();
  ids.store(i * 100 + j);
}

template <int BK>
void matmul(ct::Mut<float, 2> c, ct::Ref<ct::bf16, 2> a, ct::Ref<ct::bf16, 2> b) {
  const auto [bm, bn] = c.tile_shape();
  auto [i, j] = c.tile_index();
  auto pa = a.tiles({bm, BK});
  auto pb = b.tiles({BK, bn});
  auto acc = ct::Tile<float>::zeros({bm, bn});
  for (auto k : ct::range(pa.count(1))) acc = ct::mma(pa.load({i, k}), pb.load({k, j}), acc);
  c.store(acc);
}

constexpr std::int64_t kBlock = 4096;
void reduce_sum(ct::Atomic<double, 1> total, ct::Ref<double, 1> x) {
  auto tile = x.tiles({kBlock}).load({ct::block_id(0)});
  total.add({0}, ct::sum(tile, 0));
}

void rms_norm(ct::Mut<ct::bf16, 2> y, ct::Ref<ct::bf16, 2> x, ct::Ref<ct::bf16, 1> w, ct::Scalar<float> eps) {
  const auto [bm, bn] = y.tile_shape();
  auto [row, col] = y.tile_index();
  auto xf = ct::load_like(x, y).to<float>();
  auto n = x.extent(1).to<float>();
  auto inv = ct::rsqrt(ct::sum(xf * xf, 1, true) / n + eps);
  auto wf = w.tiles({bn}).load({col}).to<float>().reshape({1, bn});
  y.store((xf * inv * wf).to<ct::bf16>());
}

void saxpy(ct::Mut<ct::bf16, 1> y, ct::Scalar<float> a, ct::Ref<ct::bf16, 1> x) {
  auto xf = ct::load_like(x, y).to<float>();
  auto yf = y.load().to<float>();
  y.store((a * xf + yf).to<ct::bf16>());
}

void softmax(ct::Mut<float, 2> out, ct::Ref<float, 2> x) {
  auto row = ct::load_like(x, out, -INFINITY);
  auto e = ct::exp(row - ct::max(row, 1, /*keepdims=*/true));
  out.store(e / ct::sum(e, 1, true));
}

void scatter(ct::UncheckedMut<float, 1> dst, ct::Ref<std::int64_t, 1> idx, ct::Ref<float, 1> src) {
  auto b = ct::block_id(0);
  auto where = idx.tiles({256}).load({b}, -1);
  auto what = src.tiles({256}).load({b});
  dst.scatter(ct::unchecked, where, what);
}

void vector_add(ct::Mut<float, 1> z, ct::Ref<float, 1> x, ct::Ref<float, 1> y) {
  z.store(ct::load_like(x, z) + ct::load_like(y, z));
}

// ---- tests/correctness/test_kernels.cpp ---------------------------------------------------------------------
template <class T>
void axpby(ct::Mut<T, 1> z, ct::Ref<T, 1> x, ct::Ref<T, 1> y) {
  auto a = ct::load_like(x, z).template to<float>();
  auto b = ct::load_like(y, z).template to<float>();
  z.store((ct::exp(a * 0.5f) - b * b + ct::maximum(a, b)).template to<T>());
}

void int_ops(ct::Mut<std::int32_t, 1> z, ct::Ref<std::int32_t, 1> x, ct::Ref<std::int32_t, 1> y) {
  auto a = ct::load_like(x, z);
  auto b = ct::load_like(y, z, 1);
  auto q = a / b + a % b * 3 - (a & 0xff) + (b << 2) - (a >> 1) + (a ^ b);
  z.store(ct::where(a > b, q, -q));
}

void convert_k(ct::Mut<ct::bf16, 1> b, ct::Mut<std::int8_t, 1> i8, ct::Ref<float, 1> x) {
  auto v = ct::load_like(x, b);
  b.store(v.to<ct::bf16>());
  i8.store((v * 100.0f).to<std::int8_t>());
}

void reduce_rows(ct::Mut<float, 2> sums, ct::Mut<std::int64_t, 2> arg, ct::Mut<float, 2> csum, ct::Ref<float, 2> x) {
  auto t = ct::load_like(x, csum, 0.0f);
  sums.store(ct::sum(t, 1, true));
  arg.store(ct::argmax(t, 1, true));
  csum.store(ct::cumsum(t, 1));
}

template <class In, class Acc, int BK>
void mm(ct::Mut<Acc, 2> c, ct::Ref<In, 2> a, ct::Ref<In, 2> b) {
  const auto [bm, bn] = c.tile_shape();
  auto [i, j] = c.tile_index();
  auto pa = a.tiles({bm, BK});
  auto pb = b.tiles({BK, bn});
  auto acc = ct::Tile<Acc>::zeros({bm, bn});
  for (auto k : ct::range(pa.count(1))) acc = ct::mma(pa.load({i, k}), pb.load({k, j}), acc);
  c.store(acc);
}

void gather_rows(ct::Mut<float, 2> out, ct::Ref<float, 2> table, ct::Ref<std::int32_t, 1> ids) {
  auto [r, c] = out.tile_index();
  const auto [bm, bn] = out.tile_shape();
  auto rows = ids.tiles({bm}).load({r}, -1).to<std::int64_t>().reshape({bm, 1});
  auto cols = (ct::iota<std::int64_t>(bn) + c * bn).reshape({1, bn});
  out.store(table.gather({rows, cols}, -7.0f));
}

void reverse_piece(ct::Mut<float, 1> z, ct::Ref<float, 1> x) {
  const auto [b] = z.tile_shape();
  auto v = ct::load_like(x, z);
  auto idx = ct::iota<std::int64_t>(b) * -1 + (b - 1);
  z.scatter({idx}, v);
}

void histogram(ct::Atomic<std::int64_t, 1> hist, ct::Ref<std::int32_t, 1> x) {
  auto v = x.tiles({128}).load({ct::block_id(0)}, -1).to<std::int64_t>();
  hist.add({v}, ct::Tile<std::int64_t>::full({128}, 1));
}

void collatz(ct::Mut<std::int64_t, 1> steps, ct::Ref<std::int64_t, 1> start) {
  auto n = ct::load_like(start, steps).reshape({});
  auto count = ct::constant<std::int64_t>(0);
  ct::while_([&] { return n > 1; }, [&] {
    ct::if_((n % 2) == 0, [&] { n = n / 2; }, [&] { n = n * 3 + 1; });
    count = count + 1;
  });
  steps.store(count);
}

void copy6(ct::Mut<float, 6> z, ct::Ref<float, 6> x) { z.store(ct::load_like(x, z) * 2.0f); }

void scale_by(ct::Mut<float, 1> z, ct::Ref<float, 1> x, ct::Const<int> k) {
  auto v = ct::load_like(x, z);
  for (int i = 1; i < k; ++i) v = v + ct::load_like(x, z);
  z.store(v);
}

void pick_tile(ct::Mut<float, 1> out, ct::Ref<float, 1> x, ct::Scalar<std::int64_t> t) { out.store(x.tiles({16}).load({t})); }

// ---- tests/correctness/test_async.cpp --------------------------------------------------------------------------
void add_scalar(ct::Mut<float, 1> z, ct::Scalar<float> v) { z.store(z.load() + v); }
void times2(ct::Mut<float, 1> z, ct::Ref<float, 1> x) { z.store(ct::load_like(x, z) * 2.0f); }
void fill(ct::Mut<float, 1> z, ct::Scalar<float> v) { z.store(v); }

// ---- tests/unit/frontend/test_golden.cpp ---------------------------------------------------------------------
void aliasing(ct::Mut<float, 1> z, ct::Scalar<std::int64_t> n) {
  auto a = ct::Tile<float>::full({8}, 1.0f);
  auto b = a;
  auto unchanged = a;
  for (auto k : ct::range(n)) {
    (void)k;
    a = a + b;
  }
  z.store(a + unchanged);
}

void branches(ct::Mut<std::int32_t, 1> z, ct::Scalar<std::int32_t> n) {
  auto v = ct::Tile<std::int32_t>::zeros({16});
  auto i = ct::constant<std::int32_t>(0);
  ct::while_([&] { return i < n; }, [&] {
    i = i + 1;
    v = v + 2;
  });
  ct::if_(n > 3, [&] { v = v * 3; }, [&] { v = -v; });
  z.store(v + i);
}

void shapes(ct::Mut<float, 2> z, ct::Ref<float, 1> x) {
  auto t = x.tiles({8}).load({0});
  auto m = ct::reshape(t, {2, 4});
  auto p = ct::permute(m, {1, 0});
  auto c = ct::cat(p, p, 1);
  auto e = ct::extract(c, {0, 2}, {4, 2});
  auto io = ct::iota<std::int32_t>(4).to<float>().reshape({4, 1});
  auto s = ct::cumsum(e + io, 0);
  auto am = ct::argmax(s, 1).to<float>().reshape({4, 1});
  z.store(ct::where(s > 1.0f, s, am));
}

void memory(ct::Mut<float, 1> z, ct::Ref<float, 2> x, ct::Ref<std::int32_t, 1> idx, ct::Atomic<float, 1> hist) {
  auto i = ct::iota<std::int64_t>(16);
  auto cols = idx.tiles({16}).load({z.tile_index()[0]});
  auto g = x.gather({i, cols}, 0.5f);
  z.scatter({i}, g);
  hist.add({cols}, g);
}

// ---- larger shapes the performance work cares about --------------------------------------------------------------
void softmax_bf16(ct::Mut<ct::bf16, 2> out, ct::Ref<ct::bf16, 2> x) {
  auto row = ct::load_like(x, out, ct::bf16(-INFINITY)).to<float>();
  auto e = ct::exp(row - ct::max(row, 1, true));
  out.store((e / ct::sum(e, 1, true)).to<ct::bf16>());
}

void layer_norm(ct::Mut<ct::bf16, 2> y, ct::Ref<ct::bf16, 2> x, ct::Ref<ct::bf16, 1> w, ct::Ref<ct::bf16, 1> b,
                ct::Scalar<float> eps) {
  const auto [bm, bn] = y.tile_shape();
  auto [row, col] = y.tile_index();
  auto xf = ct::load_like(x, y).to<float>();
  auto n = x.extent(1).to<float>();
  auto mean = ct::sum(xf, 1, true) / n;
  auto valid = (ct::iota<std::int64_t>(bn).reshape({1, bn}) + col * bn) < x.extent(1);
  auto d = ct::where(valid, xf - mean, 0.0f);
  auto inv = ct::rsqrt(ct::sum(d * d, 1, true) / n + eps);
  auto wf = w.tiles({bn}).load({col}).to<float>().reshape({1, bn});
  auto bf = b.tiles({bn}).load({col}).to<float>().reshape({1, bn});
  y.store((d * inv * wf + bf).to<ct::bf16>());
}

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
  add("mm_f16_f32", [] { return ct::trace(mm<ct::f16, float, 16>, "mm<f16,f32>", {piece(D::f32, {32, 16}), ref(D::f16, 2), ref(D::f16, 2)}, 2); });
  add("mm_bf16_f32", [] { return ct::trace(mm<ct::bf16, float, 16>, "mm<bf16,f32>", {piece(D::f32, {32, 16}), ref(D::bf16, 2), ref(D::bf16, 2)}, 2); });
  add("mm_f32_f32", [] { return ct::trace(mm<float, float, 16>, "mm<f32,f32>", {piece(D::f32, {32, 16}), ref(D::f32, 2), ref(D::f32, 2)}, 2); });
  add("mm_f64_f64", [] { return ct::trace(mm<double, double, 16>, "mm<f64,f64>", {piece(D::f64, {32, 16}), ref(D::f64, 2), ref(D::f64, 2)}, 2); });
  add("gather_rows", [] {
    return ct::trace(gather_rows, "gather_rows", {piece(D::f32, {4, 8}), ref(D::f32, 2), ref(D::i32, 1)}, 2);
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
  add("layer_norm_bf16_4k", [] {
    return ct::trace(layer_norm, "layer_norm",
                     {piece(D::bf16, {1, 4096}), ref(D::bf16, 2), ref(D::bf16, 1), ref(D::bf16, 1), scalar(D::f32)}, 2);
  });
  add("matmul_128x128x32", [] {
    return ct::trace(matmul<32>, "matmul<32>", {piece(D::f32, {128, 128}), ref(D::bf16, 2), ref(D::bf16, 2)}, 2);
  });
}

}  // namespace cuda_codegen_test
