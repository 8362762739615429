// What a compiler hands the platform, and what the platform launches: the contract between a
// kernel compiler (src/backend/cuda today, src/compiler/cuda later) and the platforms. Private to
// the library; docs/cuda_runtime.md ("Compiled artifacts") describes it.
//
// A compiled kernel takes its launch arguments as one parameter block of `ParamLayout::bytes`
// bytes, passed by value as the kernel's single parameter. The runtime writes that block directly
// (write_grid, write_tensor, write_scalar) from the launch's arguments; nothing else packs it. A
// platform loads the artifact's image once (load_kernel) and launches from a block.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ctile/core/dtype.hpp"
#include "ctile/core/shape.hpp"
#include "ctile/ir/ir.hpp"
#include "ctile/runtime/device.hpp"
#include "launch_shape.hpp"

namespace ctile::platform {

// One kernel parameter's place in the parameter block.
struct ParamSlot {
  enum class Kind : std::uint8_t { Tensor, Scalar };
  Kind kind = Kind::Tensor;
  DType dtype = DType::f32;
  std::uint8_t rank = 0;
  std::uint32_t offset = 0;  // bytes from the start of the block
};

// How a kernel takes its arguments. Tensor slot at `offset`: void* data (+0), int64 shape[6] (+8),
// int64 stride[6] (+56), 104 bytes, axes past the rank extent 1 and stride 0. Scalar slot: 8 bytes,
// the value's bit pattern in the low bytes (bool 0/1, f16/bf16/fp8 bits, f32/f64 bits, integers
// zero-extended from their width). Grid: 6 x int64 tile blocks per axis at `grid_offset` (axes past
// the grid rank 1).
struct ParamLayout;

// A TMA tensor map (CUtensorMap, 128 bytes at a 64-byte aligned offset) of the block: the kernel
// copies boxes of `box_rows` x `box_cols` elements (extent 1 along the leading axes) of the tensor
// of rank `rank` (2 to 5) of slot `slot` into shared memory with the given swizzle (32, 64 or 128
// bytes). The platform encodes it at launch from the tensor's data, shape and strides
// (write_tensor_arg).
struct TensorMapSlot {
  std::uint32_t slot = 0;    // the tensor's index in ParamLayout::slots
  std::uint32_t offset = 0;  // bytes from the start of the block, a multiple of 64
  DType dtype = DType::bf16;
  std::uint32_t rank = 2;
  std::uint32_t box_rows = 0, box_cols = 0;
  std::uint32_t swizzle = 128;
  friend bool operator==(const TensorMapSlot&, const TensorMapSlot&) = default;
};

struct ParamLayout {
  std::uint32_t bytes = 0;
  std::uint32_t grid_offset = 0;
  std::vector<ParamSlot> slots;  // one per ir::Kernel::params entry, in that order
  std::vector<TensorMapSlot> maps;  // none unless the kernel copies tiles with TMA
};

inline constexpr std::size_t kTensorSlotBytes = 104;
inline constexpr std::size_t kTensorMapBytes = 128;
inline constexpr std::size_t kTensorMapAlign = 64;
// TMA coordinates are 32-bit: a tensor map covers tensors whose extents are at most this
// (the device clamps a tile's origin into [-kTensorMapMaxExtent, kTensorMapMaxExtent], so a tile
// index far outside the tensor still reads only padding).
inline constexpr std::int64_t kTensorMapMaxExtent = std::int64_t{1} << 30;

// The arguments of cuTensorMapEncodeTiled for map `m` over a tensor (ABI values of cuda.h's enums),
// or why the tensor cannot be described by one (`error` non-empty: a user-facing reason).
struct TensorMapEncoding {
  std::uint32_t data_type = 0;        // CUtensorMapDataType
  std::uint32_t rank = 2;
  std::uint64_t dims[5] = {};         // innermost first: columns, rows, then the leading axes inward out
  std::uint64_t strides_bytes[4] = {};  // of dims 1 .. rank - 1 (the rows' first)
  std::uint32_t box[5] = {};          // columns, rows, then 1 per leading axis
  std::uint32_t swizzle = 0;          // CUtensorMapSwizzle
  bool empty = false;                 // an extent is 0: the kernel never reads the map (no encoding)
  std::string error;
};
TensorMapEncoding tensor_map_encoding(const TensorMapSlot& m, const void* data, const std::int64_t* shape,
                                      const std::int64_t* strides, int rank);

// The compiler's output for one specialisation on one target: everything a platform needs to load
// and launch it.
struct KernelArtifact {
  std::string image;            // the loadable image (a cubin for the CUDA platform)
  std::string entry;            // the kernel's symbol in the image
  int threads = 0;              // threads per block (a 1-D block)
  std::size_t smem_bytes = 0;   // dynamic shared memory per block
  // The kernel loops over tile blocks from its block id in steps of the block count, so any block
  // count >= 1 covers the grid; a resident grid launches only as many blocks as fit on the device.
  bool resident_grid = false;
  // Tile blocks one block runs side by side (the generated kernel's teams): a grid of n tile
  // blocks launches ceil(n / tile_blocks_per_block) blocks.
  int tile_blocks_per_block = 1;
  // The kernel waits for the grid it depends on before its first global memory access
  // (griddepcontrol.wait, sm_90): a graph may give it programmatic dependencies on kernel nodes.
  bool programmatic = false;
  ParamLayout params;
};

// A kernel loaded on a device by its platform. Immutable after loading; launched through the
// platform's streams (Command::Kind::Kernel) and graphs.
class NativeKernel {
 public:
  virtual ~NativeKernel() = default;
  [[nodiscard]] virtual Device device() const = 0;
  [[nodiscard]] virtual const ParamLayout& layout() const = 0;
  // The CUDA blocks launched for `tile_blocks` tile blocks (the resident-grid cap applied).
  [[nodiscard]] virtual std::int64_t blocks_for(std::int64_t tile_blocks) const = 0;
  // Encodes the tensor maps of layout().maps that describe the tensor of slot `slot` into `block`
  // (only called when there are maps). Throws UserError when the tensor cannot be described (an
  // extent past kTensorMapMaxExtent, a misaligned view) and CudaError when the driver refuses.
  virtual void write_tensor_maps(std::byte* block, std::size_t slot, const void* data, const std::int64_t* shape,
                                 const std::int64_t* strides, int rank) const;
};

// A compiled kernel that a platform can launch natively (implemented by a backend's compiled kernel
// next to backend::CompiledKernel).
class HasNativeKernel {
 public:
  virtual ~HasNativeKernel() = default;
  [[nodiscard]] virtual const NativeKernel& native() const = 0;
};

// ---- writing a parameter block ----------------------------------------------------------------

inline void write_grid(std::byte* block, const ParamLayout& l, const std::int64_t* grid, int rank) {
  std::int64_t g[6] = {1, 1, 1, 1, 1, 1};
  for (int d = 0; d < rank; ++d) g[d] = grid[d];
  std::memcpy(block + l.grid_offset, g, sizeof g);
}

inline void write_tensor(std::byte* block, const ParamSlot& s, const void* data, const std::int64_t* shape,
                         const std::int64_t* strides, int rank) {
  struct Desc {
    const void* data;
    std::int64_t shape[6];
    std::int64_t stride[6];
  } d{data, {1, 1, 1, 1, 1, 1}, {0, 0, 0, 0, 0, 0}};
  static_assert(sizeof(Desc) == kTensorSlotBytes);
  for (int i = 0; i < rank; ++i) {
    d.shape[i] = shape[i];
    d.stride[i] = strides[i];
  }
  std::memcpy(block + s.offset, &d, sizeof d);
}

// A tensor argument of native kernel `k`: its descriptor, then the tensor maps over it.
inline void write_tensor_arg(const NativeKernel& k, std::byte* block, std::size_t slot, const void* data,
                             const std::int64_t* shape, const std::int64_t* strides, int rank) {
  const ParamLayout& l = k.layout();
  write_tensor(block, l.slots[slot], data, shape, strides, rank);
  if (!l.maps.empty()) k.write_tensor_maps(block, slot, data, shape, strides, rank);
}

inline void write_data_pointer(std::byte* block, const ParamSlot& s, const void* data) {
  std::memcpy(block + s.offset, &data, sizeof data);
}

// The 8-byte bit pattern of scalar `v` (already cast to `dtype`, ir::scalar_cast) in a slot.
std::uint64_t scalar_bits(const ir::Scalar& v, DType dtype);

inline void write_scalar(std::byte* block, const ParamSlot& s, const ir::Scalar& v) {
  const std::uint64_t w = scalar_bits(v, s.dtype);
  std::memcpy(block + s.offset, &w, sizeof w);
}

}  // namespace ctile::platform
