// ctile's side of the GEMM benchmark (bench/gemm/run.sh runs it beside torch/cuBLAS and Triton):
// the natural matmul kernel (bench/kernels.hpp) at the shapes of issue 8, for a few tile
// configurations, the same product with a fused bias + SiLU epilogue (matmul_bias_silu), the
// decode product (gemv), the decode projections at M = 16 and 128 (matmul, skinny shapes) and the
// product stored through UncheckedMut (matmul_unchecked, beside the epilogue rows) and an FP8 product
// with per-tensor scales (matmul_fp8, e4m3). Each (shape, dtype, config) row is
//   1. launched once in a fresh disk cache: its first-launch time (trace, codegen, NVRTC, load,
//      run), and 512 sampled elements of C checked against a float64 host product (relative L2
//      error over the bound: a failure);
//   2. timed per call with CUDA events (StreamTimer marks around one launch), median of the calls
//      after a warm-up, no L2 flush (the peers are timed the same way, bench/gemm/peers.py); the
//      decode-shape rows (M <= 128, and the GEMV) instead as graph replays of back-to-back calls on
//      rotating weights (median_replay_ms, record field "timing": "replay"): their 10-50 us calls
//      would otherwise carry the host's launch latency and find the weights in L2.
// One JSON record per row and line.
//
//   ctile_gemm_bench [--out FILE] [--reps N] [--quick] [--only MxNxK] [--rows GROUPS] [--config CFG]
//                    [--cubin FILE] [--cubin-fp8 FILE]
// --rows: some of shapes,epilogue,fp8,gemv,skinny (comma-separated; default every group).
// --only: some shapes, as the records name them (4096x4096x4096, gemv 2560x4096), comma-separated.
// --config: some configurations alone, as the records name them (128x256x64, R4xBK512), comma-separated.
// --cubin: also writes the sm_90a cubin of the 128 x 128 x 32 bf16 kernel (for cuobjdump), and exits;
// --cubin-fp8: the same for the FP8 product (128 x 128 x 128, e4m3).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <ctile/runtime/graph.hpp>
#include <ctile/runtime/timer.hpp>

#include <ctile/kernels/gemv.hpp>
#include <ctile/kernels/matmul_split_k.hpp>

#include "../kernels.hpp"

namespace ct = ctile;
using Clock = std::chrono::steady_clock;

namespace {

struct Settings {
  int reps = 50;
  bool quick = false;
  std::vector<std::string> only;  // --only: shapes MxNxK (gemv: NxK), comma-separated (empty: all)
  std::vector<std::string> rows;  // --rows: some of shapes, epilogue, fp8, gemv, skinny (empty: all)
  std::vector<std::string> config;  // --config BMxBNxBK (matmul) or RxBK (gemv), comma-separated: those alone
  std::ofstream out;
  int failures = 0;
} g;

struct Shape3 {
  std::int64_t m, n, k;
  std::string str() const { return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k); }
};

// --rows: whether a group of rows runs (every group without the option).
bool want_rows(const std::string& group) {
  return g.rows.empty() || std::find(g.rows.begin(), g.rows.end(), group) != g.rows.end();
}
// --only and --config: whether a shape and a configuration run (every one without the option).
bool in_list(const std::vector<std::string>& list, const std::string& x) {
  return list.empty() || std::find(list.begin(), list.end(), x) != list.end();
}
bool want_shape(const std::string& s) { return in_list(g.only, s); }
// (A configuration "BMxBNxBK" also selects the split-K rows "BMxBNxBK/sS" of the same tiles.)
bool want_config(const std::string& cfg) { return in_list(g.config, cfg) || in_list(g.config, cfg.substr(0, cfg.find('/'))); }

