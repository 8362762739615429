// The CUDA driver API, loaded at run time (dlopen of libcuda.so.1), so ctile builds and runs where
// no driver is installed. cuda.h is never included: the types and the signatures of the functions
// ctile uses are declared here, ABI-compatible with cuda.h (tests/unit/cuda_runtime checks them
// against cuda.h when the toolkit is present at build time). Private to the library.
//
// Every driver call that can fail goes through CTILE_CU, which throws CudaError carrying the error
// name and description, the call, and what ctile was doing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "ctile/core/error.hpp"

// Opaque driver handles, in the global namespace with cuda.h's names so that the types are the same
// as cuda.h's when both are seen by one translation unit (the ABI test).
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;
struct CUmemPoolHandle_st;
struct CUgraph_st;
struct CUgraphNode_st;
struct CUgraphExec_st;
struct CUarray_st;
struct CUkern_st;

namespace ctile::platform::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = ::CUctx_st*;
using CUmodule = ::CUmod_st*;
using CUfunction = ::CUfunc_st*;
using CUstream = ::CUstream_st*;
using CUevent = ::CUevent_st*;
using CUmemoryPool = ::CUmemPoolHandle_st*;
using CUhostFn = void (*)(void*);
using CUgraph = ::CUgraph_st*;
using CUgraphNode = ::CUgraphNode_st*;
using CUgraphExec = ::CUgraphExec_st*;
using CUarray = ::CUarray_st*;
using CUkernel = ::CUkern_st*;

// Graph node parameters, laid out as cuda.h's (the ABI test checks sizes and offsets).
struct KernelNodeParams {  // CUDA_KERNEL_NODE_PARAMS_v2
  CUfunction func;
  unsigned int gridDimX, gridDimY, gridDimZ;
  unsigned int blockDimX, blockDimY, blockDimZ;
  unsigned int sharedMemBytes;
  void** kernelParams;
  void** extra;
  CUkernel kern;
  CUcontext ctx;
};
struct alignas(128) TensorMapBytes {  // CUtensorMap (cuda.h aligns it to 128 bytes; a kernel parameter needs 64)
  std::uint64_t opaque[16];
};
struct GraphEdgeData {  // CUgraphEdgeData: what an edge of a graph waits for
  unsigned char from_port;    // of the upstream node: 0 its completion, CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC ...
  unsigned char to_port;      // 0
  unsigned char type;         // CU_GRAPH_DEPENDENCY_TYPE_DEFAULT or _PROGRAMMATIC
  unsigned char reserved[5];  // zeros
};
struct HostNodeParams {  // CUDA_HOST_NODE_PARAMS
  CUhostFn fn;
  void* userData;
};
struct Memcpy3D {  // CUDA_MEMCPY3D
  std::size_t srcXInBytes, srcY, srcZ, srcLOD;
  int srcMemoryType;
  const void* srcHost;
  CUdeviceptr srcDevice;
  CUarray srcArray;
  void* reserved0;
  std::size_t srcPitch, srcHeight;
  std::size_t dstXInBytes, dstY, dstZ, dstLOD;
  int dstMemoryType;
  void* dstHost;
  CUdeviceptr dstDevice;
  CUarray dstArray;
  void* reserved1;
  std::size_t dstPitch, dstHeight;
  std::size_t WidthInBytes, Height, Depth;
};

// The values ctile uses, as in cuda.h (checked by the ABI test).
namespace abi {
inline constexpr CUresult CUDA_SUCCESS = 0;
inline constexpr CUresult CUDA_ERROR_INVALID_VALUE = 1;
inline constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
inline constexpr CUresult CUDA_ERROR_NOT_INITIALIZED = 3;
inline constexpr CUresult CUDA_ERROR_DEINITIALIZED = 4;
inline constexpr CUresult CUDA_ERROR_STUB_LIBRARY = 34;
inline constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
inline constexpr CUresult CUDA_ERROR_INVALID_DEVICE = 101;
inline constexpr CUresult CUDA_ERROR_INVALID_CONTEXT = 201;
inline constexpr CUresult CUDA_ERROR_INVALID_HANDLE = 400;
inline constexpr CUresult CUDA_ERROR_NOT_READY = 600;
inline constexpr CUresult CUDA_ERROR_ILLEGAL_ADDRESS = 700;
inline constexpr CUresult CUDA_ERROR_LAUNCH_FAILED = 719;

inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8;
inline constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;
inline constexpr int CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 115;

inline constexpr int CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0;
inline constexpr int CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1;
inline constexpr int CU_FUNC_ATTRIBUTE_NUM_REGS = 4;
inline constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;

inline constexpr int CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = 4;

inline constexpr unsigned CU_STREAM_NON_BLOCKING = 0x1;
inline constexpr unsigned CU_EVENT_DISABLE_TIMING = 0x2;
inline constexpr unsigned CU_EVENT_WAIT_DEFAULT = 0x0;
inline constexpr int CU_MEMORYTYPE_DEVICE = 0x2;
inline constexpr int CU_GRAPH_DEPENDENCY_TYPE_DEFAULT = 0;
inline constexpr int CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC = 1;
inline constexpr int kGraphKernelNodePortProgrammatic = 1;  // cuda.h: the macro CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC
}  // namespace abi

