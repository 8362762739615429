#include "cuda_backend.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>

#include "../../core/dump.hpp"
#include "../../runtime/stage_timings.hpp"
#include "../cache/disk_cache.hpp"
#include "codegen.hpp"
#include "../../platform/cuda/device.hpp"
#include "../../platform/cuda/driver.hpp"
#include "../../platform/cuda/kernel.hpp"
#include "../../platform/cuda/memory.hpp"
#include "../../platform/cuda/stream.hpp"
#include "../../platform/kernel.hpp"
#include "nvrtc.hpp"

#ifndef CTILE_VERSION_STRING
#define CTILE_VERSION_STRING "unknown"
#endif

namespace ctile::backend::cuda {
using namespace ::ctile::platform::cuda;  // driver, devices, streams (src/platform/cuda)
namespace {

using ::ctile::detail::dump_generated;
using ::ctile::detail::env_flag;
using Clock = std::chrono::steady_clock;

constexpr int kMaxDevices = 64;

// A compiled kernel: the IR, what the generator made of it, and the kernel loaded on the device by
// the CUDA platform (launched natively from a parameter block by the launch path).
class CudaCompiled final : public CompiledKernel, public platform::HasNativeKernel {
 public:
  CudaCompiled(std::shared_ptr<const ir::Kernel> k, GeneratedKernel gk, std::unique_ptr<platform::cuda::CudaKernel> loaded)
      : k_(std::move(k)), gk_(std::move(gk)), loaded_(std::move(loaded)) {}
  CudaCompiled(const CudaCompiled&) = delete;
  CudaCompiled& operator=(const CudaCompiled&) = delete;

  const ir::Kernel& kernel() const override { return *k_; }
  const platform::NativeKernel& native() const override { return *loaded_; }
  const platform::cuda::CudaKernel& loaded() const { return *loaded_; }
  const GeneratedKernel& generated() const { return gk_; }
  // The same kernel prepared for the CPU interpreter (race-checked launches run there).
  const CompiledKernel& cpu_kernel() const {
    std::call_once(cpu_once_, [&] { cpu_ = cpu_backend()->compile(k_); });
    return *cpu_;
  }
  int device() const { return loaded_->device_index(); }

