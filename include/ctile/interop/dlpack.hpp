// DLPack interop: tensors in and out of ctile without a copy (docs/interop.md).
//
//   auto x = ctile::from_dlpack_shared<float>(at::toDLPack(t));    // torch -> ctile, read-only
//   auto y = ctile::from_dlpack<float>(m, producer_stream);          // ctile owns m now (writable)
//   DLManagedTensorVersioned* out = ctile::to_dlpack(std::move(z));  // ctile -> a consumer
//
// The structs below are the DLPack 1.x ABI (https://dmlc.github.io/dlpack/latest/c_api.html),
// declared here from the public specification so that ctile needs no header of its own to speak
// it; tests/unit/interop checks them field by field against the system's <dlpack/dlpack.h>.
// Any other declaration of the same ABI (torch's ATen/dlpack.h, the system header) is accepted
// too: from_dlpack takes a pointer to any struct with the same layout (checked at compile time).
//
// Ownership, as the producer says:
//   - A DLManagedTensor(Versioned) with a deleter is handed over: ctile calls the deleter once no
//     handle and no work in flight uses the memory. With a null deleter the producer keeps the
//     memory alive itself (ctile borrows it).
//   - A versioned tensor flagged read-only becomes a Shared handle only (from_dlpack refuses it).
//   - A bare DLTensor carries no owner: borrowing it takes ctile::unchecked, like Tensor::borrow.
// If from_dlpack throws, nothing was taken: the caller still owns the managed tensor.
//
// Streams: `producer` (optional) is the stream the producer last wrote the memory on; ctile's
// work on the tensor, on any stream, is ordered after everything submitted to it so far. For a
// GPU tensor, to_dlpack's `consumer` stream is ordered after ctile's pending work on the tensor,
// and the memory is freed only after the work the consumer has submitted to it by the time it
// calls the deleter. Framework streams become ctile streams with Stream::wrap_cuda.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "ctile/core/dtype.hpp"
#include "ctile/core/unchecked.hpp"
#include "ctile/runtime/shared.hpp"
#include "ctile/runtime/stream.hpp"
#include "ctile/runtime/tensor.hpp"

namespace ctile::dlpack {

// The version ctile produces; it accepts major version 1, any minor.
inline constexpr std::uint32_t kMajorVersion = 1;
inline constexpr std::uint32_t kMinorVersion = 1;

struct DLPackVersion {
  std::uint32_t major;
  std::uint32_t minor;
};

// Device types (DLDeviceType): the values ctile understands; any other is refused.
enum DLDeviceType : std::int32_t {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,     // pinned host memory: the CPU device to ctile
  kDLCUDAManaged = 13, // managed memory: its CUDA device to ctile
};

struct DLDevice {
  std::int32_t device_type;  // a DLDeviceType (an enum of int size in the C ABI)
  std::int32_t device_id;
};

// Type codes (DLDataTypeCode).
enum DLDataTypeCode : std::uint8_t {
  kDLInt = 0,
  kDLUInt = 1,
  kDLFloat = 2,
  kDLOpaqueHandle = 3,
  kDLBfloat = 4,
  kDLComplex = 5,
  kDLBool = 6,
  kDLFloat8_e4m3fn = 10,  // OCP E4M3FN (ctile::f8e4m3; torch.float8_e4m3fn)
  kDLFloat8_e5m2 = 12,    // OCP E5M2 (ctile::f8e5m2; torch.float8_e5m2)
};

struct DLDataType {
  std::uint8_t code;
  std::uint8_t bits;
  std::uint16_t lanes;
};

struct DLTensor {
  void* data;            // element 0 is at data + byte_offset
  DLDevice device;
  std::int32_t ndim;
  DLDataType dtype;
  std::int64_t* shape;   // ndim extents
  std::int64_t* strides; // ndim strides in elements, or null: row-major
  std::uint64_t byte_offset;
};

struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};

inline constexpr std::uint64_t kFlagReadOnly = 1u << 0;
inline constexpr std::uint64_t kFlagIsCopied = 1u << 1;
inline constexpr std::uint64_t kFlagSubbytePadded = 1u << 2;

struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned* self);
  std::uint64_t flags;
  DLTensor dl_tensor;
};

// The DLPack data type of a ctile element type.
[[nodiscard]] DLDataType dtype_of(DType d);

