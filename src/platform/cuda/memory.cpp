#include "memory.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <utility>

#include "device.hpp"
#include "stream.hpp"

namespace ctile::platform::cuda {
namespace {

constexpr std::int64_t kStageThreshold = std::int64_t{1} << 20;  // copies from 1 MiB use pinned staging

CUdeviceptr dptr(const std::byte* p) { return static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(p)); }

// Records the end of what was just queued on `stream` (the device's memory or copy stream, whose
// mutex the caller holds) and hands it to that stream's completer. If the event cannot be
// recorded, waits for the whole stream so that nothing `keep` holds is released under a running
// copy, then throws.
Event finish_on(DeviceContext& dc, CUstream stream, std::uint64_t stream_id, Completer& completer, detail::KeepAlive keep,
                detail::SmallVec<Event, 2> after, const char* what, bool order_always = false) {
  Event done;
  try {
    detail::NativeEvent* ne = nullptr;
    done = new_native_event(dc, stream_id, ne);
    ne->order_always = order_always;
    CTILE_CU(cuEventRecord, (ne->ev.load(std::memory_order_relaxed), stream), "recording the completion of ", what, " on cuda:", dc.index());
  } catch (...) {
    (void)CTILE_CU_REPORT(cuStreamSynchronize, (stream), "synchronising an internal stream of cuda:", dc.index());
    throw;
  }
  Completer::Item item;
  item.done = done;
  item.keep = std::move(keep);
  item.after = std::move(after);
  completer.push(std::move(item));
  return done;
}

// Orders `stream` after `deps` on the device (native events of other streams), or the host (host
// events); rethrows a failed dependency before anything is queued. The pending native ones are
// returned (the copy takes over their errors when it completes).
detail::SmallVec<Event, 2> order_after(DeviceContext& dc, CUstream stream, std::uint64_t stream_id, std::span<Event> deps,
                                       const char* what) {
  detail::SmallVec<Event, 2> after;
  for (Event& e : deps) {
    detail::NativeEvent* ne = e.native_ptr();
    if (!e.done() || (ne && ne->order_always)) {
      if (ne) {
        if (ne->enqueue_error) std::rethrow_exception(ne->enqueue_error);
        if (ne->stream_id != stream_id)
          CTILE_CU(cuStreamWaitEvent, (stream, ev_of(*ne), abi::CU_EVENT_WAIT_DEFAULT), "ordering ", what, " on cuda:", dc.index(),
                   " after the work before it");
        if (!e.done()) after.push_back(std::move(e));
        continue;
      }
      e.wait();
    }
    if (auto err = e.error()) std::rethrow_exception(err);
  }
  return after;
}

}  // namespace

Allocation allocate(int device, std::int64_t bytes, bool zeroed) {
  DeviceContext& dc = DeviceContext::get(device);
  ScopedContext scope(dc.ctx());
  const auto size = static_cast<std::size_t>(std::max<std::int64_t>(bytes, 1));
  const CUstream ms = dc.mem_stream();
  Allocation m;
  m.pooled = dc.info().memory_pools;
  std::lock_guard lk(dc.mem_mu());
  CUdeviceptr p = 0;
  auto try_alloc = [&] { return m.pooled ? drv().cuMemAllocAsync(&p, size, ms) : drv().cuMemAlloc_v2(&p, size); };
  CUresult r = try_alloc();
  if (r == abi::CUDA_ERROR_OUT_OF_MEMORY) {
    // Frees still queued on the memory stream may make room.
    CTILE_CU(cuStreamSynchronize, (ms), "waiting for pending frees on cuda:", device, " after running out of memory");
    r = try_alloc();
  }
  if (r == abi::CUDA_ERROR_OUT_OF_MEMORY)
    throw UserError(detail::cat("out of memory: cannot allocate ", bytes, " bytes for a tensor on cuda:", device, " (",
                                m.pooled ? "cuMemAllocAsync" : "cuMemAlloc", ": CUDA_ERROR_OUT_OF_MEMORY)"));
  if (r != 0)
    throw_cuda_error(r, m.pooled ? "cuMemAllocAsync" : "cuMemAlloc_v2",
                     detail::cat("allocating ", bytes, " bytes for a tensor on cuda:", device));
  m.ptr = reinterpret_cast<std::byte*>(static_cast<std::uintptr_t>(p));
  try {
    if (zeroed)
      CTILE_CU(cuMemsetD8Async, (p, 0, size, ms), "zero-filling ", bytes, " bytes of a new tensor on cuda:", device);
    // A pooled allocation is stream-ordered: its first use on every stream waits for this event on
    // the device (NativeEvent::order_always), never just on the host.
    if (m.pooled || zeroed)
      m.ready = finish_on(dc, ms, dc.mem_stream_id(), dc.mem_completer(), {}, {}, "an allocation", m.pooled);
  } catch (...) {
    if (m.pooled)
      (void)CTILE_CU_REPORT(cuMemFreeAsync, (p, ms), "freeing a tensor's memory on cuda:", device);
    else
      (void)CTILE_CU_REPORT(cuMemFree_v2, (p), "freeing a tensor's memory on cuda:", device);
    throw;
  }
  return m;
}

