// Compiling SIMT kernels ahead, without a GPU (host only; needs NVRTC): the CUDA source ctile
// generates, NVRTC's PTX (with the contract's .reqntid) and the cubin (through nvJitLink; empty
// when it is missing, then a GPU's driver compiles the PTX at load), for a chosen architecture.
//
//   auto r = ctile::simt::compile_only(vector_add, "sm_90a");
//   // r.cuda_source, r.ptx, r.cubin, r.log (NVRTC's and nvJitLink's warnings; empty when clean)
#pragma once

#include <string>

#include "ctile/simt/kernel.hpp"
#include "ctile/simt/raw.hpp"

namespace ctile::simt {

struct CompileResult {
  std::string kernel, entry, arch;
  std::string cuda_source, ptx, cubin, log;
  std::string linker;  // "nvJitLink 13.0", "driver JIT" or "NVRTC"
  int nvrtc_major = 0, nvrtc_minor = 0;
};

namespace detail {
CompileResult compile_only_simt(const KernelInfo& k, const std::string& arch, int grid_rank, bool assume_requires);
}

// `arch`: sm_80, sm_86, sm_89, sm_90, sm_90a, ... (what the installed NVRTC accepts). `grid_rank`:
// compile for grids of this rank (1: y = z = 1, 2: z = 1, 3), whose missing block indices fold to
// 0, as a launch with such a grid does. `assume_requires`: the module of checked launches, in which
// the requires relations are facts for the optimizer (false: the module of unchecked launches).
template <class Def>
[[nodiscard]] CompileResult compile_only(const Kernel<Def>& k, const std::string& arch, int grid_rank = 1,
                                         bool assume_requires = true) {
  return detail::compile_only_simt(k.info(), arch, grid_rank, assume_requires);
}
[[nodiscard]] CompileResult compile_only(const RawKernel& k, const std::string& arch);

}  // namespace ctile::simt
