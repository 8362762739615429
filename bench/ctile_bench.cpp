// ctile's side of the benchmark suite. Every row (a kernel variant at one shape) is
//   1. launched once on poisoned outputs (made before the clock starts) with a fresh disk cache, in a
//      process whose driver, context and NVRTC are loaded: its cold JIT time (first launch: trace,
//      passes, code generation, NVRTC, module load, run), and its result checked
//      against a float64 host reference: a relative L2 error over the row's bound (from the
//      error-bound table, tests/unit/cuda_codegen/error_bounds.hpp) is a failure;
//   2. timed as the peers are (bench/peers.py, device_time): per call, after a 256 MiB write that
//      evicts the L2, CUDA events (StreamTimer marks) around the one launch, median of the calls
//      after a warm-up.
// One JSON record per row and line; exit 1 when any row failed (wrong result or an error).
//
//   ctile_bench [--quick] [--jit-only] [--out FILE] [--reps N] [--only KERNEL,...] [--shapes RxC,...] [--wrong]
// --quick: smaller problems (rows / 32, 2^22 elements), 10 calls, an 8 MiB flush: runs on the CPU
// backend in a few minutes (every row is checked the same way). --jit-only: only step 1 at small sizes (rows / 64, 2^16 elements) that
// specialise to the same kernels: run after a full run with the same CTILE_CACHE_DIR, its first
// launches are the disk-cache hit times. --wrong: the add rows compute x - y, so they must fail
// (tests/gpu/CMakeLists.txt runs that as a self-test).
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include <ctile/runtime/timer.hpp>

#include "../tests/unit/cuda_codegen/error_bounds.hpp"
#include "kernels.hpp"

namespace ct = ctile;
namespace eb = error_bounds;
using Clock = std::chrono::steady_clock;

