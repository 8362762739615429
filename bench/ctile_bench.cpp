// ctile's side of the benchmark suite: each kernel is checked against a float64 host reference,
// then timed as a chain of asynchronous launches (ownership passed launch to launch with then();
// device time over the chain from StreamTimer marks, and host time, after a warm-up; medians of
// several chains). Arrays are far larger than
// the 60 MiB L2 and the inputs rotate over several sets. Writes one JSON record per line.
//
//   ctile_bench [--quick] [--jit-only] [--out FILE] [--iters N] [--trials N] [--only NAME]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <ctile/runtime/timer.hpp>

#include "kernels.hpp"

namespace ct = ctile;
using Clock = std::chrono::steady_clock;

namespace {

bool g_quick = false;
int g_iters = 0, g_trials = 0;  // 0: the defaults of the mode
std::string g_only;              // run only the benchmarks whose name contains this
std::ofstream g_out;

int iters() { return g_iters > 0 ? g_iters : (g_quick ? 5 : 20); }
int trials() { return g_trials > 0 ? g_trials : (g_quick ? 3 : 7); }
bool selected(const std::string& name) { return g_only.empty() || name.find(g_only) != std::string::npos; }

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

void record(const std::string& json) {
  std::printf("%s\n", json.c_str());
  if (g_out) g_out << json << "\n";
}

std::string shape_json(const ct::Shape& s) {
  std::string r = "[";
  for (std::size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
  return r + "]";
}

template <class T>
double f(T v) {
  return static_cast<double>(static_cast<float>(v));
}

// Relative L2 error of `got` against `ref` over the sampled indices.
double rel_err(const std::vector<double>& got, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(got[i])) return INFINITY;
    num += (got[i] - ref[i]) * (got[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return std::sqrt(num / std::max(den, 1e-300));
}

// Times `iters` launches chained through then() (ownership passed launch to launch, enqueued back to
// back without waiting) after a warm-up chain. Returns the median over `trials` chains of the time
// per launch as the device sees it (StreamTimer marks around the chain: comparable with the peers'
// CUDA-event timings) and stores the host's time per launch (enqueue to completion) in g_host_ms.
double g_host_ms = 0;
template <class Out, class Make>
double time_chain(Out out, int iters, int trials, Make make) {
  std::vector<double> dev, host;
  const ct::Stream s = ct::default_stream();
  auto fut = make(std::move(out), 0).async_on(s);
  for (int t = 0; t < trials + 1; ++t) {  // the first chain is a warm-up
    auto r = std::move(fut).get();
    ct::StreamTimer timer(s);
    const auto t0 = Clock::now();
    timer.start();
    auto f2 = make(std::move(std::get<0>(r)), 1).async_on(s);
    for (int i = 1; i < iters; ++i)
      f2 = std::move(f2).then([&, i](auto&& rr) { return make(std::move(std::get<0>(rr)), i + 1); });
    timer.stop();
    auto r2 = std::move(f2).get();
    if (t > 0) {
      host.push_back(ms_since(t0) / iters);
      dev.push_back(timer.elapsed_ms() / iters);
    }
    fut = make(std::move(std::get<0>(r2)), 0).async_on(s);
  }
  (void)std::move(fut).get();
  std::sort(dev.begin(), dev.end());
  std::sort(host.begin(), host.end());
  g_host_ms = host[host.size() / 2];
  return dev[dev.size() / 2];
}

void emit(const char* kernel, const char* dtype, const ct::Shape& shape, double bytes, double ms, double err,
          double first_ms) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "{\"impl\":\"ctile\",\"kernel\":\"%s\",\"dtype\":\"%s\",\"shape\":%s,\"bytes\":%.0f,\"ms\":%.5f,"
                "\"tbps\":%.4f,\"host_ms\":%.5f,\"host_tbps\":%.4f,\"rel_err\":%.3e,\"first_launch_ms\":%.2f}",
                kernel, dtype, shape_json(shape).c_str(), bytes, ms, bytes / (ms * 1e-3) / 1e12, g_host_ms,
                bytes / (g_host_ms * 1e-3) / 1e12, err, first_ms);
  record(buf);
}

constexpr int kSets = 3;  // input sets rotated between launches

template <class T>
void bench_add(std::int64_t n, std::int64_t tile) {
  std::vector<ct::Shared<T>> xs, ys;
  for (int s = 0; s < kSets; ++s) {
    xs.push_back(ct::randn<T>({n}, 100 + s).share());
    ys.push_back(ct::randn<T>({n}, 200 + s).share());
  }
  auto make = [&](ct::Partition<T> z, int i) { return ct::launch(bench::add<T>, std::move(z), xs[i % kSets], ys[i % kSets]); };
  auto t0 = Clock::now();
  auto [z, x0, y0] = make(ct::full<T>({n}, T(NAN)).partition({tile}), 0).sync();
  const double first = ms_since(t0);
  const auto hz = std::move(z).unpartition().to_host();
  const auto hx = x0.to_host(), hy = y0.to_host();
  std::vector<double> got, ref;
  for (std::int64_t i = 0; i < n; i += 997) {
    got.push_back(f(hz[std::size_t(i)]));
    ref.push_back(f(T(float(f(hx[std::size_t(i)]) + f(hy[std::size_t(i)])))));
  }
  const double err = rel_err(got, ref);
  const double ms = time_chain(ct::zeros<T>({n}).partition({tile}), iters(), trials(), make);
  emit("add", std::string(ct::dtype_name(ct::dtype_of<T>)).c_str(), {n}, 3.0 * n * sizeof(T), ms, err, first);
}

template <class T>
void bench_saxpy(std::int64_t n, std::int64_t tile) {
  std::vector<ct::Shared<T>> xs;
  for (int s = 0; s < kSets; ++s) xs.push_back(ct::randn<T>({n}, 300 + s).share());
  auto make = [&](ct::Partition<T> y, int i) { return ct::launch(bench::saxpy<T>, std::move(y), 0.5f, xs[i % kSets]); };
  auto y_init = ct::randn<T>({n}, 400);
  const auto hy = y_init.to_host();
  auto t0 = Clock::now();
  auto [y, a, x0] = make(std::move(y_init).partition({tile}), 0).sync();
  const double first = ms_since(t0);
  const auto hout = std::move(y).unpartition().to_host();
  const auto hx = x0.to_host();
  std::vector<double> got, ref;
  for (std::int64_t i = 0; i < n; i += 997) {
    got.push_back(f(hout[std::size_t(i)]));
    ref.push_back(0.5 * f(hx[std::size_t(i)]) + f(hy[std::size_t(i)]));
  }
  const double err = rel_err(got, ref);
  const double ms = time_chain(ct::zeros<T>({n}).partition({tile}), iters(), trials(), make);
  emit("saxpy", std::string(ct::dtype_name(ct::dtype_of<T>)).c_str(), {n}, 3.0 * n * sizeof(T), ms, err, first);
}

// Row kernels: softmax, rms_norm, layer_norm over bf16 [rows, cols].
void bench_rows(const char* which, std::int64_t rows, std::int64_t cols) {
  using B = ct::bf16;
  std::vector<ct::Shared<B>> xs;
  for (int s = 0; s < kSets; ++s) xs.push_back(ct::randn<B>({rows, cols}, 500 + s).share());
  auto w = ct::rand<B>({cols}, 600, 0.5, 1.5).share();
  auto bvec = ct::randn<B>({cols}, 601).share();
  const float eps = 1e-5f;
  const std::string k = which;
  std::function<ct::Partition<B>(ct::Partition<B>, int)> run_sync;
  const ct::Shape tile = {1, cols};
  auto host_ref = [&](const std::vector<B>& hx, std::int64_t r, std::vector<double>& out) {
    const B* row = hx.data() + r * cols;
    double m = -INFINITY, s = 0, ss = 0;
    for (std::int64_t c = 0; c < cols; ++c) {
      m = std::max(m, f(row[c]));
      s += f(row[c]);
      ss += f(row[c]) * f(row[c]);
    }
    const auto hw = w.to_host();
    const auto hb = bvec.to_host();
    double se = 0;
    for (std::int64_t c = 0; c < cols; ++c) se += std::exp(f(row[c]) - m);
    const double mean = s / cols;
    double var = 0;
    for (std::int64_t c = 0; c < cols; ++c) var += (f(row[c]) - mean) * (f(row[c]) - mean);
    var /= cols;
    for (std::int64_t c = 0; c < cols; ++c) {
      if (k == "softmax") out.push_back(std::exp(f(row[c]) - m) / se);
      else if (k == "rms_norm") out.push_back(f(row[c]) / std::sqrt(ss / cols + eps) * f(hw[std::size_t(c)]));
      else out.push_back((f(row[c]) - mean) / std::sqrt(var + eps) * f(hw[std::size_t(c)]) + f(hb[std::size_t(c)]));
    }
  };
  double first = 0, err = 0, ms = 0, bytes = 0;
  auto check = [&](ct::Partition<B> y, const ct::Shared<B>& x0) {
    const auto hy = std::move(y).unpartition().to_host();
    const auto hx = x0.to_host();
    std::vector<double> got, ref;
    for (std::int64_t r = 0; r < rows; r += std::max<std::int64_t>(1, rows / 16)) {
      host_ref(hx, r, ref);
      for (std::int64_t c = 0; c < cols; ++c) got.push_back(f(hy[std::size_t(r * cols + c)]));
    }
    err = rel_err(got, ref);
  };
  
  if (k == "softmax") {
    auto make = [&](ct::Partition<B> y, int i) { return ct::launch(bench::softmax, std::move(y), xs[i % kSets]); };
    auto t0 = Clock::now();
    auto [y, x0] = make(ct::full<B>({rows, cols}, B(NAN)).partition(tile), 0).sync();
    first = ms_since(t0);
    check(std::move(y), x0);
    ms = time_chain(ct::zeros<B>({rows, cols}).partition(tile), iters(), trials(), make);
    bytes = 2.0 * rows * cols * 2;
  } else if (k == "rms_norm") {
    auto make = [&](ct::Partition<B> y, int i) { return ct::launch(bench::rms_norm, std::move(y), xs[i % kSets], w, eps); };
    auto t0 = Clock::now();
    auto [y, x0, w0, e0] = make(ct::full<B>({rows, cols}, B(NAN)).partition(tile), 0).sync();
    first = ms_since(t0);
    check(std::move(y), x0);
    ms = time_chain(ct::zeros<B>({rows, cols}).partition(tile), iters(), trials(), make);
    bytes = 2.0 * rows * cols * 2 + cols * 2;
  } else {
    auto make = [&](ct::Partition<B> y, int i) {
      return ct::launch(bench::layer_norm, std::move(y), xs[i % kSets], w, bvec, eps);
    };
    auto t0 = Clock::now();
    auto [y, x0, w0, b0, e0] = make(ct::full<B>({rows, cols}, B(NAN)).partition(tile), 0).sync();
    first = ms_since(t0);
    check(std::move(y), x0);
    ms = time_chain(ct::zeros<B>({rows, cols}).partition(tile), iters(), trials(), make);
    bytes = 2.0 * rows * cols * 2 + 2.0 * cols * 2;
  }
  emit(which, "bf16", {rows, cols}, bytes, ms, err, first);
}

void bench_sum(std::int64_t n) {
  constexpr std::int64_t kBlock = 16384;
  std::vector<ct::Shared<float>> xs;
  for (int s = 0; s < kSets; ++s) xs.push_back(ct::rand<float>({n}, 700 + s).share());
  const std::int64_t blocks = ct::ceil_div(n, kBlock);
  auto make = [&](ct::Tensor<float> acc, int i) {
    return ct::launch(bench::sum<kBlock>, std::move(acc), xs[i % kSets]).grid({blocks});
  };
  auto t0 = Clock::now();
  auto [acc, x0] = make(ct::zeros<float>({1}), 0).sync();
  const double first = ms_since(t0);
  double ref = 0;
  for (float v : x0.to_host()) ref += v;
  const double got = acc.to_host()[0];
  const double err = std::abs(got - ref) / std::abs(ref);
  const double ms = time_chain(ct::zeros<float>({1}), iters(), trials(), make);
  emit("sum", "f32", {n}, 4.0 * n, ms, err, first);
}

}  // namespace

