// Tensor<T>: the move-only owner of an n-d array (rank 0..kMaxRank, 64-bit extents and strides).
// Ownership moves, never copies: partition() and share() consume the tensor, a launch takes it by
// value, and it comes back when the work completes. A moved-from Tensor throws UserError on use.
// docs/host_api.md describes the model.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "ctile/backend/backend.hpp"
#include "ctile/core/dtype.hpp"
#include "ctile/core/error.hpp"
#include "ctile/core/shape.hpp"
#include "ctile/core/unchecked.hpp"
#include "ctile/runtime/device.hpp"
#include "ctile/runtime/event.hpp"
#include "ctile/runtime/small_vec.hpp"

namespace ctile {

namespace platform {
class DevicePlatform;  // src/platform/platform.hpp
}

template <Element T> class Tensor;
template <Element T> class Partition;
template <Element T> class Shared;

namespace detail {

// A lock for the few instructions of a storage's event bookkeeping (on every launch's path, held
// for a handful of loads and stores; a std::mutex costs several times more uncontended).
class SpinLock {
 public:
  void lock() noexcept {
    for (unsigned i = 0; flag_.exchange(true, std::memory_order_acquire); ++i)
      if (i >= 64) std::this_thread::yield();
  }
  void unlock() noexcept { flag_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> flag_{false};
};

// One allocation and the events of the work that reads or writes it. Every tensor, partition and
// shared handle (and every view made by slice/reshape) over the same memory refers to one Storage.
// device/platform/ptr/bytes/flags never change; the event state is guarded by `mu`.
//
// On a GPU `ptr` is a device address (never dereferenced on the host). Its memory comes from the
// device's stream-ordered pool; last_write starts as the event of the allocation (and zero fill),
// and the first use on each stream also waits for that event on the device (alloc_ready; a host
// wait does not order a stream-ordered allocation for the driver). The memory is freed by
// ~Storage, which runs only once no handle and no in-flight work holds the storage (work keeps it
// alive until its GPU part has finished); the free is still ordered on the device after the last
// write, the pending reads and each stream's latest use.
//
// Dependency rules (the launch glue follows them for every argument it submits):
//   a command that reads waits for deps_for_read() and then is recorded with record_read(its event);
//   a command that writes waits for deps_for_write() and then is recorded with record_write(its event).
// A write that failed poisons the storage: deps_for_read/deps_for_write keep returning it (so later
// work fails with the same error) and wait_writes() rethrows it, until the next record_write.
//
// A ctile::Graph that uses the storage counts itself in graph_writers or graph_readers for its
// lifetime; other work may then not write it (nor read what a graph writes): see check_free_for.
struct Storage {
  using Deps = SmallVec<Event, 8>;

  Device device;
  platform::DevicePlatform* platform = nullptr;  // never null: who allocated (or lends) the memory
  std::byte* ptr = nullptr;
  std::int64_t bytes = 0;
  bool owned = false;   // owned memory is freed by ~Storage; borrowed memory never is
  bool mapped = false;  // owned host memory from mmap (large allocations)
  bool pooled = false;  // owned GPU memory from the stream-ordered pool (else cuMemAlloc)
  bool host_accessible = true;  // the host may dereference `ptr`
  SpinLock mu;
  Event last_write;
  std::vector<Event> reads;        // reads since last_write (completed ones are pruned)
  Event alloc_ready;               // a stream-ordered allocation's event (empty otherwise)
  std::vector<std::uint64_t> ordered;  // streams (StreamImpl::order) that waited for alloc_ready on the device
  std::vector<Event> stream_uses;  // the latest native event of each stream that used the memory
  std::atomic<int> graph_writers{0}, graph_readers{0};
  // What keeps borrowed memory alive (a framework's tensor, a DLPack producer's deleter): released
  // by ~Storage, i.e. once no handle and no work in flight uses the memory.
  std::shared_ptr<const void> keep_alive;