// Splits a comma-separated list.
std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> out;
  for (std::size_t b = 0; b <= list.size();) {
    const std::size_t e = std::min(list.find(',', b), list.size());
    out.push_back(list.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

void record(const std::string& json) {
  std::printf("%s\n", json.c_str());
  std::fflush(stdout);
  if (g.out) g.out << json << "\n" << std::flush;
}

template <class T>
const char* dname() {
  return std::is_same_v<T, ct::bf16> ? "bf16" : "f16";
}

// What the next call takes from a call's results: by default its output (the first result); the
// split-K rows pass their output and workspace on.
struct FirstResult {
  template <class R>
  auto operator()(R&& results) const {
    return std::move(std::get<0>(results));
  }
};

// The median device time of one call (CUDA events around one launch, after a warm-up): `make`
// launches on the output `out`, which comes back (next(results)) for the next call.
template <class Make, class Out, class Next = FirstResult>
double median_call_ms(Make&& make, Out out, Next next = {}) {
  const ct::Stream st = ct::default_stream();
  std::vector<double> dev;
  const int warm = 5;
  for (int it = 0; it < warm + g.reps; ++it) {
    ct::StreamTimer timer(st);
    timer.start();
    auto fut = make(std::move(out), 0).async_on(st);
    timer.stop();
    out = next(std::move(fut).get());
    if (it >= warm) dev.push_back(timer.elapsed_ms());
  }
  std::sort(dev.begin(), dev.end());
  return dev[dev.size() / 2];
}

// Back-to-back calls per replay, and the bytes the rotating weight sets of a replayed row span at
// least (twice the H100's and the H200's 50-60 MB of L2).
constexpr int kReplayCalls = 20;
constexpr double kRotationBytes = 128e6;

// How many weight sets of `bytes` each a replayed row rotates through (1..8).
int rotation_sets(double bytes) { return static_cast<int>(std::clamp(std::ceil(kRotationBytes / bytes), 1.0, 8.0)); }

// The median device time of one call from graph replays: kReplayCalls calls, call i by
// make(out, i) (which picks its weight set from i), captured once into a ctile::Graph, each call
// taking the previous one's output; each replay timed with CUDA events around it, divided by the
// calls. One replay's launch latency is spread over the calls, and the kernels run back to back as
// in a decode step (the peers are timed the same way, bench/gemm/peers.py's graph_time).
template <class MakeI, class Out, class Next = FirstResult>
double median_replay_ms(MakeI&& make, Out out, Next next = {}) {
  const ct::Stream st = ct::default_stream();
  auto graph = ct::capture([&](ct::Capture& cap) {
    auto f = make(std::move(out), 0).async_on(cap.stream());
    for (int i = 1; i < kReplayCalls; ++i)
      f = std::move(f).then([&make, &next, i](auto&& h) { return make(next(std::move(h)), i); });
    return f;
  });
  std::vector<double> dev;
  const int warm = 2;
  for (int it = 0; it < warm + g.reps; ++it) {
    ct::StreamTimer timer(st);
    timer.start();
    auto fut = std::move(graph).replay(st);
    timer.stop();
    graph = std::move(fut).get();
    if (it >= warm) dev.push_back(timer.elapsed_ms() / kReplayCalls);
  }
  std::sort(dev.begin(), dev.end());
  return dev[dev.size() / 2];
}

// A failed row: its error, quotes and newlines made JSON-safe.
void record_failure(const char* head, const std::exception& e) {
  ++g.failures;
  std::string msg;
  for (char ch : std::string(e.what()).substr(0, 300)) msg += (ch == '"' || ch == '\\') ? '\'' : (ch == '\n' ? ' ' : ch);
  record(std::string(head) + ",\"ok\":false,\"error\":\"" + msg + "\"}");
}

// Whether a matmul row is a decode-shape product, timed by graph replays on rotating weights.
bool replayed(const Shape3& s) { return s.m <= 128; }

// B [K, N] of a matmul row: one set, or for a replayed row enough sets to rotate out of L2 (set i
// from seed + 1000 i; set 0 is the one the row checks).
template <class T>
auto weight_sets(const Shape3& s, std::uint64_t seed) {
  std::vector<decltype(ct::randn<T>({s.k, s.n}, seed).share())> bs;
  const int sets = replayed(s) ? rotation_sets(double(sizeof(T)) * double(s.k * s.n)) : 1;
  for (int i = 0; i < sets; ++i) bs.push_back(ct::randn<T>({s.k, s.n}, seed + 1000 * std::uint64_t(i)).share());
  return bs;
}

// The shared body of the matmul rows: the first launch on a poisoned output (timed alone: the
// output exists before the clock starts), 512 sampled elements of C against ref(i, j) (float64, the
// same inputs), then the timed calls; one record after `head`. make(out, i) launches call i (its
// weight set, for replayed rows), make_out(poisoned) makes an output handle, to_host(handle) reads
// it back.
template <class Make, class MakeOut, class ToHost, class Ref, class Next = FirstResult>
void matmul_row(const std::string& head, const Shape3& s, Make&& make, MakeOut&& make_out, ToHost&& to_host, Ref&& ref,
                double bound, Next next = {}) {
  auto poisoned = make_out(true);
  const auto t0 = Clock::now();
  auto first = make(std::move(poisoned), 0).sync();
  const double first_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  const auto hc = to_host(std::move(std::get<0>(first)));
  std::mt19937_64 rng(7);
  double num = 0, den = 0;
  for (int t = 0; t < 512; ++t) {
    const std::int64_t i = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(s.m));
    const std::int64_t j = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(s.n));
    const double want = ref(i, j);
    const double got = double(float(hc[std::size_t(i * s.n + j)]));
    num += (got - want) * (got - want);
    den += want * want;
  }
  const double err = std::isnan(num) ? INFINITY : std::sqrt(num / std::max(den, 1e-300));
  const bool ok = err <= bound;
  if (!ok) ++g.failures;
  const bool replay = replayed(s);
  const double ms = replay ? median_replay_ms(make, make_out(false), next) : median_call_ms(make, make_out(false), next);
  const double tflops = 2.0 * double(s.m) * double(s.n) * double(s.k) / (ms * 1e-3) / 1e12;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                ",\"ms\":%.6f,\"tflops\":%.3f,\"rel_err\":%.3e,\"err_bound\":%.3e,\"ok\":%s,\"first_launch_ms\":%.2f,\"timing\":\"%s\"}", ms,
                tflops, err, bound, ok ? "true" : "false", first_ms, replay ? "replay" : "call");
  record(head + buf);
}

