// A "null" libcuda.so.1 for profiling ctile's host launch path on machines without a GPU
// (CTILE_LIBCUDA=<this library>): every entry point ctile resolves, with no worker threads and
// (almost) no host cost of its own, so that what a profile or a timing loop shows is ctile.
//
// The GPU is a clock: each stream has a time at which its queued work finishes; a kernel adds
// NULL_CUDA_KERNEL_US (default 2) to it, a copy or fill NULL_CUDA_COPY_US (default 1), an event
// record takes the stream's time, cuStreamWaitEvent moves the stream's time to at least the
// event's, and the synchronising calls wait (spinning, yielding) until the clock has passed it.
// Data is moved at once (device memory is host memory; copies and fills happen in the call), and
// kernels do not run. Not a test double: it checks nothing (tests/unit/cuda_runtime/fake_cuda.cpp
// is the checking fake with asynchronous streams).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>
#include <utility>
#include <vector>

#include "../src/platform/cuda/driver.hpp"

using ctile::platform::cuda::CUcontext;
using ctile::platform::cuda::CUdevice;
using ctile::platform::cuda::CUdeviceptr;
using ctile::platform::cuda::CUevent;
using ctile::platform::cuda::CUfunction;
using ctile::platform::cuda::CUmemoryPool;
using ctile::platform::cuda::CUmodule;
using ctile::platform::cuda::CUresult;
using ctile::platform::cuda::CUstream;
using ctile::platform::cuda::CUgraph;
using ctile::platform::cuda::CUgraphExec;
using ctile::platform::cuda::CUgraphNode;
using ctile::platform::cuda::CUhostFn;
using ctile::platform::cuda::GraphEdgeData;
using ctile::platform::cuda::HostNodeParams;
using ctile::platform::cuda::KernelNodeParams;
using ctile::platform::cuda::Memcpy3D;

struct CUctx_st {
  int device = 0;
};
struct CUstream_st {
  std::atomic<std::int64_t> busy_until{0};  // ns on the steady clock
};
struct CUevent_st {
  std::atomic<std::int64_t> at{0};
};
struct CUmod_st {
  int dummy = 0;
};
struct CUfunc_st {
  int max_dynamic_smem = 48 * 1024;
};
struct CUmemPoolHandle_st {
  int dummy = 0;
};
// A graph is its node counts (kernels cost NULL_CUDA_KERNEL_US each, copies NULL_CUDA_COPY_US);
// host nodes run at launch.
struct CUgraphNode_st {
  int dummy = 0;
};
struct CUgraph_st {
  int kernels = 0, copies = 0;
  long edges = 0;  // dependencies given to the add-node calls (NULL_CUDA_GRAPH_REPORT prints them)
  long programmatic = 0;  // of them programmatic (cuGraphAddDependencies_v2)
  std::vector<std::pair<CUhostFn, void*>> hosts;
  std::vector<CUgraphNode_st*> nodes;
  ~CUgraph_st() {
    for (auto* n : nodes) delete n;
  }
};
struct CUgraphExec_st {
  int kernels = 0, copies = 0;
  std::vector<std::pair<CUhostFn, void*>> hosts;
};

namespace {

constexpr CUresult kSuccess = 0, kInvalidValue = 1, kInvalidDevice = 101, kInvalidContext = 201, kNotReady = 600;

std::int64_t env_ns(const char* name, double def_us) {
  const char* v = std::getenv(name);
  return static_cast<std::int64_t>((v && *v ? std::atof(v) : def_us) * 1000.0);
}
std::int64_t kernel_ns() {
  static const std::int64_t ns = env_ns("NULL_CUDA_KERNEL_US", 2);
  return ns;
}
std::int64_t copy_ns() {
  static const std::int64_t ns = env_ns("NULL_CUDA_COPY_US", 1);
  return ns;
}
std::int64_t now() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
void add_work(CUstream s, std::int64_t ns) {
  const std::int64_t t = now();
  std::int64_t cur = s->busy_until.load(std::memory_order_relaxed);
  while (!s->busy_until.compare_exchange_weak(cur, std::max(cur, t) + ns, std::memory_order_relaxed)) {
  }
}
void wait_until(std::int64_t t) {
  while (now() < t) std::this_thread::yield();
}

CUctx_st g_ctx;
CUmod_st g_mod;
CUmemPoolHandle_st g_pool;
thread_local CUcontext tls_stack[64];
thread_local int tls_depth = 0;

}  // namespace

