// NVRTC, loaded at run time with dlopen (the library builds and runs where CUDA is absent; the CUDA
// backend then reports why it is unavailable). Compiles a GeneratedKernel with the embedded device
// library headers to PTX or a cubin.
#pragma once

#include <string>
#include <vector>

#include "codegen.hpp"

namespace ctile::backend::cuda {

enum class Output { Ptx, Cubin };

struct CompileResult {
  Output output = Output::Cubin;
  std::string image;       // PTX text (Ptx) or the cubin's bytes (Cubin)
  std::string ptx;         // compile_for_arch only: the PTX of the same run (image is the cubin)
  std::string log;         // NVRTC's log (warnings); empty when clean
  std::string arch;        // the -arch value used, e.g. "sm_90a" or "compute_80"
  double compile_ms = 0;   // wall time of nvrtcCompileProgram plus fetching the output
};

class Nvrtc {
 public:
  struct Version {
    int major = 0, minor = 0;
  };
  Version version() const { return version_; }
  const std::string& library_path() const { return path_; }

  // -arch=sm_<sm> (sm_90a for sm 90; compute_<sm> / compute_90a for PTX), -std=c++17,
  // -default-device, no fast-math. Thread-safe. Throws InternalError with the log, the kernel entry,
  // the failing line of the generated source and a command reproducing the failure with nvcc.
  CompileResult compile(const GeneratedKernel& k, int sm, Output out) const;

  // The -arch option value for a target.
  static std::string arch_for(int sm, Output out);

  // Compiles once with -arch=<arch>, a real architecture as NVRTC spells it ("sm_80", "sm_90",
  // "sm_90a", ...), and keeps both outputs of that run: `image` is the cubin, `ptx` the PTX.
  // Throws UserError when NVRTC rejects the -arch value; otherwise fails like compile().
  CompileResult compile_for_arch(const GeneratedKernel& k, const std::string& arch) const;

  // The real architectures this NVRTC compiles for (compute capability * 10, ascending); empty
  // when the library does not tell (no nvrtcGetSupportedArchs).
  std::vector<int> supported_archs() const;

  struct Api;  // the NVRTC entry points (nvrtc.cpp)
  Nvrtc(const Api* api, std::string path, Version v) : api_(api), path_(std::move(path)), version_(v) {}

 private:
  CompileResult run(const GeneratedKernel& k, const std::string& arch, Output out, bool keep_ptx, bool user_arch) const;

  const Api* api_;
  std::string path_;
  Version version_;
};

// The process-wide NVRTC, loaded on first use; null when no usable libnvrtc was found.
Nvrtc* nvrtc();
// Why nvrtc() is null (the libraries tried and dlerror()s); empty when it is available.
const std::string& nvrtc_unavailable_reason();

}  // namespace ctile::backend::cuda