std::string row_head(const char* kernel, const char* dtype, const Shape3& s, const std::string& cfg) {
  char head[512];
  std::snprintf(head, sizeof head, "{\"impl\":\"ctile\",\"kernel\":\"%s\",\"dtype\":\"%s\",\"shape\":[%lld,%lld,%lld],\"config\":\"%s\"",
                kernel, dtype, (long long)s.m, (long long)s.n, (long long)s.k, cfg.c_str());
  return head;
}

// The float64 product of row i of A [M, K] and column j of B [K, N] (or row j of Bt [N, K]).
template <class T>
double dot(const std::vector<T>& a, const std::vector<T>& b, const Shape3& s, std::int64_t i, std::int64_t j, bool bt) {
  double r = 0;
  for (std::int64_t kk = 0; kk < s.k; ++kk)
    r += double(float(a[std::size_t(i * s.k + kk)])) * double(float(b[std::size_t(bt ? j * s.k + kk : kk * s.n + j)]));
  return r;
}

// C rounded to 16 bits: half an ulp of the element type, plus the f32 sums' reassociation (and an
// f32 epilogue's few ulps).
template <class T>
constexpr double c_bound() {
  return (std::is_same_v<T, ct::f16> ? 0.5 * 0x1p-10 : 0.5 * 0x1p-7) + 1e-4;
}

