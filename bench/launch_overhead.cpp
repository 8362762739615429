// Host cost of launching a cached kernel: ctile against a raw cuLaunchKernel of the same cubin.
//
// The kernel is tiny (one tile block of 128 floats: z = x + 1, one Mut partition and one Ref), so
// what is timed is the launch path, not the GPU. Its cubin is built through the CUDA backend's own
// path (the launch glue's argument plan and specs, trace, codegen generate(), Nvrtc::compile with
// the backend's options), loaded with cuModuleLoadData through ctile's dlopen'ed driver table, and
// launched
//   raw    enqueue: N back-to-back cuLaunchKernel on a non-blocking stream (host time per launch),
//                   then one cuStreamSynchronize (not timed)
//          sync:    N times cuLaunchKernel + cuStreamSynchronize
//   raw_ctile_calls enqueue: the driver calls ctile makes per launch on the launching thread
//                   (context push/pop, the launch, a cuEventRecord), without ctile
//   ctile  enqueue: N launches chained through Future::then on a ctile stream, each re-using the
//                   handles the previous one hands back (host time per launch), then one get()
//          sync:    N times ctile::launch(...).sync() (the default stream), handles re-used
// after a warm-up (the ctile kernel is in the kernel cache). Each figure is the median of several
// repetitions (wall time; cpu_us_per_launch is the launching thread's CPU time; spin_us is how long
// ctile's waits poll before sleeping, CTILE_SPIN_US). One JSON line per measurement, then a summary
// with ctile - raw.
//
//   ctile_launch_overhead [--n N] [--sync-n N] [--reps R] [--out FILE] [--cpu] [--only enqueue|sync]
//
// Without a usable GPU it says "no GPU: skipped" for the raw half and times the ctile half on the
// CPU backend (labelled "cpu"), exiting 0. --cpu forces that mode. Without a GPU, the whole
// benchmark also runs against a stand-in driver (kernels do not run; the device name says so):
//   CTILE_LIBCUDA=build/bench/libnull_cuda.so ctile_launch_overhead    (bench/null_cuda.cpp: no host
//       cost of its own, a clock for a GPU: ctile - raw is ctile's own host cost)
//   CTILE_LIBCUDA=build/tests/unit/cuda_runtime/libfake_cuda.so FAKE_CUDA_DELAY_US=0 ctile_launch_overhead
//       (the checking fake of the unit tests, with a worker thread per stream)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include <ctile/ctile.hpp>

#include "../src/backend/cuda/codegen.hpp"
#include "../src/platform/cuda/driver.hpp"
#include "../src/backend/cuda/nvrtc.hpp"
#include "../src/platform/spin.hpp"

namespace ct = ctile;
namespace cu = ctile::platform::cuda;
namespace cg = ctile::backend::cuda;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::int64_t kElems = 128;  // one tile block

void add_one(ct::Mut<float, 1> z, ct::Ref<float, 1> x) { z.store(ct::load_like(x, z) + 1.0f); }

int g_n = 1000;       // launches per enqueue repetition (within the driver's queue of pending launches)
int g_sync_n = 500;   // launches per sync repetition
int g_reps = 7;
bool g_time_enqueue = true, g_time_sync = true;  // --only enqueue|sync (for profiling one loop)
std::ofstream g_out;
std::string g_device;

double us_since(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

// CPU time of the calling thread (us): with the wall time it tells a busy machine from a slow path.
double thread_cpu_us() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

// Wall and calling-thread CPU time per launch of each repetition.
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
  bool empty() const { return wall.empty(); }
};

