// ctile doctor: what works on this machine and what is missing, with how to fix it.
//
// Exit status: 0 when kernels can run on a GPU; 2 when they run on the CPU backend only (no usable
// GPU: a clear, expected state on a machine without one); 1 when something is broken (an invalid
// CTILE_BACKEND, CTILE_BACKEND=cuda without a usable GPU, a GPU without NVRTC to compile for it).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "../../src/backend/cache/disk_cache.hpp"
#include "../../src/backend/cuda/nvrtc.hpp"
#include "../../src/platform/cuda/driver.hpp"
#include "../../src/simt/nvjitlink.hpp"
#include "ctile/core/error.hpp"
#include "ctile/runtime/device.hpp"
#include "tool.hpp"

#ifndef CTILE_VERSION_STRING
#define CTILE_VERSION_STRING "unknown"
#endif

namespace ctile::tool {

namespace {

enum class State { Ok, Missing, Warn, Error, Info };

struct Check {
  std::string name;
  State state;
  std::string detail, fix;
};

const char* tag(State s) {
  switch (s) {
    case State::Ok: return "[ ok ]";
    case State::Missing: return "[miss]";
    case State::Warn: return "[warn]";
    case State::Error: return "[FAIL]";
    case State::Info: return "[ -- ]";
  }
  return "";
}
const char* word(State s) {
  switch (s) {
    case State::Ok: return "ok";
    case State::Missing: return "missing";
    case State::Warn: return "warning";
    case State::Error: return "error";
    case State::Info: return "info";
  }
  return "";
}

std::string json_str(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\', o += c;
    else if (c == '\n') o += "\\n";
    else if (static_cast<unsigned char>(c) < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", c);
      o += b;
    } else o += c;
  }
  return o + "\"";
}

std::string arch_name(int sm) { return "sm_" + std::to_string(sm); }

// The first directory of `p` and its parents that exists, and whether we may write there.
bool writable_dir_or_parent(std::filesystem::path p, std::filesystem::path& existing) {
  std::error_code ec;
  while (!p.empty() && !std::filesystem::exists(p, ec)) p = p.parent_path();
  existing = p;
  return !p.empty() && ::access(p.c_str(), W_OK) == 0;
}

}  // namespace