// One configuration: tile BM x BN of C, K step BK. Epi: the fused epilogue C = silu(A @ B + bias)
// (bench::matmul_bias_silu, kernel "matmul_bias_silu"), else C = A @ B ("matmul").
template <class T, std::int64_t BK, bool Epi = false>
void run(const Shape3& s, std::int64_t bm, std::int64_t bn) {
  const std::string cfg = std::to_string(bm) + "x" + std::to_string(bn) + "x" + std::to_string(BK);
  if (!want_config(cfg)) return;
  const std::string head = row_head(Epi ? "matmul_bias_silu" : "matmul", dname<T>(), s, cfg);
  try {
    auto a = ct::randn<T>({s.m, s.k}, 11).share();
    const auto bs = weight_sets<T>(s, 12);
    // The bias moves the products (standard deviation sqrt(K)) across SiLU's bend.
    auto bias = ct::randn<T>({s.n}, 15).share();
    auto make = [&](ct::Partition<T> c, int i) {
      const auto& b = bs[std::size_t(i) % bs.size()];
      if constexpr (Epi) return ct::launch(bench::matmul_bias_silu<T, BK>, std::move(c), a, b, bias);
      else return ct::launch(bench::matmul<T, BK>, std::move(c), a, b);
    };
    const auto ha = a.to_host(), hb = bs[0].to_host(), hbias = bias.to_host();
    matmul_row(
        head, s, make,
        [&](bool poisoned) { return (poisoned ? ct::full<T>({s.m, s.n}, T(NAN)) : ct::zeros<T>({s.m, s.n})).partition({bm, bn}); },
        [](ct::Partition<T> c) { return std::move(c).unpartition().to_host(); },
        [&](std::int64_t i, std::int64_t j) {
          double r = dot(ha, hb, s, i, j, false);
          if constexpr (Epi) {
            const double h = r + double(float(hbias[std::size_t(j)]));
            r = h / (1.0 + std::exp(-h));
          }
          return r;
        },
        c_bound<T>());
  } catch (const std::exception& e) {
    record_failure(head.c_str(), e);
  }
}

// The same product through UncheckedMut (bench::matmul_unchecked: C scattered by each tile block,
// kernel "matmul_unchecked"), checked like the rows above: issue 8's checked-vs-unchecked target.
template <class T, std::int64_t BM, std::int64_t BN, std::int64_t BK>
void run_unchecked(const Shape3& s) {
  const std::string cfg = std::to_string(BM) + "x" + std::to_string(BN) + "x" + std::to_string(BK);
  if (!want_config(cfg)) return;
  const std::string head = row_head("matmul_unchecked", dname<T>(), s, cfg);
  try {
    auto a = ct::randn<T>({s.m, s.k}, 11).share();
    auto b = ct::randn<T>({s.k, s.n}, 12).share();
    const std::vector<std::int64_t> grid{ct::ceil_div(s.m, BM), ct::ceil_div(s.n, BN)};
    auto make = [&](ct::UncheckedTensor<T> c, int) {
      return ct::launch(bench::matmul_unchecked<T, BM, BN, BK>, std::move(c), a, b).grid(grid);
    };
    const auto ha = a.to_host(), hb = b.to_host();
    matmul_row(
        head, s, make,
        [&](bool poisoned) {
          return ct::unchecked_mut(ct::unchecked, poisoned ? ct::full<T>({s.m, s.n}, T(NAN)) : ct::zeros<T>({s.m, s.n}));
        },
        [](ct::UncheckedTensor<T> c) { return std::move(c).into_tensor().to_host(); },
        [&](std::int64_t i, std::int64_t j) { return dot(ha, hb, s, i, j, false); }, c_bound<T>());
  } catch (const std::exception& e) {
    record_failure(head.c_str(), e);
  }
}