extern "C" {

CUresult cuInit(unsigned int) { return kSuccess; }
CUresult cuDriverGetVersion(int* v) {
  *v = 13000;
  return kSuccess;
}
CUresult cuGetErrorName(CUresult e, const char** s) {
  *s = e == 0 ? "CUDA_SUCCESS" : "CUDA_ERROR_NULL_DRIVER";
  return kSuccess;
}
CUresult cuGetErrorString(CUresult e, const char** s) {
  *s = e == 0 ? "no error" : "error from the null driver";
  return kSuccess;
}
CUresult cuDeviceGetCount(int* c) {
  *c = 1;
  return kSuccess;
}
CUresult cuDeviceGet(CUdevice* d, int ordinal) {
  if (ordinal != 0) return kInvalidDevice;
  *d = 0;
  return kSuccess;
}
CUresult cuDeviceGetAttribute(int* value, int attrib, CUdevice) {
  switch (attrib) {
    case 1: *value = 1024; break;
    case 5: *value = 2147483647; break;
    case 8: *value = 48 * 1024; break;
    case 16: *value = 132; break;
    case 75: *value = 9; break;
    case 76: *value = 0; break;
    case 97: *value = 227 * 1024; break;
    case 115: *value = 1; break;
    default: return kInvalidValue;
  }
  return kSuccess;
}
CUresult cuDeviceGetName(char* name, int len, CUdevice) {
  std::snprintf(name, static_cast<std::size_t>(len), "Null GPU 0 (null driver, kernels %.1f us)",
                static_cast<double>(kernel_ns()) / 1000.0);
  return kSuccess;
}
CUresult cuDeviceTotalMem_v2(std::size_t* bytes, CUdevice) {
  *bytes = std::size_t{80} << 30;
  return kSuccess;
}
CUresult cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice) {
  *ctx = &g_ctx;
  return kSuccess;
}
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice) { return kSuccess; }
CUresult cuCtxGetCurrent(CUcontext* ctx) {
  *ctx = tls_depth ? tls_stack[tls_depth - 1] : nullptr;
  return kSuccess;
}
CUresult cuCtxPushCurrent_v2(CUcontext ctx) {
  if (tls_depth == 64) return kInvalidValue;
  tls_stack[tls_depth++] = ctx;
  return kSuccess;
}
CUresult cuCtxSetCurrent(CUcontext ctx) {
  if (tls_depth == 0) {
    if (ctx) tls_stack[tls_depth++] = ctx;
  } else if (ctx) {
    tls_stack[tls_depth - 1] = ctx;
  } else {
    --tls_depth;
  }
  return kSuccess;
}
CUresult cuCtxPopCurrent_v2(CUcontext* ctx) {
  if (!tls_depth) return kInvalidContext;
  --tls_depth;
  if (ctx) *ctx = tls_stack[tls_depth];
  return kSuccess;
}
CUresult cuStreamCreate(CUstream* s, unsigned int) {
  *s = new CUstream_st();
  return kSuccess;
}
CUresult cuStreamDestroy_v2(CUstream s) {
  wait_until(s->busy_until.load());
  delete s;
  return kSuccess;
}
CUresult cuStreamSynchronize(CUstream s) {
  wait_until(s->busy_until.load());
  return kSuccess;
}
CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned int) {
  const std::int64_t t = e->at.load();
  std::int64_t cur = s->busy_until.load();
  while (cur < t && !s->busy_until.compare_exchange_weak(cur, t)) {
  }
  return kSuccess;
}
// Events come from malloc, not operator new: a real driver's allocations are its own, so a program
// that counts its operator new calls (tests/unit/cuda_runtime/test_launch_alloc.cpp) sees only
// ctile's. null_cuda_events_created() counts them instead.
static std::atomic<long> g_events_created{0};
long null_cuda_events_created() { return g_events_created.load(); }
CUresult cuEventCreate(CUevent* e, unsigned int) {
  void* p = std::malloc(sizeof(CUevent_st));
  if (!p) return CUresult(2);  // CUDA_ERROR_OUT_OF_MEMORY
  *e = new (p) CUevent_st();
  g_events_created.fetch_add(1, std::memory_order_relaxed);
  return kSuccess;
}
CUresult cuEventRecord(CUevent e, CUstream s) {
  e->at.store(s->busy_until.load());
  return kSuccess;
}
// The word is written at once (the null driver runs no stream work; only host costs are modelled).
CUresult cuStreamWriteValue64_v2(CUstream, CUdeviceptr addr, std::uint64_t value, unsigned int) {
  *reinterpret_cast<volatile std::uint64_t*>(static_cast<std::uintptr_t>(addr)) = value;
  return kSuccess;
}
CUresult cuEventQuery(CUevent e) { return now() >= e->at.load() ? kSuccess : kNotReady; }
CUresult cuEventSynchronize(CUevent e) {
  wait_until(e->at.load());
  return kSuccess;
}
CUresult cuEventElapsedTime(float* ms, CUevent a, CUevent b) {
  wait_until(b->at.load());
  *ms = static_cast<float>(static_cast<double>(b->at.load() - a->at.load()) / 1e6);
  return kSuccess;
}
CUresult cuEventDestroy_v2(CUevent e) {
  e->~CUevent_st();
  std::free(e);
  return kSuccess;
}
CUresult cuMemAlloc_v2(CUdeviceptr* p, std::size_t bytes) {
  *p = reinterpret_cast<CUdeviceptr>(std::aligned_alloc(256, (bytes + 255) / 256 * 256));
  return kSuccess;
}
CUresult cuMemFree_v2(CUdeviceptr p) {
  std::free(reinterpret_cast<void*>(p));
  return kSuccess;
}
CUresult cuMemAllocAsync(CUdeviceptr* p, std::size_t bytes, CUstream) { return cuMemAlloc_v2(p, bytes); }
CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s) {
  // The memory may still be "in use" by queued work that never runs: freeing it now is harmless.
  (void)s;
  return cuMemFree_v2(p);
}
CUresult cuDeviceGetDefaultMemPool(CUmemoryPool* pool, CUdevice) {
  *pool = &g_pool;
  return kSuccess;
}
CUresult cuMemPoolSetAttribute(CUmemoryPool, int, void*) { return kSuccess; }
CUresult cuMemHostAlloc(void** p, std::size_t bytes, unsigned int) {
  *p = std::malloc(bytes);
  return kSuccess;
}
CUresult cuMemFreeHost(void* p) {
  std::free(p);
  return kSuccess;
}
CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char v, std::size_t n, CUstream s) {
  std::memset(reinterpret_cast<void*>(dst), v, n);
  add_work(s, copy_ns());
  return kSuccess;
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, std::size_t n, CUstream s) {
  std::memcpy(reinterpret_cast<void*>(dst), src, n);
  add_work(s, copy_ns());
  return kSuccess;
}
CUresult cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, std::size_t n, CUstream s) {
  add_work(s, copy_ns());
  wait_until(s->busy_until.load());  // like a copy to pageable memory: done when the call returns
  std::memcpy(dst, reinterpret_cast<const void*>(src), n);
  return kSuccess;
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, std::size_t n, CUstream s) {
  std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), n);
  add_work(s, copy_ns());
  return kSuccess;
}
CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext, CUdeviceptr src, CUcontext, std::size_t n, CUstream s) {
  return cuMemcpyDtoDAsync_v2(dst, src, n, s);
}
CUresult cuModuleLoadData(CUmodule* m, const void*) {
  *m = &g_mod;
  return kSuccess;
}
CUresult cuModuleUnload(CUmodule) { return kSuccess; }
CUresult cuModuleGetFunction(CUfunction* f, CUmodule, const char*) {
  *f = new CUfunc_st();
  return kSuccess;
}
CUresult cuFuncGetAttribute(int* value, int attrib, CUfunction f) {
  switch (attrib) {
    case 0: *value = 1024; break;
    case 1: *value = 0; break;
    case 4: *value = 32; break;
    case 8: *value = f->max_dynamic_smem; break;
    default: return kInvalidValue;
  }
  return kSuccess;
}
CUresult cuFuncSetAttribute(CUfunction f, int, int value) {
  f->max_dynamic_smem = value;
  return kSuccess;
}
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int* n, CUfunction, int, std::size_t) {
  *n = 8;
  return kSuccess;
}
CUresult cuLaunchKernel(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int,
                        unsigned int, CUstream s, void** params, void**) {
  if (!params || !params[0]) return kInvalidValue;
  add_work(s, kernel_ns());
  return kSuccess;
}

