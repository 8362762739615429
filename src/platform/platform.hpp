// The platform interface: what the runtime needs from a device to hold tensors and run work on it,
// independent of how kernels are compiled. One DevicePlatform per device (the host CPU: cpu/; each
// GPU: cuda/); the runtime reaches a device only through platform_for(), never by its kind.
// Private to the library; nothing under src/platform includes src/runtime.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "command.hpp"
#include "ctile/runtime/device.hpp"
#include "ctile/runtime/event.hpp"
#include "ctile/runtime/stream.hpp"
#include "graph.hpp"

namespace ctile::platform {

// A block of device memory.
struct Allocation {
  std::byte* ptr = nullptr;
  bool pooled = false;  // (GPU) from the stream-ordered pool: freed stream-ordered
  bool mapped = false;  // (CPU) from mmap
  // Done once the memory (and its zero fill) may be used. On a GPU it carries a native event with
  // NativeEvent::order_always set: the first use on each stream waits for it on the device.
  Event ready;
};

class DevicePlatform {
 public:
  virtual ~DevicePlatform() = default;
  [[nodiscard]] virtual Device device() const = 0;
  // "cpu:0 (host, interpreter)", "cuda:0 (NVIDIA H200, sm_90, 132 SMs, 140 GiB, driver 13.0)".
  [[nodiscard]] virtual std::string describe() const = 0;
  // Host code may read and write this device's memory directly.
  [[nodiscard]] virtual bool host_accessible() const = 0;
  // The compute capability as sm (90 for sm_90) and the shared memory one block may use (with
  // opt-in); 0 and 0 for the CPU.
  [[nodiscard]] virtual int sm() const { return 0; }
  [[nodiscard]] virtual std::int64_t max_smem_per_block() const { return 0; }

  // ---- memory
  // `bytes` bytes (at least one is allocated), 64-byte aligned (256 on a GPU), zero-filled if
  // `zeroed`. Out of memory is a UserError.
  [[nodiscard]] virtual Allocation allocate(std::int64_t bytes, bool zeroed) = 0;
  // Frees memory from allocate(). `uses` are the events of the work that used it (the last write,
  // pending reads, each stream's latest use): the free is ordered after them on the device where
  // they are native; host-side work is done by then (whoever uses memory keeps it alive). Never
  // throws; never blocks the host for pooled memory.
  virtual void release(const Allocation& a, std::int64_t bytes, std::span<const Event> uses) noexcept = 0;

  // ---- copies (contiguous bytes)
  // This device -> host memory; returns once the bytes are in `dst`. The caller has waited for the
  // last write of the source.
  virtual void copy_to_host(std::byte* dst, const std::byte* src, std::int64_t bytes) = 0;
  // Host -> this device, after `deps` (the destination's pending work); `src` may be reused when
  // this returns. Returns the copy's event. A failed dependency is rethrown before anything is done.
  [[nodiscard]] virtual Event copy_from_host(std::byte* dst, const std::byte* src, std::int64_t bytes,
                                             std::span<Event> deps) = 0;
  // Another device of the same platform (or this one) -> this device, after `deps`; `keep` is
  // released once the copy has finished. A failed dependency is rethrown before anything is done.
  [[nodiscard]] virtual Event copy_from_device(std::byte* dst, DevicePlatform& from, const std::byte* src,
                                               std::int64_t bytes, std::span<Event> deps,
                                               detail::KeepAlive keep) = 0;
  // The stream order the copies above run in (Storage::deps_for_* uses it; 0: none).
  [[nodiscard]] virtual std::uint64_t copy_order() const = 0;

  // ---- streams and graphs
  [[nodiscard]] virtual std::shared_ptr<StreamImpl> create_stream() = 0;
  // A stream over a native stream someone else made (a CUstream; 0 is the legacy default stream):
  // never destroyed by ctile; `keep_alive` is held until the last handle and its work are gone.
  // Platforms without native streams refuse (UserError).
  [[nodiscard]] virtual std::shared_ptr<StreamImpl> wrap_stream(void* native, std::shared_ptr<const void> keep_alive);
  [[nodiscard]] virtual std::unique_ptr<GraphBuilder> graph_builder() = 0;
};

// A new stream order (StreamImpl::order, Event::order): unique across all platforms' streams.
[[nodiscard]] std::uint64_t new_stream_order();

// The platform of `d`, created on first use and kept until exit. Throws UserError when the device
// does not exist or cannot be used.
[[nodiscard]] DevicePlatform& platform_for(Device d);

}  // namespace ctile::platform
