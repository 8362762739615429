// The SIMT benchmarks: the five SIMT kernels of examples/simt_kernels.hpp against the same kernels
// written as raw CUDA C++ (raw_kernels.hpp), both compiled by NVRTC and launched through ctile's
// streams. Each pair is first checked (the raw kernel's output against the SIMT kernel's, and the
// sum against a float64 host sum), then timed: chains of launches passed on with then() (enqueued
// back to back), device time from StreamTimer marks (CUDA events), the median over several chains
// after a warm-up. Arrays are 256 MiB - 1 GiB, far larger than the 60 MiB L2. One JSON record per
// line; bench/simt/report.py makes the table (with torch.sum from torch_peers.py).
//
//   ctile_simt_bench [--quick] [--out FILE] [--only NAME] [--iters N] [--trials N]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <ctile/runtime/timer.hpp>

#include "../../examples/simt_kernels.hpp"
#include "raw_kernels.hpp"

namespace ct = ctile;
namespace cs = ctile::simt;
using namespace simt_examples;

namespace {

bool g_quick = false;
int g_iters = 0, g_trials = 0;
std::string g_only;
std::ofstream g_out;
ct::Device g_dev;
cs::DeviceLimits g_lim;

int iters() { return g_iters > 0 ? g_iters : (g_quick ? 3 : 20); }
int trials() { return g_trials > 0 ? g_trials : (g_quick ? 2 : 7); }
bool selected(const std::string& name) { return g_only.empty() || name.find(g_only) != std::string::npos; }

std::string jstr(const std::string& s) {
  std::string o = "\"";
  for (char c : s) o += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return o + "\"";
}

void record(const std::string& kernel, const std::string& impl, const std::string& size, double bytes, double ms,
            const std::string& check) {
  char buf[1024];
  std::snprintf(buf, sizeof buf,
                "{\"suite\": \"simt\", \"kernel\": %s, \"impl\": %s, \"size\": %s, \"bytes\": %.0f, \"ms\": %.6f, "
                "\"gbps\": %.2f, \"device\": %s, \"check\": %s}",
                jstr(kernel).c_str(), jstr(impl).c_str(), jstr(size).c_str(), bytes, ms, bytes / ms / 1e6,
                jstr(ct::describe(g_dev)).c_str(), jstr(check).c_str());
  std::printf("%s\n", buf);
  if (g_out) g_out << buf << "\n";
}

// Milliseconds per launch of two kernels measured side by side: `iters` launches chained with
// then(), each getting the previous one's first payload element (the output tensor) back;
// StreamTimer around the chain. The two kernels' chains alternate (a, b, a, b, ...), so drift of
// the clocks or of the memory over the run falls on both alike; each gets the median of `trials`
// chains after one warm-up chain.
template <class Out, class Make>
struct Chain {
  Out out;
  Make make;
  std::vector<double> per_launch;