// The kernel library's split-K product (ctile/kernels/matmul_split_k.hpp, kernel "matmul": a
// configuration of the same product, "BMxBNxBK/sS", BK its default K step for BM rows) at the skinny shapes, `splits` 0 for the
// library's choice (the record names the splits it took), with the caller's workspace.
template <class T>
void run_split_k(const Shape3& s, std::int64_t bm, std::int64_t bn, std::int64_t splits, std::int64_t block_k = 0) {
  const std::int64_t bk = block_k ? block_k : ct::kernels::matmul_split_k_block_k(bm, bn);
  const std::int64_t sp = splits ? splits : ct::kernels::matmul_split_k_splits(s.m, s.n, s.k, bm, bn, bk);
  const std::string cfg = std::to_string(bm) + "x" + std::to_string(bn) + "x" + std::to_string(bk) + "/s" + std::to_string(sp);
  if (!want_config(cfg)) return;
  const std::string head = row_head("matmul", dname<T>(), s, cfg);
  try {
    auto a = ct::randn<T>({s.m, s.k}, 11).share();
    const auto bs = weight_sets<T>(s, 12);
    const ct::kernels::SplitKOptions opt{.splits = sp, .block_m = bm, .block_n = bn, .block_k = bk};
    // C and the f32 workspace travel together from call to call (the caller's workspace: no
    // allocation inside the replayed graph).
    using Out = std::pair<ct::Tensor<T>, ct::Tensor<float>>;
    auto make = [&](Out c, int i) {
      return ct::kernels::matmul_split_k(std::move(c.first), std::move(c.second), a, bs[std::size_t(i) % bs.size()], opt);
    };
    auto next = [](auto&& results) { return Out(std::move(std::get<0>(results)), std::move(std::get<1>(results))); };
    const auto ha = a.to_host(), hb = bs[0].to_host();
    matmul_row(
        head, s, make,
        [&](bool poisoned) {
          return Out(poisoned ? ct::full<T>({s.m, s.n}, T(NAN)) : ct::zeros<T>({s.m, s.n}),
                     ct::zeros<float>(ct::kernels::matmul_split_k_workspace(s.m, s.n, s.k, opt)));
        },
        [](ct::Tensor<T> c) { return c.to_host(); }, [&](std::int64_t i, std::int64_t j) { return dot(ha, hb, s, i, j, false); },
        c_bound<T>(), next);
  } catch (const std::exception& e) {
    record_failure(head.c_str(), e);
  }
}

// The FP8 product with per-tensor scales (bench::matmul_fp8, kernel "matmul_fp8": A [M, K] and
// Bt [N, K] in e4m3, C = (A @ Bt^T) * scale in bf16), checked against a float64 product of the same
// fp8 values; its peer is torch._scaled_mm (peers.py).
template <class T8, std::int64_t BK>
void run_fp8(const Shape3& s, std::int64_t bm, std::int64_t bn) {
  const std::string cfg = std::to_string(bm) + "x" + std::to_string(bn) + "x" + std::to_string(BK);
  if (!want_config(cfg)) return;
  const std::string head = row_head("matmul_fp8", "e4m3", s, cfg);
  try {
    auto a = ct::randn<T8>({s.m, s.k}, 16).share();
    auto bt = ct::randn<T8>({s.n, s.k}, 17).share();
    const float scale = 0.5f;  // scale_a * scale_b, exact
    auto make = [&](ct::Partition<ct::bf16> c, int) { return ct::launch(bench::matmul_fp8<T8, BK>, std::move(c), a, bt, scale); };
    const auto ha = a.to_host(), hb = bt.to_host();
    matmul_row(
        head, s, make,
        [&](bool poisoned) {
          return (poisoned ? ct::full<ct::bf16>({s.m, s.n}, ct::bf16(NAN)) : ct::zeros<ct::bf16>({s.m, s.n})).partition({bm, bn});
        },
        [](ct::Partition<ct::bf16> c) { return std::move(c).unpartition().to_host(); },
        [&](std::int64_t i, std::int64_t j) { return dot(ha, hb, s, i, j, true) * scale; }, c_bound<ct::bf16>());
  } catch (const std::exception& e) {
    record_failure(head.c_str(), e);
  }
}

