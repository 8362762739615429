// The kernel library's prefill and decode attention (ctile/kernels/attention.hpp,
// attention_decode.hpp) on the GPU: against the float64 reference, and against the CPU backend on
// the same inputs, across causal and not, GQA, lengths that are not multiples of the blocks, head
// dims 64, 128 and 256, large score magnitudes, and (decode) per-sequence lengths and splits.
#include <ctile/kernels/attention.hpp>
#include <ctile/kernels/attention_decode.hpp>

#include "attention_reference.hpp"
#include "harness.hpp"

namespace ct = ctile;
using attention_test::Shape4;
using gpu_test::gpu;
using gpu_test::seed;

namespace {

template <class T>
std::vector<T> run_on(ct::Device dev, const Shape4& s, bool causal, const std::vector<T>& q, const std::vector<T>& k,
                      const std::vector<T>& v) {
  auto qs = ct::from_host<T>(q, {s.b, s.hq, s.sq, s.d}, dev).share();
  auto ks = ct::from_host<T>(k, {s.b, s.hkv, s.sk, s.d}, dev).share();
  auto vs = ct::from_host<T>(v, {s.b, s.hkv, s.sk, s.d}, dev).share();
  auto o = ct::full<T>({s.b, s.hq, s.sq, s.d}, T(NAN), dev);
  auto [o2, q2, k2, v2, sc] = ct::kernels::attention_prefill(std::move(o), qs, ks, vs, {.causal = causal}).sync();
  return std::move(o2).unpartition().to_host();
}

template <class T>
void check(const Shape4& s, bool causal, std::uint64_t salt, float amplitude = 1.0f) {
  const std::uint64_t sd = seed(salt);
  const auto q = ct::randn<T>({s.b, s.hq, s.sq, s.d}, sd, 0.0, amplitude, ct::cpu()).to_host();
  const auto k = ct::randn<T>({s.b, s.hkv, s.sk, s.d}, sd + 1, 0.0, 1.0, ct::cpu()).to_host();
  const auto v = ct::randn<T>({s.b, s.hkv, s.sk, s.d}, sd + 2, 0.0, 1.0, ct::cpu()).to_host();
  const auto got = run_on<T>(gpu(), s, causal, q, k, v);
  const auto cpu = run_on<T>(ct::cpu(), s, causal, q, k, v);
  const auto ref = attention_test::reference(s, q, k, v, causal, 1.0 / std::sqrt(double(s.d)));
  const double tol = std::is_same_v<T, ct::bf16> ? 0x1p-6 : 0x1p-9;
  const double e_gpu = attention_test::worst_row_error(s, got, ref);
  const double e_cpu = attention_test::worst_row_error(s, cpu, ref);
  CHECK(e_gpu <= tol) << "GPU vs float64: " << e_gpu << " (CPU backend " << e_cpu << ") at b " << s.b << " hq " << s.hq
                      << " hkv " << s.hkv << " sq " << s.sq << " sk " << s.sk << " d " << s.d << (causal ? " causal" : "");
  // The GPU's error is of the CPU backend's order (the same roundings, in another order).
  CHECK(e_gpu <= 2 * e_cpu + tol / 4) << "GPU " << e_gpu << " vs CPU backend " << e_cpu;
}

}  // namespace

GPU_TEST(kernels_attention_prefill_bf16) {
  check<ct::bf16>({1, 2, 2, 130, 200, 64}, false, 1);
  check<ct::bf16>({2, 1, 1, 7, 129, 64}, false, 2);
  check<ct::bf16>({1, 2, 2, 300, 300, 64}, true, 3);
  check<ct::bf16>({1, 1, 1, 129, 129, 128}, true, 4);
  check<ct::bf16>({1, 1, 1, 150, 70, 64}, true, 5);
  check<ct::bf16>({1, 4, 2, 100, 140, 128}, true, 6);   // GQA
  check<ct::bf16>({2, 3, 1, 40, 270, 128}, false, 7);   // MQA
  check<ct::bf16>({1, 1, 1, 64, 300, 64}, false, 8, 30.0f);
}
GPU_TEST(kernels_attention_prefill_f16) {
  check<ct::f16>({1, 2, 1, 200, 333, 64}, true, 10);
  check<ct::f16>({1, 2, 1, 64, 130, 64}, true, 11, 12.0f);
  check<ct::f16>({1, 1, 1, 100, 150, 256}, true, 12);  // head dim 256 (wgmma, 64-row blocks)
}

