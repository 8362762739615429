// The non-template half of prepare() and of enqueueing SIMT launches (ctile/simt/launch.hpp):
// argument checks, the launch shape, the requires relations, overlap, and the stream task with
// its storage dependencies (the same rules as tile launches: src/runtime/launch.cpp).
#include "ctile/simt/launch.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>

#include <map>
#include <memory>
#include <span>

#include "../runtime/foreign_launch.hpp"
#include "cpu_runtime.hpp"
#include "gpu.hpp"
#include "stream_task.hpp"

namespace ctile::simt::detail {

namespace {

std::string head(const KernelInfo& k) { return "prepare of " + k.describe(); }

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::strcmp(v, "0") != 0;
}

// Lowest and one-past-highest byte a view can touch (null for an empty view).
std::pair<const std::byte*, const std::byte*> byte_range(const TensorCore& c) {
  const std::int64_t es = dtype_size(c.dtype);
  std::int64_t hi = 0;
  for (std::size_t i = 0; i < c.shape.size(); ++i) {
    if (c.shape[i] == 0) return {nullptr, nullptr};
    hi += (c.shape[i] - 1) * c.strides[i];
  }
  const std::byte* base = c.data();
  return {base, base + (hi + 1) * es};
}

std::string describe_arg(const KernelInfo& k, const std::byte* pack, int i) {
  const ParamInfo& p = k.params[static_cast<std::size_t>(i)];
  const std::byte* d = pack + k.desc_offsets[static_cast<std::size_t>(i)];
  std::string s = p.name + ": " + p.type;
  if (p.kind == ParamKind::Value) {
    // A Uniform's value, as the number it is.
    auto show = [&](auto v) { return " = " + std::to_string(v); };
    switch (p.dtype) {
      case DType::b1: return s + show(static_cast<int>(*reinterpret_cast<const bool*>(d)));
      case DType::i8: return s + show(static_cast<int>(*reinterpret_cast<const std::int8_t*>(d)));
      case DType::u8: return s + show(static_cast<unsigned>(*reinterpret_cast<const std::uint8_t*>(d)));
      case DType::i16: return s + show(*reinterpret_cast<const std::int16_t*>(d));
      case DType::u16: return s + show(*reinterpret_cast<const std::uint16_t*>(d));
      case DType::i32: return s + show(*reinterpret_cast<const std::int32_t*>(d));
      case DType::u32: return s + show(*reinterpret_cast<const std::uint32_t*>(d));
      case DType::i64: return s + show(*reinterpret_cast<const std::int64_t*>(d));
      case DType::u64: return s + show(*reinterpret_cast<const std::uint64_t*>(d));
      case DType::f32: return s + show(*reinterpret_cast<const float*>(d));
      case DType::f64: return s + show(*reinterpret_cast<const double*>(d));
      default: return s;
    }
  }
  std::int64_t v[3] = {0, 0, 0};
  std::memcpy(v, d + sizeof(void*), sizeof(std::int64_t) * (p.rank == 2 ? 3 : 1));
  if (p.rank == 2) return s + " of " + std::to_string(v[0]) + "x" + std::to_string(v[1]);
  return s + " of " + std::to_string(v[0]) + " elements";
}

// What the runtime needs to launch and capture kernel `k` (per kernel, made once, kept until exit).
struct ForeignEntry {
  ctile::detail::ForeignKernel kernel;
  platform::ParamLayout layout;  // the same slots, for the platform's kernel
};

ForeignEntry make_foreign(const KernelInfo& k) {
  ForeignEntry e;
  e.kernel.name = k.name;
  e.kernel.describe = k.describe();
  for (std::size_t i = 0; i < k.params.size(); ++i) {
    const ParamInfo& pi = k.params[i];
    platform::ParamSlot s;
    s.kind = pi.kind == ParamKind::Value ? platform::ParamSlot::Kind::Scalar : platform::ParamSlot::Kind::Tensor;
    s.dtype = pi.dtype;
    s.rank = static_cast<std::uint8_t>(pi.rank);
    s.offset = static_cast<std::uint32_t>(k.desc_offsets[i]);  // a tensor's descriptor starts with its data pointer
    e.kernel.slots.push_back(s);
  }
  e.layout.bytes = static_cast<std::uint32_t>(k.pack_bytes);
  e.layout.slots = e.kernel.slots;
  return e;
}

const ForeignEntry& foreign_entry(const KernelInfo& k) {
  static std::mutex mu;
  static auto* entries = new std::map<const KernelInfo*, std::unique_ptr<ForeignEntry>>();  // never freed: kernels outlive main
  std::lock_guard lk(mu);
  std::unique_ptr<ForeignEntry>& e = (*entries)[&k];
  if (!e) e = std::make_unique<ForeignEntry>(make_foreign(k));
  return *e;
}

platform::LaunchShape launch_shape(const KernelInfo& k, const LaunchDims& d) {
  const std::int64_t v[7] = {d.grid.x, d.grid.y, d.grid.z, d.block.x, d.block.y, d.block.z, d.dynamic_shared};
  for (std::int64_t x : v)
    if (x < 0 || x > 0xffffffffLL)
      throw UserError("launch of " + k.describe() + ": the grid " + d.grid.str() + " and block " + d.block.str() +
                      " do not fit a GPU launch (32-bit extents)");
  platform::LaunchShape s;
  for (int i = 0; i < 3; ++i) {
    s.grid[i] = static_cast<std::uint32_t>(v[i]);
    s.block[i] = static_cast<std::uint32_t>(v[3 + i]);
  }
  s.smem = static_cast<std::uint32_t>(d.dynamic_shared);
  return s;
}

// A race-checked launch on a GPU: on the CPU backend over copies of the arguments, as a task in
// stream order (gpu::launch_simt_on_host).
Event enqueue_race_checked_on_gpu(const Prepared& p, const Stream& stream) {
  return enqueue_ordered([&p] { return "launch of " + p.kernel->describe(); }, p.reads, p.writes, stream, [kp = p.kernel, dims = p.dims, dev = p.device.index, pack = p.pack] {
    gpu::launch_simt_on_host(*kp, pack, dims, dev);
  });
}

}  // namespace

