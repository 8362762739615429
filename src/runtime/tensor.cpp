#include "ctile/runtime/tensor.hpp"

#include <new>

#include "../platform/cuda/memory.hpp"

#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#define CTILE_HAVE_MMAP 1
#endif

namespace ctile::detail {
namespace {

constexpr std::size_t kAlign = 64;
constexpr std::int64_t kMmapThreshold = std::int64_t{1} << 20;

std::string shape_and_strides(const TensorCore& c) {
  return cat("shape ", shape_str(c.shape), ", strides ", shape_str(c.strides));
}

}  // namespace

// ---- Storage ---------------------------------------------------------------------------------

std::shared_ptr<Storage> Storage::allocate(Device d, std::int64_t bytes, bool zeroed) {
  if (bytes < 0) throw InternalError(cat("Storage::allocate of ", bytes, " bytes"));
  auto s = std::make_shared<Storage>();
  s->device = d;
  s->bytes = bytes;
  if (d.kind == DeviceKind::Cuda) {
    platform::cuda::DeviceMemory m = platform::cuda::allocate(d.index, bytes, zeroed);
    s->ptr = m.ptr;
    s->pooled = m.pooled;
    s->owned = true;
    s->last_write = std::move(m.ready);
    return s;
  }
  s->owned = true;
#ifdef CTILE_HAVE_MMAP
  if (bytes >= kMmapThreshold) {  // fresh pages come zero-filled, and only touched pages cost memory
    void* p = ::mmap(nullptr, static_cast<std::size_t>(bytes), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw UserError(cat("out of memory: cannot allocate ", bytes, " bytes for a tensor on ", d.str()));
    s->ptr = static_cast<std::byte*>(p);
    s->mapped = true;
    return s;
  }
#endif
  const auto n = static_cast<std::size_t>(bytes == 0 ? kAlign : bytes);
  void* p = ::operator new(n, std::align_val_t{kAlign}, std::nothrow);
  if (!p) throw UserError(cat("out of memory: cannot allocate ", bytes, " bytes for a tensor on ", d.str()));
  if (zeroed) std::memset(p, 0, n);
  s->ptr = static_cast<std::byte*>(p);
  return s;
}

std::shared_ptr<Storage> Storage::borrow(Device d, void* p, std::int64_t bytes) {
  auto s = std::make_shared<Storage>();
  s->device = d;
  s->ptr = static_cast<std::byte*>(p);
  s->bytes = bytes;
  s->owned = false;
  return s;
}

Storage::~Storage() {
  if (!owned || !ptr) return;
  if (device.kind == DeviceKind::Cuda) {
    std::vector<Event> pending = std::move(reads);
    pending.push_back(std::move(last_write));
    platform::cuda::release(device.index, ptr, pooled, pending);
    return;
  }
#ifdef CTILE_HAVE_MMAP
  if (mapped) {
    ::munmap(ptr, static_cast<std::size_t>(bytes));
    return;
  }
#endif
  ::operator delete(ptr, std::align_val_t{kAlign});
}

std::vector<Event> Storage::deps_for_read() {
  std::lock_guard lk(mu);
  if (!last_write.done() || last_write.error()) return {last_write};
  return {};
}

std::vector<Event> Storage::deps_for_write() {
  std::lock_guard lk(mu);
  std::vector<Event> deps;
  if (!last_write.done() || last_write.error()) deps.push_back(last_write);
  for (const Event& r : reads)
    if (!r.done()) deps.push_back(r);
  return deps;
}

void Storage::record_read(Event e) {
  std::lock_guard lk(mu);
  std::erase_if(reads, [](const Event& r) { return r.done(); });
  reads.push_back(std::move(e));
}

void Storage::record_write(Event e) {
  std::lock_guard lk(mu);
  last_write = std::move(e);
  reads.clear();
}

void Storage::wait_writes() {
  Event w;
  {
    std::lock_guard lk(mu);
    w = last_write;
  }
  w.wait();
  if (auto err = w.error()) std::rethrow_exception(err);
}

void Storage::wait_all() {
  Event w;
  std::vector<Event> rs;
  {
    std::lock_guard lk(mu);
    w = last_write;
    rs = reads;
  }
  for (const Event& r : rs) r.wait();
  w.wait();
  if (auto err = w.error()) std::rethrow_exception(err);
}

bool Storage::has_pending_reads() {
  std::lock_guard lk(mu);
  std::erase_if(reads, [](const Event& r) { return r.done(); });
  return !reads.empty();
}

// ---- TensorCore ------------------------------------------------------------------------------

backend::TensorArg TensorCore::arg() const { return backend::TensorArg{data(), dtype, shape, strides}; }

std::byte* TensorCore::data() const { return storage->ptr + offset * dtype_size(dtype); }

bool TensorCore::contiguous() const {
  if (numel() == 0) return true;
  std::int64_t expect = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && strides[i] != expect) return false;
    expect *= shape[i];
  }
  return true;
}