int doctor(const DoctorOptions& o) {
  ::setenv("CTILE_QUIET", "1", 0);  // the fallback notice of default_device(): the report says it
  std::vector<Check> checks;
  bool broken = false;

  checks.push_back({"CPU backend", State::Ok,
                    "the tile interpreter and the SIMT emulator (with race checkers), on " +
                        std::to_string(std::max(1u, std::thread::hardware_concurrency())) + " worker threads",
                    ""});

  // The driver and the GPUs.
  const platform::cuda::DriverStatus& ds = platform::cuda::driver_status();
  std::vector<std::string> gpus;
  int best_sm = 0;
  if (!ds.api) {
    // The library is missing, or it loaded and found no usable GPU (none, or older than sm_80).
    const bool loaded = ds.reason.find("cannot be loaded") == std::string::npos;
    if (loaded) {
      checks.push_back({"CUDA driver", State::Ok, ds.library, ""});
      checks.push_back({"GPU", State::Warn, ds.reason,
                        "kernels run on the CPU backend; the GPU backend needs compute capability 8.0 (Ampere) or newer"});
    } else {
      checks.push_back({"CUDA driver", State::Missing, ds.reason,
                        "install the NVIDIA driver (it provides libcuda.so.1), or set CTILE_LIBCUDA to its path"});
      checks.push_back({"GPU", State::Info, "none usable: kernels run on the CPU backend", ""});
    }
  } else {
    const int v = ds.api->version;
    checks.push_back({"CUDA driver", State::Ok,
                      ds.library + ", CUDA " + std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10), ""});
    for (int i = 0; i < cuda_device_count(); ++i) {
      try {
        const std::string d = describe(Device{DeviceKind::Cuda, i});
        gpus.push_back(d);
        checks.push_back({"GPU " + std::to_string(i), State::Ok, d, ""});
        const auto p = d.find("sm_");
        if (p != std::string::npos) best_sm = std::max(best_sm, std::atoi(d.c_str() + p + 3));
      } catch (const std::exception& e) {
        checks.push_back({"GPU " + std::to_string(i), State::Warn, e.what(), ""});
      }
    }
  }

  // NVRTC and nvJitLink.
  if (const backend::cuda::Nvrtc* nv = backend::cuda::nvrtc()) {
    const auto archs = nv->supported_archs();
    std::string detail = std::to_string(nv->version().major) + "." + std::to_string(nv->version().minor) + " (" +
                         nv->library_path() + ")";
    if (!archs.empty()) detail += ", compiles for " + arch_name(archs.front()) + " .. " + arch_name(archs.back());
    State st = State::Ok;
    std::string fix;
    if (best_sm > 0 && !archs.empty() && (best_sm < archs.front() || best_sm > archs.back())) {
      st = State::Error;
      fix = "this NVRTC cannot compile for the GPU (" + arch_name(best_sm) + "): install a CUDA toolkit that knows it";
      broken = true;
    }
    checks.push_back({"NVRTC", st, detail, fix});
  } else {
    const bool need = !gpus.empty();
    checks.push_back({"NVRTC", need ? State::Error : State::Missing, backend::cuda::nvrtc_unavailable_reason(),
                      "install the CUDA toolkit's NVRTC (libnvrtc.so, CUDA 12 or 13) and set CUDA_HOME, or add its lib64 "
                      "to LD_LIBRARY_PATH" + std::string(need ? ": without it no kernel can be compiled for the GPU" : "")});
    broken |= need;
  }
  if (const simt::gpu::NvJitLink* jl = simt::gpu::nvjitlink()) {
    checks.push_back({"nvJitLink", State::Ok,
                      std::to_string(jl->major()) + "." + std::to_string(jl->minor()) + " (" + jl->path() +
                          "): SIMT kernels are linked to cubins with their contract's .reqntid",
                      ""});
  } else {
    checks.push_back({"nvJitLink", State::Warn, simt::gpu::nvjitlink_unavailable_reason(),
                      "optional: without it a SIMT kernel's PTX is compiled by the driver when it is loaded (slower "
                      "first launches); it comes with the CUDA toolkit (libnvJitLink.so)"});
  }

  // The disk cache.
  if (cache::DiskCache* dc = cache::DiskCache::global()) {
    std::error_code ec;
    const auto entries = dc->list();
    unsigned long long bytes = 0;
    for (const auto& e : entries) bytes += e.file_bytes;
    std::string detail = dc->dir() + ": " + std::to_string(entries.size()) + " entries, " + human_bytes(bytes) + " of " +
                         human_bytes(dc->max_bytes());
    std::filesystem::path existing;
    const bool exists = std::filesystem::is_directory(dc->dir(), ec);
    const bool ok = writable_dir_or_parent(dc->dir(), existing);
    if (!exists) detail += " (created on the first write)";
    checks.push_back({"disk cache", ok ? State::Ok : State::Warn, detail,
                      ok ? "" : "cannot write " + existing.string() + ": set CTILE_CACHE_DIR to a writable directory"});
  } else {
    checks.push_back({"disk cache", State::Info, "disabled (CTILE_CACHE=0, or no usable home directory)",
                      "unset CTILE_CACHE (or set CTILE_CACHE_DIR) to keep compiled kernels between runs"});
  }

  // compute-sanitizer, for ctile sanitize.
  const std::string cs = find_tool("compute-sanitizer");
  checks.push_back({"compute-sanitizer", cs.empty() ? State::Info : State::Ok,
                    cs.empty() ? "not found in PATH, $CUDA_HOME/bin or /usr/local/cuda/bin (ctile sanitize then runs the "
                                 "CPU backend's race checker)"
                               : cs,
                    ""});

  // Which backend a program would use.
  std::string backend;
  const char* env = std::getenv("CTILE_BACKEND");
  const std::string why = env && *env ? std::string("CTILE_BACKEND=") + env : "CTILE_BACKEND unset";
  try {
    const Device d = default_device();
    backend = backend_name(d);
    checks.push_back({"backend", State::Ok,
                      d.str() + " (" + why + (d.kind == DeviceKind::Cpu && gpus.empty() && !(env && *env) ? ", no usable GPU" : "") + ")",
                      ""});
  } catch (const UserError& e) {
    backend = "none";
    broken = true;
    checks.push_back({"backend", State::Error, e.message(), "unset CTILE_BACKEND, or set it to cpu"});
  }

  const bool gpu_ready = !broken && !gpus.empty() && backend::cuda::nvrtc() != nullptr;
  const int status = broken ? 1 : gpu_ready ? 0 : 2;
  const std::string result = broken      ? "something needs fixing (see [FAIL] above)"
                             : gpu_ready ? "kernels run on the GPU (" + gpus.front() + ")"
                                         : "kernels run on the CPU backend only: no usable GPU here";
  if (o.json) {
    std::string j = "{\"ctile\": " + json_str(CTILE_VERSION_STRING) + ", \"status\": " +
                    json_str(broken ? "error" : gpu_ready ? "gpu" : "cpu-only") + ", \"exit\": " + std::to_string(status) +
                    ", \"backend\": " + json_str(backend) + ", \"gpus\": [";
    for (std::size_t i = 0; i < gpus.size(); ++i) j += (i ? ", " : "") + json_str(gpus[i]);
    j += "], \"checks\": [";
    for (std::size_t i = 0; i < checks.size(); ++i)
      j += std::string(i ? ", " : "") + "{\"name\": " + json_str(checks[i].name) + ", \"state\": " +
           json_str(word(checks[i].state)) + ", \"detail\": " + json_str(checks[i].detail) + ", \"fix\": " +
           json_str(checks[i].fix) + "}";
    j += "]}";
    std::printf("%s\n", j.c_str());
    return status;
  }
  std::printf("ctile %s doctor\n", CTILE_VERSION_STRING);
  for (const Check& c : checks) {
    std::printf("  %s %-18s %s\n", tag(c.state), c.name.c_str(), c.detail.c_str());
    if (!c.fix.empty()) std::printf("         %-18s fix: %s\n", "", c.fix.c_str());
  }
  std::printf("result: %s (exit status %d)\n", result.c_str(), status);
  return status;
}

}  // namespace ctile::tool
