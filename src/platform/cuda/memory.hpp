// Device memory and copies of the CUDA platform. Private to the library (the CUDA DevicePlatform
// calls these; docs/cuda_runtime.md describes the rules).
//
// Allocations, frees and copies into fresh memory are ordered on the device's memory stream; copies
// into memory that kernels use, and device-to-device copies, on its copy stream (DeviceContext).
// An operation that leaves GPU work behind returns an Event that completes when that work has (it
// carries a native CUevent, so work on other streams waits for it on the device).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "../command.hpp"
#include "../platform.hpp"
#include "ctile/runtime/event.hpp"

namespace ctile::platform::cuda {

// `bytes` (at least 1 is allocated) of device memory on cuda:device, zero-filled when `zeroed`.
// With memory pools the allocation is stream-ordered: `ready`'s native event has order_always set.
// Out of memory is a UserError; other failures are CudaErrors.
Allocation allocate(int device, std::int64_t bytes, bool zeroed);

// Frees memory from allocate() (see DevicePlatform::release): with pools, cuMemFreeAsync on the
// memory stream after a device-side wait for every native event in `uses` (done ones too: the
// driver orders a stream-ordered free only by stream events); without, cuMemFree after waiting for
// the pending ones. Never throws.
void release(int device, const Allocation& a, std::span<const Event> uses) noexcept;

// Device -> host, `bytes` from device address `src` to `dst`; returns when the bytes are in `dst`.
// The caller has waited for the last write of the source. Large copies go through pinned staging.
void copy_to_host(int device, std::byte* dst, const std::byte* src, std::int64_t bytes);

// Host -> device after `deps`: on the memory stream when every pending dependency is the memory
// stream's own (fresh memory), else on the copy stream after device-side waits. `src` may be reused
// as soon as this returns; the returned event completes when the bytes have landed.
Event copy_from_host(int device, std::byte* dst, const std::byte* src, std::int64_t bytes, std::span<Event> deps);

// Device -> device (the same or another GPU), on the destination's copy stream, after `deps`;
// `keep` is released once the copy has finished on the GPU. A dependency that failed is rethrown
// before anything is queued.
Event copy_device(int dst_device, std::byte* dst, int src_device, const std::byte* src, std::int64_t bytes,
                  std::span<Event> deps, detail::KeepAlive keep);

}  // namespace ctile::platform::cuda