  // Fresh memory on `d`: 64-byte aligned (page aligned from 1 MiB; 256-byte aligned on a GPU),
  // zero-filled if `zeroed`. Throws UserError when the memory cannot be had, the device cannot be
  // used, or the calling thread is inside a graph capture (allocate before capturing).
  [[nodiscard]] static std::shared_ptr<Storage> allocate(Device d, std::int64_t bytes, bool zeroed);
  // Foreign memory of `bytes` bytes at `p`, never freed by ctile (keep_alive is held instead).
  [[nodiscard]] static std::shared_ptr<Storage> borrow(Device d, void* p, std::int64_t bytes,
                                                       std::shared_ptr<const void> keep_alive = {});

  Storage() = default;
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  ~Storage();

  // Appends the events a reader on a stream of order `order` must wait for: the last write, if not
  // done or failed, and (once per stream) a stream-ordered allocation.
  void deps_for_read(Deps& out, std::uint64_t order = 0);
  // Likewise for a writer: also every pending read.
  void deps_for_write(Deps& out, std::uint64_t order = 0);
  [[nodiscard]] std::vector<Event> deps_for_read();   // the same into a vector (order 0)
  [[nodiscard]] std::vector<Event> deps_for_write();
  void record_read(const Event& e);
  void record_write(const Event& e);  // also forgets the reads: `e` is ordered after them
  // The host waits for the last write; rethrows its error if it failed.
  void wait_writes();
  // The host waits for the last write and every pending read (before the host writes itself);
  // rethrows the last write's error if it failed.
  void wait_all();
  [[nodiscard]] bool has_pending_reads();

  // The event state, for a graph capture that records into it and puts it back afterwards.
  struct State {
    Event last_write;
    std::vector<Event> reads;
    std::vector<std::uint64_t> ordered;
    std::vector<Event> stream_uses;
  };
  [[nodiscard]] State save_state();
  void restore_state(State st);
};

// Whether a ctile::Graph owns `s` in a way that forbids this use: a write while a graph reads or
// writes it, or a read while a graph writes it. (Cheap: launch paths test it before they make the
// message of check_free_for.)
[[nodiscard]] inline bool graph_forbids(const Storage& s, bool writes) {
  return s.graph_writers.load(std::memory_order_acquire) != 0 ||
         (writes && s.graph_readers.load(std::memory_order_acquire) != 0);
}
// Throws UserError when graph_forbids(s, writes). `what` starts the message.
void check_free_for(const Storage& s, bool writes, std::string_view what);

// A view of a Storage: element offset, extents, strides (elements) and element type. Immutable
// once shared between handles: every view-making operation makes a new TensorCore, and each
// TensorCore has its own id (never reused), by which the launch path knows a view it has packed
// before.
std::uint64_t new_core_id();
struct TensorCore {
  std::shared_ptr<Storage> storage;
  std::int64_t offset = 0;  // elements
  Shape shape;
  Shape strides;  // elements
  DType dtype = DType::f32;
  // The tensor this view was sliced from by Tensor::slice (null otherwise): only
  // Tensor::unslice gives it back, so nothing else can reach it while the slice lives.
  std::shared_ptr<TensorCore> parent;
  std::uint64_t id = new_core_id();
  // tensor_facts() of this view, computed on first use (bit 0 set once there; the rest packed).
  mutable std::atomic<std::uint64_t> facts_cache{0};

  TensorCore() = default;
  TensorCore(const TensorCore& o)  // a copy is another view: a new id
      : storage(o.storage), offset(o.offset), shape(o.shape), strides(o.strides), dtype(o.dtype), parent(o.parent) {}
  TensorCore& operator=(const TensorCore&) = delete;

