#include "driver.hpp"

#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "../../core/dump.hpp"

namespace ctile::platform::cuda {
namespace {

const char* builtin_name(CUresult r) {
  switch (r) {
    case 0: return "CUDA_SUCCESS";
    case 1: return "CUDA_ERROR_INVALID_VALUE";
    case 2: return "CUDA_ERROR_OUT_OF_MEMORY";
    case 3: return "CUDA_ERROR_NOT_INITIALIZED";
    case 4: return "CUDA_ERROR_DEINITIALIZED";
    case 34: return "CUDA_ERROR_STUB_LIBRARY";
    case 35: return "CUDA_ERROR_INSUFFICIENT_DRIVER";
    case 100: return "CUDA_ERROR_NO_DEVICE";
    case 101: return "CUDA_ERROR_INVALID_DEVICE";
    case 200: return "CUDA_ERROR_INVALID_IMAGE";
    case 201: return "CUDA_ERROR_INVALID_CONTEXT";
    case 209: return "CUDA_ERROR_NO_BINARY_FOR_GPU";
    case 218: return "CUDA_ERROR_INVALID_PTX";
    case 222: return "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
    case 400: return "CUDA_ERROR_INVALID_HANDLE";
    case 500: return "CUDA_ERROR_NOT_FOUND";
    case 600: return "CUDA_ERROR_NOT_READY";
    case 700: return "CUDA_ERROR_ILLEGAL_ADDRESS";
    case 701: return "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
    case 702: return "CUDA_ERROR_LAUNCH_TIMEOUT";
    case 710: return "CUDA_ERROR_ASSERT";
    case 719: return "CUDA_ERROR_LAUNCH_FAILED";
    case 801: return "CUDA_ERROR_NOT_SUPPORTED";
    case 803: return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
    case 804: return "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE";
    case 999: return "CUDA_ERROR_UNKNOWN";
    default: return nullptr;
  }
}

const char* builtin_description(CUresult r) {
  switch (r) {
    case 0: return "no error";
    case 1: return "invalid argument";
    case 2: return "out of memory";
    case 3: return "initialization error";
    case 4: return "driver shutting down";
    case 34: return "CUDA driver is a stub library";
    case 35: return "CUDA driver version is insufficient for CUDA runtime version";
    case 100: return "no CUDA-capable device is detected";
    case 101: return "invalid device ordinal";
    case 200: return "device kernel image is invalid";
    case 201: return "invalid device context";
    case 209: return "no kernel image is available for execution on the device";
    case 218: return "a PTX JIT compilation failed";
    case 222: return "the provided PTX was compiled with an unsupported toolchain";
    case 400: return "invalid resource handle";
    case 500: return "named symbol not found";
    case 600: return "device not ready";
    case 700: return "an illegal memory access was encountered";
    case 701: return "too many resources requested for launch";
    case 702: return "the launch timed out and was terminated";
    case 710: return "device-side assert triggered";
    case 719: return "unspecified launch failure";
    case 801: return "operation not supported";
    case 803: return "system has unsupported display driver / cuda driver combination";
    case 804: return "forward compatibility was attempted on non supported HW";
    case 999: return "unknown error";
    default: return nullptr;
  }
}

// Loaded once; never freed (function pointers must stay valid during static destruction).
DriverStatus* probe() {
  auto* st = new DriverStatus();
  const char* env = std::getenv("CTILE_LIBCUDA");
  st->library = env && *env ? env : "libcuda.so.1";
  ::dlerror();
  void* h = ::dlopen(st->library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = ::dlerror();
    st->reason = detail::cat("the CUDA driver library ", st->library, " cannot be loaded (", e ? e : "unknown dlopen error",
                             "); is the NVIDIA driver installed?");
    return st;
  }
  auto* d = new Driver();
  d->handle = h;
  std::string missing;
#define CTILE_CUDA_RESOLVE(name, required, params)                                      \
  d->name = reinterpret_cast<CUresult(*) params>(::dlsym(h, #name));                    \
  if (!d->name && (required)) missing += missing.empty() ? #name : ", " #name;
  CTILE_CUDA_DRIVER_FUNCTIONS(CTILE_CUDA_RESOLVE)
#undef CTILE_CUDA_RESOLVE
  if (!missing.empty()) {
    st->reason = detail::cat("the CUDA driver library ", st->library, " lacks ", missing,
                             " (the NVIDIA driver is too old for ctile; CUDA 12 or newer drivers are supported)");
    delete d;
    return st;
  }
  if (d->cuDriverGetVersion(&d->version) != 0) d->version = 0;
  const CUresult init = d->cuInit(0);
  if (init != 0) {
    const char* n = nullptr;
    const char* s = nullptr;
    if (d->cuGetErrorName(init, &n) != 0 || !n) n = builtin_name(init);
    if (d->cuGetErrorString(init, &s) != 0 || !s) s = builtin_description(init);
    const std::string name = n ? std::string(n) : detail::cat("CUDA error ", init);
    if (init == abi::CUDA_ERROR_NO_DEVICE)
      st->reason = "no CUDA device is present (cuInit: CUDA_ERROR_NO_DEVICE)";
    else
      st->reason = detail::cat("the CUDA driver failed to initialise (cuInit: ", name, s ? ", " : "", s ? s : "", ")");
    delete d;
    return st;
  }
  int count = 0;
  if (const CUresult r = d->cuDeviceGetCount(&count); r != 0 || count <= 0) {
    st->reason = r != 0 ? detail::cat("cuDeviceGetCount failed (", builtin_name(r) ? builtin_name(r) : "CUDA error", ")")
                        : std::string("no CUDA device is present (cuDeviceGetCount: 0)");
    delete d;
    return st;
  }
  // Device 0 decides whether the backend is usable; later devices below sm_80 are refused when used.
  CUdevice dev0 = 0;
  int major = 0, minor = 0;
  if (d->cuDeviceGet(&dev0, 0) != 0 ||
      d->cuDeviceGetAttribute(&major, abi::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev0) != 0 ||
      d->cuDeviceGetAttribute(&minor, abi::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev0) != 0) {
    st->reason = "cannot query CUDA device 0";
    delete d;
    return st;
  }
  if (major < 8) {
    char name[256] = {};
    if (d->cuDeviceGetName(name, sizeof name - 1, dev0) != 0) name[0] = '\0';
    st->reason = detail::cat("CUDA device 0 (", name, ") has compute capability ", major, ".", minor,
                             "; ctile needs sm_80 (Ampere) or newer");
    delete d;
    return st;
  }
  st->api = d;
  st->device_count = count;
  return st;
}

}  // namespace

const DriverStatus& driver_status() {
  static const DriverStatus* st = probe();
  return *st;
}

const Driver& drv() {
  const DriverStatus& st = driver_status();
  if (!st.api) throw UserError(detail::cat("the CUDA backend cannot be used: ", st.reason));
  return *st.api;
}

CudaError::CudaError(CUresult code, std::string name, std::string description, std::string call, std::string doing)
    : Error(detail::cat("CUDA error: ", name, " (", description, ") in ", call, doing.empty() ? "" : " while ", doing)),
      code_(code),
      name_(std::move(name)),
      call_(std::move(call)),
      doing_(std::move(doing)) {}

std::string error_name(CUresult r) {
  const DriverStatus& st = driver_status();
  const char* n = nullptr;
  if (st.api && (st.api->cuGetErrorName(r, &n) != 0)) n = nullptr;
  if (!n) n = builtin_name(r);
  return n ? std::string(n) : detail::cat("CUDA error ", r);
}

std::string error_description(CUresult r) {
  const DriverStatus& st = driver_status();
  const char* s = nullptr;
  if (st.api && (st.api->cuGetErrorString(r, &s) != 0)) s = nullptr;
  if (!s) s = builtin_description(r);
  return s ? std::string(s) : std::string("unrecognised error code");
}

std::string format_error(CUresult r, std::string_view call, std::string_view doing) {
  return CudaError(r, error_name(r), error_description(r), std::string(call), std::string(doing)).what();
}

void throw_cuda_error(CUresult r, const char* call, std::string doing) {
  throw CudaError(r, error_name(r), error_description(r), call, std::move(doing));
}

void report_error(CUresult r, const char* call, std::string_view doing) noexcept {
  if (r == abi::CUDA_ERROR_DEINITIALIZED) return;  // exit: the driver has gone away before us
  static std::atomic<int> reported{0};
  const int n = reported.fetch_add(1);
  if (n >= 8) return;
  try {
    std::fprintf(stderr, "ctile: %s%s\n", format_error(r, call, doing).c_str(),
                 n == 7 ? " (further CUDA errors in cleanup are not reported)" : "");
  } catch (...) {
  }
}

thread_local CUcontext t_current_context = nullptr;

void ScopedContext::enter(CUcontext ctx) {
  CUcontext cur = nullptr;
  CTILE_CU(cuCtxGetCurrent, (&cur), "querying the current CUDA context");
  if (cur == ctx) {
    t_current_context = ctx;
    return;
  }
  if (cur == nullptr) {
    // Nobody uses this thread for CUDA yet: keep the device's primary context current on it.
    CTILE_CU(cuCtxSetCurrent, (ctx), "making the device's primary context current");
    t_current_context = ctx;
    return;
  }
  CTILE_CU(cuCtxPushCurrent_v2, (ctx), "making the device's primary context current");
  pushed_ = true;
}

void ScopedContext::leave() noexcept {
  CUcontext popped = nullptr;
  (void)CTILE_CU_REPORT(cuCtxPopCurrent_v2, (&popped), "restoring the caller's CUDA context");
}

bool quiet() { return ::ctile::detail::env_flag("CTILE_QUIET"); }

}  // namespace ctile::platform::cuda
