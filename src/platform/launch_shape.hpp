// A launch's grid and block when its front end chooses them per launch. Private to the library.
#pragma once

#include <cstdint>

namespace ctile::platform {

// The launch shape of a kernel whose front end chooses it per launch (SIMT kernels: a 3-D grid and
// block and dynamic shared memory), where a tile kernel's comes from its artifact and its tile
// blocks (NativeKernel::blocks_for). `block[0] == 0`: the kernel's own shape.
struct LaunchShape {
  std::uint32_t grid[3] = {1, 1, 1};
  std::uint32_t block[3] = {0, 1, 1};
  std::uint32_t smem = 0;
  [[nodiscard]] bool given() const { return block[0] != 0; }
};

}  // namespace ctile::platform
