#include "nvjitlink.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "ctile/core/error.hpp"

namespace ctile::simt::gpu {

struct NvJitLink::Api {
  using Handle = void*;
  int (*create)(Handle*, unsigned, const char**) = nullptr;
  int (*destroy)(Handle*) = nullptr;
  int (*add_data)(Handle, int, const void*, std::size_t, const char*) = nullptr;
  int (*complete)(Handle) = nullptr;
  int (*cubin_size)(Handle, std::size_t*) = nullptr;
  int (*cubin)(Handle, void*) = nullptr;
  int (*error_log_size)(Handle, std::size_t*) = nullptr;
  int (*error_log)(Handle, char*) = nullptr;
  int (*info_log_size)(Handle, std::size_t*) = nullptr;
  int (*info_log)(Handle, char*) = nullptr;
  int (*version)(unsigned*, unsigned*) = nullptr;
};

namespace {

constexpr int kInputPtx = 2;  // NVJITLINK_INPUT_PTX

struct Loaded {
  std::unique_ptr<NvJitLink::Api> api;
  std::unique_ptr<NvJitLink> link;
  std::string reason;
};

template <class F>
bool bind(void* h, const char* name, F& fn) {
  void* p = dlsym(h, name);
  if (!p) return false;
  std::memcpy(&fn, &p, sizeof(p));
  return true;
}

Loaded load() {
  Loaded L;
  const char* names[] = {"libnvJitLink.so", "libnvJitLink.so.13", "libnvJitLink.so.12"};
  std::vector<std::string> candidates(std::begin(names), std::end(names));
  if (const char* home = std::getenv("CUDA_HOME"); home && *home)
    for (const char* n : names) candidates.push_back(std::string(home) + "/lib64/" + n);
  for (const char* n : names) candidates.push_back(std::string("/usr/local/cuda/lib64/") + n);
  std::string reasons;
  for (const std::string& c : candidates) {
    void* h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* e = dlerror();
      reasons += "\n  " + c + ": " + (e ? e : "not found");
      continue;
    }
    NvJitLink::Api a;
    const bool ok = bind(h, "nvJitLinkCreate", a.create) && bind(h, "nvJitLinkDestroy", a.destroy) &&
                    bind(h, "nvJitLinkAddData", a.add_data) && bind(h, "nvJitLinkComplete", a.complete) &&
                    bind(h, "nvJitLinkGetLinkedCubinSize", a.cubin_size) && bind(h, "nvJitLinkGetLinkedCubin", a.cubin) &&
                    bind(h, "nvJitLinkGetErrorLogSize", a.error_log_size) && bind(h, "nvJitLinkGetErrorLog", a.error_log) &&
                    bind(h, "nvJitLinkGetInfoLogSize", a.info_log_size) && bind(h, "nvJitLinkGetInfoLog", a.info_log) &&
                    bind(h, "nvJitLinkVersion", a.version);
    unsigned major = 0, minor = 0;
    if (!ok || a.version(&major, &minor) != 0) {
      reasons += "\n  " + c + ": not a usable nvJitLink (missing entry points)";
      dlclose(h);
      continue;
    }
    L.api = std::make_unique<NvJitLink::Api>(a);
    L.link = std::make_unique<NvJitLink>(L.api.get(), c, static_cast<int>(major), static_cast<int>(minor));
    return L;
  }
  L.reason = "nvJitLink (libnvJitLink) could not be loaded; tried:" + reasons;
  return L;
}

Loaded& loaded() {
  static Loaded L = load();
  return L;
}

}  // namespace

NvJitLink::Result NvJitLink::link(const std::string& ptx, const std::string& arch, const std::string& name) const {
  const Api& a = *api_;
  const std::string arch_opt = "-arch=" + arch;
  const char* opts[] = {arch_opt.c_str()};
  Api::Handle h = nullptr;
  if (int rc = a.create(&h, 1, opts); rc != 0)
    throw InternalError("nvJitLinkCreate failed (" + std::to_string(rc) + ") for " + name + " (" + arch + ")");
  struct Guard {
    const Api& a;
    Api::Handle& h;
    ~Guard() { a.destroy(&h); }
  } guard{a, h};
  auto log_of = [&](int (*size)(Api::Handle, std::size_t*), int (*get)(Api::Handle, char*)) {
    std::size_t n = 0;
    std::string s;
    if (size(h, &n) == 0 && n > 1) {
      s.resize(n);
      get(h, s.data());
      s.resize(std::strlen(s.c_str()));
    }
    return s;
  };
  int rc = a.add_data(h, kInputPtx, ptx.data(), ptx.size(), name.c_str());
  if (rc == 0) rc = a.complete(h);
  Result r;
  r.log = log_of(a.info_log_size, a.info_log);
  if (rc != 0)
    throw InternalError("nvJitLink failed (" + std::to_string(rc) + ") to link the PTX of " + name + " for " + arch + ":\n" +
                        log_of(a.error_log_size, a.error_log) + r.log);
  std::size_t n = 0;
  if (a.cubin_size(h, &n) != 0) throw InternalError("nvJitLinkGetLinkedCubinSize failed for " + name);
  r.cubin.resize(n);
  if (a.cubin(h, r.cubin.data()) != 0) throw InternalError("nvJitLinkGetLinkedCubin failed for " + name);
  return r;
}

const NvJitLink* nvjitlink() { return loaded().link.get(); }
const std::string& nvjitlink_unavailable_reason() { return loaded().reason; }

}  // namespace ctile::simt::gpu
