// IR -> CUDA C++ (the contract between the code generator and the CUDA backend).
//
// The generated kernel is `extern "C" __global__ void <entry>(const <entry>_params p)`: one by-value
// parameter struct whose layout is fixed by the generator and filled by pack_params():
//
//   struct TensorDesc { void* data; long long shape[6]; long long stride[6]; };   // 104 bytes
//   struct <entry>_params {
//     long long grid[6];                 // tile blocks per grid axis (kernel.grid_rank used)
//     TensorDesc t[<number of tensor-like params>];   // Piece, Read, Atomic, Unchecked params in order
//     unsigned long long s[<number of scalar params>]; // scalar params in order, bit pattern in the low bytes
//     ct::TensorMap m[<number of tensor maps>];         // TMA copies only (GeneratedKernel::maps)
//   };
//
// Offsets: grid at 0, t[i] at 48 + 104*i (data +0, shape +8, stride +56; unused axes extent 1,
// stride 0), s[j] at 48 + 104*tensors + 8*j, m[i] (128 bytes) from the next multiple of 64; arrays
// without elements are left out.
//
// The launch uses a 1-D grid, `threads` threads per CTA and `smem_bytes` of dynamic shared memory
// (above 48 KB raise CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES); its one kernel parameter is
// the pack_params block. A CTA runs `blocks_per_cta` tile blocks side by side; the kernel loops
// over linear tile-block ids (row-major over `grid`) from blockIdx.x * blocks_per_cta in steps of
// gridDim.x * blocks_per_cta, so launch_blocks(prod(grid)) CTAs give one tile block to each team
// and any smaller count (at least 1) still covers them all. docs/cuda_backend.md has the details.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "ctile/backend/backend.hpp"
#include "ctile/core/options.hpp"

namespace ctile::backend::cuda {

struct CodegenOptions {
  int sm = 90;              // compute capability * 10 of the target (80, 86, 89, 90, ...)
  KernelOptions options;   // the kernel's options (warps, stages, fast_math, ...)
};

struct GeneratedKernel {
  std::string entry;          // extern "C" symbol of the kernel
  std::string source;         // a complete translation unit for NVRTC (it #includes "ctile/device/tile.h")
  int threads = 128;          // threads per CTA
  int blocks_per_cta = 1;     // tile blocks a CTA runs side by side
  std::size_t smem_bytes = 0; // dynamic shared memory per CTA
  std::size_t params_bytes = 0;
  // A persistent kernel: launch about as many CTAs as fit on the device at once (each then runs
  // several tile blocks), not one per tile block.
  bool prefetches = false;
  // The kernel waits for the grid it depends on (ct::grid_dependency_sync) before its first global
  // memory access (sm_90 and newer): a programmatic graph edge may launch it while that grid runs.
  bool programmatic = false;
  // The TMA tensor maps of the parameter struct (p.m[i], 128 bytes each from a 64-byte aligned
  // offset after s[]), which the launch encodes from the tensors (ir::tensor_maps).
  struct Map {
    ir::TensorMapUse use;
    std::size_t offset = 0;
  };
  std::vector<Map> maps;
  // The compiler's notes on this kernel (ir::Kernel::notes: a product off the tensor cores or off
  // wgmma, and why); also at the top of `source`.
  std::vector<std::string> notes;
};

// CTAs that give every tile block of a grid of `tile_blocks` its own team.
std::int64_t launch_blocks(const GeneratedKernel& g, std::int64_t tile_blocks);

// The options the CUDA backend compiles with for target `sm`: the defaults with the environment's
// overrides (KernelOptions::with_env_overrides; CTILE_THREADS and CTILE_PREFETCH are older
// spellings of warps and stages). A malformed value is a UserError.
CodegenOptions codegen_options_from_env(int sm);

// The GPU-level IR of `k`: the CUDA pipeline (passes::cuda_pipeline) on a copy. A bad option is a
// UserError naming the kernel.
ir::Kernel lower(const ir::Kernel& k, const CodegenOptions& opt);

// lower() then print: the CUDA source of the kernel. Throws InternalError for IR the generator
// cannot lower (a bug) and UserError for a kernel that cannot fit the target (e.g. shared memory).
GeneratedKernel generate(const ir::Kernel& k, const CodegenOptions& opt);

// Writes tensor map `m` over the argument tensor `t` into the 128 bytes at `out`: the launcher's
// encoding (the driver's cuTensorMapEncodeTiled on a GPU, the emulator's own in the host emulation).
using TensorMapWriter = std::function<void(std::byte* out, const GeneratedKernel::Map& m, const TensorArg& t)>;

// The parameter struct of one launch, laid out as the generated source expects. A kernel `g` with
// tensor maps needs `write_map` for them (InternalError without).
std::vector<std::byte> pack_params(const ir::Kernel& k, const LaunchConfig& cfg, std::span<const ArgValue> args,
                                   const GeneratedKernel* g = nullptr, const TensorMapWriter& write_map = {});

// The device library headers (include/ctile/device/*.h), embedded at build time: name -> text.
struct EmbeddedHeader {
  const char* name;
  const char* text;
};
std::span<const EmbeddedHeader> device_headers();

}  // namespace ctile::backend::cuda