void arg_error(const KernelInfo& k, int arg, const std::string& msg) {
  const ParamInfo& p = k.params[static_cast<std::size_t>(arg)];
  throw UserError(head(k) + ", argument " + std::to_string(arg) + " (" + p.type + " " + p.name + "): " + msg);
}

void bind_tensor(Prepared& p, int arg, const std::shared_ptr<const TensorCore>& core, bool valid, bool writes, int rank) {
  const KernelInfo& k = *p.kernel;
  const ParamInfo& pi = k.params[static_cast<std::size_t>(arg)];
  if (!valid)
    arg_error(k, arg, pi.kind == ParamKind::Read ? "the Shared handle is empty (moved from)"
                                                 : "the tensor was moved from (use of a moved-from value)");
  const TensorCore& c = *core;
  if (rank == 1 && !c.contiguous())
    arg_error(k, arg, "a 1-D SIMT parameter needs a contiguous tensor, but this one has shape " + shape_str(c.shape) +
                          " and strides " + shape_str(c.strides) + " (make a contiguous copy first)");
  if (rank == 2) {
    if (c.shape.size() != 2)
      arg_error(k, arg, "a 2-D SIMT parameter needs a rank-2 tensor, got shape " + shape_str(c.shape));
    if (c.shape[1] > 1 && c.strides[1] != 1)
      arg_error(k, arg, "the last axis of a 2-D SIMT parameter must be contiguous, but its stride is " +
                            std::to_string(c.strides[1]));
    if (c.shape[0] > 1 && c.strides[0] < c.shape[1])
      arg_error(k, arg, "the row stride " + std::to_string(c.strides[0]) + " is smaller than the row (" +
                            std::to_string(c.shape[1]) + " elements): the rows overlap");
  }
  const Device d = c.storage->device;
  if (p.arg_device && !(*p.arg_device == d))
    arg_error(k, arg, "the tensor lives on " + d.str() + " but earlier arguments live on " + p.arg_device->str());
  p.arg_device = d;
  (writes ? p.writes : p.reads).push_back(core);
  (writes ? p.write_arg : p.read_arg).push_back(arg);
}

void check_uniform_int(const KernelInfo& k, int arg, long double given, DType want) {
  long double lo = 0, hi = 0;
  switch (want) {
    case DType::i8: lo = -128, hi = 127; break;
    case DType::u8: lo = 0, hi = 255; break;
    case DType::i16: lo = -32768, hi = 32767; break;
    case DType::u16: lo = 0, hi = 65535; break;
    case DType::i32: lo = std::numeric_limits<std::int32_t>::min(), hi = std::numeric_limits<std::int32_t>::max(); break;
    case DType::u32: lo = 0, hi = std::numeric_limits<std::uint32_t>::max(); break;
    case DType::i64: lo = static_cast<long double>(std::numeric_limits<std::int64_t>::min()), hi = static_cast<long double>(std::numeric_limits<std::int64_t>::max()); break;
    case DType::u64: lo = 0, hi = static_cast<long double>(std::numeric_limits<std::uint64_t>::max()); break;
    default: return;
  }
  if (given < lo || given > hi)
    arg_error(k, arg, "the value " + std::to_string(static_cast<long long>(given)) + " does not fit in " +
                          std::string(dtype_name(want)));
}