// The decode product y = W x of the kernel library (ctile/kernels/gemv.hpp) for W [n, k]: R rows
// of y per tile block, K steps of BK. Checked on every row against a float64 product; timed like
// the matmul rows; TB/s counts W, x and y once.
template <class T, std::int64_t BK>
void run_gemv(std::int64_t n, std::int64_t k, std::int64_t r) {
  const std::string cfg = "R" + std::to_string(r) + "xBK" + std::to_string(BK);
  if (!want_config(cfg)) return;
  char head[512];
  std::snprintf(head, sizeof head, "{\"impl\":\"ctile\",\"kernel\":\"gemv\",\"dtype\":\"%s\",\"shape\":[%lld,%lld],\"config\":\"%s\"",
                dname<T>(), (long long)n, (long long)k, cfg.c_str());
  try {
    std::vector<decltype(ct::randn<T>({n, k}, 13).share())> ws;
    for (int i = 0, sets = rotation_sets(double(sizeof(T)) * double(n * k)); i < sets; ++i) ws.push_back(ct::randn<T>({n, k}, 13 + 1000 * i).share());
    const auto& w = ws[0];
    auto x = ct::randn<T>({k}, 14).share();
    auto make = [&](ct::Partition<T> y, int i) { return ct::launch(ct::kernels::gemv<T, BK>, std::move(y), ws[std::size_t(i) % ws.size()], x); };
    auto poisoned = ct::full<T>({n}, T(NAN)).partition({r});
    const auto t0 = Clock::now();
    auto [y0, w0, x0] = make(std::move(poisoned), 0).sync();
    const double first_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    const auto hy = std::move(y0).unpartition().to_host();
    const auto hw = w.to_host(), hx = x.to_host();
    double num = 0, den = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      double ref = 0;
      for (std::int64_t j = 0; j < k; ++j) ref += double(float(hw[std::size_t(i * k + j)])) * double(float(hx[std::size_t(j)]));
      const double got = double(float(hy[std::size_t(i)]));
      num += (got - ref) * (got - ref);
      den += ref * ref;
    }
    const double err = std::isnan(num) ? INFINITY : std::sqrt(num / std::max(den, 1e-300));
    const double bound = (std::is_same_v<T, ct::bf16> ? 0.5 * 0x1p-7 : 0.5 * 0x1p-10) + 1e-4;
    const bool ok = err <= bound;
    if (!ok) ++g.failures;
    const double ms = median_replay_ms(make, ct::zeros<T>({n}).partition({r}));
    const double bytes = double(sizeof(T)) * double(n * k + k + n);
    char buf[512];
    std::snprintf(buf, sizeof buf, ",\"ms\":%.6f,\"tbps\":%.3f,\"mbytes\":%.1f,\"rel_err\":%.3e,\"ok\":%s,\"first_launch_ms\":%.2f,\"timing\":\"replay\"}",
                  ms, bytes / (ms * 1e-3) / 1e12, bytes / 1e6, err, ok ? "true" : "false", first_ms);
    record(std::string(head) + buf);
  } catch (const std::exception& e) {
    record_failure(head, e);
  }
}

// Qwen3-4B and 8B projections at M = 1 (W [N, K]): q/k/v fused, o, gate/up fused, down.
const std::int64_t kGemvShapes[][2] = {{6144, 2560}, {2560, 4096}, {19456, 2560}, {2560, 9728},
                                       {6144, 4096}, {4096, 4096}, {24576, 4096}, {4096, 12288}};

void gemv_rows() {
  for (const auto& s : kGemvShapes) {
    if (!want_shape(std::to_string(s[0]) + "x" + std::to_string(s[1]))) continue;
    run_gemv<ct::bf16, 512>(s[0], s[1], 4);
    run_gemv<ct::bf16, 256>(s[0], s[1], 8);
    run_gemv<ct::bf16, 1024>(s[0], s[1], 4);
    run_gemv<ct::bf16, 512>(s[0], s[1], 2);  // small N: more tile blocks to spread over the SMs
    run_gemv<ct::bf16, 1024>(s[0], s[1], 2);
    run_gemv<ct::bf16, 512>(s[0], s[1], 8);
  }
}

