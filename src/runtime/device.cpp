#include "ctile/runtime/device.hpp"

#include <cstdlib>
#include <string_view>

#include "ctile/core/error.hpp"

namespace ctile {

std::string Device::str() const {
  return std::string(kind == DeviceKind::Cpu ? "cpu:" : "cuda:") + std::to_string(index);
}

Device cpu() { return Device{DeviceKind::Cpu, 0}; }

Device default_device() {
  const char* env = std::getenv("CTILE_BACKEND");
  const std::string_view v = env ? env : "";
  if (v.empty() || v == "cpu") return cpu();
  if (v == "cuda")
    throw UserError("CTILE_BACKEND=cuda, but this build of ctile has no CUDA backend yet (use CTILE_BACKEND=cpu or unset it)");
  throw UserError(detail::cat("CTILE_BACKEND=", v, " is not a backend ctile knows (accepted: cpu, cuda, or unset)"));
}

}  // namespace ctile
