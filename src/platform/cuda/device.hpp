// One CUDA device as ctile uses it: its primary context, attributes, a pool of CUevents, a "memory
// stream" on which allocations, zero fills, frees and copies into fresh memory are ordered, and a
// "copy stream" for copies into memory that kernels use. Created on first use; torn down once at
// exit (teardown(): pending frees finish, the pinned staging buffers and pooled events are freed),
// never destroyed (the driver may be gone during static destruction). Private to the library.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "driver.hpp"
#include "stream.hpp"

namespace ctile::platform::cuda {

struct DeviceInfo {
  int index = 0;
  CUdevice dev = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int max_threads_per_block = 0;
  int max_grid_x = 0;
  int smem_per_block = 0;        // without opt-in (48 KiB)
  int smem_per_block_optin = 0;  // with cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)
  bool memory_pools = false;     // cuMemAllocAsync is available and supported
  std::size_t total_mem = 0;
  [[nodiscard]] int sm() const { return cc_major * 10 + cc_minor; }
};

class DeviceContext {
 public:
  // The context of cuda:index, created on first use. Throws UserError for an index the driver does
  // not have (or a device below sm_80) and CudaError when the driver fails.
  static DeviceContext& get(int index);
  // Tears down every device made so far (registered with atexit at the first get(); callable
  // earlier by tests). Idempotent.
  static void teardown_all() noexcept;

  [[nodiscard]] const DeviceInfo& info() const { return info_; }
  [[nodiscard]] CUcontext ctx() const { return ctx_; }
  [[nodiscard]] int index() const { return info_.index; }
  [[nodiscard]] bool torn_down() const { return torn_down_.load(std::memory_order_acquire); }

  // Allocations, frees and copies into fresh memory are ordered on this stream; its events complete
  // on mem_completer(). It never waits for pending kernels, so allocations are never held up by them.
  [[nodiscard]] CUstream mem_stream() const { return mem_stream_; }
  [[nodiscard]] std::uint64_t mem_stream_id() const { return mem_stream_id_; }
  [[nodiscard]] Completer& mem_completer() { return *mem_completer_; }
  // Copies into memory that kernels use (device to device, host to a tensor in use), which wait on
  // the device for the work before them.
  [[nodiscard]] CUstream copy_stream() const { return copy_stream_; }
  [[nodiscard]] std::uint64_t copy_stream_id() const { return copy_stream_id_; }
  [[nodiscard]] Completer& copy_completer() { return *copy_completer_; }
  // Serialises the submissions to the memory and copy streams (their completers take one producer
  // at a time).
  std::mutex& mem_mu() { return mem_mu_; }
  std::mutex& copy_mu() { return copy_mu_; }

  // The CUevent pool (the context must be current for acquire). A per-thread cache in front of the
  // shared free list: a thread that launches and drops events takes no lock for them.
  CUevent acquire_event();
  void release_event(CUevent e) noexcept;

  // Two pinned host buffers for staged copies, their events, and the lock for using them. The
  // buffers are null when pinned memory could not be had (then copies go direct).
  struct Staging {
    std::mutex mu;
    std::size_t bytes = 0;
    void* buf[2] = {nullptr, nullptr};
    CUevent ev[2] = {nullptr, nullptr};
    bool tried = false;
  };
  Staging& staging() { return staging_; }
  bool ensure_staging();  // with staging().mu held; false after teardown

  // The shared free list (for the per-thread caches).
  void take_events(CUevent* out, int& n, int want);
  void give_events(const CUevent* in, int n) noexcept;

 private:
  explicit DeviceContext(int index);
  void teardown() noexcept;

  DeviceInfo info_;
  CUcontext ctx_ = nullptr;
  CUstream mem_stream_ = nullptr;
  std::uint64_t mem_stream_id_ = 0;
  std::unique_ptr<Completer> mem_completer_;
  CUstream copy_stream_ = nullptr;
  std::uint64_t copy_stream_id_ = 0;
  std::unique_ptr<Completer> copy_completer_;
  std::mutex mem_mu_, copy_mu_;
  std::mutex events_mu_;
  std::vector<CUevent> free_events_;
  Staging staging_;
  std::atomic<bool> torn_down_{false};
};

}  // namespace ctile::platform::cuda
