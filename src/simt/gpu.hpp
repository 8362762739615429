// The GPU side of SIMT kernels and raw CUDA kernels: the CUDA source of a SIMT kernel, NVRTC (and
// nvJitLink, for .reqntid) compiles, the per-device module cache, launches on the current CUDA
// stream, and device limits. Private to src/simt; the other layers see it through launch.cpp,
// compile.cpp and raw.cpp.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "../platform/kernel.hpp"
#include "ctile/simt/contract.hpp"
#include "ctile/simt/kernel.hpp"

namespace ctile::simt::gpu {

// The attributes of cuda:device as limits.
DeviceLimits limits(int device);

// What a SIMT module is compiled for besides the kernel: the grid's rank (1: y = z = 1, 2: z = 1,
// 3), and whether the requires relations may be assumed (a launch that prepare() checked: then the
// compiler may drop bounds checks the relations make redundant; never for unchecked launches).
struct Variant {
  int grid_rank = 1;
  bool assume_requires = true;
  [[nodiscard]] int key() const { return grid_rank + (assume_requires ? 10 : 0); }
};

// The complete CUDA translation unit of a SIMT kernel for NVRTC: the embedded SIMT headers, the
// launch shape as macros (block extents, dynamic shared memory, the grid's rank), the captured
// parameters and body at the kernel's file:line (after `if (!(relation)) __builtin_unreachable();`
// for each requires relation when they may be assumed), and an extern "C" __global__ entry with
// __launch_bounds__ from the contract. `entry` receives the entry's name.
std::string cuda_source(const detail::KernelInfo& k, const Variant& v, std::string& entry);

// A compile for one architecture ("sm_80", "sm_90a", ...).
struct Compiled {
  std::string entry, arch;
  std::string source;  // CUDA C++
  std::string ptx;     // NVRTC's PTX; for SIMT kernels with .maxntid rewritten to the contract's .reqntid
  std::string cubin;   // ELF bytes (nvJitLink from the PTX for SIMT kernels; NVRTC for raw ones)
  std::string log;     // NVRTC's and nvJitLink's warnings (empty when clean)
  int nvrtc_major = 0, nvrtc_minor = 0;
  std::string linker;  // "nvJitLink 13.0", "driver JIT" (PTX loaded by the driver), or "NVRTC"
};
Compiled compile_simt(const detail::KernelInfo& k, const std::string& arch, const Variant& v);
Compiled compile_raw(const std::string& source, const std::string& entry, const std::string& arch);

// Compiles and loads the module of a launch of this shape on cuda:device, once (the launch glue calls
// it before enqueueing, so compile errors come out of async_on(), and no stream waits for NVRTC),
// and returns it as the platform's kernel, which CUDA streams and graphs launch with the pack as its
// one parameter (`layout`: the kernel's parameter slots, foreign_launch.hpp). Loaded kernels stay
// until exit. `checked`: prepare() checked the launch (its requires relations hold).
const platform::NativeKernel& load_simt(const detail::KernelInfo& k, const LaunchDims& d, int device, bool checked,
                                        const platform::ParamLayout& layout);
void load_raw(const std::string& source, const std::string& entry, std::int64_t dynamic_shared, int device,
              const std::string& name);

// A race-checked launch on a GPU: runs on the CPU backend over host copies of the arguments (after
// the stream's earlier work), then copies what it may have written back.
void launch_simt_on_host(const detail::KernelInfo& k, const std::vector<std::byte>& pack, const LaunchDims& d,
                         int device);

// A raw CUDA kernel (raw.hpp): its parameters are `params` (pointers to each value).
void launch_raw(const std::string& source, const std::string& entry, const LaunchDims& d, void** params, int device,
                const std::string& name);

}  // namespace ctile::simt::gpu
