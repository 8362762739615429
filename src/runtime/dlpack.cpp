// DLPack import and export (include/ctile/interop/dlpack.hpp, docs/interop.md).
#include "ctile/interop/dlpack.hpp"

#include <optional>
#include <utility>

#include "ctile/runtime/device.hpp"

namespace ctile::dlpack {

DLDataType dtype_of(DType d) {
  const auto bits = static_cast<std::uint8_t>(dtype_size(d) * 8);
  switch (d) {
    case DType::b1: return {kDLBool, 8, 1};
    case DType::i8: case DType::i16: case DType::i32: case DType::i64: return {kDLInt, bits, 1};
    case DType::u8: case DType::u16: case DType::u32: case DType::u64: return {kDLUInt, bits, 1};
    case DType::f16: case DType::f32: case DType::f64: return {kDLFloat, bits, 1};
    case DType::bf16: return {kDLBfloat, 16, 1};
    case DType::f8e4m3: return {kDLFloat8_e4m3fn, 8, 1};
    case DType::f8e5m2: return {kDLFloat8_e5m2, 8, 1};
  }
  throw InternalError(detail::cat("dlpack::dtype_of: element type ", static_cast<int>(d)));
}

}  // namespace ctile::dlpack

namespace ctile::detail {
namespace {

using namespace ctile::dlpack;

std::string dl_type_str(const DLDataType& t) {
  const char* code = t.code == kDLInt      ? "int"
                     : t.code == kDLUInt   ? "uint"
                     : t.code == kDLFloat  ? "float"
                     : t.code == kDLBfloat ? "bfloat"
                     : t.code == kDLBool   ? "bool"
                     : t.code == kDLComplex ? "complex"
                                            : nullptr;
  const char* fp8 = t.code == kDLFloat8_e4m3fn ? "float8_e4m3fn" : t.code == kDLFloat8_e5m2 ? "float8_e5m2" : nullptr;
  std::string s = fp8 && t.bits == 8 ? std::string(fp8)
                  : code            ? cat(code, int(t.bits))
                                    : cat("code ", int(t.code), " bits ", int(t.bits));
  if (t.lanes != 1) s += cat(" x", t.lanes, " lanes");
  return s;
}

Device device_of(const DLDevice& d, const std::string& what) {
  switch (d.device_type) {
    case kDLCPU:
    case kDLCUDAHost:
      return cpu();
    case kDLCUDA:
    case kDLCUDAManaged:
      if (d.device_id < 0) throw UserError(cat(what, ": CUDA device id ", d.device_id, " is negative"));
      return Device{DeviceKind::Cuda, d.device_id};
    default:
      throw UserError(cat(what, ": DLPack device type ", d.device_type,
                          " is not supported (ctile takes kDLCPU, kDLCUDAHost, kDLCUDA and kDLCUDAManaged)"));
  }
}

// Runs a managed tensor's deleter when the last owner goes (never throws out of a destructor).
template <class M>
struct DeleterGuard {
  explicit DeleterGuard(M* p) : m(p) {}
  DeleterGuard(const DeleterGuard&) = delete;  // one guard, one deleter call
  DeleterGuard& operator=(const DeleterGuard&) = delete;
  ~DeleterGuard() {
    if (m && m->deleter) m->deleter(m);
  }
  M* m;
};

}  // namespace

std::shared_ptr<TensorCore> import_dlpack(const DLTensor& t, DType want, const Stream& producer,
                                          std::shared_ptr<const void> keep_alive, const std::string& what) {
  const DLDataType expect = dlpack::dtype_of(want);
  if (t.dtype.code != expect.code || t.dtype.bits != expect.bits || t.dtype.lanes != expect.lanes)
    throw UserError(cat(what, ": the DLPack tensor holds ", dl_type_str(t.dtype), ", not ", dtype_name(want), " (",
                        dl_type_str(expect), ")"));
  if (t.ndim < 0 || t.ndim > kMaxRank)
    throw UserError(cat(what, ": the DLPack tensor has rank ", t.ndim, "; ctile takes rank 0 to ", kMaxRank));
  if (t.ndim > 0 && !t.shape) throw UserError(cat(what, ": the DLPack tensor of rank ", t.ndim, " has no shape array"));
  const Device d = device_of(t.device, what);
  Shape shape(t.shape, t.shape + t.ndim);
  Shape strides;
  if (t.strides) strides.assign(t.strides, t.strides + t.ndim);
  const std::int64_t es = dtype_size(want);
  if (t.byte_offset % static_cast<std::uint64_t>(es) != 0 || t.byte_offset > static_cast<std::uint64_t>(INT64_MAX))
    throw UserError(cat(what, ": byte_offset ", t.byte_offset, " is not a multiple of the element size ", es));
  auto* p = static_cast<std::byte*>(t.data);
  if (p) p += t.byte_offset;
  if (reinterpret_cast<std::uintptr_t>(p) % static_cast<std::uintptr_t>(es) != 0)
    throw UserError(cat(what, ": element 0 at address ", static_cast<const void*>(p), " is not aligned to its ", es,
                        "-byte element size"));
  // Extents, strides (>= 0) and the span are checked there, against `what`.
  auto core = borrow_tensor(p, std::move(shape), std::move(strides), want, d, std::move(keep_alive), what);
  if (producer.valid()) {
    if (!(producer.device() == d))
      throw UserError(cat(what, ": the producer stream runs on ", producer.device().str(), " but the tensor lives on ",
                          d.str()));
    // The producer's work so far comes first: recorded as the memory's last write, so every later
    // use waits for it on whichever stream it runs.
    Stream s = producer;
    core->storage->record_write(s.record());
  }
  return core;
}

std::shared_ptr<TensorCore> import_managed(DLManagedTensor* m, DType want, const Stream& producer, const std::string& what) {
  if (!m) throw UserError(cat(what, ": null DLManagedTensor"));
  // The guard is made only once everything is valid: on an error the caller keeps `m`.
  auto core = import_dlpack(m->dl_tensor, want, producer, nullptr, what);
  core->storage->keep_alive = std::make_shared<DeleterGuard<DLManagedTensor>>(m);
  return core;
}

std::shared_ptr<TensorCore> import_versioned(DLManagedTensorVersioned* m, DType want, const Stream& producer,
                                             bool read_only_ok, const std::string& what) {
  if (!m) throw UserError(cat(what, ": null DLManagedTensorVersioned"));
  if (m->version.major != kMajorVersion)
    throw UserError(cat(what, ": DLPack version ", m->version.major, ".", m->version.minor,
                        " is not supported (ctile reads major version ", kMajorVersion, ")"));
  if ((m->flags & kFlagReadOnly) && !read_only_ok)
    throw UserError(cat(what, ": the producer marked the tensor read-only (DLPACK_FLAG_BITMASK_READ_ONLY); ",
                        "take it as a Shared handle with from_dlpack_shared"));
  auto core = import_dlpack(m->dl_tensor, want, producer, nullptr, what);
  core->storage->keep_alive =
      std::make_shared<DeleterGuard<DLManagedTensorVersioned>>(m);
  return core;
}

namespace {

// What an exported tensor's manager_ctx points to: the handle it came from, the shape and strides
// arrays the DLTensor points into, and the consumer stream.
struct Export {
  std::shared_ptr<const TensorCore> core;
  std::shared_ptr<const void> keep;
  bool writes = false;
  Stream consumer;
  std::int64_t shape[kMaxRank] = {};
  std::int64_t strides[kMaxRank] = {};
  DLManagedTensor legacy{};
  DLManagedTensorVersioned versioned{};

