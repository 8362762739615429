#include "gpu_driver.hpp"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace cuda_gpu {

namespace {
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
struct Opaque;
using Ptr = Opaque*;
}  // namespace

struct Driver {
  CUresult (*init)(unsigned) = nullptr;
  CUresult (*device_get)(CUdevice*, int) = nullptr;
  CUresult (*attribute)(int*, int, CUdevice) = nullptr;
  CUresult (*retain)(Ptr*, CUdevice) = nullptr;
  CUresult (*set_current)(Ptr) = nullptr;
  CUresult (*module_load)(Ptr*, const void*) = nullptr;
  CUresult (*get_function)(Ptr*, Ptr, const char*) = nullptr;
  CUresult (*set_attribute)(Ptr, int, int) = nullptr;
  CUresult (*mem_alloc)(CUdeviceptr*, std::size_t) = nullptr;
  CUresult (*mem_free)(CUdeviceptr) = nullptr;
  CUresult (*htod)(CUdeviceptr, const void*, std::size_t) = nullptr;
  CUresult (*dtoh)(void*, CUdeviceptr, std::size_t) = nullptr;
  CUresult (*launch)(Ptr, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, Ptr, void**, void**) = nullptr;
  CUresult (*sync)() = nullptr;
  CUresult (*error_string)(CUresult, const char**) = nullptr;
  CUresult (*encode_tiled)(void*, int, unsigned, void*, const std::uint64_t*, const std::uint64_t*, const unsigned*,
                           const unsigned*, int, int, int, int) = nullptr;  // optional
  CUdevice dev = 0;
  std::atomic<unsigned long long> launched{0};

  std::string err(CUresult r) const {
    const char* s = nullptr;
    if (error_string) error_string(r, &s);
    return (s ? s : "CUDA error") + std::string(" (") + std::to_string(r) + ")";
  }
  void check(CUresult r, const char* what) const {
    if (r != 0) throw std::runtime_error(std::string(what) + ": " + err(r));
  }
};

namespace {
template <class F>
bool sym(void* h, const char* n, F& f) {
  void* p = dlsym(h, n);
  if (!p) return false;
  std::memcpy(&f, &p, sizeof p);
  return true;
}

Driver* open(std::string& why) {
  const char* env = std::getenv("CTILE_LIBCUDA");
  const std::string lib = env && *env ? env : "libcuda.so.1";
  void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    why = lib + ": " + dlerror();
    return nullptr;
  }
  auto* d = new Driver;
  const bool ok = sym(h, "cuInit", d->init) && sym(h, "cuDeviceGet", d->device_get) &&
                  sym(h, "cuDeviceGetAttribute", d->attribute) && sym(h, "cuDevicePrimaryCtxRetain", d->retain) &&
                  sym(h, "cuCtxSetCurrent", d->set_current) && sym(h, "cuModuleLoadData", d->module_load) &&
                  sym(h, "cuModuleGetFunction", d->get_function) && sym(h, "cuFuncSetAttribute", d->set_attribute) &&
                  sym(h, "cuMemAlloc_v2", d->mem_alloc) && sym(h, "cuMemFree_v2", d->mem_free) &&
                  sym(h, "cuMemcpyHtoD_v2", d->htod) && sym(h, "cuMemcpyDtoH_v2", d->dtoh) &&
                  sym(h, "cuLaunchKernel", d->launch) && sym(h, "cuCtxSynchronize", d->sync) &&
                  sym(h, "cuGetErrorString", d->error_string);
  (void)sym(h, "cuTensorMapEncodeTiled", d->encode_tiled);
  if (!ok) {
    why = "libcuda.so.1 lacks an entry point";
    return nullptr;
  }
  if (CUresult r = d->init(0); r != 0) {
    why = "cuInit: " + d->err(r);
    return nullptr;
  }
  if (CUresult r = d->device_get(&d->dev, 0); r != 0) {
    why = "cuDeviceGet: " + d->err(r);
    return nullptr;
  }
  Ptr ctx = nullptr;
  d->check(d->retain(&ctx, d->dev), "cuDevicePrimaryCtxRetain");
  d->check(d->set_current(ctx), "cuCtxSetCurrent");
  return d;
}
}  // namespace