  void run(const ct::Stream& s, bool keep) {
    auto fut = make(std::move(out)).async_on(s);  // one launch outside the timing: the output back in flight
    auto r = std::move(fut).get();
    ct::StreamTimer timer(s);
    timer.start();
    auto f = make(std::move(std::get<0>(r))).async_on(s);
    for (int i = 1; i < iters(); ++i)
      f = std::move(f).then([&](auto&& prev) { return make(std::move(std::get<0>(prev))); });
    timer.stop();
    out = std::move(std::get<0>(std::move(f).get()));
    if (keep) per_launch.push_back(timer.elapsed_ms() / iters());
  }
  double median() {
    std::sort(per_launch.begin(), per_launch.end());
    return per_launch[per_launch.size() / 2];
  }
};

template <class Out, class MakeA, class MakeB>
std::pair<double, double> time_pair(Out out_a, MakeA make_a, Out out_b, MakeB make_b) {
  const ct::Stream s = ct::default_stream(g_dev);
  Chain<Out, MakeA> a{std::move(out_a), make_a, {}};
  Chain<Out, MakeB> b{std::move(out_b), make_b, {}};
  for (int t = 0; t < trials() + 1; ++t) {
    a.run(s, t > 0);
    b.run(s, t > 0);
  }
  return {a.median(), b.median()};
}

// The SIMT kernel and its raw twin, side by side (time_pair), one record each.
template <class Out, class MakeS, class MakeR>
void record_pair(const std::string& kernel, const std::string& size, double bytes, Out out_s, MakeS simt, Out out_r, MakeR rawl,
                 const std::string& check) {
  const auto [ms_simt, ms_raw] = time_pair(std::move(out_s), simt, std::move(out_r), rawl);
  record(kernel, "simt", size, bytes, ms_simt, check);
  record(kernel, "raw", size, bytes, ms_raw, check);
}

cs::RawKernel raw(const char* src, const char* entry) { return cs::RawKernel::from_source(ct::unchecked, src, entry); }

template <class T>
std::string compare_exact(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return "size mismatch";
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!(a[i] == b[i])) return "MISMATCH at element " + std::to_string(i);
  return "ok";
}

void vector_add() {
  const std::int64_t n = g_quick ? (1 << 24) : (std::int64_t{1} << 26);  // 256 MiB per array
  const double bytes = 3.0 * 4 * n;
  auto a = ct::rand<float>({n}, 1, g_dev).share();
  auto b = ct::rand<float>({n}, 2, g_dev).share();
  const auto k = raw(simt_bench::kRawVectorAdd, "raw_vector_add");
  auto simt = [&](ct::Tensor<float> out) { return cs::prepare(simt_vector_add, cs::cover(n), std::move(out), a, b); };
  auto rawl = [&](ct::Tensor<float> out) {
    return cs::launch_raw(ct::unchecked, k, cs::grid((n + 255) / 256), cs::Dims{256}, 0, std::move(out), a, b, static_cast<long>(n));
  };
  const auto s = std::get<0>(simt(ct::full<float>({n}, NAN, g_dev)).sync()).to_host();
  const auto r = std::get<0>(rawl(ct::full<float>({n}, NAN, g_dev)).sync()).to_host();
  const std::string check = compare_exact(s, r);
  const std::string size = std::to_string(n) + " f32";
  record_pair("vector_add_scalar", size, bytes, ct::zeros<float>({n}, g_dev), simt, ct::zeros<float>({n}, g_dev), rawl, check);
  // The same sum with 16-byte vectors, four elements per thread (what torch.add does): the row
  // set against torch.add.
  const auto k4 = raw(simt_bench::kRawVectorAdd4, "raw_vector_add4");
  const std::int64_t threads = (n + 3) / 4;
  auto simt4 = [&](ct::Tensor<float> out) { return cs::prepare(simt_vector_add4, cs::cover(threads), std::move(out), a, b); };
  auto raw4 = [&](ct::Tensor<float> out) {
    return cs::launch_raw(ct::unchecked, k4, cs::grid((threads + 255) / 256), cs::Dims{256}, 0, std::move(out), a, b,
                          static_cast<long>(n));
  };
  const auto s4 = std::get<0>(simt4(ct::full<float>({n}, NAN, g_dev)).sync()).to_host();
  const auto r4 = std::get<0>(raw4(ct::full<float>({n}, NAN, g_dev)).sync()).to_host();
  std::string check4 = compare_exact(s4, r4);
  if (check4 == "ok" && compare_exact(s4, s) != "ok") check4 = "MISMATCH against the one-element-per-thread kernels";
  record_pair("vector_add", size, bytes, ct::zeros<float>({n}, g_dev), simt4, ct::zeros<float>({n}, g_dev), raw4, check4);
}