void finish_prepare(Prepared& p, const GridSpec& grid, const DeviceLimits* limits, bool checked) {
  const KernelInfo& k = *p.kernel;
  p.device = p.arg_device ? *p.arg_device : default_device();
  p.checked = checked;
  if (checked) {
    const DeviceLimits lim = limits ? *limits : limits_of(p.device);
    p.dims = validate_launch(head(k), k.contract, lim, grid);
    const Requirements r = k.requirements(p.pack.data());
    for (std::size_t i = 0; i < k.relations.size(); ++i) {
      if (r.ok[i + 1]) continue;
      std::string args;
      for (std::size_t a = 0; a < k.params.size(); ++a)
        args += (a ? ", " : "") + describe_arg(k, p.pack.data(), static_cast<int>(a));
      throw UserError(head(k) + ": the contract requires `" + k.relations[i] + "`, which does not hold for " + args);
    }
  } else {
    // Unchecked: no device limits, but the shape must still make sense and fit 64-bit counts.
    DeviceLimits open;
    open.device = p.device.str();
    open.compute_capability = 1000;
    open.max_threads_per_block = std::numeric_limits<std::int64_t>::max();
    open.max_block = Dims{std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::max(),
                          std::numeric_limits<std::int64_t>::max()};
    open.max_grid = open.max_block;
    open.max_shared_per_block_optin = std::numeric_limits<std::int64_t>::max();
    p.dims = validate_launch("unchecked " + head(k), k.contract, open, grid);
  }
  // Written memory must not overlap any other argument (only Tensor::borrow can make that happen).
  for (std::size_t w = 0; w < p.writes.size(); ++w) {
    const auto [wlo, whi] = byte_range(*p.writes[w]);
    auto clash = [&](const TensorCore& o, int other) {
      const auto [lo, hi] = byte_range(o);
      if (wlo && lo && wlo < hi && lo < whi)
        arg_error(k, p.write_arg[w], "its memory overlaps argument " + std::to_string(other) +
                                         "; a written argument must not alias another");
    };
    for (std::size_t r = 0; r < p.reads.size(); ++r) clash(*p.reads[r], p.read_arg[r]);
    for (std::size_t o = w + 1; o < p.writes.size(); ++o) clash(*p.writes[o], p.write_arg[o]);
  }
}

Event enqueue(const Prepared& p, const Stream& stream) {
  const KernelInfo& k = *p.kernel;
  if (!stream.valid()) throw UserError("launch of " + k.describe() + ": the stream is empty");
  if (!(stream.device() == p.device))
    throw UserError("launch of " + k.describe() + ": it was prepared (checked) for " + p.device.str() +
                    " but the stream runs on " + stream.device().str() + "; prepare it for that device");
  static const bool race_env = env_flag("CTILE_RACE_CHECK");
  const bool race = p.race_check || race_env;
  if (race && !p.race_check && p.device.kind == DeviceKind::Cuda) {
    static std::once_flag noted;
    std::call_once(noted, [] {
      std::fprintf(stderr, "ctile: CTILE_RACE_CHECK is set: SIMT launches on GPUs run on the CPU backend with the race "
                           "checker (slow)\n");
    });
  }

  if (race && p.device.kind == DeviceKind::Cuda) {
    // On the CPU backend over copies of the arguments, in stream order: not a kernel a graph can hold.
    if (stream.capturing())
      throw UserError("launch of " + k.describe() + ": a race-checked launch on a GPU runs on the CPU backend over "
                      "copies of its arguments and cannot be captured into a graph (capture it without race_check)");
    return enqueue_race_checked_on_gpu(p, stream);
  }
  const ForeignEntry& fk = foreign_entry(k);
  ctile::detail::ForeignLaunch l;
  l.kernel = &fk.kernel;
  l.params = std::span<const std::byte>(p.pack.data(), p.pack.size());
  if (p.device.kind == DeviceKind::Cuda) {
    // Compile and load first (errors come out of async_on, and no stream waits for NVRTC).
    l.native = &gpu::load_simt(k, p.dims, p.device.index, p.checked, fk.layout);
    l.shape = launch_shape(k, p.dims);
  } else {
    l.host = [kp = &k, dims = p.dims, race](const std::byte* pack) { cpu::run(*kp, pack, dims, race); };
  }
  std::vector<ctile::detail::ForeignLaunch::Arg> args;
  args.reserve(p.reads.size() + p.writes.size());
  for (std::size_t i = 0; i < p.reads.size(); ++i) args.push_back({p.reads[i], p.read_arg[i], false});
  for (std::size_t i = 0; i < p.writes.size(); ++i) args.push_back({p.writes[i], p.write_arg[i], true});
  l.args = args;
  return ctile::detail::submit_foreign(l, stream);
}

}  // namespace ctile::simt::detail
