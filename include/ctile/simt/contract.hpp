// Launch contracts of SIMT kernels and the device limits they are checked against (host only).
//
// A contract is part of a kernel's definition (CTILE_SIMT_KERNEL): the block shape, the dynamic
// shared memory per block, the minimum compute capability, and an occupancy hint.
//
//   Contract().block(256).dynamic_shared(8 * sizeof(float)).min_compute_capability(8, 0)
//
// The block shape is fixed: the GPU code is compiled for it (.reqntid), and prepare() launches
// exactly that block. prepare() checks the whole launch against the device's limits, with
// overflow-checked arithmetic, before anything is enqueued (validate_launch below; the same
// function the tests call with fake limits).
#pragma once

#include <cstdint>
#include <string>

#include "ctile/runtime/device.hpp"

namespace ctile::simt {

// Extents of a block or a grid (x fastest).
struct Dims {
  std::int64_t x = 1, y = 1, z = 1;
  friend bool operator==(const Dims&, const Dims&) = default;
  [[nodiscard]] std::string str() const;  // "256x1x1"
};

class Contract {
 public:
  constexpr Contract() = default;
  // Threads per block along x, y, z (the only block the kernel runs with).
  [[nodiscard]] constexpr Contract block(std::int64_t x, std::int64_t y = 1, std::int64_t z = 1) const {
    Contract c = *this;
    c.block_ = Dims{x, y, z};
    c.has_block_ = true;
    return c;
  }
  // Bytes of dynamic shared memory per block (dynamic_shared<T>(unchecked) in the kernel).
  [[nodiscard]] constexpr Contract dynamic_shared(std::int64_t bytes) const {
    Contract c = *this;
    c.dyn_smem_ = bytes;
    return c;
  }
  // The oldest GPU the kernel may run on (compute capability major.minor, e.g. 8.0 or 9.0).
  [[nodiscard]] constexpr Contract min_compute_capability(int major, int minor = 0) const {
    Contract c = *this;
    c.min_cc_ = major * 10 + minor;
    return c;
  }
  // __launch_bounds__'s second value: blocks the compiler should fit on one SM at once.
  [[nodiscard]] constexpr Contract min_blocks_per_sm(int n) const {
    Contract c = *this;
    c.min_blocks_ = n;
    return c;
  }

  [[nodiscard]] constexpr bool has_block() const { return has_block_; }
  [[nodiscard]] constexpr const Dims& block_dims() const { return block_; }
  [[nodiscard]] constexpr std::int64_t dynamic_shared_bytes() const { return dyn_smem_; }
  [[nodiscard]] constexpr int min_cc() const { return min_cc_; }
  [[nodiscard]] constexpr int min_blocks() const { return min_blocks_; }

 private:
  Dims block_{};
  bool has_block_ = false;
  std::int64_t dyn_smem_ = 0;
  int min_cc_ = 0;
  int min_blocks_ = 0;
};

// What a device accepts. limits_of(cuda:i) reads the GPU's attributes; limits_of(cpu()) gives the
// CPU backend's, which are those of an sm_90 GPU (so a launch that passes on the CPU passes on an
// H100/H200 too). Tests build their own.
struct DeviceLimits {
  std::string device = "cpu:0";        // for messages
  int compute_capability = 90;         // major * 10 + minor
  std::int64_t max_threads_per_block = 1024;
  Dims max_block{1024, 1024, 64};
  Dims max_grid{2147483647, 65535, 65535};
  std::int64_t max_shared_per_block = 48 * 1024;        // without opting in
  std::int64_t max_shared_per_block_optin = 227 * 1024;  // with cuFuncSetAttribute (what the launch uses)
  int warp_size = 32;
  int multiprocessors = 132;  // SMs (on the CPU: its hardware threads); for sizing grid-stride grids
};
[[nodiscard]] DeviceLimits limits_of(Device d);

// The grid of a launch: blocks per axis, or the threads it must cover (rounded up to whole
// blocks of the contract's shape).
struct GridSpec {
  enum class Kind { Blocks, Cover };
  Kind kind = Kind::Blocks;
  Dims extent;
};
// `x` (by `y` by `z`) blocks.
[[nodiscard]] inline GridSpec grid(std::int64_t x, std::int64_t y = 1, std::int64_t z = 1) {
  return GridSpec{GridSpec::Kind::Blocks, Dims{x, y, z}};
}
// Enough blocks for x (by y by z) threads: ceil(x / block.x) ...
[[nodiscard]] inline GridSpec cover(std::int64_t x, std::int64_t y = 1, std::int64_t z = 1) {
  return GridSpec{GridSpec::Kind::Cover, Dims{x, y, z}};
}
// Enough blocks for a rows x cols matrix with index_2d(): x covers the columns, y the rows.
[[nodiscard]] inline GridSpec cover_2d(std::int64_t rows, std::int64_t cols) { return cover(cols, rows, 1); }

// A checked launch shape.
struct LaunchDims {
  Dims grid, block;
  std::int64_t dynamic_shared = 0;
  std::int64_t threads = 0;  // in the whole grid
};

// Checks `grid` and `contract` against `limits` and returns the launch shape. Throws UserError
// ("<what>: ...", what = "prepare of SIMT kernel 'k' (file:line)") for: no block shape; a block
// extent below 1 or above the device's, more threads per block than it allows; a grid extent
// below 1 (an empty grid: nothing to launch) or above the device's; a thread count that overflows
// 64 bits; dynamic shared memory below 0 or above the opt-in limit; a device older than the
// minimum compute capability.
[[nodiscard]] LaunchDims validate_launch(const std::string& what, const Contract& contract, const DeviceLimits& limits,
                                         const GridSpec& grid);

}  // namespace ctile::simt