int main(int argc, char** argv) {
  bool jit_only = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) g_quick = true;
    else if (!std::strcmp(argv[i], "--jit-only")) jit_only = true;
    else if (!std::strcmp(argv[i], "--out") && i + 1 < argc) g_out.open(argv[++i], std::ios::app);
    else if (!std::strcmp(argv[i], "--iters") && i + 1 < argc) g_iters = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--trials") && i + 1 < argc) g_trials = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) g_only = argv[++i];
    else {
      std::fprintf(stderr, "usage: ctile_bench [--quick] [--jit-only] [--out FILE] [--iters N] [--trials N] [--only NAME]\n");
      return 2;
    }
  }
  std::fprintf(stderr, "ctile_bench on %s\n", ct::default_device().str().c_str());
  const std::int64_t big = jit_only ? (1 << 16) : (g_quick ? (1 << 24) : (std::int64_t{1} << 26));  // 256 MiB f32
  if (selected("add")) {
    bench_add<float>(big, 4096);
    bench_add<ct::bf16>(big * 2, 8192);
  }
  if (selected("saxpy")) {
    bench_saxpy<float>(big, 4096);
    bench_saxpy<ct::bf16>(big * 2, 8192);
  }
  const std::int64_t scale = jit_only ? 64 : 1;
  for (const char* k : {"softmax", "rms_norm", "layer_norm"}) {
    if (!selected(k)) continue;
    bench_rows(k, 16384 / scale, 1024);
    bench_rows(k, 8192 / scale, 4096);
    bench_rows(k, 4096 / scale, 16384);
  }
  if (selected("sum")) bench_sum(big);
  return 0;
}