// A struct laid out like DLManagedTensor / DLManagedTensorVersioned (another header's declaration
// of the same ABI): the same size and the same offsets of the fields ctile reads.
template <class M>
concept ManagedLike = std::is_standard_layout_v<M> && sizeof(M) == sizeof(DLManagedTensor) &&
                      requires(M m) { m.dl_tensor; m.manager_ctx; m.deleter; } && !requires(M m) { m.flags; } &&
                      sizeof(decltype(std::declval<M>().dl_tensor)) == sizeof(DLTensor);
template <class M>
concept VersionedLike = std::is_standard_layout_v<M> && sizeof(M) == sizeof(DLManagedTensorVersioned) &&
                        requires(M m) { m.version; m.dl_tensor; m.manager_ctx; m.deleter; m.flags; } &&
                        sizeof(decltype(std::declval<M>().dl_tensor)) == sizeof(DLTensor);

}  // namespace ctile::dlpack

namespace ctile {
namespace detail {

// The non-template parts (src/runtime/dlpack.cpp). `what` starts error messages.
// A view of the DLTensor's memory as element type `want`, holding `keep_alive`; validated (rank,
// element type, device, non-negative strides, alignment, null data, spans that overflow). When
// `producer` is a valid stream, the view's first use waits for the work submitted to it so far.
[[nodiscard]] std::shared_ptr<TensorCore> import_dlpack(const dlpack::DLTensor& t, DType want, const Stream& producer,
                                                        std::shared_ptr<const void> keep_alive, const std::string& what);
// Takes over a managed tensor (nothing taken if it throws): the deleter runs when the storage goes.
[[nodiscard]] std::shared_ptr<TensorCore> import_managed(dlpack::DLManagedTensor* m, DType want, const Stream& producer,
                                                         const std::string& what);
// `read_only_ok`: false for a Tensor, which refuses a read-only tensor.
[[nodiscard]] std::shared_ptr<TensorCore> import_versioned(dlpack::DLManagedTensorVersioned* m, DType want,
                                                           const Stream& producer, bool read_only_ok,
                                                           const std::string& what);
// Throws what an export of `core` to `consumer` would throw, before the handle is given up.
void check_export(const TensorCore& core, bool writes, const Stream& consumer, const std::string& what);
// A managed tensor over `core` whose deleter drops `keep` (the handle it came from). `writes`: the
// consumer may write (a Tensor) or only read (a Shared handle, flagged read-only).
[[nodiscard]] dlpack::DLManagedTensorVersioned* export_versioned(const std::shared_ptr<const TensorCore>& core,
                                                                 std::shared_ptr<const void> keep, bool writes,
                                                                 const Stream& consumer, const std::string& what);
[[nodiscard]] dlpack::DLManagedTensor* export_unversioned(const std::shared_ptr<const TensorCore>& core,
                                                          std::shared_ptr<const void> keep, bool writes,
                                                          const Stream& consumer, const std::string& what);

template <Element T>
std::string dlpack_what(const char* fn) {
  return cat(fn, "<", dtype_name(dtype_of<T>), ">");
}

template <class M>
dlpack::DLManagedTensor* as_managed(M* m) {
  if constexpr (std::is_same_v<M, dlpack::DLManagedTensor>) return m;
  else return reinterpret_cast<dlpack::DLManagedTensor*>(m);  // same ABI (dlpack::ManagedLike)
}
template <class M>
dlpack::DLManagedTensorVersioned* as_versioned(M* m) {
  if constexpr (std::is_same_v<M, dlpack::DLManagedTensorVersioned>) return m;
  else return reinterpret_cast<dlpack::DLManagedTensorVersioned*>(m);  // same ABI (dlpack::VersionedLike)
}

}  // namespace detail

// ---- import ---------------------------------------------------------------------------------

// A mutable tensor over a managed DLPack tensor, which ctile now owns (see the top of this file).
// UserError for a read-only one (use from_dlpack_shared), another element type, an unsupported
// device, a negative stride, ...; then nothing was taken.
template <Element T, class M>
  requires dlpack::VersionedLike<M>
[[nodiscard]] Tensor<T> from_dlpack(M* m, const Stream& producer = Stream()) {
  return Tensor<T>::from_core(unchecked, detail::import_versioned(detail::as_versioned(m), dtype_of<T>, producer, false,
                                                                  detail::dlpack_what<T>("from_dlpack")));
}
template <Element T, class M>
  requires dlpack::ManagedLike<M>
[[nodiscard]] Tensor<T> from_dlpack(M* m, const Stream& producer = Stream()) {
  return Tensor<T>::from_core(unchecked, detail::import_managed(detail::as_managed(m), dtype_of<T>, producer,
                                                                detail::dlpack_what<T>("from_dlpack")));
}
// The same as a read-only handle (also for tensors the producer flagged read-only).
template <Element T, class M>
  requires dlpack::VersionedLike<M>
[[nodiscard]] Shared<T> from_dlpack_shared(M* m, const Stream& producer = Stream()) {
  return Tensor<T>::from_core(unchecked, detail::import_versioned(detail::as_versioned(m), dtype_of<T>, producer, true,
                                                                  detail::dlpack_what<T>("from_dlpack_shared")))
      .share();
}
template <Element T, class M>
  requires dlpack::ManagedLike<M>
[[nodiscard]] Shared<T> from_dlpack_shared(M* m, const Stream& producer = Stream()) {
  return from_dlpack<T>(m, producer).share();
}
// A bare DLTensor has no owner: the caller keeps its memory alive and unaliased while any handle
// or work uses it (unchecked, like Tensor::borrow), or hands `keep_alive` over to see to it.
template <Element T>
[[nodiscard]] Tensor<T> from_dlpack(unchecked_t, const dlpack::DLTensor& t, const Stream& producer = Stream(),
                                    std::shared_ptr<const void> keep_alive = {}) {
  return Tensor<T>::from_core(unchecked, detail::import_dlpack(t, dtype_of<T>, producer, std::move(keep_alive),
                                                               detail::dlpack_what<T>("from_dlpack")));
}

// ---- export ---------------------------------------------------------------------------------

// Hands a tensor over (consumes it): the consumer owns the memory until it calls the deleter,
// which frees it (after the consumer stream's work, if one is given). The tensor's pending work is
// waited for first: by the consumer stream on the device when one is given, else by the host.
template <Element T>
[[nodiscard]] dlpack::DLManagedTensorVersioned* to_dlpack(Tensor<T>&& t, const Stream& consumer = Stream()) {
  auto core = t.core(unchecked);  // throws for a moved-from tensor before anything moves
  const std::string what = detail::dlpack_what<T>("to_dlpack");
  detail::check_export(*core, true, consumer, what);  // a refused hand-over takes nothing
  return detail::export_versioned(core, std::make_shared<Tensor<T>>(std::move(t)), true, consumer, what);
}
// A read-only export (flagged read-only) of a shared handle: the consumer's tensor counts as one
// more holder until its deleter runs (so unshare() waits for it); ctile may go on reading it.
template <Element T>
[[nodiscard]] dlpack::DLManagedTensorVersioned* to_dlpack(const Shared<T>& s, const Stream& consumer = Stream()) {
  return detail::export_versioned(s.core(unchecked), std::make_shared<Shared<T>>(s), false, consumer,
                                  detail::dlpack_what<T>("to_dlpack"));
}
// The same as the unversioned DLManagedTensor (DLPack 0.x consumers, e.g. at::fromDLPack), which
// has no read-only flag: only a mutable tensor can be exported this way.
template <Element T>
[[nodiscard]] dlpack::DLManagedTensor* to_dlpack_unversioned(Tensor<T>&& t, const Stream& consumer = Stream()) {
  auto core = t.core(unchecked);
  const std::string what = detail::dlpack_what<T>("to_dlpack_unversioned");
  detail::check_export(*core, true, consumer, what);
  return detail::export_unversioned(core, std::make_shared<Tensor<T>>(std::move(t)), true, consumer, what);
}
template <Element T>
dlpack::DLManagedTensor* to_dlpack_unversioned(Tensor<T>& t, const Stream& = Stream()) = delete;  // std::move(t)
template <Element T>
dlpack::DLManagedTensorVersioned* to_dlpack(Tensor<T>& t, const Stream& = Stream()) = delete;  // use std::move(t)

// A pointer to another declaration of the same ABI (torch's ::DLManagedTensor, ...), for handing
// ctile's export to a consumer that names its own type.
template <class M, class From>
  requires((dlpack::ManagedLike<M> && std::is_same_v<From, dlpack::DLManagedTensor>) ||
           (dlpack::VersionedLike<M> && std::is_same_v<From, dlpack::DLManagedTensorVersioned>))
[[nodiscard]] M* dlpack_cast(From* m) {
  return reinterpret_cast<M*>(m);
}

}  // namespace ctile