// The same projections at M = 16 and M = 128 (a batch of decode tokens, a short prefill): the
// natural matmul kernel at a few tile shapes (M = 16 takes mma.sync tiles of 16 rows, M = 128
// wgmma tiles), and the library's split-K product (the long-K shapes have too few output tiles
// for the SMs); issue 8's target is >= 1.00x cuBLAS (peers.py's "skinny" rows).
void skinny_rows() {
  for (const std::int64_t m : {16, 128})
    for (const auto& w : kGemvShapes) {
      const Shape3 s{m, w[0], w[1]};
      if (!want_shape(s.str())) continue;
      // 64 x 64 tiles: one consumer warpgroup of wgmma (at M = 16 a tile block's 48 rows past the
      // end read zeros).
      run<ct::bf16, 64>(s, 64, 64);
      run<ct::bf16, 128>(s, 64, 64);  // K steps of twice the bytes: whether a K step's time is fixed
      run<ct::bf16, 256>(s, 64, 64);  // 3 ring slots of 64 KiB: only with TMA and the producer (tma = 1)
      run_split_k<ct::bf16>(s, 64, 64, 0);
      run_split_k<ct::bf16>(s, 64, 64, 2);
      run_split_k<ct::bf16>(s, 64, 64, 0, 64);  // K steps of 64: half the ring, two CTAs an SM can fit
      if (m == 16) {
        run<ct::bf16, 64>(s, 16, 64);
        run<ct::bf16, 64>(s, 16, 128);
        run_split_k<ct::bf16>(s, 16, 64, 0);
        run_split_k<ct::bf16>(s, 16, 64, 4);
        run_split_k<ct::bf16>(s, 16, 64, 4, 128);
        run_split_k<ct::bf16>(s, 16, 128, 8);
      } else {
        run<ct::bf16, 64>(s, 64, 128);
        run<ct::bf16, 128>(s, 64, 128);
        run<ct::bf16, 64>(s, 128, 128);
        // two consumer warpgroups (64 rows each) on half the CTAs of 64 x 64: whether a warpgroup's
        // K step or the SM's throughput sets the time
        run<ct::bf16, 128>(s, 128, 64);
        run_split_k<ct::bf16>(s, 128, 128, 0);
        run_split_k<ct::bf16>(s, 64, 128, 0);
      }
    }
}

template <class T>
void shape(const Shape3& s) {
  if (!want_shape(s.str())) return;
  run<T, 32>(s, 128, 128);
  run<T, 64>(s, 128, 128);
  run<T, 32>(s, 128, 256);
  run<T, 64>(s, 128, 256);  // 3 ring slots of 52 KiB: fits since the epilogue's scratch lies over them
  run<T, 32>(s, 256, 128);
  run<T, 32>(s, 64, 128);
}

// The fused epilogue (issue 8: >= 1.10x cuBLAS followed by a separate element-wise op), in the
// configuration that measures best for the plain product.
void epilogue_rows() {
  for (const Shape3& s : {Shape3{4096, 4096, 4096}, Shape3{8192, 8192, 8192}}) {
    if (!want_shape(s.str())) continue;
    run<ct::bf16, 64, true>(s, 128, 256);
    run_unchecked<ct::bf16, 128, 256, 64>(s);  // beside the checked kernel's row of the same configuration
  }
}