 private:
  std::shared_ptr<const ir::Kernel> k_;
  GeneratedKernel gk_;
  std::unique_ptr<platform::cuda::CudaKernel> loaded_;
  mutable std::once_flag cpu_once_;
  mutable std::shared_ptr<const CompiledKernel> cpu_;
};

// The platform's view of what the generator made (src/platform/kernel.hpp): the image, the entry,
// the block, and the parameter layout.
platform::KernelArtifact artifact_of(const ir::Kernel& k, const GeneratedKernel& gk, std::string image) {
  platform::KernelArtifact a;
  a.image = std::move(image);
  a.entry = gk.entry;
  a.threads = gk.threads;
  a.smem_bytes = gk.smem_bytes;
  a.resident_grid = gk.prefetches;
  a.programmatic = gk.programmatic;
  a.tile_blocks_per_block = gk.blocks_per_cta;  // a CTA runs several tile blocks side by side
  a.params = param_layout_of(k, gk);
  return a;
}

// Bytes from element 0 to the last element of a tensor argument (0 when empty).
std::int64_t span_bytes(const TensorArg& t) {
  std::int64_t last = 0;
  for (std::size_t i = 0; i < t.shape.size(); ++i) {
    if (t.shape[i] == 0) return 0;
    last += (t.shape[i] - 1) * t.strides[i];
  }
  return (last + 1) * dtype_size(t.dtype);
}

// A race-checked launch on a GPU: the race checker belongs to the CPU interpreter, so the launch
// runs there, on host copies of the arguments, in stream order: the stream is drained first, and
// what the kernel may write is copied back on the stream afterwards. Slow, but the same semantics
// and the same RaceError as on a CPU stream.
void run_on_cpu_with_race_check(const CudaCompiled& c, const LaunchConfig& cfg, std::span<const ArgValue> args,
                                const CurrentStream& cur, const std::string& kname) {
  const ir::Kernel& k = c.kernel();
  CTILE_CHECK(args.size() == k.params.size(), "cuda backend: ", args.size(), " arguments for ", k.params.size(),
              " parameters");
  CTILE_CU(cuStreamSynchronize, (cur.stream), "waiting for the work before race-checked kernel '", kname, "' on cuda:",
           cur.device);
  std::vector<ArgValue> host(args.begin(), args.end());
  std::vector<std::vector<std::byte>> bufs(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (k.params[i].type.kind == ir::TypeKind::Tile) continue;
    const std::int64_t bytes = span_bytes(args[i].tensor);
    if (bytes == 0) continue;
    bufs[i].resize(static_cast<std::size_t>(bytes));
    copy_to_host(cur.device, bufs[i].data(), static_cast<const std::byte*>(args[i].tensor.data), bytes);
    host[i].tensor.data = bufs[i].data();
  }
  cpu_backend()->run(c.cpu_kernel(), cfg, host);
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (bufs[i].empty() || k.params[i].type.access == ir::Access::Read) continue;
    // From pageable memory: the call returns once the bytes are staged, so `bufs` may go away.
    CTILE_CU(cuMemcpyHtoDAsync_v2,
             (static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(args[i].tensor.data)), bufs[i].data(),
              bufs[i].size(), cur.stream),
             "copying the results of race-checked kernel '", kname, "' back to cuda:", cur.device);
  }
}

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int index) : index_(index), name_(detail::cat("cuda:", index)) {
    (void)DeviceContext::get(index);  // validates the device
  }

  std::string_view name() const override { return name_; }

  std::shared_ptr<const CompiledKernel> compile(std::shared_ptr<const ir::Kernel> k) override {
    CTILE_CHECK(k != nullptr, "cuda backend: null kernel");
    DeviceContext& dc = DeviceContext::get(index_);
    const int sm = dc.info().sm();
    const std::string& kname = k->name;

    auto t = Clock::now();
    GeneratedKernel gk = generate(*k, codegen_options_from_env(sm));
    detail::note_stage("codegen", detail::ms_since(t));
    if (env_flag("CTILE_DUMP_CUDA")) dump_generated("kernel '" + kname + "'", gk.entry, ".cu", gk.source);
    if (env_flag("CTILE_TIMINGS"))  // once per compiled kernel: the compiler's notes (a product off the fast path)
      for (const std::string& n : gk.notes) std::fprintf(stderr, "ctile: kernel '%s': %s\n", kname.c_str(), n.c_str());

    if (gk.threads <= 0 || gk.threads > dc.info().max_threads_per_block)
      throw InternalError(detail::cat("cuda backend: kernel '", kname, "' was generated with ", gk.threads,
                                      " threads per block; cuda:", index_, " allows 1 to ",
                                      dc.info().max_threads_per_block));
    if (gk.smem_bytes > static_cast<std::size_t>(dc.info().smem_per_block_optin))
      throw UserError(detail::cat("kernel '", kname, "' needs ", gk.smem_bytes, " bytes of shared memory per block; cuda:",
                                  index_, " (", dc.info().name, ") has at most ", dc.info().smem_per_block_optin,
                                  " (use smaller tiles)"));

    Nvrtc* nv = nvrtc();
    if (!nv)
      throw UserError(detail::cat("cannot compile kernel '", kname, "' for cuda:", index_,
                                  ": NVRTC is not available: ", nvrtc_unavailable_reason()));
    if (env_flag("CTILE_DUMP_PTX")) {
      const CompileResult ptx = nv->compile(gk, sm, Output::Ptx);
      dump_generated("kernel '" + kname + "'", gk.entry, ".ptx", ptx.image);
    }

    // The disk cache holds cubins by the content of everything that goes into them.
    cache::DiskCache* disk = cache::DiskCache::global();
    cache::KeyBuilder kb;
    if (disk) {
      const auto v = nv->version();
      kb.add("what", "ctile cubin")
          .add("ctile", CTILE_VERSION_STRING)
          .add("nvrtc", detail::cat(v.major, ".", v.minor))
          .add("arch", Nvrtc::arch_for(sm, Output::Cubin))
          .add("entry", gk.entry)
          .add("source", gk.source);
      for (const EmbeddedHeader& h : device_headers()) kb.add(h.name, h.text);
    }

    // Loading belongs to the platform: the artifact (image, entry, block, parameter layout) is all it
    // needs (src/platform/kernel.hpp).
    std::unique_ptr<platform::cuda::CudaKernel> loaded;
    if (disk) {
      t = Clock::now();
      if (auto hit = disk->get(kb.key())) {
        std::string image(reinterpret_cast<const char*>(hit->data()), hit->size());
        platform::cuda::LoadResult lr = platform::cuda::load_kernel(index_, artifact_of(*k, gk, std::move(image)), kname);
        if (lr.kernel) {
          loaded = std::move(lr.kernel);
          detail::note_stage("disk cache hit + load", detail::ms_since(t));
        } else {
          disk->evict(kb.key());  // the driver rejects it: recompile
        }
      }
    }
    if (!loaded) {
      t = Clock::now();
      const CompileResult res = nv->compile(gk, sm, Output::Cubin);
      detail::note_stage("nvrtc", detail::ms_since(t));
      if (!res.log.empty() && env_flag("CTILE_VERBOSE"))
        std::fprintf(stderr, "ctile: NVRTC log for kernel '%s':\n%s\n", kname.c_str(), res.log.c_str());
      t = Clock::now();
      platform::cuda::LoadResult lr = platform::cuda::load_kernel(index_, artifact_of(*k, gk, res.image), kname);
      if (!lr.kernel)
        throw_cuda_error(lr.error, "cuModuleLoadData",
                         detail::cat("loading the cubin of kernel '", kname, "' (", res.arch, ") on cuda:", index_, " (",
                                     dc.info().name, ")"));
      loaded = std::move(lr.kernel);
      detail::note_stage("module load", detail::ms_since(t));
      if (disk)
        disk->put(kb.key(), std::span(reinterpret_cast<const std::byte*>(res.image.data()), res.image.size()),
                  detail::cat("kernel ", kname, ", ", res.arch));
    }
    return std::make_shared<CudaCompiled>(std::move(k), gk, std::move(loaded));
  }

  // Launches ctile's launch path does not take natively (it submits kernels to CUDA streams from
  // their parameter blocks): race-checked launches, and any caller of the backend interface, inside
  // an inline task of a CUDA stream.
  void run(const CompiledKernel& ck, const LaunchConfig& cfg, std::span<const ArgValue> args) override {
    const auto* c = dynamic_cast<const CudaCompiled*>(&ck);
    CTILE_CHECK(c != nullptr, "cuda backend: kernel was compiled by another backend");
    const std::string& kname = cfg.kernel_name.empty() ? c->kernel().name : cfg.kernel_name;
    const CurrentStream* cur = current_stream();
    if (!cur) throw InternalError("cuda backend: run() called outside a task of a CUDA stream");
    if (cur->device != c->device() || c->device() != index_)
      throw InternalError(detail::cat("cuda backend: kernel '", kname, "' compiled for cuda:", c->device(),
                                      " run on a stream of cuda:", cur->device));
    if (cfg.race_check) return run_on_cpu_with_race_check(*c, cfg, args, *cur, kname);
    std::int64_t blocks = 0;
    if (!checked_numel(cfg.grid, blocks) || static_cast<int>(cfg.grid.size()) != c->kernel().grid_rank)
      throw UserError(detail::cat("kernel '", kname, "': bad grid ", shape_str(cfg.grid)));
    if (blocks == 0) return;
    if (blocks > std::numeric_limits<std::int32_t>::max())
      throw UserError(detail::cat("kernel '", kname, "': the grid ", shape_str(cfg.grid), " has ", blocks,
                                  " tile blocks; a CUDA launch takes at most 2^31 - 1 (use larger tiles)"));
    const platform::cuda::CudaKernel& k = c->loaded();
    const platform::ParamLayout& l = k.layout();
    CTILE_CHECK(args.size() == l.slots.size(), "cuda backend: ", args.size(), " arguments for ", l.slots.size(), " parameters");
    std::vector<std::byte> params(l.bytes);
    platform::write_grid(params.data(), l, cfg.grid.data(), static_cast<int>(cfg.grid.size()));
    for (std::size_t i = 0; i < args.size(); ++i) {
      const platform::ParamSlot& s = l.slots[i];
      if (s.kind == platform::ParamSlot::Kind::Scalar) {
        platform::write_scalar(params.data(), s, args[i].scalar);
        continue;
      }
      const TensorArg& ta = args[i].tensor;
      if (static_cast<int>(ta.shape.size()) != s.rank || ta.strides.size() != ta.shape.size())
        throw UserError(detail::cat("kernel '", kname, "': argument ", i, " has shape ", shape_str(ta.shape), " and strides ",
                                    shape_str(ta.strides), ", expected rank ", static_cast<int>(s.rank)));
      platform::write_tensor_arg(k, params.data(), i, ta.data, ta.shape.data(), ta.strides.data(), s.rank);
    }
    void* kernel_params[] = {params.data()};
    const auto cuda_blocks = static_cast<unsigned>(k.blocks_for(blocks));
    CTILE_CU(cuLaunchKernel,
             (k.fn(), cuda_blocks, 1u, 1u, k.threads(), 1u, 1u, k.smem(), cur->stream, kernel_params, nullptr),
             "launching kernel '", kname, "' on cuda:", index_, " (", cuda_blocks, " blocks of ", k.threads(), " threads, ",
             k.smem(), " bytes of dynamic shared memory)");
    count_kernel_launches(index_, 1);  // with the platform's own launches (kernel_launches)
  }

 private:
  int index_;
  std::string name_;
};

}  // namespace

Backend& backend(int index) {
  static std::mutex mu;
  static std::array<CudaBackend*, kMaxDevices> backends{};  // leaked: kernels stay loaded until exit
  (void)DeviceContext::get(index);                           // validates the index (UserError)
  std::lock_guard lk(mu);
  auto& slot = backends[static_cast<std::size_t>(index)];
  if (!slot) slot = new CudaBackend(index);
  return *slot;
}

}  // namespace ctile::backend::cuda

namespace ctile {
std::uint64_t cuda_launch_count(int index) {
  // Every successful cuLaunchKernel of the device: the backend's and the platform's (streams, graphs).
  if (index < 0 || index >= backend::cuda::kMaxDevices) return 0;
  return platform::cuda::kernel_launches(index);
}
}  // namespace ctile
