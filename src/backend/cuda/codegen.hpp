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
//   };
//
// Offsets: grid at 0, t[i] at 48 + 104*i (data +0, shape +8, stride +56; unused axes extent 1,
// stride 0), s[j] at 48 + 104*tensors + 8*j; arrays without elements are left out.
//
// The launch uses a 1-D grid, `threads` threads per block and `smem_bytes` of dynamic shared memory
// (above 48 KB raise CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES); its one kernel parameter is
// the pack_params block. The kernel loops over linear tile-block ids from blockIdx.x in steps of
// gridDim.x (row-major over `grid`), so prod(grid) blocks give one tile block each and any smaller
// count (at least 1) still covers them all. docs/cuda_backend.md has the details.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "ctile/backend/backend.hpp"

namespace ctile::backend::cuda {

struct CodegenOptions {
  int sm = 90;  // compute capability * 10 of the target (80, 86, 89, 90, ...)
  // Issue the tile loads of a block's next tile block before processing the current one
  // (software pipelining over the grid-stride loop; GeneratedKernel::prefetches says whether any
  // load qualified). Off by default: on the H200 it was slower for every benchmark kernel
  // (docs/perf/2026-11-29-h200-tuning); CTILE_PREFETCH=1 turns it on in the CUDA backend.
  bool prefetch = false;
  // Threads per block; 0 lets the generator choose (CTILE_THREADS overrides it, for tuning).
  int threads = 0;
};

struct GeneratedKernel {
  std::string entry;          // extern "C" symbol of the kernel
  std::string source;         // a complete translation unit for NVRTC (it #includes "ctile/device/tile.h")
  int threads = 128;          // threads per block
  std::size_t smem_bytes = 0; // dynamic shared memory per block
  std::size_t params_bytes = 0;
  // Loads are pipelined over tile blocks: launch about as many blocks as fit on the device at
  // once (each then runs several tile blocks), not one per tile block.
  bool prefetches = false;
};

// The options the CUDA backend compiles with for target `sm`: the defaults, with the tuning knobs
// CTILE_PREFETCH (0/1) and CTILE_THREADS (threads per block) from the environment. A malformed
// CTILE_THREADS is a UserError.
CodegenOptions codegen_options_from_env(int sm);

// Throws InternalError for IR the generator cannot lower (a bug) and UserError for a kernel that
// cannot fit the target (e.g. shared memory).
GeneratedKernel generate(const ir::Kernel& k, const CodegenOptions& opt);

// The parameter struct of one launch, laid out as the generated source expects.
std::vector<std::byte> pack_params(const ir::Kernel& k, const LaunchConfig& cfg, std::span<const ArgValue> args);

// The device library headers (include/ctile/device/*.h), embedded at build time: name -> text.
struct EmbeddedHeader {
  const char* name;
  const char* text;
};
std::span<const EmbeddedHeader> device_headers();

}  // namespace ctile::backend::cuda
