#include "ctile/runtime/device.hpp"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string_view>

#include "../platform/cuda/driver.hpp"
#include "../platform/platform.hpp"
#include "ctile/core/error.hpp"

namespace ctile {

std::string Device::str() const {
  return std::string(kind == DeviceKind::Cpu ? "cpu:" : "cuda:") + std::to_string(index);
}

Device cpu() { return Device{DeviceKind::Cpu, 0}; }

bool cuda_available() { return platform::cuda::driver_status().api != nullptr; }

std::string cuda_unavailable_reason() { return platform::cuda::driver_status().reason; }

namespace {
// The fallback notice is one short line: the reason without its parenthesised details and its
// hint after `;` (cuda_unavailable_reason() and `ctile doctor` have them).
std::string short_reason(const std::string& r) {
  std::string out;
  int depth = 0;
  for (const char c : r) {
    if (c == '(') ++depth;
    else if (c == ')' && depth > 0) --depth;
    else if (depth == 0 && c == ';') break;
    else if (depth == 0) out += c;
  }
  std::string squeezed;  // "a (x) b" left "a  b"
  for (const char c : out)
    if (!(c == ' ' && (squeezed.empty() || squeezed.back() == ' '))) squeezed += c;
  while (!squeezed.empty() && squeezed.back() == ' ') squeezed.pop_back();
  return squeezed.empty() ? r : squeezed;
}
}  // namespace

int cuda_device_count() { return platform::cuda::driver_status().device_count; }

Device default_device() {
  const char* env = std::getenv("CTILE_BACKEND");
  const std::string_view v = env ? env : "";
  if (v == "cpu") return cpu();
  if (v == "cuda") {
    if (!cuda_available())
      throw UserError(detail::cat("CTILE_BACKEND=cuda, but the CUDA backend cannot be used: ", cuda_unavailable_reason(),
                                  " (unset CTILE_BACKEND to fall back to the CPU, or set CTILE_BACKEND=cpu)"));
    return Device{DeviceKind::Cuda, 0};
  }
  if (!v.empty())
    throw UserError(detail::cat("CTILE_BACKEND=", v, " is not a backend ctile knows (accepted: cpu, cuda, or unset)"));
  if (cuda_available()) return Device{DeviceKind::Cuda, 0};
  static std::once_flag noticed;
  std::call_once(noticed, [] {
    if (!platform::cuda::quiet())
      std::fprintf(stderr, "ctile: no usable GPU (%s); using the CPU (CTILE_QUIET=1 hides this)\n",
                   short_reason(cuda_unavailable_reason()).c_str());
  });
  return cpu();
}

std::string backend_name(Device d) { return d.kind == DeviceKind::Cpu ? "cpu" : "cuda"; }

std::string describe(Device d) { return platform::platform_for(d).describe(); }

DeviceLimits device_limits(Device d) {
  const platform::DevicePlatform& p = platform::platform_for(d);
  return DeviceLimits{p.sm(), p.max_smem_per_block()};
}

}  // namespace ctile
