// NVRTC loaded with dlopen; the few entry points are declared here, so no CUDA header is needed.
#include "nvrtc.hpp"

#include <dlfcn.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <vector>

#include "ctile/core/error.hpp"

namespace ctile::backend::cuda {

namespace {
using nvrtcResult = int;  // NVRTC_SUCCESS = 0
struct nvrtcProgramOpaque;
using nvrtcProgram = nvrtcProgramOpaque*;
}  // namespace

struct Nvrtc::Api {
  void* handle = nullptr;
  nvrtcResult (*version)(int*, int*) = nullptr;
  const char* (*error_string)(nvrtcResult) = nullptr;
  nvrtcResult (*create)(nvrtcProgram*, const char*, const char*, int, const char* const*, const char* const*) = nullptr;
  nvrtcResult (*destroy)(nvrtcProgram*) = nullptr;
  nvrtcResult (*compile)(nvrtcProgram, int, const char* const*) = nullptr;
  nvrtcResult (*log_size)(nvrtcProgram, std::size_t*) = nullptr;
  nvrtcResult (*log)(nvrtcProgram, char*) = nullptr;
  nvrtcResult (*ptx_size)(nvrtcProgram, std::size_t*) = nullptr;
  nvrtcResult (*ptx)(nvrtcProgram, char*) = nullptr;
  nvrtcResult (*cubin_size)(nvrtcProgram, std::size_t*) = nullptr;
  nvrtcResult (*cubin)(nvrtcProgram, char*) = nullptr;
  // Optional (CUDA 11.2+): the real architectures the library supports.
  nvrtcResult (*num_supported_archs)(int*) = nullptr;
  nvrtcResult (*get_supported_archs)(int*) = nullptr;
};

namespace {

template <class F>
bool bind(void* h, const char* name, F& fn, std::string& missing) {
  void* p = dlsym(h, name);
  if (!p) {
    missing += missing.empty() ? name : std::string(", ") + name;
    return false;
  }
  static_assert(sizeof(F) == sizeof(void*));
  std::memcpy(&fn, &p, sizeof(p));
  return true;
}

struct Loaded {
  std::unique_ptr<Nvrtc::Api> api;
  std::unique_ptr<Nvrtc> nvrtc;
  std::string reason;
};

Loaded load() {
  Loaded L;
  const char* names[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"};
  std::vector<std::string> candidates;
  for (const char* n : names) candidates.emplace_back(n);
  std::vector<std::string> dirs;
  if (const char* home = getenv("CUDA_HOME"); home && *home) dirs.push_back(std::string(home) + "/lib64");
  dirs.emplace_back("/usr/local/cuda/lib64");
  for (const auto& d : dirs)
    for (const char* n : names) candidates.push_back(d + "/" + n);

  std::string reasons;
  for (const auto& c : candidates) {
    void* h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* e = dlerror();
      reasons += "\n  " + c + ": " + (e ? e : "not found");
      continue;
    }
    Nvrtc::Api a;
    a.handle = h;
    std::string missing;
    bool ok = bind(h, "nvrtcVersion", a.version, missing);
    ok = bind(h, "nvrtcGetErrorString", a.error_string, missing) && ok;
    ok = bind(h, "nvrtcCreateProgram", a.create, missing) && ok;
    ok = bind(h, "nvrtcDestroyProgram", a.destroy, missing) && ok;
    ok = bind(h, "nvrtcCompileProgram", a.compile, missing) && ok;
    ok = bind(h, "nvrtcGetProgramLogSize", a.log_size, missing) && ok;
    ok = bind(h, "nvrtcGetProgramLog", a.log, missing) && ok;
    ok = bind(h, "nvrtcGetPTXSize", a.ptx_size, missing) && ok;
    ok = bind(h, "nvrtcGetPTX", a.ptx, missing) && ok;
    ok = bind(h, "nvrtcGetCUBINSize", a.cubin_size, missing) && ok;
    ok = bind(h, "nvrtcGetCUBIN", a.cubin, missing) && ok;
    if (ok) {
      std::string optional_missing;
      if (!bind(h, "nvrtcGetNumSupportedArchs", a.num_supported_archs, optional_missing) ||
          !bind(h, "nvrtcGetSupportedArchs", a.get_supported_archs, optional_missing))
        a.num_supported_archs = a.get_supported_archs = nullptr;
    }
    if (!ok) {
      reasons += "\n  " + c + ": missing " + missing;
      dlclose(h);
      continue;
    }
    Nvrtc::Version v;
    if (a.version(&v.major, &v.minor) != 0) {
      reasons += "\n  " + c + ": nvrtcVersion failed";
      dlclose(h);
      continue;
    }
    L.api = std::make_unique<Nvrtc::Api>(a);
    L.nvrtc = std::make_unique<Nvrtc>(L.api.get(), c, v);
    return L;
  }
  L.reason = "NVRTC (libnvrtc) could not be loaded; tried:" + reasons;
  return L;
}

Loaded& loaded() {
  static Loaded L = load();  // never unloaded
  return L;
}

// The generated source's lines around `line` (1-based), numbered.
std::string excerpt(const std::string& src, int line) {
  std::istringstream in(src);
  std::string s, out;
  for (int n = 1; std::getline(in, s); ++n)
    if (n >= line - 2 && n <= line + 1) out += (n == line ? "  > " : "    ") + std::to_string(n) + " | " + s + "\n";
  return out;
}

// Writes the source and the headers to a fresh directory; returns it (empty on failure).
std::string write_repro(const GeneratedKernel& k) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path base = fs::temp_directory_path(ec);
  if (ec) base = "/tmp";
  std::string tmpl = (base / "ctile-nvrtc-XXXXXX").string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) return {};
  const fs::path dir(buf.data());
  std::ofstream(dir / (k.entry + ".cu")) << k.source;
  for (const EmbeddedHeader& h : device_headers()) {
    const fs::path p = dir / h.name;
    fs::create_directories(p.parent_path(), ec);
    std::ofstream(p) << h.text;
  }
  return dir.string();
}

}  // namespace