// X(exported symbol, required, parameter list). The symbol names are the versioned entry points
// that cuda.h's macros select (cuMemAlloc -> cuMemAlloc_v2, cuStreamDestroy -> cuStreamDestroy_v2,
// ...), never the legacy unversioned ones, and never the _ptds/_ptsz per-thread-stream variants.
// Optional entries may be missing from old drivers (stream-ordered allocation needs CUDA 11.2, the
// graph entry points with these names CUDA 12).
#define CTILE_CUDA_DRIVER_FUNCTIONS(X)                                                                               \
  X(cuInit, true, (unsigned int flags))                                                                              \
  X(cuDriverGetVersion, true, (int* version))                                                                        \
  X(cuGetErrorName, true, (CUresult error, const char** str))                                                        \
  X(cuGetErrorString, true, (CUresult error, const char** str))                                                      \
  X(cuDeviceGetCount, true, (int* count))                                                                            \
  X(cuDeviceGet, true, (CUdevice * device, int ordinal))                                                             \
  X(cuDeviceGetAttribute, true, (int* value, int attrib, CUdevice dev))                                              \
  X(cuDeviceGetName, true, (char* name, int len, CUdevice dev))                                                      \
  X(cuDeviceTotalMem_v2, true, (std::size_t * bytes, CUdevice dev))                                                  \
  X(cuDevicePrimaryCtxRetain, true, (CUcontext * ctx, CUdevice dev))                                                 \
  X(cuDevicePrimaryCtxRelease_v2, true, (CUdevice dev))                                                              \
  X(cuCtxGetCurrent, true, (CUcontext * ctx))                                                                        \
  X(cuCtxPushCurrent_v2, true, (CUcontext ctx))                                                                      \
  X(cuCtxPopCurrent_v2, true, (CUcontext * ctx))                                                                     \
  X(cuCtxSetCurrent, true, (CUcontext ctx))                                                                          \
  X(cuStreamCreate, true, (CUstream * stream, unsigned int flags))                                                   \
  X(cuStreamDestroy_v2, true, (CUstream stream))                                                                     \
  X(cuStreamSynchronize, true, (CUstream stream))                                                                    \
  X(cuStreamWaitEvent, true, (CUstream stream, CUevent event, unsigned int flags))                                   \
  X(cuEventCreate, true, (CUevent * event, unsigned int flags))                                                      \
  X(cuEventRecord, true, (CUevent event, CUstream stream))                                                           \
  X(cuEventQuery, true, (CUevent event))                                                                             \
  X(cuEventSynchronize, true, (CUevent event))                                                                       \
  X(cuEventDestroy_v2, true, (CUevent event))                                                                        \
  X(cuMemAlloc_v2, true, (CUdeviceptr * ptr, std::size_t bytes))                                                     \
  X(cuMemFree_v2, true, (CUdeviceptr ptr))                                                                           \
  X(cuMemAllocAsync, false, (CUdeviceptr * ptr, std::size_t bytes, CUstream stream))                                 \
  X(cuMemFreeAsync, false, (CUdeviceptr ptr, CUstream stream))                                                       \
  X(cuDeviceGetDefaultMemPool, false, (CUmemoryPool * pool, CUdevice dev))                                           \
  X(cuMemPoolSetAttribute, false, (CUmemoryPool pool, int attr, void* value))                                        \
  X(cuMemHostAlloc, true, (void** ptr, std::size_t bytes, unsigned int flags))                                       \
  X(cuStreamWriteValue64_v2, false, (CUstream stream, CUdeviceptr addr, std::uint64_t value, unsigned int flags))     \
  X(cuMemFreeHost, true, (void* ptr))                                                                                \
  X(cuMemsetD8Async, true, (CUdeviceptr dst, unsigned char value, std::size_t count, CUstream stream))               \
  X(cuMemcpyHtoDAsync_v2, true, (CUdeviceptr dst, const void* src, std::size_t bytes, CUstream stream))              \
  X(cuMemcpyDtoHAsync_v2, true, (void* dst, CUdeviceptr src, std::size_t bytes, CUstream stream))                    \
  X(cuMemcpyDtoDAsync_v2, true, (CUdeviceptr dst, CUdeviceptr src, std::size_t bytes, CUstream stream))              \
  X(cuMemcpyPeerAsync, true,                                                                                         \
    (CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx, std::size_t bytes, CUstream stream))    \
  X(cuModuleLoadData, true, (CUmodule * module, const void* image))                                                  \
  X(cuModuleUnload, true, (CUmodule module))                                                                         \
  X(cuModuleGetFunction, true, (CUfunction * fn, CUmodule module, const char* name))                                 \
  X(cuFuncGetAttribute, true, (int* value, int attrib, CUfunction fn))                                               \
  X(cuFuncSetAttribute, true, (CUfunction fn, int attrib, int value))                                                \
  X(cuLaunchKernel, true,                                                                                            \
    (CUfunction fn, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z, unsigned int block_x,             \
     unsigned int block_y, unsigned int block_z, unsigned int smem_bytes, CUstream stream, void** params,            \
     void** extra))                                                                                                  \
  X(cuEventElapsedTime, false, (float* ms, CUevent start, CUevent end))                                              \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor, false,                                                             \
    (int* num_blocks, CUfunction fn, int block_size, std::size_t dynamic_smem_bytes))                                \
  X(cuLaunchHostFunc, false, (CUstream stream, CUhostFn fn, void* user_data))                                        \
  X(cuGraphCreate, false, (CUgraph * graph, unsigned int flags))                                                     \
  X(cuGraphDestroy, false, (CUgraph graph))                                                                          \
  X(cuGraphAddKernelNode_v2, false,                                                                                  \
    (CUgraphNode * node, CUgraph graph, const CUgraphNode* deps, std::size_t ndeps, const KernelNodeParams* params))  \
  X(cuGraphAddMemcpyNode, false,                                                                                     \
    (CUgraphNode * node, CUgraph graph, const CUgraphNode* deps, std::size_t ndeps, const Memcpy3D* copy,            \
     CUcontext ctx))                                                                                                 \
  X(cuGraphAddHostNode, false,                                                                                       \
    (CUgraphNode * node, CUgraph graph, const CUgraphNode* deps, std::size_t ndeps, const HostNodeParams* params))    \
  X(cuGraphAddEmptyNode, false, (CUgraphNode * node, CUgraph graph, const CUgraphNode* deps, std::size_t ndeps))      \
  X(cuGraphAddDependencies_v2, false,                                                                                \
    (CUgraph graph, const CUgraphNode* from, const CUgraphNode* to, const GraphEdgeData* edges, std::size_t n))      \
  X(cuGraphInstantiateWithFlags, false, (CUgraphExec * exec, CUgraph graph, unsigned long long flags))               \
  X(cuGraphLaunch, false, (CUgraphExec exec, CUstream stream))                                                       \
  X(cuGraphExecDestroy, false, (CUgraphExec exec))                                                                   \
  X(cuGraphExecKernelNodeSetParams_v2, false, (CUgraphExec exec, CUgraphNode node, const KernelNodeParams* params)) \
  X(cuGraphKernelNodeSetParams_v2, false, (CUgraphNode node, const KernelNodeParams* params))                       \
  X(cuTensorMapEncodeTiled, false,                                                                                   \
    (TensorMapBytes * map, int data_type, unsigned int rank, void* address, const std::uint64_t* dims,                          \
     const std::uint64_t* strides, const unsigned int* box, const unsigned int* element_strides, int interleave,      \
     int swizzle, int l2_promotion, int oob_fill))

