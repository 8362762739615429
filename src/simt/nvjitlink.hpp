// nvJitLink, loaded at run time with dlopen like NVRTC (the library builds and runs without it):
// turns the PTX of a SIMT kernel, whose .maxntid ctile rewrote to the contract's .reqntid, into a
// cubin. Without it, the driver compiles the PTX when the module is loaded. Private to src/simt.
#pragma once

#include <string>

namespace ctile::simt::gpu {

class NvJitLink {
 public:
  struct Result {
    std::string cubin;
    std::string log;  // warnings (empty when clean)
  };
  // PTX -> cubin for `arch` ("sm_90a"). Throws InternalError with the log when it fails.
  Result link(const std::string& ptx, const std::string& arch, const std::string& name) const;
  int major() const { return major_; }
  int minor() const { return minor_; }
  const std::string& path() const { return path_; }

  struct Api;
  NvJitLink(const Api* api, std::string path, int major, int minor)
      : api_(api), path_(std::move(path)), major_(major), minor_(minor) {}

 private:
  const Api* api_;
  std::string path_;
  int major_, minor_;
};

// The process-wide nvJitLink, loaded on first use; null when none was found (then see the reason).
const NvJitLink* nvjitlink();
const std::string& nvjitlink_unavailable_reason();

}  // namespace ctile::simt::gpu
