#include "device.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <limits>

namespace ctile::platform::cuda {
namespace {

constexpr std::size_t kMaxPooledEvents = 4096;
constexpr std::size_t kStagingBytes = std::size_t{8} << 20;  // per buffer

int attribute(CUdevice dev, int attr, const char* what, int index) {
  int v = 0;
  CTILE_CU(cuDeviceGetAttribute, (&v, attr, dev), "querying ", what, " of cuda:", index);
  return v;
}

constexpr int kMaxDevices = 64;
std::array<std::atomic<DeviceContext*>, kMaxDevices> g_contexts{};  // leaked on purpose (see the header)

// Per-thread cache of free CUevents of one device.
struct EventCache {
  DeviceContext* dc = nullptr;
  static constexpr int kCap = 32;
  CUevent ev[kCap] = {};
  int n = 0;
  ~EventCache() {
    if (dc && n > 0) dc->give_events(ev, n);
    n = 0;
    dc = nullptr;
  }
};
thread_local EventCache t_events;

}  // namespace

DeviceContext& DeviceContext::get(int index) {
  static std::mutex mu;
  auto& contexts = g_contexts;
  if (index >= 0 && index < kMaxDevices)
    if (DeviceContext* c = contexts[static_cast<std::size_t>(index)].load(std::memory_order_acquire)) return *c;
  const DriverStatus& st = driver_status();
  if (!st.api) throw UserError(detail::cat("cuda:", index, " cannot be used: ", st.reason));
  if (index < 0 || index >= st.device_count || index >= kMaxDevices)
    throw UserError(detail::cat("cuda:", index, " does not exist: the driver reports ", st.device_count,
                                " CUDA device", st.device_count == 1 ? "" : "s", " (cuda:0 .. cuda:", st.device_count - 1,
                                ")"));
  std::lock_guard lk(mu);
  auto& slot = contexts[static_cast<std::size_t>(index)];
  if (!slot.load(std::memory_order_relaxed)) {
    static const bool registered = [] { return std::atexit([] { DeviceContext::teardown_all(); }) == 0; }();
    (void)registered;
    slot.store(new DeviceContext(index), std::memory_order_release);
  }
  return *slot.load(std::memory_order_relaxed);
}

void DeviceContext::teardown_all() noexcept {
  for (auto& slot : g_contexts)
    if (DeviceContext* c = slot.load(std::memory_order_acquire)) c->teardown();
}

// At exit (or when a test asks): frees that are still queued run to completion, and what the
// device context itself holds goes back to the driver: the pinned staging buffers (compute-
// sanitizer's leak check reports them otherwise) and the pooled events. Streams, completers and
// the primary context stay: work may still be in flight in other static destructors, and the
// process is about to end. After this, staged copies go direct and released events are destroyed.
void DeviceContext::teardown() noexcept {
  if (torn_down_.exchange(true, std::memory_order_acq_rel)) return;
  const Driver* d = driver_status().api;
  if (!d) return;
  try {
    ScopedContext scope(ctx_);
    (void)CTILE_CU_REPORT(cuStreamSynchronize, (mem_stream_), "finishing the pending frees of cuda:", info_.index);
    (void)CTILE_CU_REPORT(cuStreamSynchronize, (copy_stream_), "finishing the pending copies of cuda:", info_.index);
    {
      std::lock_guard lk(staging_.mu);
      for (int b = 0; b < 2; ++b) {
        if (staging_.ev[b]) (void)CTILE_CU_REPORT(cuEventSynchronize, (staging_.ev[b]), "finishing a staged copy on cuda:", info_.index);
        if (staging_.buf[b]) (void)CTILE_CU_REPORT(cuMemFreeHost, (staging_.buf[b]), "freeing a pinned staging buffer of cuda:", info_.index);
        if (staging_.ev[b]) (void)CTILE_CU_REPORT(cuEventDestroy_v2, (staging_.ev[b]), "destroying a staging event of cuda:", info_.index);
        staging_.buf[b] = nullptr;
        staging_.ev[b] = nullptr;
      }
      staging_.bytes = 0;
      staging_.tried = true;  // no new staging buffers after teardown
    }
    std::vector<CUevent> evs;
    {
      std::lock_guard lk(events_mu_);
      evs.swap(free_events_);
    }
    // (Events in threads' caches come back through give_events, which destroys them from now on.)
    for (CUevent e : evs) (void)CTILE_CU_REPORT(cuEventDestroy_v2, (e), "destroying a pooled event of cuda:", info_.index);
  } catch (...) {
  }
}

DeviceContext::DeviceContext(int index) {
  info_.index = index;
  CTILE_CU(cuDeviceGet, (&info_.dev, index), "getting cuda:", index);
  const CUdevice dev = info_.dev;
  info_.cc_major = attribute(dev, abi::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "the compute capability", index);
  info_.cc_minor = attribute(dev, abi::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "the compute capability", index);
  char name[256] = {};
  CTILE_CU(cuDeviceGetName, (name, static_cast<int>(sizeof name) - 1, dev), "querying the name of cuda:", index);
  info_.name = name;
  if (info_.cc_major < 8)
    throw UserError(detail::cat("cuda:", index, " (", info_.name, ") has compute capability ", info_.cc_major, ".",
                                info_.cc_minor, "; ctile needs sm_80 (Ampere) or newer"));
  info_.sm_count = attribute(dev, abi::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "the SM count", index);
  info_.max_threads_per_block = attribute(dev, abi::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "the block size limit", index);
  info_.max_grid_x = attribute(dev, abi::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, "the grid size limit", index);
  info_.smem_per_block = attribute(dev, abi::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, "the shared memory limit", index);
  info_.smem_per_block_optin =
      attribute(dev, abi::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, "the opt-in shared memory limit", index);
  const Driver& d = drv();
  info_.memory_pools = d.cuMemAllocAsync && d.cuMemFreeAsync &&
                       attribute(dev, abi::CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, "memory pool support", index) != 0;
  CTILE_CU(cuDeviceTotalMem_v2, (&info_.total_mem, dev), "querying the memory size of cuda:", index);

  CTILE_CU(cuDevicePrimaryCtxRetain, (&ctx_, dev), "retaining the primary context of cuda:", index);
  try {
    ScopedContext scope(ctx_);
    if (info_.memory_pools && d.cuDeviceGetDefaultMemPool && d.cuMemPoolSetAttribute) {
      // Keep freed memory in the pool instead of returning it to the OS at every synchronisation.
      CUmemoryPool pool = nullptr;
      if (CTILE_CU_REPORT(cuDeviceGetDefaultMemPool, (&pool, dev), "getting the default memory pool of cuda:", index)) {
        std::uint64_t threshold = std::numeric_limits<std::uint64_t>::max();
        (void)CTILE_CU_REPORT(cuMemPoolSetAttribute, (pool, abi::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold),
                              "setting the release threshold of the memory pool of cuda:", index);
      }
    }
    CTILE_CU(cuStreamCreate, (&mem_stream_, abi::CU_STREAM_NON_BLOCKING), "creating the memory stream of cuda:", index);
    mem_stream_id_ = new_stream_id();
    CTILE_CU(cuStreamCreate, (&copy_stream_, abi::CU_STREAM_NON_BLOCKING), "creating the copy stream of cuda:", index);
    copy_stream_id_ = new_stream_id();
    mem_completer_ = std::make_unique<Completer>(index, ctx_);
    copy_completer_ = std::make_unique<Completer>(index, ctx_);
  } catch (...) {
    mem_completer_.reset();
    copy_completer_.reset();
    if (mem_stream_) (void)CTILE_CU_REPORT(cuStreamDestroy_v2, (mem_stream_), "destroying the memory stream of cuda:", index);
    if (copy_stream_) (void)CTILE_CU_REPORT(cuStreamDestroy_v2, (copy_stream_), "destroying the copy stream of cuda:", index);
    (void)CTILE_CU_REPORT(cuDevicePrimaryCtxRelease_v2, (dev), "releasing the primary context of cuda:", index);
    throw;
  }
}

void DeviceContext::take_events(CUevent* out, int& n, int want) {
  std::lock_guard lk(events_mu_);
  while (n < want && !free_events_.empty()) {
    out[n++] = free_events_.back();
    free_events_.pop_back();
  }
}

void DeviceContext::give_events(const CUevent* in, int n) noexcept {
  int i = 0;
  if (!torn_down()) {
    try {
      std::lock_guard lk(events_mu_);
      for (; i < n && free_events_.size() < kMaxPooledEvents; ++i) free_events_.push_back(in[i]);
    } catch (...) {  // push_back may throw bad_alloc: destroy the rest instead
    }
  }
  if (i == n || !driver_status().api) return;
  try {
    ScopedContext scope(ctx_);
    for (; i < n; ++i) (void)CTILE_CU_REPORT(cuEventDestroy_v2, (in[i]), "destroying an event on cuda:", info_.index);
  } catch (...) {
  }
}

CUevent DeviceContext::acquire_event() {
  EventCache& c = t_events;
  if (c.dc == this && c.n > 0) return c.ev[--c.n];
  if (c.dc == nullptr || c.n == 0) {
    c.dc = this;
    take_events(c.ev, c.n, EventCache::kCap / 2);
    if (c.n > 0) return c.ev[--c.n];
  }
  CUevent e = nullptr;
  CTILE_CU(cuEventCreate, (&e, abi::CU_EVENT_DISABLE_TIMING), "creating an event on cuda:", info_.index);
  return e;
}

void DeviceContext::release_event(CUevent e) noexcept {
  if (!e) return;
  EventCache& c = t_events;
  if (!torn_down()) {
    if (c.dc == nullptr || (c.dc != this && c.n == 0)) c.dc = this;
    if (c.dc == this) {
      if (c.n == EventCache::kCap) {  // full: half of it to the shared list
        give_events(c.ev + EventCache::kCap / 2, EventCache::kCap / 2);
        c.n = EventCache::kCap / 2;
      }
      c.ev[c.n++] = e;
      return;
    }
  }
  give_events(&e, 1);
}

bool DeviceContext::ensure_staging() {
  Staging& s = staging_;
  if (s.tried) return s.buf[0] != nullptr;
  s.tried = true;
  void* b0 = nullptr;
  void* b1 = nullptr;
  if (drv().cuMemHostAlloc(&b0, kStagingBytes, 0) != 0) return false;
  if (drv().cuMemHostAlloc(&b1, kStagingBytes, 0) != 0) {
    (void)drv().cuMemFreeHost(b0);
    return false;
  }
  CUevent e0 = nullptr, e1 = nullptr;
  if (drv().cuEventCreate(&e0, abi::CU_EVENT_DISABLE_TIMING) != 0 ||
      drv().cuEventCreate(&e1, abi::CU_EVENT_DISABLE_TIMING) != 0) {
    if (e0) (void)drv().cuEventDestroy_v2(e0);
    (void)drv().cuMemFreeHost(b0);
    (void)drv().cuMemFreeHost(b1);
    return false;
  }
  s.buf[0] = b0;
  s.buf[1] = b1;
  s.ev[0] = e0;
  s.ev[1] = e1;
  s.bytes = kStagingBytes;
  return true;
}

}  // namespace ctile::platform::cuda
