// Devices: where a tensor's storage lives and where a stream runs its work.
#pragma once

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

// The device that creation functions and default streams use when none is given. Reads the
// environment variable CTILE_BACKEND on every call: unset, empty or "cpu" gives cpu(); "cuda"
// throws UserError until a GPU backend exists (then it will force the GPU, and unset will prefer
// it when one is present); any other value throws UserError naming the accepted values.
[[nodiscard]] Device default_device();

}  // namespace ctile