Driver* driver(std::string* why) {
  static std::string reason;
  static Driver* d = open(reason);
  if (!d && why) *why = reason;
  return d;
}

std::uint64_t alloc(Driver* d, std::size_t bytes) {
  CUdeviceptr p = 0;
  d->check(d->mem_alloc(&p, bytes ? bytes : 1), "cuMemAlloc");
  return p;
}
void free_mem(Driver* d, std::uint64_t p) { d->mem_free(p); }
void to_device(Driver* d, std::uint64_t dst, const void* src, std::size_t bytes) {
  d->check(d->htod(dst, src, bytes), "cuMemcpyHtoD");
}
void to_host(Driver* d, void* dst, std::uint64_t src, std::size_t bytes) { d->check(d->dtoh(dst, src, bytes), "cuMemcpyDtoH"); }

void* load(Driver* d, const std::string& cubin, const std::string& entry, std::size_t smem) {
  Ptr mod = nullptr, fn = nullptr;
  d->check(d->module_load(&mod, cubin.data()), "cuModuleLoadData");
  d->check(d->get_function(&fn, mod, entry.c_str()), "cuModuleGetFunction");
  if (smem > 48 * 1024) d->check(d->set_attribute(fn, 8 /* MAX_DYNAMIC_SHARED_SIZE_BYTES */, static_cast<int>(smem)), "cuFuncSetAttribute");
  return fn;
}

std::string encode_tensor_map(Driver* d, void* out, int data_type, unsigned rank, void* address, const std::uint64_t* dims,
                              const std::uint64_t* strides_bytes, const unsigned* box, int swizzle) {
  if (!d->encode_tiled) return "the driver lacks cuTensorMapEncodeTiled";
  alignas(128) unsigned char map[128];
  const unsigned elem[5] = {1, 1, 1, 1, 1};
  const CUresult r = d->encode_tiled(map, data_type, rank, address, dims, strides_bytes, box, elem, 0, swizzle, 3, 0);
  if (r != 0) return "cuTensorMapEncodeTiled: " + d->err(r);
  std::memcpy(out, map, sizeof map);
  return "";
}

std::string launch(Driver* d, void* fn, long long blocks, int threads, std::size_t smem, void* params) {
  void* kp[] = {params};
  CUresult r = d->launch(static_cast<Ptr>(fn), static_cast<unsigned>(blocks), 1, 1, static_cast<unsigned>(threads), 1, 1,
                         static_cast<unsigned>(smem), nullptr, kp, nullptr);
  if (r == 0) d->launched.fetch_add(1);
  if (r == 0) r = d->sync();
  return r == 0 ? std::string() : d->err(r);
}

std::string launch_async(Driver* d, void* fn, long long blocks, int threads, std::size_t smem, void* params) {
  void* kp[] = {params};
  const CUresult r = d->launch(static_cast<Ptr>(fn), static_cast<unsigned>(blocks), 1, 1, static_cast<unsigned>(threads), 1,
                               1, static_cast<unsigned>(smem), nullptr, kp, nullptr);
  if (r == 0) d->launched.fetch_add(1);
  return r == 0 ? std::string() : d->err(r);
}
std::string synchronize(Driver* d) {
  const CUresult r = d->sync();
  return r == 0 ? std::string() : d->err(r);
}

unsigned long long launches(Driver* d) { return d->launched.load(); }

int compute_capability(Driver* d) {
  int major = 0, minor = 0;
  d->attribute(&major, 75, d->dev);  // COMPUTE_CAPABILITY_MAJOR
  d->attribute(&minor, 76, d->dev);  // COMPUTE_CAPABILITY_MINOR
  return major * 10 + minor;
}

}  // namespace cuda_gpu