// ---- shapes and views ------------------------------------------------------------------------

std::int64_t validate_shape(const Shape& s, DType dt, std::string_view what) {
  if (s.size() > static_cast<std::size_t>(kMaxRank))
    throw UserError(cat(what, ": shape ", shape_str(s), " has rank ", s.size(), "; the maximum rank is ", kMaxRank));
  for (std::size_t i = 0; i < s.size(); ++i)
    if (s[i] < 0)
      throw UserError(cat(what, ": shape ", shape_str(s), " has a negative extent (", s[i], " at axis ", i, ")"));
  std::int64_t n = 0;
  if (!checked_numel(s, n))
    throw UserError(cat(what, ": the element count of shape ", shape_str(s), " overflows int64"));
  if (n > INT64_MAX / dtype_size(dt))
    throw UserError(cat(what, ": the byte size of shape ", shape_str(s), " of ", dtype_name(dt), " overflows int64"));
  return n;
}

std::shared_ptr<TensorCore> new_tensor(Shape s, DType dt, Device d, bool zeroed, std::string_view what) {
  const std::int64_t n = validate_shape(s, dt, what);
  auto c = std::make_shared<TensorCore>();
  c->storage = Storage::allocate(d, n * dtype_size(dt), zeroed);
  c->strides = contiguous_strides(s);
  c->shape = std::move(s);
  c->dtype = dt;
  return c;
}

std::shared_ptr<TensorCore> borrow_tensor(void* p, Shape s, Shape strides, DType dt, Device d) {
  const std::string what = cat("Tensor<", dtype_name(dt), ">::borrow");
  const std::int64_t n = validate_shape(s, dt, what);
  if (strides.empty()) {
    strides = contiguous_strides(s);
  } else if (strides.size() != s.size()) {
    throw UserError(cat(what, ": strides ", shape_str(strides), " do not match the rank of shape ", shape_str(s)));
  }
  // Bytes spanned: element 0 up to the last element (strides >= 0).
  std::int64_t last = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (strides[i] < 0)
      throw UserError(cat(what, ": strides ", shape_str(strides), " have a negative stride (", strides[i], " at axis ", i, ")"));
    std::int64_t step = 0;
    if (n > 0 && (__builtin_mul_overflow(s[i] - 1, strides[i], &step) || __builtin_add_overflow(last, step, &last)))
      throw UserError(cat(what, ": shape ", shape_str(s), " with strides ", shape_str(strides), " spans more than int64 elements"));
  }
  std::int64_t bytes = 0;
  if (n > 0 && __builtin_mul_overflow(last + 1, static_cast<std::int64_t>(dtype_size(dt)), &bytes))
    throw UserError(cat(what, ": shape ", shape_str(s), " with strides ", shape_str(strides), " spans more than int64 bytes"));
  if (!p && n > 0) throw UserError(cat(what, ": null pointer for a tensor of shape ", shape_str(s)));
  auto c = std::make_shared<TensorCore>();
  c->storage = Storage::borrow(d, p, bytes);
  c->shape = std::move(s);
  c->strides = std::move(strides);
  c->dtype = dt;
  return c;
}

