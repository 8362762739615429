// The launch path against the driver (issue 9's targets): host cost of launching a cached kernel,
// a pre-bound kernel and a graph replay, each against raw driver calls on the same cubin.
//
// The kernels are tiny (a tile block of 128 floats), so what is timed is the launch path, not the
// GPU. Each figure is the median of several repetitions after a warm-up; one JSON line per
// measurement, then a summary against the targets:
//
//   raw      enqueue      N back-to-back cuLaunchKernel on a non-blocking stream (host time per launch)
//            sync         N times cuLaunchKernel + cuStreamSynchronize
//   raw_ctile_calls       the driver calls ctile makes per launch (the launch, a cuEventRecord)
//                         (_waited / _polled: with a second thread waiting for each event)
//   raw_write_value       the launch and a cuStreamWriteValue64 of its number into a pinned host
//                         word (_waited: a second thread reads the word, no driver call)
//   ctile    enqueue      N cached launches chained through Future::then (the handles the previous
//                         launch hands back), host time per launch        target: raw + 1.0 us
//            sync         N times ctile::launch(...).sync()                target: raw + 1.0 us
//   bound    enqueue      the same chain through a BoundKernel (ctile::bind) target: raw + 0.5 us
//   graph_chain           a graph of 1000 chained kernels: device time per kernel of a replay
//                         (StreamTimer), and the host time to submit a replay
//   raw_graph_chain       the same graph built with cuGraphAddKernelNode, timed with CUDA events
//                         (also over ctile's tensors, and with programmatic edges as ctile builds
//                         it on sm_90), the replays of all of them taking turns
//                                                    target: <= 0.6 us per kernel, within +5% of raw
//   decode eager / graph  a decode-like sequence of 100 mixed small kernels (add, axpy, RMSNorm,
//                         softmax on 4096 floats): wall time of enqueue + completion per sequence,
//                         eager launches vs a replay of the captured graph  target: graph >= 5x faster
//
//   ctile_launch_overhead [--n N] [--sync-n N] [--reps R] [--out FILE] [--cpu]
//                         [--only enqueue|sync|bound|graph|decode[,...]]
//
// Without a usable GPU it skips the raw halves and times ctile on the CPU backend (labelled "cpu"),
// exiting 0; --cpu forces that. Without a GPU the whole benchmark also runs against a stand-in
// driver (kernels do not run; the device name says so):
//   CTILE_LIBCUDA=build/bench/libnull_cuda.so ctile_launch_overhead    (bench/null_cuda.cpp: no host
//       cost of its own, a clock for a GPU: ctile - raw is ctile's own host cost)
// bench/callgrind_launch.sh counts the instructions of one chained launch that way.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <ctile/ctile.hpp>

#include "../src/backend/cuda/codegen.hpp"
#include "../src/backend/cuda/nvrtc.hpp"
#include "../src/platform/cuda/driver.hpp"
#include "../src/platform/spin.hpp"

namespace ct = ctile;
namespace cu = ctile::platform::cuda;
namespace cg = ctile::backend::cuda;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::int64_t kElems = 128;     // one tile block
constexpr std::int64_t kHidden = 4096;   // the decode-like sequence's vectors
constexpr int kChain = 1000;             // kernels in the chained graph
constexpr int kDecodeKernels = 100;

void add_one(ct::Mut<float, 1> z, ct::Ref<float, 1> x) { z.store(ct::load_like(x, z) + 1.0f); }

// The decode-like sequence's kernels (all f32, 4096 elements).
void add2(ct::Mut<float, 1> z, ct::Ref<float, 1> x, ct::Ref<float, 1> y) { z.store(ct::load_like(x, z) + ct::load_like(y, z)); }
void axpy(ct::Mut<float, 1> y, ct::Scalar<float> a, ct::Ref<float, 1> x) { y.store(a * ct::load_like(x, y) + y.load()); }
void rms_norm(ct::Mut<float, 2> y, ct::Ref<float, 2> x, ct::Ref<float, 1> w) {
  const auto [bm, bn] = y.tile_shape();
  auto xf = ct::load_like(x, y);
  auto inv = ct::rsqrt(ct::sum(xf * xf, 1, true) / x.extent(1).to<float>() + 1e-6f);
  y.store(xf * inv * w.tiles({bn}).load({0}).reshape({bm, bn}));
}
void softmax(ct::Mut<float, 2> out, ct::Ref<float, 2> x) {
  auto r = ct::load_like(x, out, -INFINITY);
  auto e = ct::exp(r - ct::max(r, 1, true));
  out.store(e / ct::sum(e, 1, true));
}

int g_n = 1000;      // launches per enqueue repetition (within the driver's queue of pending launches)
int g_sync_n = 500;  // launches per sync repetition
int g_reps = 7;
std::string g_only;  // empty: everything
std::ofstream g_out;
std::string g_device;
bool g_gpu = false;

// --only takes one part or a comma-separated list of them.
bool want(const char* what) {
  if (g_only.empty()) return true;
  const std::string w = what;
  for (std::size_t b = 0; b <= g_only.size();) {
    std::size_t e = g_only.find(',', b);
    if (e == std::string::npos) e = g_only.size();
    if (g_only.compare(b, e - b, w) == 0) return true;
    b = e + 1;
  }
  return false;
}