GPU_TEST(kernels_attention_prefill_lse) {
  // The log-sum-exp output on the GPU against float64 (2^-12 of max(1, |lse|)).
  const Shape4 s{1, 2, 1, 150, 200, 128};
  const std::uint64_t sd = seed(13);
  const auto q = ct::randn<ct::bf16>({s.b, s.hq, s.sq, s.d}, sd, 0.0, 1.0, ct::cpu()).to_host();
  const auto k = ct::randn<ct::bf16>({s.b, s.hkv, s.sk, s.d}, sd + 1, 0.0, 1.0, ct::cpu()).to_host();
  const auto v = ct::randn<ct::bf16>({s.b, s.hkv, s.sk, s.d}, sd + 2, 0.0, 1.0, ct::cpu()).to_host();
  auto qs = ct::from_host<ct::bf16>(q, {s.b, s.hq, s.sq, s.d}, gpu()).share();
  auto ks = ct::from_host<ct::bf16>(k, {s.b, s.hkv, s.sk, s.d}, gpu()).share();
  auto vs = ct::from_host<ct::bf16>(v, {s.b, s.hkv, s.sk, s.d}, gpu()).share();
  auto [o2, q2, k2, v2, sc, l2] =
      ct::kernels::attention_prefill(ct::full<ct::bf16>({s.b, s.hq, s.sq, s.d}, ct::bf16(NAN), gpu()),
                                     ct::full<float>({s.b, s.hq, s.sq, 1}, NAN, gpu()), qs, ks, vs, {.causal = true})
          .sync();
  const auto got = std::move(l2).unpartition().to_host();
  const auto ref = attention_test::reference_lse(s, q, k, true, 1.0 / std::sqrt(double(s.d)));
  double worst = 0;
  for (std::size_t r = 0; r < ref.size(); ++r) worst = std::max(worst, std::fabs(double(got[r]) - ref[r]) / std::max(1.0, std::fabs(ref[r])));
  CHECK(worst <= 0x1p-12) << "lse on the GPU vs float64: " << worst;
}

namespace {

template <class T>
std::vector<T> decode_on(ct::Device dev, std::int64_t b, std::int64_t hq, std::int64_t hkv, std::int64_t smax, std::int64_t d,
                         const std::vector<T>& q, const std::vector<T>& k, const std::vector<T>& v,
                         const std::vector<std::int64_t>& lens, std::int64_t splits, std::int64_t rows) {
  auto qs = ct::from_host<T>(q, {b, hq, d}, dev).share();
  auto ks = ct::from_host<T>(k, {b, hkv, smax, d}, dev).share();
  auto vs = ct::from_host<T>(v, {b, hkv, smax, d}, dev).share();
  auto ls = ct::from_host<std::int64_t>(lens, {b}, dev).share();
  auto o = ct::full<T>({b, hq, d}, T(NAN), dev);
  auto [o2, q2, k2, v2, l2] = ct::kernels::attention_decode(std::move(o), qs, ks, vs, ls, {.splits = splits, .rows = rows}).sync();
  return o2.to_host();
}

template <class T>
void check_decode(std::int64_t b, std::int64_t hq, std::int64_t hkv, std::int64_t smax, std::int64_t d,
                  std::vector<std::int64_t> lens, std::int64_t splits, std::uint64_t salt, std::int64_t group_rows = 0) {
  const std::uint64_t sd = seed(salt);
  const auto q = ct::randn<T>({b, hq, d}, sd, 0.0, 1.0, ct::cpu()).to_host();
  const auto k = ct::randn<T>({b, hkv, smax, d}, sd + 1, 0.0, 1.0, ct::cpu()).to_host();
  const auto v = ct::randn<T>({b, hkv, smax, d}, sd + 2, 0.0, 1.0, ct::cpu()).to_host();
  const auto got = decode_on<T>(gpu(), b, hq, hkv, smax, d, q, k, v, lens, splits, group_rows);
  const auto cpu = decode_on<T>(ct::cpu(), b, hq, hkv, smax, d, q, k, v, lens, splits, group_rows);
  const auto ref = attention_test::decode_reference(b, hq, hkv, smax, d, q, k, v, lens, 1.0 / std::sqrt(double(d)));
  const Shape4 rows{b, hq, hkv, 1, smax, d};
  const double tol = std::is_same_v<T, ct::bf16> ? 0x1p-6 : 0x1p-9;
  const double e_gpu = attention_test::worst_row_error(rows, got, ref);
  const double e_cpu = attention_test::worst_row_error(rows, cpu, ref);
  CHECK(e_gpu <= tol) << "decode, GPU vs float64: " << e_gpu << " (CPU backend " << e_cpu << ") at b " << b << " hq " << hq
                      << " hkv " << hkv << " smax " << smax << " d " << d << " splits " << splits;
  CHECK(e_gpu <= 2 * e_cpu + tol / 4) << "decode, GPU " << e_gpu << " vs CPU backend " << e_cpu;
}

}  // namespace

GPU_TEST(kernels_attention_decode) {
  check_decode<ct::bf16>(4, 32, 8, 700, 128, {700, 1, 65, 333}, 0, 20);  // Qwen-like grouping, chosen splits
  check_decode<ct::bf16>(3, 8, 2, 300, 64, {300, 70, 0}, 8, 21);         // empty ranges, an empty sequence
  check_decode<ct::f16>(2, 8, 1, 200, 256, {199, 1000}, 2, 22);          // MQA, a length past the cache
  check_decode<ct::bf16>(2, 32, 8, 500, 128, {500, 130}, 4, 23, 16);     // 16 group rows: mma.sync
}
