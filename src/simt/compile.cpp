// compile_only for SIMT and raw kernels (ctile/simt/compile.hpp).
#include "ctile/simt/compile.hpp"

#include "gpu.hpp"

namespace ctile::simt {

namespace {
CompileResult from(const gpu::Compiled& c, const std::string& kernel) {
  CompileResult r;
  r.kernel = kernel;
  r.entry = c.entry;
  r.arch = c.arch;
  r.cuda_source = c.source;
  r.ptx = c.ptx;
  r.cubin = c.cubin;
  r.log = c.log;
  r.linker = c.linker;
  r.nvrtc_major = c.nvrtc_major;
  r.nvrtc_minor = c.nvrtc_minor;
  return r;
}
}  // namespace

CompileResult detail::compile_only_simt(const KernelInfo& k, const std::string& arch, int grid_rank, bool assume_requires) {
  if (!k.contract.has_block())
    throw UserError("compile_only of " + k.describe() + ": the launch contract declares no block shape");
  return from(gpu::compile_simt(k, arch, gpu::Variant{grid_rank, assume_requires}), k.name);
}

CompileResult compile_only(const RawKernel& k, const std::string& arch) {
  return from(gpu::compile_raw(k.source(), k.entry(), arch), k.name());
}

}  // namespace ctile::simt