void sum() {
  const std::int64_t n = g_quick ? (1 << 24) : (std::int64_t{1} << 28);  // 1 GiB
  const double bytes = 4.0 * n;
  auto x = ct::rand<float>({n}, 3, -1.0, 1.0, g_dev).share();
  // One wave of 4 blocks per SM (1024 threads, each with four 16-byte loads in flight), so that no
  // SM runs a partial second wave.
  const std::int64_t blocks = static_cast<std::int64_t>(g_lim.multiprocessors) * 4;
  const auto k = raw(simt_bench::kRawSum, "raw_sum");
  auto simt = [&](ct::Tensor<float> out) { return cs::prepare(simt_sum, cs::grid(blocks), std::move(out), x); };
  auto rawl = [&](ct::Tensor<float> out) {
    return cs::launch_raw(ct::unchecked, k, cs::grid(blocks), cs::Dims{256}, 0, std::move(out), x, static_cast<long>(n));
  };
  double ref = 0;
  for (float v : x.to_host()) ref += v;
  const double s = std::get<0>(simt(ct::zeros<float>({1}, g_dev)).sync()).to_host()[0];
  const double r = std::get<0>(rawl(ct::zeros<float>({1}, g_dev)).sync()).to_host()[0];
  const double tol = 1e-6 * std::sqrt(static_cast<double>(n)) + 1e-3;
  const std::string check = std::abs(s - ref) <= tol && std::abs(r - ref) <= tol
                                ? "ok"
                                : "MISMATCH: simt " + std::to_string(s) + ", raw " + std::to_string(r) + ", float64 " +
                                      std::to_string(ref);
  const std::string size = std::to_string(n) + " f32, " + std::to_string(blocks) + " blocks";
  record_pair("sum", size, bytes, ct::zeros<float>({1}, g_dev), simt, ct::zeros<float>({1}, g_dev), rawl, check);
}

void histogram() {
  const std::int64_t n = g_quick ? (1 << 26) : (std::int64_t{1} << 30);  // 1 GiB of bytes
  const double bytes = static_cast<double>(n);
  auto data = ct::rand<std::uint8_t>({n}, 4, 0, 256, g_dev).share();
  const std::int64_t blocks = static_cast<std::int64_t>(g_lim.multiprocessors) * 4;  // one wave
  const auto k = raw(simt_bench::kRawHistogram, "raw_histogram");
  auto simt = [&](ct::Tensor<std::uint32_t> out) { return cs::prepare(simt_histogram, cs::grid(blocks), std::move(out), data); };
  auto rawl = [&](ct::Tensor<std::uint32_t> out) {
    return cs::launch_raw(ct::unchecked, k, cs::grid(blocks), cs::Dims{256}, 0, std::move(out), data, static_cast<long>(n));
  };
  const auto s = std::get<0>(simt(ct::zeros<std::uint32_t>({256}, g_dev)).sync()).to_host();
  const auto r = std::get<0>(rawl(ct::zeros<std::uint32_t>({256}, g_dev)).sync()).to_host();
  std::uint64_t total = 0;
  for (auto v : s) total += v;
  std::string check = compare_exact(s, r);
  if (check == "ok" && total != static_cast<std::uint64_t>(n)) check = "MISMATCH: the bins add up to " + std::to_string(total);
  const std::string size = std::to_string(n) + " u8, 256 bins, " + std::to_string(blocks) + " blocks";
  record_pair("histogram", size, bytes, ct::zeros<std::uint32_t>({256}, g_dev), simt, ct::zeros<std::uint32_t>({256}, g_dev), rawl, check);
}

