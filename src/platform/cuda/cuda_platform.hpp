// The CUDA platform of cuda:index (created on first use, never destroyed). Private to the library.
#pragma once

#include "../platform.hpp"

namespace ctile::platform::cuda {

// Throws UserError when the device does not exist or cannot be used.
[[nodiscard]] DevicePlatform& platform(int index);

}  // namespace ctile::platform::cuda
