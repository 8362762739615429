// Device memory and copies for tensor storages on CUDA devices. Private to the library (the runtime's
// Storage and TensorCore call these; docs/cuda_runtime.md describes the rules).
//
// Allocations, frees and host copies are ordered on the device's memory stream, device-to-device
// copies on its copy stream (DeviceContext). An operation that leaves GPU work behind returns an
// Event that completes when that work has (it carries a native CUevent, so work on other streams
// waits for it on the device).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ctile/runtime/event.hpp"
#include "ctile/runtime/stream.hpp"

namespace ctile::platform::cuda {

struct DeviceMemory {
  std::byte* ptr = nullptr;
  bool pooled = false;  // from cuMemAllocAsync (freed with cuMemFreeAsync), else cuMemAlloc
  Event ready;          // the allocation (and zero fill) is usable once this is done
};

// `bytes` (at least 1 is allocated) of device memory on cuda:device, zero-filled when `zeroed`.
// Out of memory is a UserError; other failures are CudaErrors.
DeviceMemory allocate(int device, std::int64_t bytes, bool zeroed);

// Frees memory from allocate(). `pending` are the events of the last work that used it (a storage's
// last write and reads): the free is ordered after the native ones on the device. Host-side events
// are not waited for: whoever uses memory keeps its storage alive, so by the time a storage is
// destroyed they are done. Never throws and never blocks on the host (for pooled memory).
void release(int device, std::byte* ptr, bool pooled, const std::vector<Event>& pending) noexcept;

// Device -> host, `bytes` from device address `src` to `dst`; returns when the bytes are in `dst`.
// The caller has waited for the last write of the source. Large copies go through pinned staging.
void copy_to_host(int device, std::byte* dst, const std::byte* src, std::int64_t bytes);

// Host -> device into fresh memory from allocate() on the same device (ordered after the allocation
// on the memory stream). `src` may be reused as soon as this returns; the returned event completes
// when the bytes have landed.
Event copy_from_host(int device, std::byte* dst, const std::byte* src, std::int64_t bytes);

// Device -> device (the same or another GPU), on the destination's copy stream, after `deps`
// (the source's pending writes, the destination's allocation). `keep` (typically a lambda holding
// the source's storage) is destroyed once the copy has finished on the GPU. A dependency that
// failed is rethrown before anything is enqueued.
Event copy_device(int dst_device, std::byte* dst, int src_device, const std::byte* src, std::int64_t bytes,
                  std::vector<Event> deps, StreamTask keep);

}  // namespace ctile::platform::cuda