void release(int device, const Allocation& a, std::span<const Event> uses) noexcept {
  if (!a.ptr) return;
  try {
    DeviceContext& dc = DeviceContext::get(device);
    ScopedContext scope(dc.ctx());
    const CUstream ms = dc.mem_stream();
    std::lock_guard lk(dc.mem_mu());
    // The events a stream-ordered free waits for stay alive (their CUevents are not recycled and
    // recorded again elsewhere) until the memory stream has passed the free: the driver takes an
    // event's record when cuStreamWaitEvent is called, but a tool that follows the waits as the
    // stream runs them (compute-sanitizer's stream-ordered race tracking) must find the same record.
    detail::KeepAlive waited;
    for (const Event& e : uses) {
      // Also when done: the device-side wait is what orders a stream-ordered free after the use (a
      // done event's CUevent is still held, so it cannot have been recorded again).
      detail::NativeEvent* ne = e.native_ptr();
      if (!ne) continue;  // host-side work: done by now (see the header)
      if (a.pooled ? ne->stream_id == dc.mem_stream_id() : e.done()) continue;  // ordered by the stream already, or done
      CUevent ev = nullptr;
      try {
        ev = ev_of(*ne);  // a lazy event not recorded yet: recorded now on its stream
      } catch (...) {
        // The record failed (the context is broken): the host wait below is all that is left.
      }
      if (!ev) {
        if (!e.done()) e.wait();
        continue;
      }
      if (a.pooled) {
        (void)CTILE_CU_REPORT(cuStreamWaitEvent, (ms, ev, abi::CU_EVENT_WAIT_DEFAULT),
                              "ordering the free of a tensor's memory after its last use on cuda:", device);
        waited.push_back(e.native());
      } else {
        (void)CTILE_CU_REPORT(cuEventSynchronize, (ev), "waiting for the last use of a tensor's memory on cuda:", device);
      }
    }
    if (a.pooled) {
      (void)CTILE_CU_REPORT(cuMemFreeAsync, (dptr(a.ptr), ms), "freeing a tensor's memory on cuda:", device);
      if (!waited.empty())
        (void)finish_on(dc, ms, dc.mem_stream_id(), dc.mem_completer(), std::move(waited), {}, "a free");
    } else
      (void)CTILE_CU_REPORT(cuMemFree_v2, (dptr(a.ptr)), "freeing a tensor's memory on cuda:", device);
  } catch (...) {
    // Only reachable when the driver or the context is gone (at exit); nothing else can be done.
  }
}

void copy_to_host(int device, std::byte* dst, const std::byte* src, std::int64_t bytes) {
  if (bytes <= 0) return;
  DeviceContext& dc = DeviceContext::get(device);
  ScopedContext scope(dc.ctx());
  const CUstream ms = dc.mem_stream();
  auto direct = [&] {
    {
      std::lock_guard lk(dc.mem_mu());
      CTILE_CU(cuMemcpyDtoHAsync_v2, (dst, dptr(src), static_cast<std::size_t>(bytes), ms), "copying ", bytes,
               " bytes from cuda:", device, " to the host");
    }
    CTILE_CU(cuStreamSynchronize, (ms), "waiting for a copy of ", bytes, " bytes from cuda:", device, " to the host");
  };
  if (bytes < kStageThreshold) return direct();
  auto& stg = dc.staging();
  std::lock_guard slk(stg.mu);
  if (!dc.ensure_staging()) return direct();
  // Double-buffered: the DMA of chunk i overlaps the host copy of chunk i - 1.
  const auto chunk = static_cast<std::int64_t>(stg.bytes);
  const std::int64_t nchunks = (bytes + chunk - 1) / chunk;
  auto drain = [&](std::int64_t i) {
    const std::size_t b = static_cast<std::size_t>(i & 1);
    const std::int64_t off = i * chunk, len = std::min(chunk, bytes - off);
    CTILE_CU(cuEventSynchronize, (stg.ev[b]), "waiting for a staged copy from cuda:", device, " to the host");
    std::memcpy(dst + off, stg.buf[b], static_cast<std::size_t>(len));
  };
  for (std::int64_t i = 0; i < nchunks; ++i) {
    const std::size_t b = static_cast<std::size_t>(i & 1);
    const std::int64_t off = i * chunk, len = std::min(chunk, bytes - off);
    {
      std::lock_guard lk(dc.mem_mu());
      CTILE_CU(cuMemcpyDtoHAsync_v2, (stg.buf[b], dptr(src + off), static_cast<std::size_t>(len), ms), "copying ", len,
               " bytes from cuda:", device, " to pinned staging memory");
      CTILE_CU(cuEventRecord, (stg.ev[b], ms), "recording a staged copy from cuda:", device);
    }
    if (i > 0) drain(i - 1);
  }
  drain(nchunks - 1);
}