double us_since(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

// CPU time of the calling thread (us): with the wall time it tells a busy machine from a slow path.
double thread_cpu_us() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

// Wall and calling-thread CPU time per unit of each repetition.
struct Samples {
  std::vector<double> wall, cpu;
  Clock::time_point t0;
  double c0 = 0;
  void start() {
    c0 = thread_cpu_us();
    t0 = Clock::now();
  }
  void stop(int n) {
    wall.push_back(us_since(t0) / n);
    cpu.push_back((thread_cpu_us() - c0) / n);
  }
  void add(double w) {
    wall.push_back(w);
    cpu.push_back(0);
  }
  bool empty() const { return wall.empty(); }
};

double median(std::vector<double> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string json_escape(const std::string& s) {
  std::string r;
  for (char c : s) {
    if (c == '"' || c == '\\') r += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) r += c;
  }
  return r;
}

// One JSON line: {"impl", "what", "us": median per unit, "unit", ...}.
double emit(const char* impl, const char* what, const char* unit, const Samples& smp, int n) {
  std::string reps = "[";
  for (std::size_t i = 0; i < smp.wall.size(); ++i) {
    char b[32];
    std::snprintf(b, sizeof b, "%s%.3f", i ? "," : "", smp.wall[i]);
    reps += b;
  }
  reps += "]";
  char buf[1024];
  std::snprintf(buf, sizeof buf,
                "{\"bench\":\"launch_overhead\",\"impl\":\"%s\",\"what\":\"%s\",\"us\":%.3f,\"unit\":\"%s\","
                "\"cpu_us\":%.3f,\"n\":%d,\"reps\":%s,\"spin_us\":%lld,\"device\":\"%s\"}",
                impl, what, median(smp.wall), unit, median(smp.cpu), n, reps.c_str(),
                static_cast<long long>(ct::detail::spin_budget().count() / 1000), json_escape(g_device).c_str());
  std::printf("%s\n", buf);
  std::fflush(stdout);
  if (g_out) g_out << buf << "\n";
  return median(smp.wall);
}

struct Results {
  double raw_enqueue = -1, raw_sync = -1, raw_calls = -1, raw_calls_waited = -1, raw_calls_polled = -1;
  double enqueue = -1, sync = -1, bound = -1;
  double graph_kernel_us = -1, graph_replay_host_us = -1, raw_graph_kernel_us = -1, raw_graph_ctile_mem_us = -1,
         raw_graph_programmatic_us = -1;
  double decode_eager = -1, decode_graph = -1;
};
Results g_res;

using Handles = std::tuple<ct::Partition<float>, ct::Shared<float>>;

// ---- raw: the same cubin through the driver ----------------------------------------------------

// add_one compiled the way the CUDA backend compiles it (the launch glue's specs with their facts,
// codegen, NVRTC with the backend's options), loaded with ctile's dlopen'ed driver table into the
// primary context, with its own buffers.
struct Raw {
  const cu::Driver* d = nullptr;
  cu::CUcontext ctx = nullptr;
  cu::CUmodule mod = nullptr;
  cu::CUfunction fn = nullptr;
  cu::CUstream s = nullptr;
  std::vector<cu::CUdeviceptr> bufs;
  std::vector<std::byte> params;
  void* kp[1] = {nullptr};
  std::vector<std::byte> params_ctile;  // the same kernel over ctile's tensors (their memory from ctile's pool)
  void* kp_ctile[1] = {nullptr};
  unsigned blocks = 0, threads = 0, smem = 0;
  std::string entry, arch;
  cu::CUresult launch() { return d->cuLaunchKernel(fn, blocks, 1, 1, threads, 1, 1, smem, s, kp, nullptr); }
};

Raw make_raw(const ct::Partition<float>& z, const ct::Shared<float>& x) {
  Raw r;
  r.d = &cu::drv();
  const std::string name = "add_one";
  ct::detail::LaunchPlan plan;
  ct::detail::plan_argument<ct::Mut<float, 1>>(plan, name, 0, z);
  ct::detail::plan_argument<ct::Ref<float, 1>>(plan, name, 1, x);
  const int grid_rank = static_cast<int>(plan.grid->size());
  std::shared_ptr<const ct::ir::Kernel> k = ct::trace(&add_one, name, plan.specs, grid_rank);
  cu::CUdevice dev = 0;
  CTILE_CU(cuDeviceGet, (&dev, 0), "getting cuda:0");
  int major = 0, minor = 0;
  CTILE_CU(cuDeviceGetAttribute, (&major, cu::abi::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev), "cc");
  CTILE_CU(cuDeviceGetAttribute, (&minor, cu::abi::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev), "cc");
  const int sm = major * 10 + minor;
  const cg::GeneratedKernel gk = cg::generate(*k, cg::codegen_options_from_env(sm));
  cg::Nvrtc* nv = cg::nvrtc();
  if (!nv) throw ct::UserError("NVRTC is not available: " + cg::nvrtc_unavailable_reason());
  const cg::CompileResult res = nv->compile(gk, sm, cg::Output::Cubin);
  CTILE_CU(cuDevicePrimaryCtxRetain, (&r.ctx, dev), "retaining the primary context");
  CTILE_CU(cuCtxPushCurrent_v2, (r.ctx), "making the primary context current");
  CTILE_CU(cuModuleLoadData, (&r.mod, res.image.data()), "loading the cubin");
  CTILE_CU(cuModuleGetFunction, (&r.fn, r.mod, gk.entry.c_str()), "finding ", gk.entry);
  CTILE_CU(cuStreamCreate, (&r.s, cu::abi::CU_STREAM_NON_BLOCKING), "creating a stream");
  std::vector<ct::backend::ArgValue> args = plan.args;
  for (std::size_t i = 0; i < args.size(); ++i) {
    cu::CUdeviceptr p = 0;
    CTILE_CU(cuMemAlloc_v2, (&p, static_cast<std::size_t>(kElems * 4)), "allocating a buffer");
    CTILE_CU(cuMemsetD8Async, (p, 0, static_cast<std::size_t>(kElems * 4), r.s), "zeroing a buffer");
    r.bufs.push_back(p);
    args[i].tensor.data = reinterpret_cast<void*>(static_cast<std::uintptr_t>(p));
  }
  ct::backend::LaunchConfig cfg;
  cfg.grid = *plan.grid;
  cfg.kernel_name = name;
  r.params = cg::pack_params(*k, cfg, args);
  r.kp[0] = r.params.data();
  r.params_ctile = cg::pack_params(*k, cfg, plan.args);  // plan.args point at z and x
  r.kp_ctile[0] = r.params_ctile.data();
  r.blocks = static_cast<unsigned>(ct::numel(cfg.grid));
  r.threads = static_cast<unsigned>(gk.threads);
  r.smem = static_cast<unsigned>(gk.smem_bytes);
  r.entry = gk.entry;
  r.arch = res.arch;
  return r;
}

void free_raw(Raw& r) {
  (void)r.d->cuStreamSynchronize(r.s);
  for (cu::CUdeviceptr p : r.bufs) (void)r.d->cuMemFree_v2(p);
  (void)r.d->cuStreamDestroy_v2(r.s);
  (void)r.d->cuModuleUnload(r.mod);
  cu::CUcontext popped = nullptr;
  (void)r.d->cuCtxPopCurrent_v2(&popped);  // the ctile half runs as in a program that never touched the driver
}

void run_raw(Raw& r) {
  const cu::Driver& d = *r.d;
  for (int i = 0; i < 200; ++i)
    if (r.launch() != 0) throw ct::UserError("raw cuLaunchKernel failed in the warm-up");
  CTILE_CU(cuStreamSynchronize, (r.s), "warm-up");
  Samples enq, syn;
  for (int rep = 0; want("enqueue") && rep < g_reps; ++rep) {
    enq.start();
    for (int i = 0; i < g_n; ++i) (void)r.launch();
    enq.stop(g_n);
    CTILE_CU(cuStreamSynchronize, (r.s), "after the enqueue repetition");
  }
  for (int rep = 0; want("sync") && rep < g_reps; ++rep) {
    syn.start();
    for (int i = 0; i < g_sync_n; ++i) {
      (void)r.launch();
      (void)d.cuStreamSynchronize(r.s);
    }
    syn.stop(g_sync_n);
  }
  if (!enq.empty()) g_res.raw_enqueue = emit("raw", "enqueue", "us/launch", enq, g_n);
  if (!syn.empty()) g_res.raw_sync = emit("raw", "sync", "us/launch", syn, g_sync_n);
  // The driver calls ctile makes per launch on the launching thread, without ctile: the launch and
  // the CUevent recorded after it (from a pool) that completes the launch's Event (the primary
  // context stays current on a launching thread). ctile - raw_ctile_calls is ctile's own host code.
  if (want("enqueue") || want("bound")) {
    // g_reps chains of g_n launches, each followed by mark(j) on the launching thread (the timed
    // part; j counts the launches over all chains); with `wait`, a second thread (its context
    // current, as ctile's completion thread) calls wait(j) for each launch in order once it is
    // marked.
    auto chained = [&](auto&& mark, const std::function<void(std::int64_t)>& wait) {
      Samples smp;
      for (int rep = 0; rep < g_reps; ++rep) {
        const std::int64_t first = static_cast<std::int64_t>(rep) * g_n;
        std::atomic<int> marked{0};
        std::thread waiter;
        if (wait)
          waiter = std::thread([&] {
            (void)d.cuCtxSetCurrent(r.ctx);
            for (int i = 0; i < g_n; ++i) {
              while (marked.load(std::memory_order_acquire) <= i) ct::detail::cpu_relax();
              wait(first + i);
            }
          });
        smp.start();
        for (int i = 0; i < g_n; ++i) {
          (void)r.launch();
          mark(first + i);
          marked.store(i + 1, std::memory_order_release);
        }
        smp.stop(g_n);
        if (waiter.joinable()) waiter.join();
        CTILE_CU(cuStreamSynchronize, (r.s), "after the enqueue repetition");
      }
      return smp;
    };
    std::vector<cu::CUevent> evs(256);
    for (auto& e : evs) CTILE_CU(cuEventCreate, (&e, cu::abi::CU_EVENT_DISABLE_TIMING), "creating an event");
    auto ev = [&](std::int64_t j) { return evs[static_cast<std::size_t>(j) % evs.size()]; };
    auto record = [&](std::int64_t j) { (void)d.cuEventRecord(ev(j), r.s); };
    g_res.raw_calls = emit("raw_ctile_calls", "enqueue", "us/launch", chained(record, {}), g_n);
    // The same with a second thread that waits for each event in order, as ctile's completion
    // thread does (CTILE_COMPLETER_WAIT): with cuEventSynchronize ("sync"), or asking cuEventQuery
    // with pauses of 1 us doubling up to 32 us ("poll"). The difference to raw_ctile_calls is what
    // that thread's driver calls cost the launching thread (the driver's locks, cache lines), not
    // ctile's code.
    g_res.raw_calls_waited =
        emit("raw_ctile_calls_waited", "enqueue", "us/launch", chained(record, [&](std::int64_t j) { (void)d.cuEventSynchronize(ev(j)); }), g_n);
    g_res.raw_calls_polled = emit("raw_ctile_calls_polled", "enqueue", "us/launch", chained(record, [&](std::int64_t j) {
                                    auto pause = std::chrono::microseconds(1);
                                    while (d.cuEventQuery(ev(j)) == cu::abi::CUDA_ERROR_NOT_READY) {
                                      const auto until = Clock::now() + pause;
                                      while (Clock::now() < until) ct::detail::cpu_relax();
                                      if (pause < std::chrono::microseconds(32)) pause *= 2;
                                    }
                                  }),
                                  g_n);
    for (auto& e : evs) (void)d.cuEventDestroy_v2(e);
    // Completion tracked without driver calls on the waiting thread: after each launch the stream
    // writes the launch's count into a pinned host word (cuStreamWriteValue64, in place of the
    // cuEventRecord), and the second thread reads the word until it reaches that count. Measures
    // whether a completion thread that never enters the driver (no lock shared with the launching
    // thread) brings the chained launch near the bare cuLaunchKernel; "raw_write_value" is the same
    // loop without the second thread (the write's own cost).
    if (d.cuStreamWriteValue64_v2) {
      void* host = nullptr;
      CTILE_CU(cuMemHostAlloc, (&host, 64, 0x01u | 0x02u), "allocating a pinned, mapped word");  // PORTABLE | DEVICEMAP
      auto* word = static_cast<volatile std::uint64_t*>(host);
      const auto addr = static_cast<cu::CUdeviceptr>(reinterpret_cast<std::uintptr_t>(host));
      auto write = [&](std::int64_t j) { (void)d.cuStreamWriteValue64_v2(r.s, addr, static_cast<std::uint64_t>(j) + 1, 0); };
      auto read = [&](std::int64_t j) {
        while (*word < static_cast<std::uint64_t>(j) + 1) ct::detail::cpu_relax();
      };
      (void)emit("raw_write_value", "enqueue", "us/launch", chained(write, {}), g_n);
      *word = 0;  // the stream is idle: the next rows count from the start again
      (void)emit("raw_write_value_waited", "enqueue", "us/launch", chained(write, read), g_n);
      (void)d.cuMemFreeHost(host);
    } else {
      std::printf("# raw_write_value: this driver has no cuStreamWriteValue64_v2: skipped\n");
    }
  }
  std::printf("# raw: kernel %s, %u block(s) of %u threads, %u bytes of dynamic shared memory, %zu-byte parameter block, %s\n",
              r.entry.c_str(), r.blocks, r.threads, r.smem, r.params.size(), r.arch.c_str());
}

// The raw graph: kChain kernel nodes, each after the previous, the same function and parameters;
// with `programmatic`, joined by programmatic edges as ctile joins its kernel nodes (the kernel
// waits for the grid before it, griddepcontrol.wait, on sm_90), else by full edges.
struct RawGraph {
  cu::CUgraph g = nullptr;
  cu::CUgraphExec exec = nullptr;
};

RawGraph build_raw_graph(Raw& r, bool on_ctile_memory, bool programmatic) {
  RawGraph out;
  CTILE_CU(cuGraphCreate, (&out.g, 0u), "creating a graph");
  cu::KernelNodeParams p{};
  p.func = r.fn;
  p.gridDimX = r.blocks;
  p.gridDimY = p.gridDimZ = 1;
  p.blockDimX = r.threads;
  p.blockDimY = p.blockDimZ = 1;
  p.sharedMemBytes = r.smem;
  p.kernelParams = on_ctile_memory ? r.kp_ctile : r.kp;
  cu::CUgraphNode prev = nullptr;
  for (int i = 0; i < kChain; ++i) {
    cu::CUgraphNode n = nullptr;
    if (programmatic && prev) {
      CTILE_CU(cuGraphAddKernelNode_v2, (&n, out.g, nullptr, 0u, &p), "adding a kernel node");
      cu::GraphEdgeData e{};
      e.from_port = static_cast<unsigned char>(cu::abi::kGraphKernelNodePortProgrammatic);
      e.type = static_cast<unsigned char>(cu::abi::CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC);
      CTILE_CU(cuGraphAddDependencies_v2, (out.g, &prev, &n, &e, 1u), "adding a programmatic edge");
    } else {
      CTILE_CU(cuGraphAddKernelNode_v2, (&n, out.g, prev ? &prev : nullptr, prev ? 1u : 0u, &p), "adding a kernel node");
    }
    prev = n;
  }
  CTILE_CU(cuGraphInstantiateWithFlags, (&out.exec, out.g, 0ull), "instantiating the graph");
  return out;
}

// Device time of one replay per kernel (CUDA events around it on the raw stream).
double time_raw_replay(Raw& r, const RawGraph& g, cu::CUevent a, cu::CUevent b) {
  const cu::Driver& d = *r.d;
  CTILE_CU(cuEventRecord, (a, r.s), "timing");
  CTILE_CU(cuGraphLaunch, (g.exec, r.s), "a replay");
  CTILE_CU(cuEventRecord, (b, r.s), "timing");
  CTILE_CU(cuEventSynchronize, (b), "timing");
  float ms = 0;
  if (d.cuEventElapsedTime) CTILE_CU(cuEventElapsedTime, (&ms, a, b), "reading the timer");
  return static_cast<double>(ms) * 1000.0 / kChain;
}

void destroy_raw_graph(Raw& r, RawGraph& g) {
  (void)r.d->cuGraphExecDestroy(g.exec);
  (void)r.d->cuGraphDestroy(g.g);
}

// ---- ctile ----------------------------------------------------------------------------------------

// The timed loops, out of line so that bench/callgrind_launch.sh can count their instructions
// (callgrind --toggle-collect) without the set-up around them.
[[gnu::noinline]] ct::Future<Handles> chain_launches(const ct::Stream& s, ct::Partition<float> z, ct::Shared<float> x, int n) {
  auto f = ct::launch(add_one, std::move(z), std::move(x)).async_on(s);
  for (int i = 1; i < n; ++i)
    f = std::move(f).then([](Handles&& h) { return ct::launch(add_one, std::move(std::get<0>(h)), std::move(std::get<1>(h))); });
  return f;
}

template <class K>
[[gnu::noinline]] ct::Future<Handles> chain_bound(K& k, const ct::Stream& s, ct::Partition<float> z, ct::Shared<float> x, int n) {
  auto f = k(s, std::move(z), std::move(x));
  for (int i = 1; i < n; ++i)
    f = std::move(f).then([&](Handles&& h) { return k.launch(std::move(std::get<0>(h)), std::move(std::get<1>(h))); });
  return f;
}

void run_ctile(ct::Device dev, ct::Partition<float>& z, ct::Shared<float>& x) {
  ct::Stream s = ct::Stream::create(dev);
  // Warm-up: the first launch traces and compiles; later ones hit the cache.
  for (int i = 0; i < 20; ++i) std::tie(z, x) = ct::launch(add_one, std::move(z), std::move(x)).sync_on(s);
  for (int i = 0; i < 20; ++i) std::tie(z, x) = ct::launch(add_one, std::move(z), std::move(x)).sync();
  // One untimed chain first: pools and queues reach their steady size.
  for (int i = 0; i < g_n; ++i) std::tie(z, x) = ct::launch(add_one, std::move(z), std::move(x)).async_on(s).get();
  {
    auto f = ct::launch(add_one, std::move(z), std::move(x)).async_on(s);
    for (int i = 1; i < g_n; ++i)
      f = std::move(f).then([](Handles&& h) { return ct::launch(add_one, std::move(std::get<0>(h)), std::move(std::get<1>(h))); });
    std::tie(z, x) = std::move(f).get();
  }
  Samples enq, syn, bnd;
  for (int rep = 0; want("enqueue") && rep < g_reps; ++rep) {
    enq.start();
    auto f = chain_launches(s, std::move(z), std::move(x), g_n);
    enq.stop(g_n);
    std::tie(z, x) = std::move(f).get();
  }
  if (want("bound")) {
    auto k = ct::bind_on(s, add_one, ct::spec::partition<float>({kElems}, {kElems}), ct::spec::shared<float>({kElems}));
    for (int i = 0; i < 20; ++i) std::tie(z, x) = k(s, std::move(z), std::move(x)).get();
    {
      auto f = k(s, std::move(z), std::move(x));
      for (int i = 1; i < g_n; ++i)
        f = std::move(f).then([&](Handles&& h) { return k.launch(std::move(std::get<0>(h)), std::move(std::get<1>(h))); });
      std::tie(z, x) = std::move(f).get();
    }
    for (int rep = 0; rep < g_reps; ++rep) {
      bnd.start();
      auto f = chain_bound(k, s, std::move(z), std::move(x), g_n);
      bnd.stop(g_n);
      std::tie(z, x) = std::move(f).get();
    }
  }
  // The synchronised launches last: waiting for each launch leaves the completion thread in another
  // state (its waits, the spin of CTILE_SPIN_US) than a chain does, so both chains run before it.
  for (int rep = 0; want("sync") && rep < g_reps; ++rep) {
    syn.start();
    for (int i = 0; i < g_sync_n; ++i) std::tie(z, x) = ct::launch(add_one, std::move(z), std::move(x)).sync();
    syn.stop(g_sync_n);
  }
  if (!enq.empty()) g_res.enqueue = emit("ctile", "enqueue", "us/launch", enq, g_n);
  if (!syn.empty()) g_res.sync = emit("ctile", "sync", "us/launch", syn, g_sync_n);
  if (!bnd.empty()) g_res.bound = emit("bound", "enqueue", "us/launch", bnd, g_n);
}

// The graph of kChain chained add_one launches (device time of a replay per kernel, and the host
// time to submit one) beside the raw graphs of the same kernel: built once each, then timed in
// turns (the order rotating each repetition), so that every graph runs in the same state of the
// GPU and the host; a graph timed alone after the other benchmarks ran once measured 17% slower
// than the raw one timed before them, and the same two graphs side by side within 0.2%.
void run_graphs(Raw* raw, ct::Device dev, ct::Partition<float>& z, ct::Shared<float>& x) {
  ct::Stream s = ct::Stream::create(dev);
  auto g = ct::capture(dev, [&](ct::Capture& cap) {
    auto f = ct::launch(add_one, std::move(z), std::move(x)).async_on(cap.stream());
    for (int i = 1; i < kChain; ++i)
      f = std::move(f).then([](Handles&& h) { return ct::launch(add_one, std::move(std::get<0>(h)), std::move(std::get<1>(h))); });
    return f;
  });
  struct Variant {
    const char* impl;
    bool on_ctile_memory, programmatic;
    RawGraph graph;
    Samples dev;
  };
  std::vector<Variant> raws;
  cu::CUevent a = nullptr, b = nullptr;
  const bool raw_graphs = raw && raw->d->cuGraphCreate && raw->d->cuGraphLaunch;
  if (raw && !raw_graphs) std::printf("# raw graph: this driver has no graph entry points: skipped\n");
  if (raw_graphs) {
    raws.push_back({"raw_graph_chain", false, false, {}, {}});
    raws.push_back({"raw_graph_chain_ctile_memory", true, false, {}, {}});
    if (raw->d->cuGraphAddDependencies_v2) raws.push_back({"raw_graph_chain_programmatic", false, true, {}, {}});
    for (Variant& v : raws) v.graph = build_raw_graph(*raw, v.on_ctile_memory, v.programmatic);
    CTILE_CU(cuEventCreate, (&a, 0u), "a timing event");
    CTILE_CU(cuEventCreate, (&b, 0u), "a timing event");
  }
  Samples devt, host;
  auto ctile_replay = [&](bool timed) {
    ct::StreamTimer t(s);
    t.start();
    const auto t0 = Clock::now();
    auto f = std::move(g).replay(s);
    const double submit = us_since(t0);
    t.stop();
    g = std::move(f).get();
    if (!timed) return;
    devt.add(t.elapsed_ms() * 1000.0 / kChain);
    host.add(submit);
  };
  for (int i = 0; i < 3; ++i) {  // warm-up (the first replay uploads the graph)
    ctile_replay(false);
    for (Variant& v : raws) (void)time_raw_replay(*raw, v.graph, a, b);
  }
  const int variants = static_cast<int>(raws.size()) + 1;
  for (int rep = 0; rep < g_reps; ++rep)
    for (int j = 0; j < variants; ++j) {
      const int which = (rep + j) % variants;
      if (which == 0) ctile_replay(true);
      else raws[static_cast<std::size_t>(which - 1)].dev.add(time_raw_replay(*raw, raws[static_cast<std::size_t>(which - 1)].graph, a, b));
    }
  g_res.graph_kernel_us = emit("graph_chain", "device_per_kernel", "us/kernel", devt, kChain);
  g_res.graph_replay_host_us = emit("graph_chain", "host_submit", "us/replay", host, 1);
  for (Variant& v : raws) {
    const double us = emit(v.impl, "device_per_kernel", "us/kernel", v.dev, kChain);
    if (v.programmatic) g_res.raw_graph_programmatic_us = us;
    else if (v.on_ctile_memory) g_res.raw_graph_ctile_mem_us = us;
    else g_res.raw_graph_kernel_us = us;
    destroy_raw_graph(*raw, v.graph);
  }
  if (a) (void)raw->d->cuEventDestroy_v2(a);
  if (b) (void)raw->d->cuEventDestroy_v2(b);
  std::tie(z, x) = std::move(g).unwrap();
}

// The decode-like sequence: kDecodeKernels kernels cycling add2, axpy, rms_norm, softmax over 4096
// floats, each reading the previous kernel's output (Shared) and writing a fresh buffer. The output
// handle of each launch is taken from its future's payload right away (no waiting: the storages'
// events order the next launch after it), reshaped for the next kernel and shared.
struct Decode {
  ct::Shared<float> input, w;
  std::vector<ct::Tensor<float>> bufs;  // kDecodeKernels outputs
};

Decode make_decode(ct::Device dev) {
  Decode d;
  d.input = ct::rand<float>({kHidden}, 1, dev).share();
  d.w = ct::rand<float>({kHidden}, 2, dev).share();
  for (int i = 0; i < kDecodeKernels; ++i) d.bufs.push_back(ct::zeros<float>({kHidden}, dev));
  return d;
}

template <class Fut>
ct::Tensor<float> output_of(Fut&& f) {
  auto st = std::move(f).into_state();
  return std::move(std::get<0>(*st->payload)).unpartition();
}

ct::Shared<float> as_input(ct::Tensor<float> t, bool rows) {
  return rows ? std::move(t).reshape({1, kHidden}).share() : std::move(t).reshape({kHidden}).share();
}

// Submits the sequence to `s` (a stream, or a capture's stream); returns the last launch's future.
auto decode_sequence(const ct::Stream& s, Decode& d) {
  ct::Shared<float> prev = d.input;
  for (int i = 0; i + 1 < kDecodeKernels; ++i) {
    ct::Tensor<float> out = std::move(d.bufs[static_cast<std::size_t>(i)]);
    auto step = [&]() {
      switch (i % 4) {
        case 0: return output_of(ct::launch(add2, std::move(out).partition({1024}), prev, d.w).async_on(s));
        case 1: return output_of(ct::launch(axpy, std::move(out).partition({1024}), 0.5f, prev).async_on(s));
        case 2: return output_of(ct::launch(rms_norm, std::move(out).reshape({1, kHidden}).partition({1, kHidden}), prev, d.w).async_on(s));
        default: return output_of(ct::launch(softmax, std::move(out).reshape({1, kHidden}).partition({1, kHidden}), prev).async_on(s));
      }
    };
    ct::Tensor<float> next = step();
    // rms_norm and softmax take rows ({1, 4096}); add2 and axpy (and the last add2) take {4096}.
    const int k = i + 1;
    prev = as_input(std::move(next), k + 1 < kDecodeKernels && k % 4 >= 2);
  }
  return ct::launch(add2, std::move(d.bufs.back()).partition({1024}), prev, d.w).async_on(s);
}

void run_decode(ct::Device dev) {
  ct::Stream s = ct::Stream::create(dev);
  Samples eager, graph;
  for (int rep = 0; rep < g_reps + 2; ++rep) {
    Decode d = make_decode(dev);
    s.synchronize();
    const auto t0 = Clock::now();
    auto [z, x, w] = decode_sequence(s, d).get();
    if (rep >= 2) eager.add(us_since(t0));  // two warm-ups: the first compiles
    (void)z;
  }
  Decode d = make_decode(dev);
  auto g = ct::capture(dev, [&](ct::Capture& cap) { return decode_sequence(cap.stream(), d); });
  for (int i = 0; i < 3; ++i) g = std::move(g).replay(s).get();
  for (int rep = 0; rep < g_reps; ++rep) {
    const auto t0 = Clock::now();
    g = std::move(g).replay(s).get();
    graph.add(us_since(t0));
  }
  g_res.decode_eager = emit("decode", "eager", "us/sequence", eager, kDecodeKernels);
  g_res.decode_graph = emit("decode", "graph", "us/sequence", graph, kDecodeKernels);
}

const char* verdict(bool ok) { return ok ? "met" : "NOT met"; }

void summary() {
  const Results& r = g_res;
  std::printf("# %s\n", g_device.c_str());
  if (r.enqueue >= 0 && r.raw_enqueue >= 0)
    std::printf("# cached launch, enqueue: raw %.2f us, ctile %.2f us, ctile - raw = %+.2f us (target <= +1.0: %s); "
                "ctile - raw with ctile's driver calls = %+.2f us\n",
                r.raw_enqueue, r.enqueue, r.enqueue - r.raw_enqueue, verdict(r.enqueue - r.raw_enqueue <= 1.0),
                r.enqueue - r.raw_calls);
  if (r.raw_calls_waited >= 0 && r.raw_calls >= 0)
    std::printf("#   those driver calls with a thread waiting for each event (as ctile's completer does): %.2f us "
                "with cuEventSynchronize, %.2f us polling cuEventQuery (%+.2f / %+.2f us over the calls alone)\n",
                r.raw_calls_waited, r.raw_calls_polled, r.raw_calls_waited - r.raw_calls, r.raw_calls_polled - r.raw_calls);
  if (r.bound >= 0 && r.raw_enqueue >= 0)
    std::printf("# pre-bound launch, enqueue: %.2f us, bound - raw = %+.2f us (target <= +0.5: %s)\n", r.bound,
                r.bound - r.raw_enqueue, verdict(r.bound - r.raw_enqueue <= 0.5));
  if (r.sync >= 0 && r.raw_sync >= 0)
    std::printf("# launch + sync: raw %.2f us, ctile %.2f us, ctile - raw = %+.2f us (target <= +1.0: %s)\n", r.raw_sync,
                r.sync, r.sync - r.raw_sync, verdict(r.sync - r.raw_sync <= 1.0));
  if (r.graph_kernel_us >= 0)
    std::printf("# graph replay of %d chained kernels: %.3f us per kernel on the device (target <= 0.6: %s), %.2f us to "
                "submit a replay%s\n",
                kChain, r.graph_kernel_us, verdict(r.graph_kernel_us <= 0.6), r.graph_replay_host_us, g_gpu ? "" : " (no GPU: device time is the CPU's)");
  if (r.graph_kernel_us >= 0 && r.raw_graph_kernel_us > 0)
    std::printf("#   the same graph built with raw driver calls: %.3f us per kernel; ctile / raw = %.3f (target <= 1.05: %s)\n",
                r.raw_graph_kernel_us, r.graph_kernel_us / r.raw_graph_kernel_us,
                verdict(r.graph_kernel_us / r.raw_graph_kernel_us <= 1.05));
  if (r.raw_graph_ctile_mem_us > 0)
    std::printf("#   the raw graph over ctile's tensors (ctile's pool memory): %.3f us per kernel\n", r.raw_graph_ctile_mem_us);
  if (r.raw_graph_programmatic_us > 0)
    std::printf("#   the raw graph with programmatic edges (as ctile builds it on sm_90): %.3f us per kernel; ctile / that = %.3f\n",
                r.raw_graph_programmatic_us, r.graph_kernel_us / r.raw_graph_programmatic_us);
  if (r.decode_eager > 0 && r.decode_graph > 0)
    std::printf("# decode-like sequence of %d kernels: eager %.1f us, graph replay %.1f us, eager / graph = %.2fx (target >= 5: %s)\n",
                kDecodeKernels, r.decode_eager, r.decode_graph, r.decode_eager / r.decode_graph,
                verdict(r.decode_eager / r.decode_graph >= 5.0));
}

}  // namespace