std::shared_ptr<TensorCore> reshape_view(const TensorCore& c, Shape s) {
  const std::int64_t n = validate_shape(s, c.dtype, "reshape");
  if (!c.contiguous())
    throw UserError(cat("reshape of a non-contiguous tensor (", shape_and_strides(c), ") to ", shape_str(s),
                        ": only contiguous tensors can be reshaped"));
  if (n != c.numel())
    throw UserError(cat("reshape from ", shape_str(c.shape), " (", c.numel(), " elements) to ", shape_str(s), " (", n,
                        " elements): element counts differ"));
  auto v = std::make_shared<TensorCore>(c);
  v->strides = contiguous_strides(s);
  v->shape = std::move(s);
  return v;
}

std::shared_ptr<TensorCore> slice_view(const TensorCore& c, int axis, std::int64_t start, std::int64_t stop) {
  const int rank = static_cast<int>(c.shape.size());
  if (axis < 0 || axis >= rank)
    throw UserError(cat("slice: axis ", axis, " is out of range for a tensor of rank ", rank, " (shape ",
                        shape_str(c.shape), ")"));
  const std::int64_t extent = c.shape[static_cast<std::size_t>(axis)];
  if (start < 0 || start > stop || stop > extent)
    throw UserError(cat("slice: range [", start, ", ", stop, ") is out of range for axis ", axis, " of extent ", extent,
                        " (shape ", shape_str(c.shape), "); need 0 <= start <= stop <= extent"));
  auto v = std::make_shared<TensorCore>(c);
  v->offset += start * c.strides[static_cast<std::size_t>(axis)];
  v->shape[static_cast<std::size_t>(axis)] = stop - start;
  return v;
}

void check_tile_shape(const TensorCore& c, const Shape& tile) {
  const auto head = [&] {
    return cat("partition of a tensor of shape ", shape_str(c.shape), " into tiles of shape ", shape_str(tile), ": ");
  };
  if (tile.size() != c.shape.size())
    throw UserError(cat(head(), "the tile rank ", tile.size(), " differs from the tensor rank ", c.shape.size()));
  for (std::size_t i = 0; i < tile.size(); ++i)
    if (!is_pow2(tile[i]))
      throw UserError(cat(head(), "tile extent ", tile[i], " at axis ", i,
                          " is not a power of two (every tile extent must be 1, 2, 4, ...)"));
}

namespace {

// Elements from element 0 to the last element of a view (strides >= 0), inclusive; 0 when empty.
std::int64_t span_elements(const TensorCore& c) {
  std::int64_t last = 0;
  for (std::size_t i = 0; i < c.shape.size(); ++i) {
    if (c.shape[i] == 0) return 0;
    last += (c.shape[i] - 1) * c.strides[i];
  }
  return last + 1;
}

// gather() of a view of GPU memory: one device-to-host copy of the bytes the view spans, then a
// host gather out of that copy when the view is not contiguous.
void gather_device(const TensorCore& c, std::byte* dst) {
  const std::int64_t n = c.numel();
  if (n == 0) return;
  const std::int64_t es = dtype_size(c.dtype);
  const int dev = c.storage->device.index;
  if (c.contiguous()) {
    platform::cuda::copy_to_host(dev, dst, c.data(), n * es);
    return;
  }
  const std::int64_t span = span_elements(c);
  std::vector<std::byte> tmp(static_cast<std::size_t>(span * es));
  platform::cuda::copy_to_host(dev, tmp.data(), c.data(), span * es);
  TensorCore host;
  host.storage = Storage::borrow(cpu(), tmp.data(), span * es);
  host.shape = c.shape;
  host.strides = c.strides;
  host.dtype = c.dtype;
  gather(host, dst);
}

}  // namespace