  [[nodiscard]] backend::TensorArg arg() const;
  [[nodiscard]] std::byte* data() const;  // address of element 0 (the storage plus offset)
  [[nodiscard]] bool contiguous() const;  // row-major dense (extents of 1 may have any stride)
  // Two indices reach the same element (a stride of 0 on an axis of extent > 1: an expand view).
  [[nodiscard]] bool aliases_itself() const;
  [[nodiscard]] std::int64_t numel() const { return ctile::numel(shape); }
};

// Checks rank <= kMaxRank, extents >= 0, and that the element count and byte size fit in int64.
// Returns the element count. `what` starts the message ("zeros<f32>", "reshape", ...).
std::int64_t validate_shape(const Shape& s, DType dt, std::string_view what);
// A new, owned, contiguous tensor.
[[nodiscard]] std::shared_ptr<TensorCore> new_tensor(Shape s, DType dt, Device d, bool zeroed, std::string_view what);
// A view of foreign memory (strides empty: contiguous), holding `keep_alive` while it is used.
// `what` starts error messages (empty: "Tensor<T>::borrow").
[[nodiscard]] std::shared_ptr<TensorCore> borrow_tensor(void* p, Shape s, Shape strides, DType dt, Device d,
                                                        std::shared_ptr<const void> keep_alive = {},
                                                        std::string_view what = {});
// New views of `c`; they throw UserError (naming the problem) and leave `c` alone when invalid.
// None reaches outside `c`'s elements. reshape_view works on any view whose strides allow the new
// shape without a copy (contiguous ones always), slice_view takes [start, stop) of one axis,
// permute_view reorders the axes (view axis i is axis order[i] of `c`), expand_view broadcasts
// axes of extent 1 (and new leading axes) to `s` with stride 0. `what` starts the messages.
[[nodiscard]] std::shared_ptr<TensorCore> reshape_view(const TensorCore& c, Shape s, std::string_view what = "reshape");
[[nodiscard]] std::shared_ptr<TensorCore> slice_view(const TensorCore& c, int axis, std::int64_t start, std::int64_t stop);
[[nodiscard]] std::shared_ptr<TensorCore> permute_view(const TensorCore& c, const std::vector<int>& order,
                                                       std::string_view what = "permute");
[[nodiscard]] std::shared_ptr<TensorCore> expand_view(const TensorCore& c, const Shape& s, std::string_view what = "expand");
// Validates a partition's tile shape against the tensor: same rank, every extent a power of two.
void check_tile_shape(const TensorCore& c, const Shape& tile);
// Copies the elements, row-major, to host memory `dst` (numel * element size bytes), from any
// device. Does not wait for pending writes (the caller does).
void gather(const TensorCore& c, std::byte* dst);
// Fills `c`, a fresh contiguous tensor on any device, with numel * element size bytes from host
// memory `src` (which may be reused on return); on a GPU the copy becomes the storage's last write.
void fill_from_host(TensorCore& c, const std::byte* src);
// Copies numel * element size bytes from host memory `src` into `c` (contiguous, any device), after
// the pending work on it; recorded as its last write. UserError (starting with `what`) for a view
// that is not contiguous.
void copy_from_host_into(const TensorCore& c, const std::byte* src, std::string_view what);
// A new, owned, contiguous tensor on `d` with the elements of `src` (any device to any device),
// ordered after the pending writes of `src` (a failed write is rethrown) and recorded as a read of
// it. `what` starts error messages.
[[nodiscard]] std::shared_ptr<TensorCore> copy_to_device(const std::shared_ptr<const TensorCore>& src, Device d,
                                                         std::string_view what);
[[noreturn]] void throw_moved_from(std::string_view handle, DType dt, std::string_view how);

// The elements of `c` as a row-major host vector, after the pending writes.
template <Element T>
std::vector<T> to_host(const TensorCore& c) {
  c.storage->wait_writes();
  const auto n = static_cast<std::size_t>(c.numel());
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<std::uint8_t> tmp(n);
    gather(c, reinterpret_cast<std::byte*>(tmp.data()));
    return std::vector<bool>(tmp.begin(), tmp.end());
  } else {
    std::vector<T> out(n);
    gather(c, reinterpret_cast<std::byte*>(out.data()));
    return out;
  }
}

}  // namespace detail

template <Element T>
class Tensor {
 public:
  using element_type = T;

