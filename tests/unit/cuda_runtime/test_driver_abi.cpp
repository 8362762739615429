// Compile-time check of the driver declarations in src/platform/cuda/driver.hpp against the real
// cuda.h: every entry point ctile resolves exists under that exact (versioned) name with the same
// signature (enums compared as the int they are passed as), and every constant has cuda.h's value.
// Built only when cuda.h is found at configure time; running it just reports success.
#include <cuda.h>

#include <cstddef>
#include <cstdio>
#include <type_traits>

#include "../../../src/platform/cuda/driver.hpp"

namespace {

namespace cu = ctile::platform::cuda;

// Enums travel as 4-byte integers: compare them as int.
template <class T>
struct norm {
  using type = T;
};
template <class T>
  requires std::is_enum_v<T>
struct norm<T> {
  using type = int;
};
template <>
struct norm<unsigned int> {  // cuda.h's unsigned flags stay unsigned; only enums are normalised
  using type = unsigned int;
};

// ctile's own copies of cuda.h's graph node structs travel as pointers to cuda.h's structs (their
// layouts are checked field by field below).
template <>
struct norm<const cu::KernelNodeParams*> {
  using type = const ::CUDA_KERNEL_NODE_PARAMS*;
};
template <>
struct norm<const cu::HostNodeParams*> {
  using type = const ::CUDA_HOST_NODE_PARAMS*;
};
template <>
struct norm<const cu::GraphEdgeData*> {
  using type = const ::CUgraphEdgeData*;
};
template <>
struct norm<cu::TensorMapBytes*> {
  using type = ::CUtensorMap*;
};
template <>
struct norm<const cu::Memcpy3D*> {
  using type = const ::CUDA_MEMCPY3D*;
};

template <class F>
struct sig;
template <class R, class... A>
struct sig<R (*)(A...)> {
  using type = typename norm<R>::type (*)(typename norm<A>::type...);
};

static_assert(sizeof(CUresult) == sizeof(cu::CUresult));
static_assert(std::is_same_v<CUdeviceptr, cu::CUdeviceptr>);
static_assert(std::is_same_v<CUdevice, cu::CUdevice>);
static_assert(std::is_same_v<CUcontext, cu::CUcontext>);
static_assert(std::is_same_v<CUstream, cu::CUstream>);
static_assert(std::is_same_v<CUevent, cu::CUevent>);
static_assert(std::is_same_v<CUmodule, cu::CUmodule>);
static_assert(std::is_same_v<CUfunction, cu::CUfunction>);
static_assert(std::is_same_v<CUmemoryPool, cu::CUmemoryPool>);
static_assert(std::is_same_v<CUhostFn, cu::CUhostFn>);
static_assert(std::is_same_v<CUgraph, cu::CUgraph>);
static_assert(std::is_same_v<CUgraphNode, cu::CUgraphNode>);
static_assert(std::is_same_v<CUgraphExec, cu::CUgraphExec>);
static_assert(std::is_same_v<CUarray, cu::CUarray>);
static_assert(std::is_same_v<CUkernel, cu::CUkernel>);

// The graph node structs: same size, every field at the same offset with the same size.
#define CTILE_ABI_FIELD(ours, theirs, field)                                                   \
  static_assert(offsetof(cu::ours, field) == offsetof(::theirs, field) &&                     \
                    sizeof(cu::ours::field) == sizeof(::theirs::field),                       \
                "driver.hpp: " #ours "::" #field " is not where cuda.h's " #theirs " has it");
static_assert(sizeof(cu::KernelNodeParams) == sizeof(::CUDA_KERNEL_NODE_PARAMS));
CTILE_ABI_FIELD(KernelNodeParams, CUDA_KERNEL_NODE_PARAMS, func)
CTILE_ABI_FIELD(KernelNodeParams, CUDA_KERNEL_NODE_PARAMS, gridDimX)
CTILE_ABI_FIELD(KernelNodeParams, CUDA_KERNEL_NODE_PARAMS, gridDimY)
CTILE_ABI_FIELD(KernelNodeParams, CUDA_KERNEL_NODE_PARAMS, gridDimZ)
CTILE_ABI_FIELD(KernelNodeParams, CUDA_KERNEL_NODE_PARAMS, blockDimX)
CTILE_ABI_FIELD(KernelNodeParams, CUDA_KERNEL_NODE_PARAMS, blockDimY)
CTILE_ABI_FIELD(KernelNodeParams, CUDA_KERNEL_NODE_PARAMS, blockDimZ)
CTILE_ABI_FIELD(KernelNodeParams, CUDA_KERNEL_NODE_PARAMS, sharedMemBytes)
CTILE_ABI_FIELD(KernelNodeParams, CUDA_KERNEL_NODE_PARAMS, kernelParams)
CTILE_ABI_FIELD(KernelNodeParams, CUDA_KERNEL_NODE_PARAMS, extra)
CTILE_ABI_FIELD(KernelNodeParams, CUDA_KERNEL_NODE_PARAMS, kern)
CTILE_ABI_FIELD(KernelNodeParams, CUDA_KERNEL_NODE_PARAMS, ctx)
static_assert(sizeof(cu::HostNodeParams) == sizeof(::CUDA_HOST_NODE_PARAMS));
static_assert(sizeof(cu::GraphEdgeData) == sizeof(::CUgraphEdgeData));
CTILE_ABI_FIELD(GraphEdgeData, CUgraphEdgeData, from_port)
CTILE_ABI_FIELD(GraphEdgeData, CUgraphEdgeData, to_port)
CTILE_ABI_FIELD(GraphEdgeData, CUgraphEdgeData, type)
CTILE_ABI_FIELD(GraphEdgeData, CUgraphEdgeData, reserved)
static_assert(sizeof(cu::TensorMapBytes) == sizeof(::CUtensorMap) && alignof(cu::TensorMapBytes) == alignof(::CUtensorMap));
CTILE_ABI_FIELD(HostNodeParams, CUDA_HOST_NODE_PARAMS, fn)
CTILE_ABI_FIELD(HostNodeParams, CUDA_HOST_NODE_PARAMS, userData)
static_assert(sizeof(cu::Memcpy3D) == sizeof(::CUDA_MEMCPY3D));
CTILE_ABI_FIELD(Memcpy3D, CUDA_MEMCPY3D, srcXInBytes)
CTILE_ABI_FIELD(Memcpy3D, CUDA_MEMCPY3D, srcY)
CTILE_ABI_FIELD(Memcpy3D, CUDA_MEMCPY3D, srcZ)
CTILE_ABI_FIELD(Memcpy3D, CUDA_MEMCPY3D, srcLOD)
CTILE_ABI_FIELD(Memcpy3D, CUDA_MEMCPY3D, srcMemoryType)
CTILE_ABI_FIELD(Memcpy3D, CUDA_MEMCPY3D, srcHost)
CTILE_ABI_FIELD(Memcpy3D, CUDA_MEMCPY3D, srcDevice)
CTILE_ABI_FIELD(Memcpy3D, CUDA_MEMCPY3D, srcArray)
CTILE_ABI_FIELD(Memcpy3D, CUDA_MEMCPY3D, reserved0)
CTILE_ABI_FIELD(Memcpy3D, CUDA_MEMCPY3D, srcPitch)
CTILE_ABI_FIELD(Memcpy3D, CUDA_MEMCPY3D, srcHeight)
CTILE_ABI_FIELD(Memcpy3D, CUDA_MEMCPY3D, dstXInBytes)
CTILE_ABI_FIELD(Memcpy3D, CUDA_MEMCPY3D, dstY)
CTILE_ABI_FIELD(Memcpy3D, CUDA_MEMCPY3D, dstZ)
CTILE_ABI_FIELD(Memcpy3D, CUDA_MEMCPY3D, dstLOD)
CTILE_ABI_FIELD(Memcpy3D, CUDA_MEMCPY3D, dstMemoryType)
CTILE_ABI_FIELD(Memcpy3D, CUDA_MEMCPY3D, dstHost)
CTILE_ABI_FIELD(Memcpy3D, CUDA_MEMCPY3D, dstDevice)
CTILE_ABI_FIELD(Memcpy3D, CUDA_MEMCPY3D, dstArray)
CTILE_ABI_FIELD(Memcpy3D, CUDA_MEMCPY3D, reserved1)
CTILE_ABI_FIELD(Memcpy3D, CUDA_MEMCPY3D, dstPitch)
CTILE_ABI_FIELD(Memcpy3D, CUDA_MEMCPY3D, dstHeight)
CTILE_ABI_FIELD(Memcpy3D, CUDA_MEMCPY3D, WidthInBytes)
CTILE_ABI_FIELD(Memcpy3D, CUDA_MEMCPY3D, Height)
CTILE_ABI_FIELD(Memcpy3D, CUDA_MEMCPY3D, Depth)
#undef CTILE_ABI_FIELD

#define CTILE_ABI_CHECK(name, required, params)                                                         \
  static_assert(std::is_same_v<sig<decltype(&::name)>::type, sig<decltype(cu::Driver{}.name)>::type>, \
                "driver.hpp declares " #name " differently from cuda.h");
CTILE_CUDA_DRIVER_FUNCTIONS(CTILE_ABI_CHECK)
#undef CTILE_ABI_CHECK

#define CTILE_ABI_VALUE(name) static_assert(static_cast<long long>(cu::abi::name) == static_cast<long long>(::name), #name);
CTILE_ABI_VALUE(CUDA_SUCCESS)
CTILE_ABI_VALUE(CU_GRAPH_DEPENDENCY_TYPE_DEFAULT)
CTILE_ABI_VALUE(CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC)
static_assert(cu::abi::kGraphKernelNodePortProgrammatic == CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC);
CTILE_ABI_VALUE(CUDA_ERROR_INVALID_VALUE)
CTILE_ABI_VALUE(CUDA_ERROR_OUT_OF_MEMORY)
CTILE_ABI_VALUE(CUDA_ERROR_NOT_INITIALIZED)
CTILE_ABI_VALUE(CUDA_ERROR_DEINITIALIZED)
CTILE_ABI_VALUE(CUDA_ERROR_STUB_LIBRARY)
CTILE_ABI_VALUE(CUDA_ERROR_NO_DEVICE)
CTILE_ABI_VALUE(CUDA_ERROR_INVALID_DEVICE)
CTILE_ABI_VALUE(CUDA_ERROR_NOT_READY)
CTILE_ABI_VALUE(CUDA_ERROR_ILLEGAL_ADDRESS)
CTILE_ABI_VALUE(CUDA_ERROR_LAUNCH_FAILED)
CTILE_ABI_VALUE(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
CTILE_ABI_VALUE(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)
CTILE_ABI_VALUE(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)
CTILE_ABI_VALUE(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
CTILE_ABI_VALUE(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
CTILE_ABI_VALUE(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
CTILE_ABI_VALUE(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
CTILE_ABI_VALUE(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED)
CTILE_ABI_VALUE(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
CTILE_ABI_VALUE(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)
CTILE_ABI_VALUE(CU_FUNC_ATTRIBUTE_NUM_REGS)
CTILE_ABI_VALUE(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
CTILE_ABI_VALUE(CU_MEMPOOL_ATTR_RELEASE_THRESHOLD)
CTILE_ABI_VALUE(CU_STREAM_NON_BLOCKING)
CTILE_ABI_VALUE(CUDA_ERROR_INVALID_CONTEXT)
CTILE_ABI_VALUE(CU_MEMORYTYPE_DEVICE)
CTILE_ABI_VALUE(CU_EVENT_DISABLE_TIMING)
CTILE_ABI_VALUE(CU_EVENT_WAIT_DEFAULT)
#undef CTILE_ABI_VALUE

}  // namespace

int main() {
  std::printf("driver.hpp matches cuda.h (CUDA_VERSION %d)\n", CUDA_VERSION);
  return 0;
}