double median(std::vector<double> v) {
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

void emit(const char* impl, const char* what, const Samples& smp, int n) {
  std::string reps = "[";
  for (std::size_t i = 0; i < smp.wall.size(); ++i) {
    char b[32];
    std::snprintf(b, sizeof b, "%s%.3f", i ? "," : "", smp.wall[i]);
    reps += b;
  }
  reps += "]";
  char buf[1024];
  std::snprintf(buf, sizeof buf,
                "{\"bench\":\"launch_overhead\",\"impl\":\"%s\",\"what\":\"%s\",\"us_per_launch\":%.3f,"
                "\"cpu_us_per_launch\":%.3f,\"n\":%d,\"reps\":%s,\"spin_us\":%lld,\"device\":\"%s\"}",
                impl, what, median(smp.wall), median(smp.cpu), n, reps.c_str(),
                static_cast<long long>(ct::detail::spin_budget().count() / 1000), json_escape(g_device).c_str());
  std::printf("%s\n", buf);
  std::fflush(stdout);
  if (g_out) g_out << buf << "\n";
}

struct Result {
  double enqueue = -1, sync = -1;
  double enqueue_calls = -1;  // raw: with the driver calls ctile makes per launch
};

// ---- raw: the same cubin through cuLaunchKernel -------------------------------------------------

Result run_raw(const ct::Partition<float>& z, const ct::Shared<float>& x) {
  const cu::Driver& d = cu::drv();
  const std::string name = "add_one";

  // The plan the launch glue makes for these arguments (specs with their facts, argument values).
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

  // The backend's options (the generator's defaults and its tuning knobs).
  const cg::GeneratedKernel gk = cg::generate(*k, cg::codegen_options_from_env(sm));
  cg::Nvrtc* nv = cg::nvrtc();
  if (!nv) throw ct::UserError("NVRTC is not available: " + cg::nvrtc_unavailable_reason());
  const cg::CompileResult res = nv->compile(gk, sm, cg::Output::Cubin);

  // The primary context (the one ctile uses), current on this thread for the raw half only.
  cu::CUcontext ctx = nullptr;
  CTILE_CU(cuDevicePrimaryCtxRetain, (&ctx, dev), "retaining the primary context");
  CTILE_CU(cuCtxPushCurrent_v2, (ctx), "making the primary context current");
  cu::CUmodule mod = nullptr;
  CTILE_CU(cuModuleLoadData, (&mod, res.image.data()), "loading the cubin");
  cu::CUfunction fn = nullptr;
  CTILE_CU(cuModuleGetFunction, (&fn, mod, gk.entry.c_str()), "finding ", gk.entry);
  if (gk.smem_bytes > 48 * 1024)
    CTILE_CU(cuFuncSetAttribute, (fn, cu::abi::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(gk.smem_bytes)),
             "raising the shared memory limit");
  cu::CUstream s = nullptr;
  CTILE_CU(cuStreamCreate, (&s, cu::abi::CU_STREAM_NON_BLOCKING), "creating a stream");

  // Own buffers with the arguments' shapes, so nothing here races ctile's use of z and x.
  std::vector<ct::backend::ArgValue> args = plan.args;
  std::vector<cu::CUdeviceptr> bufs;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (k->params[i].type.kind != ct::ir::TypeKind::Tile) {
      cu::CUdeviceptr p = 0;
      CTILE_CU(cuMemAlloc_v2, (&p, static_cast<std::size_t>(kElems * 4)), "allocating a buffer");
      CTILE_CU(cuMemsetD8Async, (p, 0, static_cast<std::size_t>(kElems * 4), s), "zeroing a buffer");
      bufs.push_back(p);
      args[i].tensor.data = reinterpret_cast<void*>(static_cast<std::uintptr_t>(p));
    }
  }
  ct::backend::LaunchConfig cfg;
  cfg.grid = *plan.grid;
  cfg.kernel_name = name;
  std::vector<std::byte> params = cg::pack_params(*k, cfg, args);
  void* kp[] = {params.data()};
  const auto blocks = static_cast<unsigned>(ct::numel(cfg.grid));
  const auto threads = static_cast<unsigned>(gk.threads);
  const auto smem = static_cast<unsigned>(gk.smem_bytes);
  auto launch = [&] { return d.cuLaunchKernel(fn, blocks, 1, 1, threads, 1, 1, smem, s, kp, nullptr); };

  for (int i = 0; i < 200; ++i)
    if (launch() != 0) throw ct::UserError("raw cuLaunchKernel failed in the warm-up");
  CTILE_CU(cuStreamSynchronize, (s), "warm-up");

  Result r;
  Samples enq, syn;
  for (int rep = 0; g_time_enqueue && rep < g_reps; ++rep) {
    enq.start();
    for (int i = 0; i < g_n; ++i) (void)launch();
    enq.stop(g_n);
    CTILE_CU(cuStreamSynchronize, (s), "after the enqueue repetition");
  }
  for (int rep = 0; g_time_sync && rep < g_reps; ++rep) {
    syn.start();
    for (int i = 0; i < g_sync_n; ++i) {
      (void)launch();
      (void)d.cuStreamSynchronize(s);
    }
    syn.stop(g_sync_n);
  }
  if (!enq.empty()) emit("raw", "enqueue", enq, g_n), r.enqueue = median(enq.wall);
  if (!syn.empty()) emit("raw", "sync", syn, g_sync_n), r.sync = median(syn.wall);

  // The driver calls ctile makes on the launching thread for each launch, without ctile: the
  // primary context made current and released again (a ctile program has no current context), the
  // launch, and the CUevent recorded after it (from a pool) that completes the launch's Event.
  // ctile - raw_ctile_calls is the cost of ctile's own host code.
  if (g_time_enqueue) {
    std::vector<cu::CUevent> evs(256);
    for (auto& e : evs) CTILE_CU(cuEventCreate, (&e, cu::abi::CU_EVENT_DISABLE_TIMING), "creating an event");
    cu::CUcontext popped = nullptr;
    CTILE_CU(cuCtxPopCurrent_v2, (&popped), "releasing the context");
    Samples calls;
    for (int rep = 0; rep < g_reps; ++rep) {
      calls.start();
      for (int i = 0; i < g_n; ++i) {
        cu::CUcontext cur = nullptr;
        (void)d.cuCtxGetCurrent(&cur);
        if (cur != ctx) (void)d.cuCtxPushCurrent_v2(ctx);
        (void)launch();
        (void)d.cuEventRecord(evs[static_cast<std::size_t>(i) % evs.size()], s);
        if (cur != ctx) (void)d.cuCtxPopCurrent_v2(&popped);
      }
      calls.stop(g_n);
      CTILE_CU(cuCtxPushCurrent_v2, (ctx), "making the primary context current");
      CTILE_CU(cuStreamSynchronize, (s), "after the enqueue repetition");
      CTILE_CU(cuCtxPopCurrent_v2, (&popped), "releasing the context");
    }
    CTILE_CU(cuCtxPushCurrent_v2, (ctx), "making the primary context current");
    emit("raw_ctile_calls", "enqueue", calls, g_n);
    r.enqueue_calls = median(calls.wall);
    for (auto& e : evs) (void)d.cuEventDestroy_v2(e);
  }
  std::printf("# raw: kernel %s, %u block(s) of %u threads, %u bytes of dynamic shared memory, %zu-byte parameter block, %s\n",
              gk.entry.c_str(), blocks, threads, smem, params.size(), res.arch.c_str());

  CTILE_CU(cuStreamSynchronize, (s), "at the end");
  for (cu::CUdeviceptr p : bufs) (void)d.cuMemFree_v2(p);
  (void)d.cuStreamDestroy_v2(s);
  (void)d.cuModuleUnload(mod);
  cu::CUcontext popped = nullptr;
  (void)d.cuCtxPopCurrent_v2(&popped);  // the ctile half runs as in a program that never touched the driver
  return r;
}