void stencil() {
  const std::int64_t rows = g_quick ? 4096 : 16384, cols = rows;  // 1 GiB per matrix
  const double bytes = 2.0 * 4 * rows * cols;
  auto in = ct::rand<float>({rows, cols}, 5, g_dev).share();
  const auto k = raw(simt_bench::kRawStencil, "raw_stencil");
  auto simt = [&](ct::Tensor<float> out) { return cs::prepare(simt_stencil, cs::cover_2d(rows, cols), std::move(out), in); };
  auto rawl = [&](ct::Tensor<float> out) {
    return cs::launch_raw(ct::unchecked, k, cs::grid((cols + 31) / 32, (rows + 7) / 8), cs::Dims{32, 8}, 0, std::move(out), in,
                          static_cast<long>(rows), static_cast<long>(cols));
  };
  const auto s = std::get<0>(simt(ct::full<float>({rows, cols}, NAN, g_dev)).sync()).to_host();
  const auto r = std::get<0>(rawl(ct::full<float>({rows, cols}, NAN, g_dev)).sync()).to_host();
  const std::string check = compare_exact(s, r);
  const std::string size = std::to_string(rows) + "x" + std::to_string(cols) + " f32";
  record_pair("stencil_2d", size, bytes, ct::zeros<float>({rows, cols}, g_dev), simt, ct::zeros<float>({rows, cols}, g_dev), rawl, check);
}

void transpose() {
  const std::int64_t rows = g_quick ? 4096 : 16384, cols = g_quick ? 4096 : 16384;
  const double bytes = 2.0 * 4 * rows * cols;
  auto in = ct::rand<float>({rows, cols}, 6, g_dev).share();
  const auto k = raw(simt_bench::kRawTranspose, "raw_transpose");
  const auto grid = cs::grid((cols + 31) / 32, (rows + 31) / 32);
  auto simt = [&](ct::Tensor<float> out) { return cs::prepare(simt_transpose, grid, std::move(out), in); };
  auto rawl = [&](ct::Tensor<float> out) {
    return cs::launch_raw(ct::unchecked, k, grid, cs::Dims{32, 8}, 0, std::move(out), in, static_cast<long>(rows),
                          static_cast<long>(cols));
  };
  const auto s = std::get<0>(simt(ct::full<float>({cols, rows}, NAN, g_dev)).sync()).to_host();
  const auto r = std::get<0>(rawl(ct::full<float>({cols, rows}, NAN, g_dev)).sync()).to_host();
  const std::string check = compare_exact(s, r);
  const std::string size = std::to_string(rows) + "x" + std::to_string(cols) + " f32";
  record_pair("transpose", size, bytes, ct::zeros<float>({cols, rows}, g_dev), simt, ct::zeros<float>({cols, rows}, g_dev), rawl, check);
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") g_quick = true;
    else if (a == "--out" && i + 1 < argc) g_out.open(argv[++i]);
    else if (a == "--only" && i + 1 < argc) g_only = argv[++i];
    else if (a == "--iters" && i + 1 < argc) g_iters = std::atoi(argv[++i]);
    else if (a == "--trials" && i + 1 < argc) g_trials = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: ctile_simt_bench [--quick] [--out FILE] [--only NAME] [--iters N] [--trials N]\n");
      return 2;
    }
  }
  if (!ct::cuda_available()) {
    std::fprintf(stderr, "ctile_simt_bench: no usable GPU (%s)\n", ct::cuda_unavailable_reason().c_str());
    return 77;
  }
  g_dev = ct::Device{ct::DeviceKind::Cuda, 0};
  g_lim = cs::limits_of(g_dev);
  std::fprintf(stderr, "ctile_simt_bench on %s\n", ct::describe(g_dev).c_str());
  int failures = 0;
  const std::pair<const char*, void (*)()> benches[] = {
      {"vector_add", vector_add}, {"sum", sum}, {"histogram", histogram}, {"stencil_2d", stencil}, {"transpose", transpose}};
  for (const auto& [name, fn] : benches) {
    if (!selected(name)) continue;
    try {
      fn();
    } catch (const std::exception& e) {
      ++failures;
      std::fprintf(stderr, "ctile_simt_bench: %s failed: %s\n", name, e.what());
    }
  }
  return failures == 0 ? 0 : 1;
}
