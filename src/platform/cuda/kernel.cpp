#include "kernel.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>

#include "device.hpp"

namespace ctile::platform::cuda {

namespace {
constexpr int kMaxCountedDevices = 64;
std::array<std::atomic<std::uint64_t>, kMaxCountedDevices> g_kernel_launches{};
}  // namespace

std::uint64_t kernel_launches(int device) {
  if (device < 0 || device >= kMaxCountedDevices) return 0;
  return g_kernel_launches[static_cast<std::size_t>(device)].load(std::memory_order_relaxed);
}

void count_kernel_launches(int device, std::uint64_t n) noexcept {
  if (device >= 0 && device < kMaxCountedDevices)
    g_kernel_launches[static_cast<std::size_t>(device)].fetch_add(n, std::memory_order_relaxed);
}

CudaKernel::CudaKernel(int device, CUcontext ctx, CUmodule mod, CUfunction fn, int threads, std::size_t smem,
                       ParamLayout layout, std::int64_t max_blocks, int tile_blocks_per_block)
    : device_(device), ctx_(ctx), mod_(mod), fn_(fn), threads_(threads), smem_(smem), layout_(std::move(layout)),
      max_blocks_(max_blocks), per_block_(std::max(1, tile_blocks_per_block)) {}

CudaKernel::~CudaKernel() {
  try {
    ScopedContext scope(ctx_);
    (void)CTILE_CU_REPORT(cuModuleUnload, (mod_), "unloading a kernel's module on cuda:", device_);
  } catch (...) {
  }
}

void CudaKernel::write_tensor_maps(std::byte* block, std::size_t slot, const void* data, const std::int64_t* shape,
                                   const std::int64_t* strides, int rank) const {
  for (const TensorMapSlot& m : layout_.maps) {
    if (m.slot != slot) continue;
    const TensorMapEncoding e = tensor_map_encoding(m, data, shape, strides, rank);
    if (!e.error.empty())
      throw UserError(detail::cat("argument ", slot, " cannot be read through a TMA tensor map: ", e.error));
    std::byte* out = block + m.offset;
    std::memset(out, 0, kTensorMapBytes);
    if (e.empty) continue;  // no elements: every copy of the kernel lies outside the tensor
    if (!drv().cuTensorMapEncodeTiled)
      throw UserError(detail::cat("the CUDA driver (version ", drv().version, ") lacks cuTensorMapEncodeTiled, which "
                                  "this kernel's TMA copies need (compile it with the option tma = -1)"));
    const unsigned elem[5] = {1, 1, 1, 1, 1};
    TensorMapBytes map;  // the driver writes an aligned CUtensorMap
    static_assert(sizeof map == kTensorMapBytes);
    CTILE_CU(cuTensorMapEncodeTiled,
             (&map, static_cast<int>(e.data_type), e.rank, const_cast<void*>(data), e.dims, e.strides_bytes, e.box, elem, 0,
              static_cast<int>(e.swizzle), 3 /* L2 promotion of 256 bytes */, 0 /* out of bounds: zeros */),
             "encoding the TMA tensor map of argument ", slot, " (rank ", e.rank, ", ", e.dims[1], " rows of ", e.dims[0],
             ", boxes of ", e.box[1], "x", e.box[0], ")");
    std::memcpy(out, &map, kTensorMapBytes);
  }
}

LoadResult load_kernel(int device, const KernelArtifact& a, const std::string& name) {
  DeviceContext& dc = DeviceContext::get(device);
  ScopedContext scope(dc.ctx());
  LoadResult out;
  CUmodule mod = nullptr;
  if (const CUresult r = drv().cuModuleLoadData(&mod, a.image.data()); r != 0) {
    out.error = r;
    return out;
  }
  CUfunction fn = nullptr;
  const CUresult r = drv().cuModuleGetFunction(&fn, mod, a.entry.c_str());
  // From here the module belongs to the kernel object (its destructor unloads it).
  auto k = std::make_unique<CudaKernel>(device, dc.ctx(), mod, fn, a.threads, a.smem_bytes, a.params, 0,
                                        a.tile_blocks_per_block);
  if (r != 0) throw_cuda_error(r, "cuModuleGetFunction", detail::cat("finding entry ", a.entry, " of kernel '", name, "'"));
  k->set_programmatic(a.programmatic);
  if (a.smem_bytes > static_cast<std::size_t>(dc.info().smem_per_block))
    CTILE_CU(cuFuncSetAttribute, (fn, abi::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(a.smem_bytes)),
             "allowing ", a.smem_bytes, " bytes of dynamic shared memory for kernel '", name, "' on cuda:", device);
  int max_threads = 0;
  CTILE_CU(cuFuncGetAttribute, (&max_threads, abi::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn),
           "querying the block size limit of kernel '", name, "'");
  if (max_threads < a.threads) {
    int regs = 0;
    (void)drv().cuFuncGetAttribute(&regs, abi::CU_FUNC_ATTRIBUTE_NUM_REGS, fn);
    throw InternalError(detail::cat("cuda platform: kernel '", name, "' uses ", regs, " registers per thread, so at most ",
                                    max_threads, " threads per block can run, but it was compiled for ", a.threads));
  }
  // A kernel that loops over tile blocks with its loads pipelined runs as a resident grid: as many
  // blocks as fit on the device at once, each looping over tile blocks.
  if (a.resident_grid && drv().cuOccupancyMaxActiveBlocksPerMultiprocessor) {
    int per_sm = 0;
    CTILE_CU(cuOccupancyMaxActiveBlocksPerMultiprocessor, (&per_sm, fn, a.threads, a.smem_bytes),
             "querying the occupancy of kernel '", name, "' on cuda:", device);
    if (per_sm > 0) k->set_max_blocks(static_cast<std::int64_t>(per_sm) * dc.info().sm_count);
  }
  out.kernel = std::move(k);
  return out;
}

}  // namespace ctile::platform::cuda