namespace {

// A compile configuration of the row kernels (--configs): warps, or the warps that give each thread
// `per_thread` elements of the tile; min CTAs per SM. All 0: the compiler's choice.
struct Config {
  int warps = 0, per_thread = 0, min_ctas = 0, stages = 0;
  int warps_for(std::int64_t tile_elems) const {
    if (!per_thread) return warps;
    return static_cast<int>(std::clamp<std::int64_t>(tile_elems / (32 * per_thread), 1, 32));
  }
};

struct Settings {
  bool quick = false, jit_only = false;
  bool wrong = false;  // --wrong: "add" computes x - y (the self-test that a wrong result fails)
  int reps = 0;  // 0: the mode's default
  std::string only;
  // --configs: the row kernels once per configuration, inputs made once (ablations beside the
  // default row, "0:0").
  std::vector<Config> configs = {Config{}};
  // --shapes: the row kernels' shapes (rows x columns) in place of the standard six.
  std::vector<std::pair<std::int64_t, std::int64_t>> shapes;
  std::ofstream out;
  int failures = 0;
} g;

int reps() { return g.reps > 0 ? g.reps : (g.quick ? 10 : 100); }
int warmup() { return g.quick ? 2 : 10; }
std::int64_t flush_elems() { return (g.quick ? (std::int64_t{8} << 20) : (std::int64_t{256} << 20)) / 4; }

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

std::string shape_json(const ct::Shape& s) {
  std::string r = "[";
  for (std::size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
  return r + "]";
}

template <class T>
double f(T v) {
  return static_cast<double>(static_cast<float>(v));
}
template <>
double f<double>(double v) {
  return v;
}

template <class T>
std::string dtype_str() {
  return std::string(ct::dtype_name(ct::dtype_of<T>));
}

std::int64_t next_pow2(std::int64_t n) {
  std::int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

// One benchmark row: a kernel variant at one shape.
struct Row {
  std::string kernel;  // "softmax", "add_unchecked", ...
  std::string dtype;
  ct::Shape shape;     // the problem's shape (element-wise: {n}; rows: {rows, cols})
  double bytes = 0;    // that must move: every input read once, every output written once
  double bound = 0;    // relative L2 error allowed against the float64 reference
  // The compile options the row is measured with, reported as they are. Per-kernel compile
  // options (precision mode, warps, stages: issue 7) attach here: a row carries its options,
  // with_options() applies them to every launch of the row, and a kernel measured in two modes
  // (softmax) gets one row per mode.
  std::string options = "default";
  ct::KernelOptions kopts{};  // applied to every launch of the row (--configs); default: the compiler's choice

  void kernel_options(int warps, int min_ctas, int stages) {
    kopts.warps = warps;
    kopts.min_ctas_per_sm = min_ctas;
    kopts.stages = stages;
    if (warps || min_ctas || stages)
      options = "warps=" + std::to_string(warps) + " min_ctas=" + std::to_string(min_ctas) + " stages=" + std::to_string(stages);
  }
};

// Applies the row's compile options to a launch: the launch as it is for the compiler's defaults,
// else launch.options(row.kopts).
template <class L>
std::decay_t<L> with_options(L&& launch, const Row& row) {
  if (row.kopts == ct::KernelOptions{}) return std::forward<L>(launch);
  return std::forward<L>(launch).options(row.kopts);
}

struct Result {
  double first_launch_ms = 0, rel_err = 0, ms = 0;
  int calls = 0;
};

void record(const std::string& json) {
  std::printf("%s\n", json.c_str());
  std::fflush(stdout);
  if (g.out) g.out << json << "\n" << std::flush;
}

void emit(const Row& row, const Result& r) {
  const bool ok = r.rel_err <= row.bound;  // false for NaN
  if (!ok) {
    ++g.failures;
    std::fprintf(stderr, "ctile_bench: WRONG RESULT: %s %s %s: relative error %.3e over its bound %.3e\n", row.kernel.c_str(),
                 row.dtype.c_str(), shape_json(row.shape).c_str(), r.rel_err, row.bound);
  }
  char buf[1024];
  const double tbps = r.ms > 0 ? row.bytes / (r.ms * 1e-3) / 1e12 : 0;
  std::snprintf(buf, sizeof buf,
                "{\"impl\":\"ctile\",\"kernel\":\"%s\",\"dtype\":\"%s\",\"shape\":%s,\"options\":\"%s\",\"bytes\":%.0f,"
                "\"ms\":%.6f,\"tbps\":%.6g,\"calls\":%d,\"rel_err\":%.3e,\"err_bound\":%.3e,\"ok\":%s,"
                "\"first_launch_ms\":%.2f,\"jit_only\":%s}",
                row.kernel.c_str(), row.dtype.c_str(), shape_json(row.shape).c_str(), row.options.c_str(), row.bytes, r.ms,
                tbps, r.calls, r.rel_err, row.bound, ok ? "true" : "false", r.first_launch_ms, g.jit_only ? "true" : "false");
  record(buf);
}

void emit_error(const Row& row, const std::string& what) {
  ++g.failures;
  std::fprintf(stderr, "ctile_bench: %s %s %s failed: %s\n", row.kernel.c_str(), row.dtype.c_str(),
               shape_json(row.shape).c_str(), what.c_str());
  std::string msg;
  for (char c : what.substr(0, 300)) msg += (c == '"' || c == '\\') ? '\'' : (c == '\n' ? ' ' : c);
  record("{\"impl\":\"ctile\",\"kernel\":\"" + row.kernel + "\",\"dtype\":\"" + row.dtype + "\",\"shape\":" +
         shape_json(row.shape) + ",\"ok\":false,\"error\":\"" + msg + "\"}");
}

// Relative L2 error of `got` against `ref`; infinite when `got` holds a NaN.
double rel_err(const std::vector<double>& got, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(got[i])) return INFINITY;
    num += (got[i] - ref[i]) * (got[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return std::sqrt(num / std::max(den, 1e-300));
}

// Per-call device time: `calls` launches, each after a write of the flush buffer (L2 eviction)
// and between two StreamTimer marks; the median in ms. `make(out, i)` makes the i-th launch from
// the output; `take(result)` gets the output back from its result tuple.
template <class Out, class Make, class Take>
double time_calls(Out out, int calls, Make make, Take take) {
  const ct::Stream s = ct::default_stream();
  auto flush = ct::zeros<float>({flush_elems()}).partition({4096});
  std::vector<double> dev;
  for (int i = 0; i < warmup() + calls; ++i) {
    auto fl = ct::launch(bench::fill, std::move(flush), 0.0f).async_on(s);
    ct::StreamTimer timer(s);
    timer.start();
    auto fut = make(std::move(out), i).async_on(s);
    timer.stop();
    auto r = std::move(fut).get();
    out = take(r);
    flush = std::move(std::get<0>(std::move(fl).get()));
    if (i >= warmup()) dev.push_back(timer.elapsed_ms());
  }
  std::sort(dev.begin(), dev.end());
  return dev[dev.size() / 2];
}

// --only a,b,c: the rows of these kernels (exact names).
bool selected(const std::string& name) {
  if (g.only.empty()) return true;
  const std::string list = "," + g.only + ",";
  return list.find("," + name + ",") != std::string::npos;
}

// Runs `body` (which fills the Result) for `row`, then records it; errors become failed rows.
void run_row(const Row& row, const std::function<void(Result&)>& body) {
  if (!selected(row.kernel)) return;
  Result r;
  try {
    body(r);
  } catch (const std::exception& e) {
    emit_error(row, e.what());
    return;
  }
  emit(row, r);
}

// ---- element-wise -------------------------------------------------------------------------------------

// x - y where x + y is expected (--wrong).
template <class T>
void wrong_add(ct::Mut<T, 1> z, ct::Ref<T, 1> x, ct::Ref<T, 1> y) {
  z.store((ct::load_like(x, z).template to<float>() - ct::load_like(y, z).template to<float>()).template to<T>());
}

template <class T>
void bench_add(std::int64_t n, std::int64_t tile) {
  Row row{"add", dtype_str<T>(), {n}, 3.0 * n * sizeof(T), eb::eps(ct::dtype_of<T>)};
  run_row(row, [&](Result& res) {
    auto x = ct::randn<T>({n}, 100).share(), y = ct::randn<T>({n}, 200).share();
    auto make = [&](ct::Partition<T> z, int) {
      return with_options(ct::launch(g.wrong ? wrong_add<T> : bench::add<T>, std::move(z), x, y), row);
    };
    auto poisoned = ct::full<T>({n}, T(NAN)).partition({tile});  // made before the clock starts, as the peers' outputs are
    const auto t0 = Clock::now();
    auto [z, x0, y0] = make(std::move(poisoned), 0).sync();
    res.first_launch_ms = ms_since(t0);
    const auto hz = std::move(z).unpartition().to_host();
    const auto hx = x.to_host(), hy = y.to_host();
    std::vector<double> got, ref;
    for (std::int64_t i = 0; i < n; i += 997) {
      got.push_back(f(hz[std::size_t(i)]));
      ref.push_back(f(hx[std::size_t(i)]) + f(hy[std::size_t(i)]));
    }
    res.rel_err = rel_err(got, ref);
    if (g.jit_only) return;
    res.calls = reps();
    res.ms = time_calls(ct::zeros<T>({n}).partition({tile}), res.calls, make, [](auto& r) { return std::move(std::get<0>(r)); });
  });
}

template <class T, std::int64_t B>
void bench_add_unchecked(std::int64_t n) {
  Row row{"add_unchecked", dtype_str<T>(), {n}, 3.0 * n * sizeof(T), eb::eps(ct::dtype_of<T>)};
  run_row(row, [&](Result& res) {
    auto x = ct::randn<T>({n}, 100).share(), y = ct::randn<T>({n}, 200).share();
    const std::int64_t blocks = ct::ceil_div(n, B);
    auto make = [&](ct::UncheckedTensor<T> z, int) {
      return with_options(ct::launch(bench::add_unchecked<T, B>, std::move(z), x, y).grid({blocks}), row);
    };
    auto poisoned = ct::unchecked_mut(ct::unchecked, ct::full<T>({n}, T(NAN)));
    const auto t0 = Clock::now();
    auto [z, x0, y0] = make(std::move(poisoned), 0).sync();
    res.first_launch_ms = ms_since(t0);
    const auto hz = std::move(z).into_tensor().to_host();
    const auto hx = x.to_host(), hy = y.to_host();
    std::vector<double> got, ref;
    for (std::int64_t i = 0; i < n; i += 997) {
      got.push_back(f(hz[std::size_t(i)]));
      ref.push_back(f(hx[std::size_t(i)]) + f(hy[std::size_t(i)]));
    }
    res.rel_err = rel_err(got, ref);
    if (g.jit_only) return;
    res.calls = reps();
    res.ms = time_calls(ct::unchecked_mut(ct::unchecked, ct::zeros<T>({n})), res.calls, make,
                        [](auto& r) { return std::move(std::get<0>(r)); });
  });
}

template <class T>
void bench_saxpy(std::int64_t n, std::int64_t tile) {
  // a * x + y in f32 (the multiply may be contracted into an FMA), rounded to T once.
  Row row{"saxpy", dtype_str<T>(), {n}, 3.0 * n * sizeof(T), eb::eps(ct::dtype_of<T>) + 2 * eb::eps(ct::DType::f32)};
  run_row(row, [&](Result& res) {
    auto x = ct::randn<T>({n}, 300).share();
    auto make = [&](ct::Partition<T> y, int) { return with_options(ct::launch(bench::saxpy<T>, std::move(y), 0.5f, x), row); };
    auto y_init = ct::randn<T>({n}, 400);
    const auto hy = y_init.to_host();
    const auto t0 = Clock::now();
    auto [y, a, x0] = make(std::move(y_init).partition({tile}), 0).sync();
    res.first_launch_ms = ms_since(t0);
    const auto hout = std::move(y).unpartition().to_host();
    const auto hx = x.to_host();
    std::vector<double> got, ref;
    for (std::int64_t i = 0; i < n; i += 997) {
      got.push_back(f(hout[std::size_t(i)]));
      ref.push_back(0.5 * f(hx[std::size_t(i)]) + f(hy[std::size_t(i)]));
    }
    res.rel_err = rel_err(got, ref);
    if (g.jit_only) return;
    res.calls = reps();
    res.ms = time_calls(ct::zeros<T>({n}).partition({tile}), res.calls, make, [](auto& r) { return std::move(std::get<0>(r)); });
  });
}

// ---- rows -----------------------------------------------------------------------------------------------

enum class RowKernel { Softmax, SoftmaxAccurate, SoftmaxUnchecked, RmsNorm, LayerNorm, AddRmsNorm };

const char* name_of(RowKernel k) {
  switch (k) {
    case RowKernel::Softmax: return "softmax";
    case RowKernel::SoftmaxAccurate: return "softmax_accurate";
    case RowKernel::SoftmaxUnchecked: return "softmax_unchecked";
    case RowKernel::RmsNorm: return "rms_norm";
    case RowKernel::LayerNorm: return "layer_norm";
    case RowKernel::AddRmsNorm: return "add_rms_norm";
  }
  return "?";
}

// The float64 reference of row `r` of each kernel (for add_rms_norm: y; h is checked apart).
void reference_row(RowKernel k, const double* x, const double* res, const std::vector<double>& w, const std::vector<double>& b,
                   std::int64_t cols, float eps, std::vector<double>& out, double (*round_h)(double)) {
  std::vector<double> v(x, x + cols);
  if (k == RowKernel::AddRmsNorm)
    for (std::int64_t c = 0; c < cols; ++c) v[std::size_t(c)] = round_h(x[c] + res[c]);  // h as the kernel stores it
  double m = -INFINITY, s = 0, ss = 0;
  for (double e : v) m = std::max(m, e), s += e, ss += e * e;
  const double mean = s / cols;
  double var = 0, se = 0;
  for (double e : v) var += (e - mean) * (e - mean), se += std::exp(e - m);
  var /= cols;
  for (std::int64_t c = 0; c < cols; ++c) {
    const double e = v[std::size_t(c)];
    switch (k) {
      case RowKernel::Softmax:
      case RowKernel::SoftmaxAccurate:
      case RowKernel::SoftmaxUnchecked: out.push_back(std::exp(e - m) / se); break;
      case RowKernel::RmsNorm:
      case RowKernel::AddRmsNorm: out.push_back(e / std::sqrt(ss / cols + eps) * w[std::size_t(c)]); break;
      case RowKernel::LayerNorm: out.push_back((e - mean) / std::sqrt(var + eps) * w[std::size_t(c)] + b[std::size_t(c)]); break;
    }
  }
}

// h = x + r rounded to T, as the kernel computes it (the sum of two 16-bit values is exact in f32).
template <class T>
double round_to(double v) {
  return f(T(static_cast<float>(v)));
}

template <class T>
void bench_rows(RowKernel which, std::int64_t rows, std::int64_t cols) {
  const std::int64_t bn = next_pow2(cols);
  const double es = sizeof(T);
  const double rc = static_cast<double>(rows) * static_cast<double>(cols);
  double bytes = 0, model = 0;
  switch (which) {
    case RowKernel::Softmax: bytes = 2 * rc * es, model = eb::softmax_fast_rel_ulps(cols); break;
    case RowKernel::SoftmaxAccurate:
    case RowKernel::SoftmaxUnchecked: bytes = 2 * rc * es, model = eb::softmax_rel_ulps(cols); break;
    case RowKernel::RmsNorm: bytes = 2 * rc * es + cols * es, model = eb::rms_norm_rel_ulps(cols); break;
    case RowKernel::LayerNorm: bytes = 2 * rc * es + 2 * cols * es, model = eb::layer_norm_scale_ulps(cols); break;
    case RowKernel::AddRmsNorm: bytes = 4 * rc * es + cols * es, model = eb::rms_norm_rel_ulps(cols); break;
  }
  Row base{name_of(which), dtype_str<T>(), {rows, cols}, bytes,
           eb::eps(ct::dtype_of<T>) + model * eb::eps(ct::DType::f32)};
  if (!selected(base.kernel)) return;
  // The inputs, made once for every configuration of the row.
  auto x = ct::randn<T>({rows, cols}, 500).share();
  auto resid = ct::randn<T>({rows, cols}, 501).share();
  auto w = ct::rand<T>({cols}, 600, 0.5, 1.5).share();
  auto bvec = ct::randn<T>({cols}, 601).share();
  const float eps = 1e-5f;
  std::vector<std::array<int, 3>> done;  // (warps, min CTAs, stages) measured: eN items can coincide
  for (const Config& c : g.configs) {
  const std::array<int, 3> wcs{c.warps_for(bn), c.min_ctas, c.stages};
  if (std::find(done.begin(), done.end(), wcs) != done.end()) continue;
  done.push_back(wcs);
  Row row = base;
  row.kernel_options(wcs[0], wcs[1], wcs[2]);
  if (which == RowKernel::Softmax) row.options = row.options == "default" ? "approx exp, approx division (per op)"
                                                                           : "approx exp, approx division (per op), " + row.options;
  run_row(row, [&](Result& res) {
    const ct::Shape tile = {1, bn};
    std::vector<T> hy, hh;  // outputs of the first launch
    // The poisoned outputs are made before the clock starts (the first launch is what is timed, as
    // for the peers, whose outputs exist before their first call).
    auto out0 = ct::full<T>({rows, cols}, T(NAN));
    std::optional<ct::Tensor<T>> out1;
    if (which == RowKernel::AddRmsNorm) out1.emplace(ct::full<T>({rows, cols}, T(NAN)));
    const auto t0 = Clock::now();
    auto take0 = [](auto& r) { return std::move(std::get<0>(r)); };
    std::function<double()> timed;
    switch (which) {
      case RowKernel::Softmax: {
        auto make = [&](ct::Partition<T> y, int) { return with_options(ct::launch(bench::softmax<T>, std::move(y), x), row); };
        auto [y, x0] = make(std::move(out0).partition(tile), 0).sync();
        res.first_launch_ms = ms_since(t0);
        hy = std::move(y).unpartition().to_host();
        timed = [&, make] { return time_calls(ct::zeros<T>({rows, cols}).partition(tile), reps(), make, take0); };
        break;
      }
      case RowKernel::SoftmaxAccurate: {
        auto make = [&](ct::Partition<T> y, int) { return with_options(ct::launch(bench::softmax_accurate<T>, std::move(y), x), row); };
        auto [y, x0] = make(std::move(out0).partition(tile), 0).sync();
        res.first_launch_ms = ms_since(t0);
        hy = std::move(y).unpartition().to_host();
        timed = [&, make] { return time_calls(ct::zeros<T>({rows, cols}).partition(tile), reps(), make, take0); };
        break;
      }
      case RowKernel::SoftmaxUnchecked: {
        if (bn != 4096) throw std::runtime_error("softmax_unchecked is instantiated for rows of up to 4096 columns");
        auto make = [&](ct::UncheckedTensor<T> y, int) {
          return with_options(ct::launch(bench::softmax_unchecked<T, 4096>, std::move(y), x).grid({rows}), row);
        };
        auto [y, x0] = make(ct::unchecked_mut(ct::unchecked, std::move(out0)), 0).sync();
        res.first_launch_ms = ms_since(t0);
        hy = std::move(y).into_tensor().to_host();
        timed = [&, make] {
          return time_calls(ct::unchecked_mut(ct::unchecked, ct::zeros<T>({rows, cols})), reps(), make, take0);
        };
        break;
      }
      case RowKernel::RmsNorm: {
        auto make = [&](ct::Partition<T> y, int) { return with_options(ct::launch(bench::rms_norm<T>, std::move(y), x, w, eps), row); };
        auto [y, x0, w0, e0] = make(std::move(out0).partition(tile), 0).sync();
        res.first_launch_ms = ms_since(t0);
        hy = std::move(y).unpartition().to_host();
        timed = [&, make] { return time_calls(ct::zeros<T>({rows, cols}).partition(tile), reps(), make, take0); };
        break;
      }
      case RowKernel::LayerNorm: {
        auto make = [&](ct::Partition<T> y, int) {
          return with_options(ct::launch(bench::layer_norm<T>, std::move(y), x, w, bvec, eps), row);
        };
        auto [y, x0, w0, b0, e0] = make(std::move(out0).partition(tile), 0).sync();
        res.first_launch_ms = ms_since(t0);
        hy = std::move(y).unpartition().to_host();
        timed = [&, make] { return time_calls(ct::zeros<T>({rows, cols}).partition(tile), reps(), make, take0); };
        break;
      }
      case RowKernel::AddRmsNorm: {
        using Outs = std::pair<ct::Partition<T>, ct::Partition<T>>;
        auto make = [&](Outs o, int) {
          return with_options(ct::launch(bench::add_rms_norm<T>, std::move(o.first), std::move(o.second), x, resid, w, eps), row);
        };
        auto [h, y, x0, r0, w0, e0] = make(Outs{std::move(out0).partition(tile), std::move(*out1).partition(tile)}, 0).sync();
        res.first_launch_ms = ms_since(t0);
        hh = std::move(h).unpartition().to_host();
        hy = std::move(y).unpartition().to_host();
        timed = [&, make] {
          return time_calls(Outs{ct::zeros<T>({rows, cols}).partition(tile), ct::zeros<T>({rows, cols}).partition(tile)}, reps(),
                            make, [](auto& r) { return Outs{std::move(std::get<0>(r)), std::move(std::get<1>(r))}; });
        };
        break;
      }
    }
    // Check 16 rows against the float64 reference (for add_rms_norm both h and y).
    const auto hx = x.to_host(), hr = resid.to_host(), hw = w.to_host(), hb = bvec.to_host();
    std::vector<double> wd, bd;
    for (auto v : hw) wd.push_back(f(v));
    for (auto v : hb) bd.push_back(f(v));
    std::vector<double> got, ref, xr(static_cast<std::size_t>(cols)), rr(static_cast<std::size_t>(cols));
    std::vector<double> hgot, href;
    for (std::int64_t r = 0; r < rows; r += std::max<std::int64_t>(1, rows / 16)) {
      for (std::int64_t c = 0; c < cols; ++c) {
        xr[std::size_t(c)] = f(hx[std::size_t(r * cols + c)]);
        rr[std::size_t(c)] = f(hr[std::size_t(r * cols + c)]);
        got.push_back(f(hy[std::size_t(r * cols + c)]));
        if (which == RowKernel::AddRmsNorm) {
          hgot.push_back(f(hh[std::size_t(r * cols + c)]));
          href.push_back(xr[std::size_t(c)] + rr[std::size_t(c)]);
        }
      }
      reference_row(which, xr.data(), rr.data(), wd, bd, cols, eps, ref, &round_to<T>);
    }
    res.rel_err = rel_err(got, ref);
    if (which == RowKernel::AddRmsNorm) res.rel_err = std::max(res.rel_err, rel_err(hgot, href));
    if (g.jit_only) return;
    res.calls = reps();
    res.ms = timed();
  });
  }
}

void bench_sum(std::int64_t n) {
  constexpr std::int64_t kBlock = 16384;
  // Positive terms: the bound relative to the sum is the accumulation bound of the table.
  Row row{"sum", "f32", {n}, 4.0 * n, (eb::accumulation_ulps(n) + 1) * eb::eps(ct::DType::f32)};
  run_row(row, [&](Result& res) {
    auto x = ct::rand<float>({n}, 700).share();
    const std::int64_t blocks = ct::ceil_div(n, kBlock);
    auto make = [&](ct::Tensor<float> acc, int) {
      return with_options(ct::launch(bench::sum<kBlock>, std::move(acc), x).grid({blocks}), row);
    };
    auto acc0 = ct::zeros<float>({1});
    const auto t0 = Clock::now();
    auto [acc, x0] = make(std::move(acc0), 0).sync();
    res.first_launch_ms = ms_since(t0);
    double ref = 0;
    for (float v : x.to_host()) ref += v;
    const double got = acc.to_host()[0];
    res.rel_err = std::isnan(got) ? INFINITY : std::abs(got - ref) / std::abs(ref);
    if (g.jit_only) return;
    res.calls = reps();
    res.ms = time_calls(ct::zeros<float>({1}), res.calls, make, [](auto& r) { return std::move(std::get<0>(r)); });
  });
}

// Calls `item` on each comma-separated item of `text` (an empty text is one empty item) until it
// returns false; true when every item was taken.
template <class F>
bool each_item(const std::string& text, F&& item) {
  for (std::size_t at = 0; at <= text.size();) {
    const std::size_t end = std::min(text.find(',', at), text.size());
    if (!item(text.substr(at, end - at))) return false;
    at = end + 1;
  }
  return true;
}

// --shapes 4096x8192,...: rows x columns, each at least 1 (--quick and --jit-only divide the rows as
// for the standard shapes).
bool parse_shapes(const std::string& text) {
  g.shapes.clear();
  return each_item(text, [](const std::string& item) {
    long long r = 0, c = 0;
    char tail = 0;
    if (std::sscanf(item.c_str(), "%lldx%lld%c", &r, &c, &tail) != 2 || r < 1 || c < 1) {
      std::fprintf(stderr, "ctile_bench: --shapes wants RxC items (rows and columns at least 1), got '%s'\n", item.c_str());
      return false;
    }
    g.shapes.emplace_back(r, c);
    return true;
  });
}

// --configs: a comma-separated list of W:C[:S] (warps W: 0 or a power of two up to 32) or eN:C[:S]
// (the warps that give each thread N elements of the row's tile, at most 128), each with min CTAs
// per SM C (0..8) and optionally stages S (0..4: tile blocks' loads ahead on a persistent grid).
bool parse_configs(const std::string& text) {
  g.configs.clear();
  return each_item(text, [](const std::string& item) {
    Config c;
    const bool per_thread = !item.empty() && item[0] == 'e';
    int n = -1;
    const int got = std::sscanf(item.c_str() + (per_thread ? 1 : 0), "%d:%d:%d", &n, &c.min_ctas, &c.stages);
    if (got < 2 || n < 0 || n > (per_thread ? 128 : 32) || (n & (n - 1)) != 0 || (per_thread && n == 0) || c.min_ctas < 0 ||
        c.min_ctas > 8 || c.stages < 0 || c.stages > 4) {
      std::fprintf(stderr,
                   "ctile_bench: --configs wants W:C[:S] or eN:C[:S] items (W 0 or a power of two <= 32, N a power of two "
                   "<= 128, C 0..8, S 0..4), got '%s'\n",
                   item.c_str());
      return false;
    }
    (per_thread ? c.per_thread : c.warps) = n;
    g.configs.push_back(c);
    return true;
  });
}

// A first launch of an unrelated kernel: the process's one-time costs (driver, context, NVRTC
// load) are not charged to the first row's JIT time.
void warm_up_process() {
  auto [z, v] = ct::launch(bench::fill, ct::zeros<float>({1024}).partition({1024}), 1.0f).sync();
  (void)z;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) g.quick = true;
    else if (!std::strcmp(argv[i], "--jit-only")) g.jit_only = true;
    else if (!std::strcmp(argv[i], "--wrong")) g.wrong = true;
    else if (!std::strcmp(argv[i], "--out") && i + 1 < argc) g.out.open(argv[++i], std::ios::app);
    else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) g.reps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) g.only = argv[++i];
    else if (!std::strcmp(argv[i], "--configs") && i + 1 < argc && parse_configs(argv[++i])) continue;
    else if (!std::strcmp(argv[i], "--shapes") && i + 1 < argc && parse_shapes(argv[++i])) continue;
    else {
      std::fprintf(stderr,
                   "usage: ctile_bench [--quick] [--jit-only] [--out FILE] [--reps N] [--only KERNEL,...] [--configs W:C,...] "
                   "[--shapes RxC,...] [--wrong]\n");
      return 2;
    }
  }
  std::fprintf(stderr, "ctile_bench on %s: per-call device time, L2 flushed (%lld MiB written) before each call, median of %d\n",
               ct::describe(ct::default_device()).c_str(), static_cast<long long>(flush_elems() * 4 >> 20), reps());
  warm_up_process();
  // Element-wise: 256 MiB per array; quick: 16 MiB; jit-only: 256 KiB (same specialisations).
  const std::int64_t n32 = g.jit_only ? (1 << 16) : (g.quick ? (1 << 22) : (std::int64_t{1} << 26));
  bench_add<float>(n32, 4096);
  bench_add<ct::bf16>(2 * n32, 8192);
  bench_add<ct::f16>(2 * n32, 8192);
  bench_add_unchecked<float, 4096>(n32);
  bench_add_unchecked<ct::bf16, 8192>(2 * n32);
  bench_saxpy<float>(n32, 4096);
  bench_saxpy<ct::bf16>(2 * n32, 8192);
  bench_saxpy<ct::f16>(2 * n32, 8192);
  // Rows: the three shapes tuned for, three that were not (widths that are not powers of two use
  // a power-of-two tile with masking), and an f32 variant at one shape; --shapes: bf16 at those only.
  const std::int64_t scale = g.jit_only ? 64 : (g.quick ? 32 : 1);
  using Shapes = std::vector<std::pair<std::int64_t, std::int64_t>>;
  const bool standard = g.shapes.empty();
  const Shapes shapes = standard ? Shapes{{16384, 1024}, {8192, 4096}, {4096, 16384}, {32768, 1000}, {8192, 5120}, {1024, 32768}}
                                 : g.shapes;
  auto rows_of = [&](std::int64_t r) { return std::max<std::int64_t>(1, r / scale); };
  for (RowKernel k : {RowKernel::Softmax, RowKernel::SoftmaxAccurate, RowKernel::RmsNorm, RowKernel::LayerNorm}) {
    for (auto [r, c] : shapes) bench_rows<ct::bf16>(k, rows_of(r), c);
    if (standard) bench_rows<float>(k, 8192 / scale, 4096);
  }
  if (standard) bench_rows<ct::bf16>(RowKernel::SoftmaxUnchecked, 8192 / scale, 4096);
  for (auto [r, c] : standard ? Shapes{{16384, 1024}, {8192, 4096}, {4096, 16384}} : shapes)
    bench_rows<ct::bf16>(RowKernel::AddRmsNorm, rows_of(r), c);
  bench_sum(n32);
  if (g.failures > 0) std::fprintf(stderr, "ctile_bench: %d row(s) FAILED (wrong result or error)\n", g.failures);
  return g.failures > 0 ? 1 : 0;
}