// ---- ctile: the same kernel through ctile::launch -----------------------------------------------

template <class T>
using Handles = std::tuple<ct::Partition<T>, ct::Shared<T>>;

Result run_ctile(ct::Device dev, ct::Partition<float> z, ct::Shared<float> x) {
  ct::Stream s = ct::Stream::create(dev);
  // Warm-up: the first launch traces and compiles; later ones hit the cache.
  for (int i = 0; i < 20; ++i) std::tie(z, x) = ct::launch(add_one, std::move(z), std::move(x)).sync_on(s);
  for (int i = 0; i < 20; ++i) std::tie(z, x) = ct::launch(add_one, std::move(z), std::move(x)).sync();

  Result r;
  Samples enq, syn;
  for (int rep = 0; g_time_enqueue && rep < g_reps; ++rep) {
    enq.start();
    auto f = ct::launch(add_one, std::move(z), std::move(x)).async_on(s);
    for (int i = 1; i < g_n; ++i)
      f = std::move(f).then([](Handles<float>&& h) { return ct::launch(add_one, std::move(std::get<0>(h)), std::move(std::get<1>(h))); });
    enq.stop(g_n);
    std::tie(z, x) = std::move(f).get();
  }
  for (int rep = 0; g_time_sync && rep < g_reps; ++rep) {
    syn.start();
    for (int i = 0; i < g_sync_n; ++i) std::tie(z, x) = ct::launch(add_one, std::move(z), std::move(x)).sync();
    syn.stop(g_sync_n);
  }
  if (!enq.empty()) emit("ctile", "enqueue", enq, g_n), r.enqueue = median(enq.wall);
  if (!syn.empty()) emit("ctile", "sync", syn, g_sync_n), r.sync = median(syn.wall);
  // The kernel ran (z = x + 1 = 2; the fake driver of the unit tests runs no kernels).
  const std::vector<float> out = std::move(z).unpartition().to_host();
  const bool runs_kernels = g_device.find("Fake GPU") == std::string::npos && g_device.find("Null GPU") == std::string::npos;
  if (runs_kernels && (out[0] != 2.0f || out[kElems - 1] != 2.0f))
    std::printf("# WARNING: z = %g after the launches, expected 2\n", out[0]);
  return r;
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
    else if (!std::strcmp(argv[i], "--only")) {
      const std::string w = next("--only");
      g_time_enqueue = w == "enqueue";
      g_time_sync = w == "sync";
    }
    else {
      std::fprintf(stderr, "usage: %s [--n N] [--sync-n N] [--reps R] [--out FILE] [--cpu] [--only enqueue|sync]\n", argv[0]);
      return 2;
    }
  }

  try {
    const bool gpu = !force_cpu && ct::cuda_available();
    if (!gpu) {
      std::printf("# launch_overhead: no GPU: skipped the raw cuLaunchKernel half (%s); timing ctile on the CPU "
                  "backend instead\n",
                  force_cpu ? "--cpu" : ct::cuda_unavailable_reason().c_str());
      const ct::Device d = ct::cpu();
      g_device = "cpu (interpreter, no GPU)";
      g_n = std::min(g_n, 500);
      g_sync_n = std::min(g_sync_n, 200);
      auto z = ct::zeros<float>({kElems}, d).partition({kElems});
      auto x = ct::ones<float>({kElems}, d).share();
      const Result c = run_ctile(d, std::move(z), std::move(x));
      std::printf("# ctile on the CPU backend: %.2f us per chained launch (host), %.2f us per launch + sync\n",
                  c.enqueue, c.sync);
      return 0;
    }
    const ct::Device d{ct::DeviceKind::Cuda, 0};
    g_device = ct::describe(d);
    auto z = ct::zeros<float>({kElems}, d).partition({kElems});
    auto x = ct::ones<float>({kElems}, d).share();
    const Result raw = run_raw(z, x);
    const Result c = run_ctile(d, std::move(z), std::move(x));
    std::printf("# %s\n", g_device.c_str());
    if (g_time_enqueue) {
      std::printf("# host enqueue per launch: raw %.2f us, ctile %.2f us, ctile - raw = %+.2f us (target <= 1 us: %s)\n",
                  raw.enqueue, c.enqueue, c.enqueue - raw.enqueue, c.enqueue - raw.enqueue <= 1.0 ? "met" : "NOT met");
      std::printf("#   raw with ctile's driver calls per launch (context push/pop, cuEventRecord): %.2f us; "
                  "ctile's own host code: %+.2f us\n",
                  raw.enqueue_calls, c.enqueue - raw.enqueue_calls);
    }
    if (g_time_sync)
      std::printf("# launch + sync per launch: raw %.2f us, ctile %.2f us, ctile - raw = %+.2f us (target <= 1 us: %s)\n",
                  raw.sync, c.sync, c.sync - raw.sync, c.sync - raw.sync <= 1.0 ? "met" : "NOT met");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "launch_overhead: %s\n", e.what());
    return 1;
  }
  return 0;
}