// The resolved entry points. Optional ones are null when the driver lacks them.
struct Driver {
#define CTILE_CUDA_DECLARE(name, required, params) CUresult(*name) params = nullptr;
  CTILE_CUDA_DRIVER_FUNCTIONS(CTILE_CUDA_DECLARE)
#undef CTILE_CUDA_DECLARE
  void* handle = nullptr;  // dlopen handle; never closed (function pointers stay valid until exit)
  int version = 0;         // cuDriverGetVersion: 13000 for CUDA 13.0
};

// What the one-time probe found. Never changes after the first call.
struct DriverStatus {
  const Driver* api = nullptr;  // null: the CUDA backend cannot be used (see reason)
  int device_count = 0;         // usable devices (0 when api is null)
  std::string library;          // the library dlopen was given
  std::string reason;           // why the GPU cannot be used; empty when it can
};

// Loads libcuda.so.1 (or $CTILE_LIBCUDA), calls cuInit and looks for a usable device (sm_80 or
// newer), once per process; thread-safe; never throws. Device 0 must be usable for the CUDA backend
// to be available; devices are numbered as the driver numbers them (CUDA_VISIBLE_DEVICES applies).
const DriverStatus& driver_status();
// The driver; throws UserError (naming the reason) when it cannot be used.
const Driver& drv();