  // Before the handle goes: the memory is released only after the consumer stream's work so far
  // (a marker event recorded as a use of the storage). Never throws: a deleter cannot report.
  void release() noexcept {
    if (consumer.valid()) {
      try {
        Event e = consumer.record();
        if (writes) core->storage->record_write(e);
        else core->storage->record_read(e);
      } catch (...) {
        try {
          consumer.synchronize();
        } catch (...) {
        }
      }
    }
  }
};

void fill(Export& x, DLTensor& t, DType dt) {
  const TensorCore& c = *x.core;
  const Device d = c.storage->device;
  for (std::size_t i = 0; i < c.shape.size(); ++i) {
    x.shape[i] = c.shape[i];
    x.strides[i] = c.strides[i];
  }
  t.data = c.data();
  t.device = DLDevice{d.kind == DeviceKind::Cuda ? std::int32_t{kDLCUDA} : std::int32_t{kDLCPU}, d.kind == DeviceKind::Cuda ? d.index : 0};
  t.ndim = static_cast<std::int32_t>(c.shape.size());
  t.dtype = dlpack::dtype_of(dt);
  t.shape = x.shape;
  t.strides = x.strides;
  t.byte_offset = 0;
}

}  // namespace

void check_export(const TensorCore& c, bool writes, const Stream& consumer, const std::string& what) {
  check_free_for(*c.storage, writes, what);
  if (consumer.valid() && !(consumer.device() == c.storage->device))
    throw UserError(cat(what, ": the consumer stream runs on ", consumer.device().str(), " but the tensor lives on ",
                        c.storage->device.str()));
  if (consumer.valid() && consumer.capturing())
    throw UserError(cat(what, ": the consumer stream is capturing a graph; hand tensors over outside ctile::capture"));
}

namespace {

// The tensor's pending work comes first: the consumer stream waits for it on the device, or the
// host waits.
void order_before_consumer(const TensorCore& c, bool writes, const Stream& consumer, const std::string& what) {
  Storage& s = *c.storage;
  check_export(c, writes, consumer, what);
  if (!consumer.valid()) {
    if (writes) s.wait_all();
    else s.wait_writes();
    return;
  }
  Storage::Deps deps;
  if (writes) s.deps_for_write(deps, consumer.impl()->order());
  else s.deps_for_read(deps, consumer.impl()->order());
  Stream cs = consumer;
  Event marker = cs.record(std::vector<Event>(deps.begin(), deps.end()));
  // The marker stands for the consumer's use from now on: later ctile work waits for it only
  // through the deleter's event, but the storage must not be freed before it either.
  if (writes) s.record_write(marker);
  else s.record_read(marker);
}

std::unique_ptr<Export> make_export(const std::shared_ptr<const TensorCore>& core, std::shared_ptr<const void> keep,
                                    bool writes, const Stream& consumer, const std::string& what) {
  CTILE_CHECK(core != nullptr, what, ": null core");
  order_before_consumer(*core, writes, consumer, what);
  auto x = std::make_unique<Export>();
  x->core = core;
  x->keep = std::move(keep);
  x->writes = writes;
  x->consumer = consumer;
  return x;
}

}  // namespace

DLManagedTensorVersioned* export_versioned(const std::shared_ptr<const TensorCore>& core, std::shared_ptr<const void> keep,
                                           bool writes, const Stream& consumer, const std::string& what) {
  auto x = make_export(core, std::move(keep), writes, consumer, what);
  DLManagedTensorVersioned& m = x->versioned;
  m.version = DLPackVersion{kMajorVersion, kMinorVersion};
  m.flags = writes ? 0 : kFlagReadOnly;
  fill(*x, m.dl_tensor, core->dtype);
  m.manager_ctx = x.get();
  m.deleter = [](DLManagedTensorVersioned* self) {
    auto* e = static_cast<Export*>(self->manager_ctx);
    e->release();
    delete e;
  };
  return &x.release()->versioned;
}

DLManagedTensor* export_unversioned(const std::shared_ptr<const TensorCore>& core, std::shared_ptr<const void> keep,
                                    bool writes, const Stream& consumer, const std::string& what) {
  auto x = make_export(core, std::move(keep), writes, consumer, what);
  DLManagedTensor& m = x->legacy;
  fill(*x, m.dl_tensor, core->dtype);
  m.manager_ctx = x.get();
  m.deleter = [](DLManagedTensor* self) {
    auto* e = static_cast<Export*>(self->manager_ctx);
    e->release();
    delete e;
  };
  return &x.release()->legacy;
}

}  // namespace ctile::detail
