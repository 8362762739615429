// platform_for: the one place that maps a device to its platform.
#include "platform.hpp"

#include "cpu/cpu_platform.hpp"
#include "cuda/cuda_platform.hpp"
#include "ctile/core/error.hpp"

#include <atomic>

namespace ctile::platform {

std::uint64_t new_stream_order() {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

std::shared_ptr<StreamImpl> DevicePlatform::wrap_stream(void*, std::shared_ptr<const void>) {
  throw UserError(detail::cat("wrapping a native stream on ", device().str(),
                              ": this device has no native streams (only CUDA streams can be wrapped)"));
}

DevicePlatform& platform_for(Device d) {
  switch (d.kind) {
    case DeviceKind::Cpu:
      if (d.index != 0) throw UserError(detail::cat(d.str(), " does not exist: the CPU device has index 0 only"));
      return cpu::platform();
    case DeviceKind::Cuda:
      return cuda::platform(d.index);
  }
  throw InternalError(detail::cat("platform_for: unknown device kind ", static_cast<int>(d.kind)));
}

}  // namespace ctile::platform
