// The GPU side of SIMT and raw CUDA kernels (gpu.hpp).
#include "gpu.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <span>
#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <sstream>
#include <tuple>

#include "../backend/cache/disk_cache.hpp"
#include "../backend/cuda/nvrtc.hpp"
#include "../core/dump.hpp"
#include "../platform/cuda/device.hpp"
#include "../platform/cuda/driver.hpp"
#include "../platform/cuda/kernel.hpp"
#include "../platform/cuda/memory.hpp"
#include "../platform/cuda/stream.hpp"
#include "cpu_runtime.hpp"
#include "nvjitlink.hpp"

#ifndef CTILE_VERSION_STRING
#define CTILE_VERSION_STRING "unknown"
#endif

namespace ctile::simt::gpu {

std::string_view simt_headers_text();  // generated (embed_simt_headers.cmake)

// The CUDA platform (driver, contexts, streams, memory: src/platform/cuda) and compiler (NVRTC,
// the generated-kernel description: src/backend/cuda) under one short name.
namespace cu {
using namespace ::ctile::backend::cuda;   // NOLINT(google-build-using-namespace)
using namespace ::ctile::platform::cuda;  // NOLINT(google-build-using-namespace)
}  // namespace cu

namespace {

using ::ctile::detail::dump_generated;
using ::ctile::detail::env_flag;

// "sm_90a" -> 90; 0 when it is not of the form sm_<digits>[a|f].
int sm_of(const std::string& arch, std::string& suffix) {
  if (arch.rfind("sm_", 0) != 0) return 0;
  std::size_t i = 3;
  int v = 0;
  while (i < arch.size() && std::isdigit(static_cast<unsigned char>(arch[i]))) v = v * 10 + (arch[i++] - '0');
  suffix = arch.substr(i);
  return i == 3 ? 0 : v;
}

// The PTX of the entry, with __launch_bounds__'s .maxntid replaced by the contract's exact block
// (.reqntid): the driver then refuses a launch of any other block shape.
std::string with_reqntid(const std::string& ptx, const std::string& entry, const Dims& b) {
  const std::size_t e = ptx.find(".entry " + entry);
  if (e == std::string::npos) throw InternalError("SIMT PTX without the entry " + entry);
  const std::size_t m = ptx.find(".maxntid", e);
  if (m == std::string::npos) throw InternalError("SIMT PTX of " + entry + " without .maxntid (from __launch_bounds__)");
  const std::size_t end = ptx.find('\n', m);
  return ptx.substr(0, m) + ".reqntid " + std::to_string(b.x) + ", " + std::to_string(b.y) + ", " + std::to_string(b.z) +
         ptx.substr(end);
}

cu::Nvrtc& need_nvrtc(const std::string& what) {
  cu::Nvrtc* nv = cu::nvrtc();
  if (!nv) throw UserError("cannot compile " + what + ": NVRTC is not available: " + cu::nvrtc_unavailable_reason());
  return *nv;
}

// NVRTC for one architecture: PTX only (arch_for's spelling: sm_90 -> compute_90a) when `want_cubin`
// is false and the architecture is the one arch_for names, else both (compile_for_arch).
cu::CompileResult nvrtc_compile(cu::Nvrtc& nv, const cu::GeneratedKernel& g, const std::string& arch, bool want_cubin) {
  std::string suffix;
  const int sm = sm_of(arch, suffix);
  if (sm == 0) throw UserError("unknown GPU architecture '" + arch + "' (expected sm_80, sm_86, sm_89, sm_90a, ...)");
  if (!want_cubin && cu::Nvrtc::arch_for(sm, cu::Output::Cubin) == arch) {
    cu::CompileResult r = nv.compile(g, sm, cu::Output::Ptx);
    r.ptx = r.image;
    r.image.clear();
    return r;
  }
  return nv.compile_for_arch(g, arch);
}

}  // namespace

std::string cuda_source(const detail::KernelInfo& k, const Variant& v, std::string& entry) {
  entry = "ctile_simt_" + k.name;
  const Dims& b = k.contract.block_dims();
  const std::int64_t threads = b.x * b.y * b.z;
  std::ostringstream os;
  os << "// ctile: SIMT kernel '" << k.name << "' from " << k.file << ":" << k.line << " (generated for NVRTC)\n"
     << "#define CTILE_SIMT_BLOCK_X " << b.x << "\n#define CTILE_SIMT_BLOCK_Y " << b.y << "\n#define CTILE_SIMT_BLOCK_Z "
     << b.z << "\n#define CTILE_SIMT_DYN_SMEM " << k.contract.dynamic_shared_bytes() << "\n#define CTILE_SIMT_GRID_RANK "
     << v.grid_rank << "\n"
     << simt_headers_text() << "\n// ---- the kernel ----\nnamespace ctile_simt_user {\nusing namespace ::ctile::simt;\n"
     << "using ctile_signature = void " << k.params_text << ";\n";
  std::string file = k.file;
  for (std::size_t p; (p = file.find('"')) != std::string::npos;) file.replace(p, 1, "'");
  os << "void ctile_body " << k.params_text << " {\n";
  if (v.assume_requires)  // prepare() has checked them: facts for the optimizer
    for (const std::string& r : k.relations) os << "  if (!(" << r << ")) __builtin_unreachable();\n";
  os << "#line " << k.line << " \"" << file << "\"\n" << k.body_text << "\n}\n";
  // Back to the generated file's own numbering for the entry point.
  std::string head = os.str();
  int lines = 1;
  for (char c : head) lines += c == '\n';
  os << "#line " << lines + 1 << " \"" << entry << ".cu\"\n";
  os << "}  // namespace ctile_simt_user\n"
     << "extern \"C\" __global__ void __launch_bounds__(" << threads;
  if (k.contract.min_blocks() > 0) os << ", " << k.contract.min_blocks();
  os << ") " << entry << "(const ::ctile::simt::detail::pack_t<ctile_simt_user::ctile_signature> ctile_pack) {\n"
     << "  using S = ctile_simt_user::ctile_signature;\n  ctile_simt_user::ctile_body(";
  for (std::size_t i = 0; i < k.params.size(); ++i)
    os << (i ? ", " : "") << "::ctile::simt::detail::make_param<S, " << i << ">(ctile_pack)";
  os << ");\n}\n";
  return os.str();
}

Compiled compile_simt(const detail::KernelInfo& k, const std::string& arch, const Variant& v) {
  if (v.grid_rank < 1 || v.grid_rank > 3)
    throw UserError("compile_only of " + k.describe() + ": the grid rank must be 1, 2 or 3, not " + std::to_string(v.grid_rank));
  Compiled c;
  c.arch = arch;
  c.source = cuda_source(k, v, c.entry);
  cu::Nvrtc& nv = need_nvrtc(k.describe());
  c.nvrtc_major = nv.version().major;
  c.nvrtc_minor = nv.version().minor;
  cu::GeneratedKernel g;
  g.entry = c.entry;
  g.source = c.source;
  g.threads = static_cast<int>(k.contract.block_dims().x * k.contract.block_dims().y * k.contract.block_dims().z);
  g.smem_bytes = static_cast<std::size_t>(k.contract.dynamic_shared_bytes());
  cu::CompileResult r;
  try {
    r = nvrtc_compile(nv, g, arch, false);
  } catch (const InternalError& e) {
    // The SIMT headers compile (CI proves it for every architecture it names): a failure comes from
    // the kernel's body, e.g. a name that exists only in the host translation unit. NVRTC's message
    // is passed on without the wrapper's "internal error" prefix.
    std::string nvrtc_says = e.what();
    if (const auto p = nvrtc_says.find("NVRTC failed"); p != std::string::npos) nvrtc_says.erase(0, p);
    throw UserError(k.describe() + " does not compile for the GPU (" + arch +
                        "): its body may use only its parameters, ctile::simt, built-in types and CUDA's math "
                        "functions (docs/simt.md). " + nvrtc_says,
                    SourceLoc(k.file, static_cast<unsigned>(k.line)));
  }
  c.log = r.log;
  c.ptx = with_reqntid(r.ptx, c.entry, k.contract.block_dims());
  if (const NvJitLink* jl = nvjitlink()) {
    const NvJitLink::Result l = jl->link(c.ptx, arch, c.entry);
    c.cubin = l.cubin;
    if (!l.log.empty()) c.log += (c.log.empty() ? "" : "\n") + l.log;
    c.linker = "nvJitLink " + std::to_string(jl->major()) + "." + std::to_string(jl->minor());
  } else {
    c.linker = "driver JIT";  // the PTX is loaded as is
  }
  return c;
}

Compiled compile_raw(const std::string& source, const std::string& entry, const std::string& arch) {
  Compiled c;
  c.arch = arch;
  c.entry = entry;
  c.source = source;
  cu::Nvrtc& nv = need_nvrtc("raw CUDA kernel '" + entry + "'");
  c.nvrtc_major = nv.version().major;
  c.nvrtc_minor = nv.version().minor;
  cu::GeneratedKernel g;
  g.entry = entry;
  g.source = source;
  cu::CompileResult r;
  try {
    r = nvrtc_compile(nv, g, arch, true);
  } catch (const InternalError& e) {  // the source is the user's: its errors are the user's
    std::string nvrtc_says = e.what();
    if (const auto p = nvrtc_says.find("NVRTC failed"); p != std::string::npos) nvrtc_says.erase(0, p);
    throw UserError("raw CUDA kernel '" + entry + "' does not compile (" + arch + "): " + nvrtc_says);
  }
  c.log = r.log;
  c.ptx = r.ptx;
  c.cubin = r.image;
  c.linker = "NVRTC";
  return c;
}

DeviceLimits limits(int device) {
  const cu::DeviceInfo& info = cu::DeviceContext::get(device).info();
  DeviceLimits l;
  l.device = "cuda:" + std::to_string(device) + " (" + info.name + ", sm_" + std::to_string(info.sm()) + ")";
  l.compute_capability = info.sm();
  l.max_threads_per_block = info.max_threads_per_block;
  // CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X/Y/Z = 2, 3, 4; MAX_GRID_DIM_Y/Z = 6, 7 (cuda.h). They are
  // the same on every GPU ctile supports; a driver that does not report one gets that value.
  auto attr = [&](int a, std::int64_t fallback) {
    int v = 0;
    return cu::drv().cuDeviceGetAttribute(&v, a, info.dev) == 0 && v > 0 ? static_cast<std::int64_t>(v) : fallback;
  };
  l.max_block = Dims{attr(2, 1024), attr(3, 1024), attr(4, 64)};
  l.max_grid = Dims{info.max_grid_x, attr(6, 65535), attr(7, 65535)};
  l.multiprocessors = info.sm_count;
  l.max_shared_per_block = info.smem_per_block;
  l.max_shared_per_block_optin = info.smem_per_block_optin;
  return l;
}

namespace {

struct Module {
  cu::CUmodule mod = nullptr;
  cu::CUfunction fn = nullptr;
  const cu::CudaKernel* native = nullptr;  // SIMT modules: the platform's kernel over the module
};

// Loaded modules, one per (kernel, device, grid rank) or (raw source, entry, device); never
// unloaded (kernels stay loaded until exit, like the tile backend's).
struct ModuleCache {
  std::mutex mu;
  std::map<std::tuple<const void*, std::string, int, int>, std::shared_ptr<std::once_flag>> once;
  std::map<std::tuple<const void*, std::string, int, int>, Module> mods;
  std::vector<std::unique_ptr<cu::CudaKernel>> kernels;  // own their modules
};
ModuleCache& modules() {
  static auto* c = new ModuleCache();
  return *c;
}

// Compiles (or finds in the disk cache) and loads; `compile` gives {entry, cubin or PTX}.
template <class CompileFn>
Module load(const std::tuple<const void*, std::string, int, int>& key, int device, const std::string& what,
            std::int64_t dyn_smem, std::int64_t threads, const platform::ParamLayout* layout, CompileFn compile) {
  ModuleCache& mc = modules();
  std::shared_ptr<std::once_flag> flag;
  {
    std::lock_guard lk(mc.mu);
    auto& f = mc.once[key];
    if (!f) f = std::make_shared<std::once_flag>();
    flag = f;
  }
  std::call_once(*flag, [&] {
    cu::DeviceContext& dc = cu::DeviceContext::get(device);
    const int sm = dc.info().sm();
    const std::string arch = cu::Nvrtc::arch_for(sm, cu::Output::Cubin);
    Compiled c = compile(arch);
    if (env_flag("CTILE_DUMP_CUDA")) dump_generated(what, c.entry, ".cu", c.source);
    if (env_flag("CTILE_DUMP_PTX")) dump_generated(what, c.entry, ".ptx", c.ptx);
    if (!c.log.empty() && env_flag("CTILE_VERBOSE"))
      std::fprintf(stderr, "ctile: compile log of %s:\n%s\n", what.c_str(), c.log.c_str());
    cu::ScopedContext scope(dc.ctx());
    Module m;
    const std::string& image = c.cubin.empty() ? c.ptx : c.cubin;  // PTX: the driver compiles it
    const cu::CUresult r = cu::drv().cuModuleLoadData(&m.mod, image.data());
    if (r != 0)
      cu::throw_cuda_error(r, "cuModuleLoadData",
                           ::ctile::detail::cat("loading ", what, " (", c.linker, ", ", arch, ") on cuda:", device));
    CTILE_CU(cuModuleGetFunction, (&m.fn, m.mod, c.entry.c_str()), "finding entry ", c.entry, " of ", what);
    if (dyn_smem > dc.info().smem_per_block)
      CTILE_CU(cuFuncSetAttribute, (m.fn, cu::abi::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(dyn_smem)),
               "allowing ", dyn_smem, " bytes of dynamic shared memory for ", what);
    if (threads > 0) {
      int max_threads = 0;
      CTILE_CU(cuFuncGetAttribute, (&max_threads, cu::abi::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, m.fn),
               "querying the block size limit of ", what);
      if (max_threads < threads) {
        int regs = 0;
        (void)cu::drv().cuFuncGetAttribute(&regs, cu::abi::CU_FUNC_ATTRIBUTE_NUM_REGS, m.fn);
        throw UserError(::ctile::detail::cat(what, " uses ", regs, " registers per thread, so at most ", max_threads,
                                    " threads per block can run on cuda:", device, ", but its contract's block has ", threads,
                                    " (use a smaller block, or fewer live values)"));
      }
    }
    std::lock_guard lk(mc.mu);
    if (layout) {
      mc.kernels.push_back(std::make_unique<cu::CudaKernel>(device, dc.ctx(), m.mod, m.fn, static_cast<int>(threads),
                                                            static_cast<std::size_t>(dyn_smem), *layout, 0));
      m.native = mc.kernels.back().get();
    }
    mc.mods[key] = m;
  });
  std::lock_guard lk(mc.mu);
  auto it = mc.mods.find(key);
  if (it == mc.mods.end()) throw UserError(what + " failed to compile or load earlier in this process");
  return it->second;
}

// A compile through the disk cache: the key covers everything that decides the cubin.
Compiled cached(const std::string& what, const std::string& arch, const std::string& source,
                const std::function<Compiled()>& compile) {
  cache::DiskCache* disk = cache::DiskCache::global();
  cu::Nvrtc* nv = cu::nvrtc();
  if (!disk || !nv) return compile();
  const NvJitLink* jl = nvjitlink();
  cache::KeyBuilder kb;
  kb.add("what", "ctile simt module")
      .add("ctile", CTILE_VERSION_STRING)
      .add("nvrtc", ::ctile::detail::cat(nv->version().major, ".", nv->version().minor))
      .add("nvjitlink", jl ? ::ctile::detail::cat(jl->major(), ".", jl->minor()) : "none")
      .add("arch", arch)
      .add("source", source);
  // Payload: entry \0 kind (c = cubin, p = PTX) \0 image.
  if (auto hit = disk->get(kb.key())) {
    const std::string s(reinterpret_cast<const char*>(hit->data()), hit->size());
    const std::size_t a = s.find('\0'), b = a == std::string::npos ? a : s.find('\0', a + 1);
    if (b != std::string::npos) {
      Compiled c;
      c.entry = s.substr(0, a);
      (s[a + 1] == 'c' ? c.cubin : c.ptx) = s.substr(b + 1);
      c.source = source;
      c.arch = arch;
      c.linker = "disk cache";
      return c;
    }
  }
  Compiled c = compile();
  const bool is_cubin = !c.cubin.empty();
  std::string payload = c.entry + '\0' + (is_cubin ? "c" : "p") + '\0' + (is_cubin ? c.cubin : c.ptx);
  disk->put(kb.key(), std::span(reinterpret_cast<const std::byte*>(payload.data()), payload.size()), what + ", " + arch);
  return c;
}

const cu::CurrentStream& stream_of_task(const std::string& what, int device) {
  const cu::CurrentStream* cur = cu::current_stream();
  if (!cur) throw InternalError(what + ": a GPU launch outside a task of a CUDA stream");
  if (cur->device != device)
    throw InternalError(::ctile::detail::cat(what, ": prepared for cuda:", device, " but run on a stream of cuda:", cur->device));
  return *cur;
}

}  // namespace

namespace {
Module simt_module(const detail::KernelInfo& k, const LaunchDims& d, int device, bool checked,
                   const platform::ParamLayout& layout) {
  Variant v;
  v.grid_rank = d.grid.z > 1 ? 3 : d.grid.y > 1 ? 2 : 1;
  v.assume_requires = checked;
  const std::string what = k.describe();
  return load({k.id, std::string(), device, v.key()}, device, what, d.dynamic_shared, d.block.x * d.block.y * d.block.z,
              &layout, [&](const std::string& arch) {
                std::string entry;
                const std::string src = cuda_source(k, v, entry);
                return cached(what, arch, src, [&] { return compile_simt(k, arch, v); });
              });
}
Module raw_module(const std::string& source, const std::string& entry, std::int64_t dynamic_shared, int device,
                  const std::string& name) {
  const std::string what = "raw CUDA kernel '" + name + "'";
  return load({nullptr, source + '\0' + entry, device, 0}, device, what, dynamic_shared, 0, nullptr, [&](const std::string& arch) {
    return cached(what, arch, source + "\n// entry " + entry, [&] { return compile_raw(source, entry, arch); });
  });
}
}  // namespace

const platform::NativeKernel& load_simt(const detail::KernelInfo& k, const LaunchDims& d, int device, bool checked,
                                        const platform::ParamLayout& layout) {
  return *simt_module(k, d, device, checked, layout).native;
}

void load_raw(const std::string& source, const std::string& entry, std::int64_t dynamic_shared, int device,
              const std::string& name) {
  (void)raw_module(source, entry, dynamic_shared, device, name);
}

void launch_simt_on_host(const detail::KernelInfo& k, const std::vector<std::byte>& pack, const LaunchDims& d,
                         int device) {
  const std::string what = k.describe();
  const cu::CurrentStream& cur = stream_of_task(what, device);
  CTILE_CU(cuStreamSynchronize, (cur.stream), "waiting for the work before race-checked ", what);
  std::vector<std::byte> host_pack = pack;
  const std::vector<cpu::ArgRange> ranges = cpu::arg_ranges(k, pack.data());
  std::vector<std::vector<std::byte>> bufs(ranges.size());
  std::size_t r = 0;
  for (std::size_t i = 0; i < k.params.size(); ++i) {
    if (k.params[i].kind == detail::ParamKind::Value) continue;
    const cpu::ArgRange& ar = ranges[r];
    std::vector<std::byte>& buf = bufs[r++];
    buf.resize(static_cast<std::size_t>(ar.hi - ar.lo));
    if (!buf.empty()) cu::copy_to_host(device, buf.data(), ar.lo, static_cast<std::int64_t>(buf.size()));
    std::byte* host = buf.data();
    std::memcpy(host_pack.data() + k.desc_offsets[i], &host, sizeof(host));
  }
  cpu::run(k, host_pack.data(), d, true);
  r = 0;
  for (std::size_t i = 0; i < k.params.size(); ++i) {
    if (k.params[i].kind == detail::ParamKind::Value) continue;
    const cpu::ArgRange& ar = ranges[r];
    std::vector<std::byte>& buf = bufs[r++];
    if (k.params[i].kind == detail::ParamKind::Read || buf.empty()) continue;
    CTILE_CU(cuMemcpyHtoDAsync_v2,
             (static_cast<cu::CUdeviceptr>(reinterpret_cast<std::uintptr_t>(ar.lo)), buf.data(), buf.size(), cur.stream),
             "copying the results of race-checked ", what, " back to cuda:", device);
  }
}

void launch_raw(const std::string& source, const std::string& entry, const LaunchDims& d, void** params, int device,
                const std::string& name) {
  const std::string what = "raw CUDA kernel '" + name + "'";
  const Module m = raw_module(source, entry, d.dynamic_shared, device, name);
  const cu::CurrentStream& cur = stream_of_task(what, device);
  CTILE_CU(cuLaunchKernel,
           (m.fn, static_cast<unsigned>(d.grid.x), static_cast<unsigned>(d.grid.y), static_cast<unsigned>(d.grid.z),
            static_cast<unsigned>(d.block.x), static_cast<unsigned>(d.block.y), static_cast<unsigned>(d.block.z),
            static_cast<unsigned>(d.dynamic_shared), cur.stream, params, nullptr),
           "launching ", what, " on cuda:", device, " (grid ", d.grid.str(), ", block ", d.block.str(), ")");
}

}  // namespace ctile::simt::gpu