Event copy_from_host(int device, std::byte* dst, const std::byte* src, std::int64_t bytes, std::span<Event> deps) {
  DeviceContext& dc = DeviceContext::get(device);
  ScopedContext scope(dc.ctx());
  // Fresh memory only waits for its allocation (memory stream order); memory that kernels may still
  // use goes through the copy stream, so the memory stream never waits for a kernel.
  bool fresh = true;
  for (const Event& e : deps) {
    const detail::NativeEvent* ne = e.native_ptr();
    if (!e.done() && !(ne && ne->stream_id == dc.mem_stream_id())) fresh = false;
  }
  const CUstream s = fresh ? dc.mem_stream() : dc.copy_stream();
  const std::uint64_t sid = fresh ? dc.mem_stream_id() : dc.copy_stream_id();
  std::mutex& smu = fresh ? dc.mem_mu() : dc.copy_mu();
  Completer& completer = fresh ? dc.mem_completer() : dc.copy_completer();
  if (bytes <= 0) {
    for (Event& e : deps)
      if (e.done())
        if (auto err = e.error()) std::rethrow_exception(err);
    return Event::ready();
  }
  auto& stg = dc.staging();
  std::unique_lock slk(stg.mu, std::defer_lock);
  const bool staged = bytes >= kStageThreshold && (slk.lock(), dc.ensure_staging());
  std::lock_guard lk(smu);
  detail::SmallVec<Event, 2> after = order_after(dc, s, sid, deps, "a copy from the host");
  if (!staged) {
    // From pageable memory this returns once the driver has staged `src`.
    CTILE_CU(cuMemcpyHtoDAsync_v2, (dptr(dst), src, static_cast<std::size_t>(bytes), s), "copying ", bytes,
             " bytes from the host to cuda:", device);
  } else {
    const auto chunk = static_cast<std::int64_t>(stg.bytes);
    for (std::int64_t i = 0, off = 0; off < bytes; ++i, off += chunk) {
      const std::size_t b = static_cast<std::size_t>(i & 1);
      const std::int64_t len = std::min(chunk, bytes - off);
      // The buffer's previous DMA (this copy's chunk i - 2, or an earlier copy) must have read it.
      CTILE_CU(cuEventSynchronize, (stg.ev[b]), "waiting for a staged copy to cuda:", device);
      std::memcpy(stg.buf[b], src + off, static_cast<std::size_t>(len));
      CTILE_CU(cuMemcpyHtoDAsync_v2, (dptr(dst + off), stg.buf[b], static_cast<std::size_t>(len), s), "copying ", len,
               " bytes from pinned staging memory to cuda:", device);
      CTILE_CU(cuEventRecord, (stg.ev[b], s), "recording a staged copy to cuda:", device);
    }
  }
  return finish_on(dc, s, sid, completer, {}, std::move(after), "a copy from the host");
}

Event copy_device(int dst_device, std::byte* dst, int src_device, const std::byte* src, std::int64_t bytes,
                  std::span<Event> deps, detail::KeepAlive keep) {
  DeviceContext& dc = DeviceContext::get(dst_device);
  DeviceContext& sc = DeviceContext::get(src_device);
  ScopedContext scope(dc.ctx());
  // The copy stream, not the memory stream: the copy may wait for a long kernel that writes its
  // source, and allocations must not queue up behind that.
  const CUstream cs = dc.copy_stream();
  std::lock_guard lk(dc.copy_mu());
  detail::SmallVec<Event, 2> after = order_after(dc, cs, dc.copy_stream_id(), deps, "a device copy");
  if (bytes > 0) {
    if (dst_device == src_device)
      CTILE_CU(cuMemcpyDtoDAsync_v2, (dptr(dst), dptr(src), static_cast<std::size_t>(bytes), cs), "copying ", bytes,
               " bytes within cuda:", dst_device);
    else
      CTILE_CU(cuMemcpyPeerAsync, (dptr(dst), dc.ctx(), dptr(src), sc.ctx(), static_cast<std::size_t>(bytes), cs),
               "copying ", bytes, " bytes from cuda:", src_device, " to cuda:", dst_device);
  }
  return finish_on(dc, cs, dc.copy_stream_id(), dc.copy_completer(), std::move(keep), std::move(after), "a device copy");
}

}  // namespace ctile::platform::cuda