CUresult cuLaunchHostFunc(CUstream s, CUhostFn fn, void* user) {
  wait_until(s->busy_until.load());  // in stream order: after the work before it
  fn(user);
  return kSuccess;
}
CUresult cuGraphCreate(CUgraph* g, unsigned int) {
  *g = new CUgraph_st();
  return kSuccess;
}
CUresult cuGraphDestroy(CUgraph g) {
  delete g;
  return kSuccess;
}
CUresult cuGraphAddKernelNode_v2(CUgraphNode* n, CUgraph g, const CUgraphNode*, std::size_t deps, const KernelNodeParams* p) {
  if (!p || !p->kernelParams || !p->kernelParams[0]) return kInvalidValue;
  ++g->kernels;
  g->edges += static_cast<long>(deps);
  if (g->kernels == 1)
    if (const char* v = std::getenv("NULL_CUDA_GRAPH_REPORT"); v && *v && *v != '0')
      std::fprintf(stderr, "null_cuda: first kernel node: function %p, grid %u x %u x %u, block %u x %u x %u, %u bytes of shared memory\n",
                   static_cast<void*>(p->func), p->gridDimX, p->gridDimY, p->gridDimZ, p->blockDimX, p->blockDimY, p->blockDimZ,
                   p->sharedMemBytes);
  *n = g->nodes.emplace_back(new CUgraphNode_st());
  return kSuccess;
}
CUresult cuGraphAddMemcpyNode(CUgraphNode* n, CUgraph g, const CUgraphNode*, std::size_t deps, const Memcpy3D*, CUcontext) {
  ++g->copies;
  g->edges += static_cast<long>(deps);
  *n = g->nodes.emplace_back(new CUgraphNode_st());
  return kSuccess;
}
CUresult cuGraphAddHostNode(CUgraphNode* n, CUgraph g, const CUgraphNode*, std::size_t deps, const HostNodeParams* p) {
  g->hosts.emplace_back(p->fn, p->userData);
  g->edges += static_cast<long>(deps);
  *n = g->nodes.emplace_back(new CUgraphNode_st());
  return kSuccess;
}
CUresult cuGraphAddEmptyNode(CUgraphNode* n, CUgraph g, const CUgraphNode*, std::size_t) {
  *n = g->nodes.emplace_back(new CUgraphNode_st());
  return kSuccess;
}
CUresult cuGraphAddDependencies_v2(CUgraph g, const CUgraphNode*, const CUgraphNode*, const GraphEdgeData* e, std::size_t n) {
  g->edges += static_cast<long>(n);
  for (std::size_t i = 0; e && i < n; ++i) g->programmatic += e[i].type == 1;
  return kSuccess;
}
CUresult cuGraphInstantiateWithFlags(CUgraphExec* e, CUgraph g, unsigned long long) {
  if (const char* v = std::getenv("NULL_CUDA_GRAPH_REPORT"); v && *v && *v != '0')
    std::fprintf(stderr, "null_cuda: graph of %d kernel, %d copy and %zu host nodes, %ld edges (%ld programmatic)\n", g->kernels, g->copies,
                 g->hosts.size(), g->edges, g->programmatic);
  *e = new CUgraphExec_st{g->kernels, g->copies, g->hosts};
  return kSuccess;
}
CUresult cuGraphLaunch(CUgraphExec e, CUstream s) {
  add_work(s, e->kernels * kernel_ns() + e->copies * copy_ns());
  for (auto& [fn, user] : e->hosts) fn(user);
  return kSuccess;
}
CUresult cuGraphExecDestroy(CUgraphExec e) {
  delete e;
  return kSuccess;
}
CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec, CUgraphNode, const KernelNodeParams* p) {
  return p && p->kernelParams && p->kernelParams[0] ? kSuccess : kInvalidValue;
}
CUresult cuGraphKernelNodeSetParams_v2(CUgraphNode, const KernelNodeParams* p) {
  return p && p->kernelParams && p->kernelParams[0] ? kSuccess : kInvalidValue;
}

}  // extern "C"