// A failed driver call.
class CudaError : public Error {
 public:
  CudaError(CUresult code, std::string name, std::string description, std::string call, std::string doing);
  [[nodiscard]] CUresult code() const { return code_; }
  [[nodiscard]] const std::string& error_name() const { return name_; }  // "CUDA_ERROR_OUT_OF_MEMORY"
  [[nodiscard]] const std::string& call() const { return call_; }        // "cuMemAllocAsync"
  [[nodiscard]] const std::string& doing() const { return doing_; }      // "allocating 4096 bytes for ..."

 private:
  CUresult code_;
  std::string name_, call_, doing_;
};

// "CUDA_ERROR_OUT_OF_MEMORY" and "out of memory" for `r`: from the driver when it is loaded,
// otherwise from a built-in table of the common codes ("CUDA error 12345" when unknown).
std::string error_name(CUresult r);
std::string error_description(CUresult r);
// The message CudaError carries: "CUDA_ERROR_OUT_OF_MEMORY (out of memory) in cuMemAllocAsync while
// allocating 4096 bytes for a tensor on cuda:0".
std::string format_error(CUresult r, std::string_view call, std::string_view doing);
[[noreturn]] void throw_cuda_error(CUresult r, const char* call, std::string doing);
// For destructors and other no-throw paths: reports a failed call on stderr (at most a few times per
// process, never for CUDA_ERROR_DEINITIALIZED: the driver is shutting down at exit).
void report_error(CUresult r, const char* call, std::string_view doing) noexcept;

// The context ctile made current on this thread with cuCtxSetCurrent, or null: a cache, so that the
// launch path asks the driver nothing when it is already right.
extern thread_local CUcontext t_current_context;
// Forgets the cache (after a call failed in a way that says the current context is not ours).
inline void forget_current_context() { t_current_context = nullptr; }

// Makes `ctx` current on this thread for the scope. A thread without a current context gets `ctx`
// for good (cuCtxSetCurrent; later scopes cost nothing); a thread with another context current gets
// `ctx` pushed for the scope and popped after it.
class ScopedContext {
 public:
  explicit ScopedContext(CUcontext ctx) {
    if (t_current_context != ctx) enter(ctx);
  }
  ~ScopedContext() {
    if (pushed_) leave();
  }
  ScopedContext(const ScopedContext&) = delete;
  ScopedContext& operator=(const ScopedContext&) = delete;

 private:
  void enter(CUcontext ctx);
  void leave() noexcept;
  bool pushed_ = false;
};

// True when CTILE_QUIET is set to something other than "" or "0".
bool quiet();

}  // namespace ctile::platform::cuda

// CTILE_CU(cuFn, (args...), what ctile was doing...): calls the driver and throws CudaError on
// failure; the description is only built on failure.
#define CTILE_CU(fn, args, ...)                                                                    \
  do {                                                                                             \
    const ::ctile::platform::cuda::CUresult ctile_cu_r_ = ::ctile::platform::cuda::drv().fn args;   \
    if (ctile_cu_r_ != 0) ::ctile::platform::cuda::throw_cuda_error(ctile_cu_r_, #fn, ::ctile::detail::cat(__VA_ARGS__)); \
  } while (0)

// The same for no-throw paths (destructors, teardown): reports instead of throwing; evaluates to
// true on success.
#define CTILE_CU_REPORT(fn, args, ...)                                                             \
  [&]() noexcept {                                                                                 \
    const ::ctile::platform::cuda::CUresult ctile_cu_r_ = ::ctile::platform::cuda::drv_unchecked().fn args; \
    if (ctile_cu_r_ == 0) return true;                                                             \
    try {                                                                                          \
      ::ctile::platform::cuda::report_error(ctile_cu_r_, #fn, ::ctile::detail::cat(__VA_ARGS__));  \
    } catch (...) {                                                                                \
    }                                                                                              \
    return false;                                                                                  \
  }()

namespace ctile::platform::cuda {
// The driver without the availability check, for paths that only run after it succeeded.
inline const Driver& drv_unchecked() { return *driver_status().api; }
}  // namespace ctile::platform::cuda