int main(int argc, char** argv) {
  bool force_cpu = false;
  for (int i = 1; i < argc; ++i) {
    auto next = [&](const char* opt) -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", opt);
        std::exit(2);
      }
      return argv[++i];
    };
    if (!std::strcmp(argv[i], "--n")) g_n = std::max(1, std::atoi(next("--n")));
    else if (!std::strcmp(argv[i], "--sync-n")) g_sync_n = std::max(1, std::atoi(next("--sync-n")));
    else if (!std::strcmp(argv[i], "--reps")) g_reps = std::max(1, std::atoi(next("--reps")));
    else if (!std::strcmp(argv[i], "--out")) g_out.open(next("--out"), std::ios::app);
    else if (!std::strcmp(argv[i], "--cpu")) force_cpu = true;
    else if (!std::strcmp(argv[i], "--only")) g_only = next("--only");
    else {
      std::fprintf(stderr, "usage: %s [--n N] [--sync-n N] [--reps R] [--out FILE] [--cpu] "
                           "[--only enqueue|sync|bound|graph|decode[,...]]\n", argv[0]);
      return 2;
    }
  }
  try {
    g_gpu = !force_cpu && ct::cuda_available();
    ct::Device d = ct::cpu();
    if (!g_gpu) {
      std::printf("# launch_overhead: no GPU (%s): the raw halves are skipped; ctile runs on the CPU backend\n",
                  force_cpu ? "--cpu" : ct::cuda_unavailable_reason().c_str());
      g_device = "cpu (interpreter, no GPU)";
      g_n = std::min(g_n, 500);
      g_sync_n = std::min(g_sync_n, 200);
    } else {
      d = ct::Device{ct::DeviceKind::Cuda, 0};
      g_device = ct::describe(d);
    }
    auto z = ct::zeros<float>({kElems}, d).partition({kElems});
    auto x = ct::ones<float>({kElems}, d).share();
    std::optional<Raw> raw;
    if (g_gpu && (want("enqueue") || want("sync") || want("bound") || want("graph"))) {
      // A raw graph also runs over z and x: everything ctile queued on them (allocation, fill) is
      // finished first, by a launch that waits.
      if (want("graph")) std::tie(z, x) = ct::launch(add_one, std::move(z), std::move(x)).sync();
      raw = make_raw(z, x);
      if (want("enqueue") || want("sync") || want("bound")) run_raw(*raw);
    }
    if (want("enqueue") || want("sync") || want("bound")) run_ctile(d, z, x);
    // Over ctile's tensors too: tells a slower ctile graph from slower memory.
    if (want("graph")) run_graphs(raw ? &*raw : nullptr, d, z, x);
    if (raw) free_raw(*raw);
    if (want("decode")) run_decode(d);
    // The kernels ran (z = x + 1 = 2; the fake and null drivers run no kernels).
    const std::vector<float> out = std::move(z).unpartition().to_host();
    const bool runs_kernels = g_device.find("Fake GPU") == std::string::npos && g_device.find("Null GPU") == std::string::npos;
    if (runs_kernels && (out[0] != 2.0f || out[kElems - 1] != 2.0f))
      std::printf("# WARNING: z = %g after the launches, expected 2\n", out[0]);
    summary();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "launch_overhead: %s\n", e.what());
    return 1;
  }
  return 0;
}
