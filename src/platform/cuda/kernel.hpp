// Kernels loaded on a CUDA device from a compiler's artifact (src/platform/kernel.hpp), launched
// by CUDA streams (Command::Kind::Kernel) and graphs. Private to the library.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "../kernel.hpp"
#include "driver.hpp"

namespace ctile::platform::cuda {

// The CUDA blocks a launch of `tile_blocks` tile blocks uses: one per `per_block` tile blocks
// (rounded up), at most `max_blocks` when that is positive (a resident grid).
[[nodiscard]] constexpr std::int64_t blocks_for_grid(std::int64_t tile_blocks, std::int64_t per_block, std::int64_t max_blocks) {
  const std::int64_t b = (tile_blocks + per_block - 1) / per_block;
  return max_blocks > 0 && b > max_blocks ? max_blocks : b;
}

class CudaKernel final : public NativeKernel {
 public:
  CudaKernel(int device, CUcontext ctx, CUmodule mod, CUfunction fn, int threads, std::size_t smem, ParamLayout layout,
             std::int64_t max_blocks, int tile_blocks_per_block = 1);
  ~CudaKernel() override;  // unloads the module
  CudaKernel(const CudaKernel&) = delete;
  CudaKernel& operator=(const CudaKernel&) = delete;

  Device device() const override { return Device{DeviceKind::Cuda, device_}; }
  const ParamLayout& layout() const override { return layout_; }
  std::int64_t blocks_for(std::int64_t tile_blocks) const override {
    return blocks_for_grid(tile_blocks, per_block_, max_blocks_);
  }
  // cuTensorMapEncodeTiled for each map over slot `slot` (kernel.hpp's NativeKernel).
  void write_tensor_maps(std::byte* block, std::size_t slot, const void* data, const std::int64_t* shape,
                         const std::int64_t* strides, int rank) const override;
  [[nodiscard]] int device_index() const { return device_; }
  [[nodiscard]] CUfunction fn() const { return fn_; }
  [[nodiscard]] unsigned threads() const { return static_cast<unsigned>(threads_); }
  [[nodiscard]] unsigned smem() const { return static_cast<unsigned>(smem_); }
  [[nodiscard]] std::int64_t max_blocks() const { return max_blocks_; }
  // KernelArtifact::programmatic: a graph may launch it before the kernel nodes it depends on finish.
  [[nodiscard]] bool programmatic() const { return programmatic_; }
  // Only while loading (load_kernel): the resident-grid block count, the programmatic flag.
  void set_max_blocks(std::int64_t n) { max_blocks_ = n; }
  void set_programmatic(bool p) { programmatic_ = p; }

 private:
  int device_;
  CUcontext ctx_;
  CUmodule mod_;
  CUfunction fn_;
  int threads_;
  std::size_t smem_;
  ParamLayout layout_;
  std::int64_t max_blocks_;  // 0: one CUDA block per tile_blocks_per_block tile blocks
  std::int64_t per_block_;   // KernelArtifact::tile_blocks_per_block (>= 1)
  bool programmatic_ = false;
};

// Kernels the CUDA platform has launched on cuda:device: successful cuLaunchKernel calls and the
// kernel nodes of each successful cuGraphLaunch (0 for an index out of range). The GPU suite uses
// the count (through ctile's public launch counter) to prove that a test's kernels ran on the GPU.
[[nodiscard]] std::uint64_t kernel_launches(int device);
// Counts `n` more launched kernels on cuda:device (the streams and graphs call this).
void count_kernel_launches(int device, std::uint64_t n) noexcept;

struct LoadResult {
  std::unique_ptr<CudaKernel> kernel;  // null when the driver rejected the image
  CUresult error = 0;                  // cuModuleLoadData's error then
};

// Loads `a` on cuda:device: cuModuleLoadData, cuModuleGetFunction, the dynamic shared memory
// opt-in above the default limit, a check that the kernel's register use allows its block size, and
// for a resident grid the number of blocks that fit on the device at once. An image the driver
// rejects comes back as LoadResult::error (a caller with a cached image evicts it and compiles
// again); every other failure throws (`name` is the kernel's, for messages).
[[nodiscard]] LoadResult load_kernel(int device, const KernelArtifact& a, const std::string& name);

}  // namespace ctile::platform::cuda
