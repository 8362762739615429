// Devices: where a tensor's storage lives and where a stream runs its work.
#pragma once

#include <cstdint>
#include <string>

namespace ctile {

enum class DeviceKind { Cpu, Cuda };

struct Device {
  DeviceKind kind = DeviceKind::Cpu;
  int index = 0;
  // "cpu:0", "cuda:1".
  [[nodiscard]] std::string str() const;
  friend bool operator==(const Device&, const Device&) = default;
};

// The host CPU (the interpreter backend runs there).
[[nodiscard]] Device cpu();

// The device that creation functions, default streams and launches without a stream use when none
// is given. Reads the environment variable CTILE_BACKEND on every call:
//   unset or empty  cuda:0 when a usable GPU is present (see cuda_available()), otherwise cpu();
//                   the first fallback to the CPU says why on stderr, once (unless CTILE_QUIET=1)
//   "cpu"           cpu(), without looking for a GPU
//   "cuda"          cuda:0; throws UserError saying why when no GPU can be used
// Any other value throws UserError naming the accepted values.
[[nodiscard]] Device default_device();

// Whether the CUDA backend can be used: libcuda.so.1 loads (or $CTILE_LIBCUDA), cuInit succeeds and
// device 0 is sm_80 or newer. Probed once per process; never throws.
[[nodiscard]] bool cuda_available();
// Why the CUDA backend cannot be used ("no CUDA device is present ..."); empty when it can.
[[nodiscard]] std::string cuda_unavailable_reason();
// CUDA devices the driver reports (0 when the CUDA backend cannot be used).
[[nodiscard]] int cuda_device_count();
// Kernels the CUDA backend has launched on cuda:index in this process (successful cuLaunchKernel
// calls; race-checked launches run on the CPU interpreter and do not count). 0 for a device never
// used or out of range. The GPU test suites check that it grew, so they cannot pass on the CPU.
[[nodiscard]] std::uint64_t cuda_launch_count(int index = 0);

// The name of the backend that runs work on `d`: "cpu" (the interpreter) or "cuda".
[[nodiscard]] std::string backend_name(Device d);
// A one-line description: "cpu:0 (host, interpreter)" or
// "cuda:0 (NVIDIA H200, sm_90, 132 SMs, 140 GiB, driver 13.0)". Throws UserError for a CUDA device
// that cannot be used.
[[nodiscard]] std::string describe(Device d);
// What kernels of a library may size themselves by: the compute capability as sm (90 for sm_90)
// and the shared memory one CTA may use (with opt-in, bytes); 0 and 0 for the CPU. Throws
// UserError for a CUDA device that cannot be used.
struct DeviceLimits {
  int sm = 0;
  std::int64_t max_smem_per_block = 0;
};
[[nodiscard]] DeviceLimits device_limits(Device d);

}  // namespace ctile