// FP8 (e4m3) at 8192^3 (issue 8: >= 0.90x torch._scaled_mm).
void fp8_rows() {
  const Shape3 s{8192, 8192, 8192};
  if (!want_shape(s.str())) return;
  run_fp8<ct::f8e4m3, 128>(s, 128, 128);
  run_fp8<ct::f8e4m3, 128>(s, 128, 256);
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--out") && i + 1 < argc) g.out.open(argv[++i], std::ios::app);
    else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) g.reps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--quick")) g.quick = true;
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) g.only = split_list(argv[++i]);
    else if (!std::strcmp(argv[i], "--rows") && i + 1 < argc) {
      // A comma-separated list, each group checked once here.
      for (const std::string& group : split_list(argv[++i])) {
        if (group != "shapes" && group != "epilogue" && group != "fp8" && group != "gemv" && group != "skinny") {
          std::fprintf(stderr, "ctile_gemm_bench: --rows: unknown group '%s' (shapes, epilogue, fp8, gemv, skinny)\n", group.c_str());
          return 2;
        }
        g.rows.push_back(group);
      }
    }
    else if (!std::strcmp(argv[i], "--config") && i + 1 < argc) g.config = split_list(argv[++i]);
    else if (!std::strcmp(argv[i], "--cubin-fp8") && i + 1 < argc) {
      namespace spec = ct::spec;
      using F = ct::f8e4m3;
      const auto r = ct::compile_only(bench::matmul_fp8<F, 128>, ct::CompileOptions{.arch = "sm_90a"},
                                      spec::partition<ct::bf16>({4096, 4096}, {128, 128}), spec::shared<F>({4096, 4096}),
                                      spec::shared<F>({4096, 4096}), 1.0f);
      std::ofstream(argv[++i], std::ios::binary).write(reinterpret_cast<const char*>(r.cubin.data()), std::streamsize(r.cubin.size()));
      return 0;
    }
    else if (!std::strcmp(argv[i], "--cubin") && i + 1 < argc) {
      namespace spec = ct::spec;
      using B = ct::bf16;
      const auto r = ct::compile_only(bench::matmul<B, 32>, ct::CompileOptions{.arch = "sm_90a"},
                                      spec::partition<B>({4096, 4096}, {128, 128}), spec::shared<B>({4096, 4096}),
                                      spec::shared<B>({4096, 4096}));
      std::ofstream(argv[++i], std::ios::binary).write(reinterpret_cast<const char*>(r.cubin.data()), std::streamsize(r.cubin.size()));
      return 0;
    }
    else {
      std::fprintf(stderr, "usage: ctile_gemm_bench [--out FILE] [--reps N] [--quick] [--only MxNxK] [--rows GROUPS] [--config CFG] [--cubin FILE] [--cubin-fp8 FILE]\n");
      return 2;
    }
  }
  std::fprintf(stderr, "ctile_gemm_bench on %s\n", ct::describe(ct::default_device()).c_str());
  {
    auto [z, v] = ct::launch(bench::fill, ct::zeros<float>({1024}).partition({1024}), 1.0f).sync();  // process start-up costs
    (void)z;
  }
  if (g.quick) {  // the CPU backend: small shapes, same kernels
    g.reps = std::min(g.reps, 3);
    shape<ct::bf16>({256, 256, 128});
    shape<ct::bf16>({200, 136, 300});
    run<ct::bf16, 64, true>({200, 136, 300}, 128, 256);
    run<ct::bf16, 64>({16, 136, 300}, 16, 64);  // a skinny row's configuration
    run_split_k<ct::bf16>({16, 136, 300}, 16, 64, 2);
    run_unchecked<ct::bf16, 128, 256, 64>({200, 136, 300});
    run_fp8<ct::f8e4m3, 128>({200, 136, 300}, 128, 128);
    run_gemv<ct::bf16, 512>(300, 1000, 4);
  } else {
    if (want_rows("shapes")) {
      for (const Shape3& s : {Shape3{4096, 4096, 4096}, Shape3{8192, 8192, 8192}, Shape3{2048, 2048, 2048},
                              Shape3{4000, 4000, 4000}, Shape3{8192, 8192, 512}, Shape3{512, 8192, 8192}})
        shape<ct::bf16>(s);
      shape<ct::f16>({4096, 4096, 4096});
    }
    if (want_rows("epilogue")) epilogue_rows();
    if (want_rows("fp8")) fp8_rows();
    if (want_rows("gemv")) gemv_rows();
    if (want_rows("skinny")) skinny_rows();
  }
  if (g.failures) std::fprintf(stderr, "ctile_gemm_bench: %d row(s) FAILED\n", g.failures);
  return g.failures ? 1 : 0;
}