std::string Nvrtc::arch_for(int sm, Output out) {
  const std::string v = std::to_string(sm) + (sm == 90 ? "a" : "");
  return (out == Output::Ptx ? "compute_" : "sm_") + v;
}

CompileResult Nvrtc::compile(const GeneratedKernel& k, int sm, Output out) const {
  return run(k, arch_for(sm, out), out, false, false);
}

CompileResult Nvrtc::compile_for_arch(const GeneratedKernel& k, const std::string& arch) const {
  return run(k, arch, Output::Cubin, true, true);
}

std::vector<int> Nvrtc::supported_archs() const {
  const Api& a = *api_;
  std::vector<int> v;
  int n = 0;
  if (!a.num_supported_archs || !a.get_supported_archs || a.num_supported_archs(&n) != 0 || n <= 0) return v;
  v.resize(static_cast<std::size_t>(n));
  if (a.get_supported_archs(v.data()) != 0) return {};
  std::sort(v.begin(), v.end());
  return v;
}

CompileResult Nvrtc::run(const GeneratedKernel& k, const std::string& arch, Output out, bool keep_ptx,
                         bool user_arch) const {
  const Api& a = *api_;
  CompileResult r;
  r.output = out;
  r.arch = arch;
  const auto hs = device_headers();
  std::vector<const char*> texts, names;
  for (const EmbeddedHeader& h : hs) {
    names.push_back(h.name);
    texts.push_back(h.text);
  }
  const std::string file = k.entry + ".cu";
  auto fail = [&](const std::string& what, nvrtcResult rc) {
    return InternalError("NVRTC " + what + " failed for kernel " + k.entry + ": " + a.error_string(rc));
  };

  const auto t0 = std::chrono::steady_clock::now();
  nvrtcProgram prog = nullptr;
  if (nvrtcResult rc = a.create(&prog, k.source.c_str(), file.c_str(), static_cast<int>(hs.size()), texts.data(), names.data());
      rc != 0)
    throw fail("nvrtcCreateProgram", rc);
  struct Guard {
    const Api& a;
    nvrtcProgram& p;
    ~Guard() { a.destroy(&p); }
  } guard{a, prog};

  const std::string arch_opt = "-arch=" + r.arch;
  const char* opts[] = {arch_opt.c_str(), "-std=c++17", "-default-device"};
  const nvrtcResult crc = a.compile(prog, static_cast<int>(std::size(opts)), opts);
  constexpr nvrtcResult kInvalidOption = 5;  // NVRTC_ERROR_INVALID_OPTION
  if (crc == kInvalidOption && user_arch)
    throw UserError("NVRTC " + std::to_string(version_.major) + "." + std::to_string(version_.minor) +
                    " does not accept -arch=" + arch + " (" + a.error_string(crc) + ")");
  std::size_t ls = 0;
  if (a.log_size(prog, &ls) == 0 && ls > 1) {
    r.log.resize(ls);
    a.log(prog, r.log.data());
    r.log.resize(std::strlen(r.log.c_str()));
  }
  if (crc != 0) {
    std::string msg = "NVRTC failed to compile the generated CUDA kernel '" + k.entry + "' for " + r.arch + " (" +
                      a.error_string(crc) + "):\n" + r.log;
    if (const auto pos = r.log.find(file + "("); pos != std::string::npos) {
      const int line = std::atoi(r.log.c_str() + pos + file.size() + 1);
      msg += "\nat line " + std::to_string(line) + " of the generated source:\n" + excerpt(k.source, line);
    }
    const std::string dir = write_repro(k);
    if (!dir.empty())
      msg += "\nreproduce with: nvcc -arch=" + (arch.rfind("compute_", 0) == 0 ? "sm_" + arch.substr(8) : arch) +
             " -std=c++17 -I" + dir + " -cubin " + dir + "/" + file;
    throw InternalError(msg);
  }
  std::size_t n = 0;
  if (keep_ptx) {
    if (nvrtcResult rc = a.ptx_size(prog, &n); rc != 0) throw fail("nvrtcGetPTXSize", rc);
    r.ptx.resize(n);
    if (nvrtcResult rc = a.ptx(prog, r.ptx.data()); rc != 0) throw fail("nvrtcGetPTX", rc);
    r.ptx.resize(std::strlen(r.ptx.c_str()));
  }
  if (out == Output::Ptx) {
    if (nvrtcResult rc = a.ptx_size(prog, &n); rc != 0) throw fail("nvrtcGetPTXSize", rc);
    r.image.resize(n);
    if (nvrtcResult rc = a.ptx(prog, r.image.data()); rc != 0) throw fail("nvrtcGetPTX", rc);
    r.image.resize(std::strlen(r.image.c_str()));
  } else {
    if (nvrtcResult rc = a.cubin_size(prog, &n); rc != 0) throw fail("nvrtcGetCUBINSize", rc);
    r.image.resize(n);
    if (nvrtcResult rc = a.cubin(prog, r.image.data()); rc != 0) throw fail("nvrtcGetCUBIN", rc);
  }
  r.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

Nvrtc* nvrtc() { return loaded().nvrtc.get(); }

const std::string& nvrtc_unavailable_reason() { return loaded().reason; }

}  // namespace ctile::backend::cuda