  // No copies: two owners of one tensor could both hand it to kernels that write it (a data race)
  // or free it under a running kernel. Move it (std::move), share() it for many readers, or
  // partition() it for many writers.
  Tensor(const Tensor&) = delete;  // move-only: pass it on with std::move (a launch owns it until it completes)
  Tensor& operator=(const Tensor&) = delete;
  Tensor(Tensor&&) noexcept = default;             // the source becomes moved-from
  Tensor& operator=(Tensor&&) noexcept = default;  // releases what *this owned
  ~Tensor() = default;

  [[nodiscard]] const Shape& shape() const { return c().shape; }
  [[nodiscard]] const Shape& strides() const { return c().strides; }
  [[nodiscard]] int rank() const { return static_cast<int>(c().shape.size()); }
  [[nodiscard]] std::int64_t numel() const { return c().numel(); }
  [[nodiscard]] Device device() const { return c().storage->device; }
  [[nodiscard]] DType dtype() const { return c().dtype; }
  [[nodiscard]] bool contiguous() const { return c().contiguous(); }
  // False once moved from; the only member that never throws.
  [[nodiscard]] bool valid() const noexcept { return core_ != nullptr; }

  // The elements, row-major; waits for pending writes (rethrows a failed write's error).
  [[nodiscard]] std::vector<T> to_host() const { return detail::to_host<T>(c()); }

  // Consumes the tensor into disjoint tiles of `tile_shape` (grid = ceil(extent / tile) per axis).
  // On a bad tile shape it throws UserError and the tensor stays as it was.
  [[nodiscard]] Partition<T> partition(Shape tile_shape) &&;
  // Consumes the tensor into a read-only handle that can be copied freely.
  [[nodiscard]] Shared<T> share() &&;
  // The same elements with another shape (contiguous tensors only, same element count).
  [[nodiscard]] Tensor reshape(Shape new_shape) && {
    auto v = detail::reshape_view(c(), std::move(new_shape));
    core_.reset();
    return Tensor(std::move(v));
  }
  // Elements [start, stop) along `axis`. Consumes the tensor: the view shares its storage, but
  // the source is gone, so nothing aliases the view. The source travels inside the slice (through
  // partitions, launches and futures) and unslice() gives it back.
  [[nodiscard]] Tensor slice(int axis, std::int64_t start, std::int64_t stop) && {
    auto v = detail::slice_view(c(), axis, start, stop);
    v->parent = std::move(core_);
    return Tensor(std::move(v));
  }
  // The tensor this one was sliced from, whole (consumes the slice; a slice of a slice gives back
  // the first slice). UserError, and the tensor stays, when it is not a slice: made by
  // std::move(t).slice(...), possibly reshaped, partitioned, launched or shared and unshared since.
  [[nodiscard]] Tensor unslice() && {
    const auto& core = c();
    if (!core.parent)
      throw UserError(detail::cat("Tensor<", dtype_name(dtype_of<T>), ">::unslice of a tensor of shape ",
                                  shape_str(core.shape), ": it is not a slice (made by std::move(t).slice(...)), so ",
                                  "there is no parent to give back"));
    auto parent = core.parent;
    core_.reset();
    return Tensor(std::move(parent));
  }
  // Whether unslice() has a parent to give back.
  [[nodiscard]] bool is_slice() const { return c().parent != nullptr; }

  // Calling a consuming member on an lvalue does not compile: spell the transfer, std::move(t).
  Partition<T> partition(Shape) & = delete;        // use std::move(t).partition(...)
  Partition<T> partition(Shape) const& = delete;   // use std::move(t).partition(...)
  Shared<T> share() & = delete;                    // use std::move(t).share()
  Shared<T> share() const& = delete;               // use std::move(t).share()
  Tensor reshape(Shape) & = delete;                // use std::move(t).reshape(...)
  Tensor reshape(Shape) const& = delete;           // use std::move(t).reshape(...)
  Tensor slice(int, std::int64_t, std::int64_t) & = delete;       // use std::move(t).slice(...)
  Tensor slice(int, std::int64_t, std::int64_t) const& = delete;  // use std::move(t).slice(...)
  Tensor unslice() & = delete;                                      // use std::move(t).unslice()
  Tensor unslice() const& = delete;                                 // use std::move(t).unslice()

