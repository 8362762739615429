#include "ctile/runtime/tensor.hpp"

#include <algorithm>

#include "../platform/native_event.hpp"
#include "../platform/platform.hpp"
#include "capture.hpp"

namespace ctile::detail {
namespace {

std::string shape_and_strides(const TensorCore& c) {
  return cat("shape ", shape_str(c.shape), ", strides ", shape_str(c.strides));
}

// A stream's latest native event in `uses` replaces its earlier one.
void note_stream_use(std::vector<Event>& uses, const Event& e) {
  if (!e.native_ptr()) return;
  const std::uint64_t order = e.order();
  for (Event& u : uses)
    if (u.order() == order) {
      u = e;
      return;
    }
  uses.push_back(e);
}

}  // namespace

// ---- Storage ---------------------------------------------------------------------------------

std::shared_ptr<Storage> Storage::allocate(Device d, std::int64_t bytes, bool zeroed) {
  if (bytes < 0) throw InternalError(cat("Storage::allocate of ", bytes, " bytes"));
  if (const CaptureState* c = CaptureState::on_this_thread())
    throw UserError(cat("allocation of ", bytes, " bytes on ", d.str(), " inside a graph capture (", c->describe(),
                        "): a graph cannot allocate; allocate every tensor it uses before ctile::capture"));
  platform::DevicePlatform& p = platform::platform_for(d);
  platform::Allocation a = p.allocate(bytes, zeroed);
  auto s = std::make_shared<Storage>();
  s->device = d;
  s->platform = &p;
  s->bytes = bytes;
  s->owned = true;
  s->ptr = a.ptr;
  s->pooled = a.pooled;
  s->mapped = a.mapped;
  s->host_accessible = p.host_accessible();
  if (const NativeEvent* ne = a.ready.native_ptr(); ne && ne->order_always) s->alloc_ready = a.ready;
  s->last_write = std::move(a.ready);
  return s;
}

std::shared_ptr<Storage> Storage::borrow(Device d, void* p, std::int64_t bytes, std::shared_ptr<const void> keep_alive) {
  auto s = std::make_shared<Storage>();
  s->keep_alive = std::move(keep_alive);
  s->device = d;
  s->platform = &platform::platform_for(d);
  s->host_accessible = s->platform->host_accessible();
  s->ptr = static_cast<std::byte*>(p);
  s->bytes = bytes;
  s->owned = false;
  return s;
}

Storage::~Storage() {
  if (!owned || !ptr) return;
  platform::Allocation a;
  a.ptr = ptr;
  a.pooled = pooled;
  a.mapped = mapped;
  SmallVec<Event, 8> uses;
  for (Event& e : reads) uses.push_back(std::move(e));
  for (Event& e : stream_uses) uses.push_back(std::move(e));
  uses.push_back(std::move(last_write));
  if (alloc_ready.native_ptr()) uses.push_back(std::move(alloc_ready));
  platform->release(a, bytes, std::span<const Event>(uses.data(), uses.size()));
}

namespace {

// With `mu` held: a stream-ordered allocation not yet waited for by stream `order` on the device.
void add_alloc_order(Storage& s, Storage::Deps& out, std::uint64_t order) {
  if (order == 0 || !s.alloc_ready.native_ptr()) return;
  if (std::find(s.ordered.begin(), s.ordered.end(), order) != s.ordered.end()) return;
  s.ordered.push_back(order);
  out.push_back(s.alloc_ready);
}

}  // namespace

void Storage::deps_for_read(Deps& out, std::uint64_t order) {
  std::lock_guard lk(mu);
  if (!last_write.done() || last_write.error()) out.push_back(last_write);
  add_alloc_order(*this, out, order);
}

void Storage::deps_for_write(Deps& out, std::uint64_t order) {
  std::lock_guard lk(mu);
  if (!last_write.done() || last_write.error()) out.push_back(last_write);
  for (const Event& r : reads)
    if (!r.done()) out.push_back(r);
  add_alloc_order(*this, out, order);
}

std::vector<Event> Storage::deps_for_read() {
  Deps d;
  deps_for_read(d);
  return {d.begin(), d.end()};
}

std::vector<Event> Storage::deps_for_write() {
  Deps d;
  deps_for_write(d);
  return {d.begin(), d.end()};
}

void Storage::record_read(const Event& e) {
  std::lock_guard lk(mu);
  // A read that is done, or of the same stream (it completes before `e`), no longer matters to a
  // writer: at most one pending read per stream stays.
  const std::uint64_t order = e.order();
  std::erase_if(reads, [&](const Event& r) { return r.done() || (order != 0 && r.order() == order); });
  reads.push_back(e);
  note_stream_use(stream_uses, e);
}

void Storage::record_write(const Event& e) {
  std::lock_guard lk(mu);
  last_write = e;
  reads.clear();
  note_stream_use(stream_uses, e);
}

void Storage::wait_writes() {
  Event w;
  {
    std::lock_guard lk(mu);
    w = last_write;
  }
  w.wait();
  if (!w.done()) throw_captured_use("reading it on the host");
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
  for (const Event& r : rs) {
    r.wait();
    if (!r.done()) throw_captured_use("using it on the host");
  }
  w.wait();
  if (!w.done()) throw_captured_use("using it on the host");
  if (auto err = w.error()) std::rethrow_exception(err);
}

bool Storage::has_pending_reads() {
  std::lock_guard lk(mu);
  std::erase_if(reads, [](const Event& r) { return r.done(); });
  return !reads.empty();
}

Storage::State Storage::save_state() {
  std::lock_guard lk(mu);
  return State{last_write, reads, ordered, stream_uses};
}

void Storage::restore_state(State st) {
  std::lock_guard lk(mu);
  last_write = std::move(st.last_write);
  reads = std::move(st.reads);
  ordered = std::move(st.ordered);
  stream_uses = std::move(st.stream_uses);
}

void check_free_for(const Storage& s, bool writes, std::string_view what) {
  if (!graph_forbids(s, writes)) return;
  const bool w = s.graph_writers.load(std::memory_order_acquire) != 0;
  throw UserError(cat(what, ": the tensor is owned by a ctile::Graph (", w ? "the graph writes it" : "a graph reads it",
                      "); a tensor a graph uses is used only by that graph until the graph is dropped or unwrapped "
                      "(std::move(graph).unwrap())"));
}

std::uint64_t new_core_id() {
  // Blocks of ids per thread: no shared counter on the path of every view.
  thread_local std::uint64_t next = 0, end = 0;
  static std::atomic<std::uint64_t> blocks{1};
  if (next == end) {
    next = blocks.fetch_add(1, std::memory_order_relaxed) << 20;
    end = next + (std::uint64_t{1} << 20);
  }
  return next++;
}

// ---- TensorCore ------------------------------------------------------------------------------

backend::TensorArg TensorCore::arg() const { return backend::TensorArg{data(), dtype, shape, strides}; }

std::byte* TensorCore::data() const {
  // slice_view keeps offset * element size within int64 (a UserError otherwise), for views of
  // no elements too; this is the backstop.
  std::int64_t bytes = 0;
  CTILE_CHECK(!__builtin_mul_overflow(offset, static_cast<std::int64_t>(dtype_size(dtype)), &bytes),
              "TensorCore::data: offset ", offset, " overflows");
  return storage->ptr + bytes;
}

bool TensorCore::aliases_itself() const {
  if (numel() <= 1) return false;
  for (std::size_t i = 0; i < shape.size(); ++i)
    if (shape[i] > 1 && strides[i] == 0) return true;
  return false;
}

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
  if (!checked_numel(s, n)) {
    // checked_numel bounds the product of the non-zero extents: the strides and view offsets of
    // an empty shape are made of them too.
    if (std::find(s.begin(), s.end(), 0) != s.end())
      throw UserError(cat(what, ": shape ", shape_str(s), " has no element, but the product of its non-zero extents ",
                          "(its row-major strides) overflows int64"));
    throw UserError(cat(what, ": the element count of shape ", shape_str(s), " overflows int64"));
  }
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

std::shared_ptr<TensorCore> borrow_tensor(void* p, Shape s, Shape strides, DType dt, Device d,
                                          std::shared_ptr<const void> keep_alive, std::string_view what_in) {
  const std::string what = what_in.empty() ? cat("Tensor<", dtype_name(dt), ">::borrow") : std::string(what_in);
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
  c->storage = Storage::borrow(d, p, bytes, std::move(keep_alive));
  c->shape = std::move(s);
  c->strides = std::move(strides);
  c->dtype = dt;
  return c;
}

namespace {

// Strides that give `to` the elements of view (`from`, `strides`) in row-major order without a
// copy, or false. Each run of axes of `from` that is evenly strided (stride[i] = stride[i + 1] *
// extent[i + 1]) behaves as one axis; the new axes must split such runs exactly.
bool view_strides(const Shape& from, const Shape& strides, const Shape& to, Shape& out) {
  out.assign(to.size(), 0);
  if (from.empty()) {  // one element: every extent of `to` is 1
    for (std::size_t i = 0; i < to.size(); ++i) out[i] = 1;
    return true;
  }
  int v = static_cast<int>(to.size()) - 1;
  std::int64_t base = strides.back(), run = 1, made = 1;
  for (int d = static_cast<int>(from.size()) - 1; d >= 0; --d) {
    run *= from[static_cast<std::size_t>(d)];
    const bool run_ends = d == 0 || (from[static_cast<std::size_t>(d - 1)] != 1 &&
                                     strides[static_cast<std::size_t>(d - 1)] != run * base);
    if (!run_ends) continue;
    while (v >= 0 && (made < run || to[static_cast<std::size_t>(v)] == 1)) {
      out[static_cast<std::size_t>(v)] = made * base;
      made *= to[static_cast<std::size_t>(v)];
      --v;
    }
    if (made != run) return false;
    if (d > 0) {
      base = strides[static_cast<std::size_t>(d - 1)];
      run = 1;
      made = 1;
    }
  }
  return v < 0;
}

}  // namespace

std::shared_ptr<TensorCore> reshape_view(const TensorCore& c, Shape s, std::string_view what) {
  const std::int64_t n = validate_shape(s, c.dtype, what);
  if (n != c.numel())
    throw UserError(cat(what, " from ", shape_str(c.shape), " (", c.numel(), " elements) to ", shape_str(s), " (", n,
                        " elements): element counts differ"));
  Shape st;
  if (n == 0 || c.contiguous()) {
    st = contiguous_strides(s);
  } else if (!view_strides(c.shape, c.strides, s, st)) {
    // (The extents and strides of a valid view bound every product formed above.)
    throw UserError(cat(what, " of a non-contiguous view (", shape_and_strides(c), ") to ", shape_str(s),
                        ": its elements are not evenly strided across the axes that would be merged or split, so "
                        "the new shape needs a copy (reshape a contiguous copy, made by .to(device))"));
  }
  auto v = std::make_shared<TensorCore>(c);
  v->strides = std::move(st);
  v->shape = std::move(s);
  return v;
}

std::shared_ptr<TensorCore> permute_view(const TensorCore& c, const std::vector<int>& order, std::string_view what) {
  const std::size_t rank = c.shape.size();
  const auto order_str = [&] {
    std::string r = "({";
    for (std::size_t i = 0; i < order.size(); ++i) r += (i ? ", " : "") + std::to_string(order[i]);
    return r + "})";
  };
  if (order.size() != rank)
    throw UserError(cat(what, order_str(), " of a tensor of shape ", shape_str(c.shape), ": the order names ",
                        order.size(), " axes, the tensor has ", rank));
  std::vector<bool> seen(rank, false);
  for (std::size_t i = 0; i < rank; ++i) {
    const int a = order[i];
    if (a < 0 || static_cast<std::size_t>(a) >= rank)
      throw UserError(cat(what, order_str(), " of a tensor of shape ", shape_str(c.shape), ": axis ", a,
                          " is out of range for rank ", rank));
    if (seen[static_cast<std::size_t>(a)])
      throw UserError(cat(what, order_str(), " of a tensor of shape ", shape_str(c.shape), ": axis ", a,
                          " appears twice; the order must name each axis once"));
    seen[static_cast<std::size_t>(a)] = true;
  }
  auto v = std::make_shared<TensorCore>(c);
  for (std::size_t i = 0; i < rank; ++i) {
    v->shape[i] = c.shape[static_cast<std::size_t>(order[i])];
    v->strides[i] = c.strides[static_cast<std::size_t>(order[i])];
  }
  return v;
}

std::shared_ptr<TensorCore> expand_view(const TensorCore& c, const Shape& s, std::string_view what) {
  validate_shape(s, c.dtype, what);
  const std::size_t rank = c.shape.size();
  if (s.size() < rank)
    throw UserError(cat(what, " of a tensor of shape ", shape_str(c.shape), " to ", shape_str(s), ": the target rank ",
                        s.size(), " is lower than the tensor's rank ", rank));
  const std::size_t lead = s.size() - rank;
  auto v = std::make_shared<TensorCore>(c);
  v->shape = s;
  v->strides.assign(s.size(), 0);
  for (std::size_t i = 0; i < rank; ++i) {
    const std::int64_t have = c.shape[i], want = s[lead + i];
    if (have == want) {
      v->strides[lead + i] = c.strides[i];
    } else if (have != 1) {
      throw UserError(cat(what, " of a tensor of shape ", shape_str(c.shape), " to ", shape_str(s), ": axis ", i,
                          " has extent ", have, ", which is neither 1 nor the target's ", want,
                          " (only axes of extent 1 broadcast)"));
    }
  }
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
  // Checked: a view of no elements can have strides no element bounds (a borrowed tensor's), and
  // data() multiplies the offset by the element size.
  const std::int64_t stride = c.strides[static_cast<std::size_t>(axis)];
  std::int64_t step = 0, offset = 0, bytes = 0;
  if (__builtin_mul_overflow(start, stride, &step) || __builtin_add_overflow(c.offset, step, &offset) ||
      __builtin_mul_overflow(offset, static_cast<std::int64_t>(dtype_size(c.dtype)), &bytes))
    throw UserError(cat("slice: the view [", start, ", ", stop, ") of axis ", axis, " (", shape_and_strides(c),
                        ", offset ", c.offset, ") starts more than int64 bytes into the storage"));
  auto v = std::make_shared<TensorCore>(c);
  v->offset = offset;
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

// gather() of a view of device memory the host cannot read: one device-to-host copy of the bytes the view spans, then a
// host gather out of that copy when the view is not contiguous.
void gather_device(const TensorCore& c, std::byte* dst) {
  const std::int64_t n = c.numel();
  if (n == 0) return;
  const std::int64_t es = dtype_size(c.dtype);
  platform::DevicePlatform& p = *c.storage->platform;
  if (c.contiguous()) {
    p.copy_to_host(dst, c.data(), n * es);
    return;
  }
  const std::int64_t span = span_elements(c);
  std::vector<std::byte> tmp(static_cast<std::size_t>(span * es));
  p.copy_to_host(tmp.data(), c.data(), span * es);
  TensorCore host;
  host.storage = Storage::borrow(cpu(), tmp.data(), span * es);
  host.shape = c.shape;
  host.strides = c.strides;
  host.dtype = c.dtype;
  gather(host, dst);
}

}  // namespace

void gather(const TensorCore& c, std::byte* dst) {
  if (!c.storage->host_accessible) return gather_device(c, dst);
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

namespace {

// The dependencies of a copy from the host into `s`: its pending work, and a stream-ordered
// allocation's event every time. The platform picks the stream of such a copy itself (on a GPU
// the memory stream for fresh memory, else the copy stream), so no stream may be noted in
// `ordered` as having waited for the allocation: noting the copy stream there while the copy went
// to the memory stream left a later copy on the copy stream unordered after the allocation.
void deps_for_host_copy(Storage& s, Storage::Deps& deps) {
  s.deps_for_write(deps, 0);
  if (s.alloc_ready.native_ptr()) deps.push_back(s.alloc_ready);  // set at allocation, never changed
}

}  // namespace

void fill_from_host(TensorCore& c, const std::byte* src) {
  CTILE_CHECK(c.contiguous() && c.offset == 0, "fill_from_host of a view");
  const std::int64_t bytes = c.numel() * dtype_size(c.dtype);
  if (bytes == 0) return;
  if (c.storage->host_accessible) {
    std::memcpy(c.data(), src, static_cast<std::size_t>(bytes));
    return;
  }
  Storage::Deps deps;
  deps_for_host_copy(*c.storage, deps);
  Event ready = c.storage->platform->copy_from_host(c.data(), src, bytes, std::span<Event>(deps.data(), deps.size()));
  c.storage->record_write(ready);
}

void copy_from_host_into(const TensorCore& c, const std::byte* src, std::string_view what) {
  const std::int64_t bytes = c.numel() * dtype_size(c.dtype);
  if (!c.contiguous()) throw UserError(cat(what, ": the tensor is not contiguous (", shape_and_strides(c), ")"));
  if (bytes == 0) return;
  Storage& s = *c.storage;
  if (s.host_accessible) {
    s.wait_all();  // the host writes: after every pending read and write
    std::memcpy(c.data(), src, static_cast<std::size_t>(bytes));
    return;
  }
  Storage::Deps deps;
  deps_for_host_copy(s, deps);
  for (const Event& e : deps)
    if (e.captured()) throw_captured_use(what);
  Event done = s.platform->copy_from_host(c.data(), src, bytes, std::span<Event>(deps.data(), deps.size()));
  s.record_write(done);
}

std::shared_ptr<TensorCore> copy_to_device(const std::shared_ptr<const TensorCore>& src, Device d, std::string_view what) {
  CTILE_CHECK(src != nullptr, "copy_to_device(nullptr)");
  auto out = new_tensor(src->shape, src->dtype, d, false, what);
  const std::int64_t bytes = src->numel() * dtype_size(src->dtype);
  if (bytes == 0) return out;
  Storage& from = *src->storage;
  Storage& to = *out->storage;
  if (!from.host_accessible && !to.host_accessible && src->contiguous() &&
      from.platform->device().kind == to.platform->device().kind) {
    // Device to device (the same or another GPU), asynchronously: after the source's pending
    // writes and the destination's allocation; the copy keeps the source alive until it has finished.
    Storage::Deps deps;
    from.deps_for_read(deps, to.platform->copy_order());
    to.deps_for_write(deps, to.platform->copy_order());
    for (const Event& e : deps)
      if (e.captured()) throw_captured_use(what);
    KeepAlive keep;
    keep.push_back(src);
    Event done = to.platform->copy_from_device(out->data(), *from.platform, src->data(), bytes,
                                               std::span<Event>(deps.data(), deps.size()), std::move(keep));
    from.record_read(done);
    to.record_write(done);
    return out;
  }
  from.wait_writes();
  if (to.host_accessible) {
    gather(*src, out->data());
  } else if (from.host_accessible && src->contiguous()) {
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