void gather(const TensorCore& c, std::byte* dst) {
  if (c.storage->device.kind == DeviceKind::Cuda) return gather_device(c, dst);
  const std::int64_t n = c.numel();
  if (n == 0) return;
  const std::int64_t es = dtype_size(c.dtype);
  const std::byte* base = c.data();
  if (c.contiguous()) {
    std::memcpy(dst, base, static_cast<std::size_t>(n * es));
    return;
  }
  // Walk the outer axes with an index counter; copy the innermost axis in one loop.
  const std::size_t r = c.shape.size();  // >= 1 here: a rank-0 tensor is contiguous
  const std::int64_t inner = c.shape[r - 1], inner_stride = c.strides[r - 1] * es;
  std::vector<std::int64_t> idx(r - 1, 0);
  for (std::int64_t done = 0; done < n; done += inner) {
    std::int64_t off = 0;
    for (std::size_t i = 0; i + 1 < r; ++i) off += idx[i] * c.strides[i];
    const std::byte* src = base + off * es;
    if (inner_stride == es) {
      std::memcpy(dst, src, static_cast<std::size_t>(inner * es));
      dst += inner * es;
    } else {
      for (std::int64_t j = 0; j < inner; ++j, dst += es) std::memcpy(dst, src + j * inner_stride, static_cast<std::size_t>(es));
    }
    for (std::size_t i = r - 1; i-- > 0;) {
      if (++idx[i] < c.shape[i]) break;
      idx[i] = 0;
    }
  }
}

void fill_from_host(TensorCore& c, const std::byte* src) {
  CTILE_CHECK(c.contiguous() && c.offset == 0, "fill_from_host of a view");
  const std::int64_t bytes = c.numel() * dtype_size(c.dtype);
  if (bytes == 0) return;
  if (c.storage->device.kind == DeviceKind::Cpu) {
    std::memcpy(c.data(), src, static_cast<std::size_t>(bytes));
    return;
  }
  Event ready = platform::cuda::copy_from_host(c.storage->device.index, c.data(), src, bytes);
  c.storage->record_write(std::move(ready));
}

std::shared_ptr<TensorCore> copy_to_device(const std::shared_ptr<const TensorCore>& src, Device d, std::string_view what) {
  CTILE_CHECK(src != nullptr, "copy_to_device(nullptr)");
  auto out = new_tensor(src->shape, src->dtype, d, false, what);
  const std::int64_t bytes = src->numel() * dtype_size(src->dtype);
  if (bytes == 0) return out;
  const Device from = src->storage->device;
  if (from.kind == DeviceKind::Cuda && d.kind == DeviceKind::Cuda && src->contiguous()) {
    // On the GPU(s), asynchronously: after the source's pending writes and the destination's
    // allocation; the copy keeps the source alive until it has finished.
    std::vector<Event> deps = src->storage->deps_for_read();
    for (Event& e : out->storage->deps_for_write()) deps.push_back(std::move(e));
    Event done = platform::cuda::copy_device(d.index, out->data(), from.index, src->data(), bytes, std::move(deps),
                                            [keep = src] {});
    src->storage->record_read(done);
    out->storage->record_write(std::move(done));
    return out;
  }
  src->storage->wait_writes();
  if (d.kind == DeviceKind::Cpu) {
    gather(*src, out->data());
  } else if (from.kind == DeviceKind::Cpu && src->contiguous()) {
    fill_from_host(*out, src->data());
  } else {
    std::vector<std::byte> tmp(static_cast<std::size_t>(bytes));
    gather(*src, tmp.data());
    fill_from_host(*out, tmp.data());
  }
  return out;
}

void throw_moved_from(std::string_view handle, DType dt, std::string_view how) {
  throw UserError(cat("use of a moved-from ", handle, "<", dtype_name(dt), "> (", how, ")"));
}

}  // namespace ctile::detail