  // The same elements on device `d` (consumes the tensor): a contiguous copy, or the tensor itself
  // when it already lives on `d`. A copy is ordered after pending writes (a GPU-to-GPU copy runs
  // asynchronously on the device; to and from the host it completes before this returns).
  [[nodiscard]] Tensor to(Device d) && {
    if (c().storage->device == d) return std::move(*this);
    auto v = detail::copy_to_device(core_, d, detail::cat("Tensor<", dtype_name(dtype_of<T>), ">::to(", d.str(), ")"));
    core_.reset();
    return Tensor(std::move(v));
  }
  Tensor to(Device) & = delete;       // use std::move(t).to(d) (or share() it and copy with Shared::to)
  Tensor to(Device) const& = delete;  // use std::move(t).to(d)

  // Raw pointer to element 0, after all pending work on the storage (reads and writes) finished.
  // Unchecked: nothing stops the pointer from outliving the tensor or racing a later launch. On a
  // GPU it is a device address.
  [[nodiscard]] T* data(unchecked_t) {
    c().storage->wait_all();
    return reinterpret_cast<T*>(c().data());
  }
  [[nodiscard]] const T* data(unchecked_t) const {
    c().storage->wait_writes();
    return reinterpret_cast<const T*>(c().data());
  }

  // Foreign memory as a tensor (strides in elements; empty: row-major). ctile never frees it; the
  // caller keeps it alive and unaliased (no other writer, no self-overlapping strides) while any
  // handle to it or any work on it exists.
  [[nodiscard]] static Tensor borrow(unchecked_t, T* ptr, Shape shape, Shape strides = {}, Device d = cpu()) {
    return Tensor(detail::borrow_tensor(ptr, std::move(shape), std::move(strides), dtype_of<T>, d));
  }
  // Foreign memory with its owner: `owner` (whatever keeps the memory alive: a framework's tensor,
  // an allocation handle) is held by the tensor, its views and every launch that uses it, and
  // released only when the last of them is done, so the memory cannot be freed under ctile's work.
  // Still unchecked: `ptr` must lie inside what `owner` keeps alive, and nothing else may write it.
  [[nodiscard]] static Tensor borrow(unchecked_t, std::shared_ptr<const void> owner, T* ptr, Shape shape,
                                     Shape strides = {}, Device d = cpu()) {
    if (!owner)
      throw UserError(detail::cat("Tensor<", dtype_name(dtype_of<T>), ">::borrow with an owner: the owner is null ",
                                  "(use the overload without one for memory that needs no owner)"));
    return Tensor(detail::borrow_tensor(ptr, std::move(shape), std::move(strides), dtype_of<T>, d, std::move(owner)));
  }

  // Unsafe: the raw shared view and its storage (for the launch glue and backends). A second handle
  // made with from_core would alias this one, so both take the `unchecked` tag.
  [[nodiscard]] const std::shared_ptr<detail::TensorCore>& core(unchecked_t) const {
    c();
    return core_;
  }
  [[nodiscard]] static Tensor from_core(unchecked_t, std::shared_ptr<detail::TensorCore> core) {
    CTILE_CHECK(core != nullptr, "Tensor::from_core(nullptr)");
    CTILE_CHECK(core->dtype == dtype_of<T>, "Tensor<", dtype_name(dtype_of<T>), ">::from_core of a ",
                dtype_name(core->dtype), " core");
    return Tensor(std::move(core));
  }

 private:
  explicit Tensor(std::shared_ptr<detail::TensorCore> core) : core_(std::move(core)) {}
  const detail::TensorCore& c() const {
    if (!core_) detail::throw_moved_from("Tensor", dtype_of<T>, "it was moved into a launch, a partition or a shared handle");
    return *core_;
  }

  std::shared_ptr<detail::TensorCore> core_;  // null once moved from
};

}  // namespace ctile

#include "ctile/runtime/partition.hpp"
#include "ctile/runtime/shared.hpp"
