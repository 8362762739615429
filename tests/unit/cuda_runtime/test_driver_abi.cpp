// Compile-time check of the driver declarations in src/platform/cuda/driver.hpp against the real
// cuda.h: every entry point ctile resolves exists under that exact (versioned) name with the same
// signature (enums compared as the int they are passed as), and every constant has cuda.h's value.
// Built only when cuda.h is found at configure time; running it just reports success.
#include <cuda.h>

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

#define CTILE_ABI_CHECK(name, required, params)                                                         \
  static_assert(std::is_same_v<sig<decltype(&::name)>::type, sig<decltype(cu::Driver{}.name)>::type>, \
                "driver.hpp declares " #name " differently from cuda.h");
CTILE_CUDA_DRIVER_FUNCTIONS(CTILE_ABI_CHECK)
#undef CTILE_ABI_CHECK

#define CTILE_ABI_VALUE(name) static_assert(static_cast<long long>(cu::abi::name) == static_cast<long long>(::name), #name);
CTILE_ABI_VALUE(CUDA_SUCCESS)
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
CTILE_ABI_VALUE(CU_EVENT_DISABLE_TIMING)
CTILE_ABI_VALUE(CU_EVENT_WAIT_DEFAULT)
#undef CTILE_ABI_VALUE

}  // namespace

int main() {
  std::printf("driver.hpp matches cuda.h (CUDA_VERSION %d)\n", CUDA_VERSION);
  return 0;
}
