#undef cpu_backend  // this file uses the real CPU backend (see CMakeLists.txt)
#include "emulator.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>

#include "ctile/core/error.hpp"
#include "../../../src/backend/cuda/cuda_backend.hpp"
#include "../../../src/platform/kernel.hpp"

namespace cuda_emu {

namespace be = ctile::backend;
namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string hex(std::size_t h) {
  char b[32];
  std::snprintf(b, sizeof b, "%016zx", h);
  return b;
}

// Runs a shell command; throws with its output when it fails.
void run(const std::string& cmd, const fs::path& log) {
  if (std::system((cmd + " > " + log.string() + " 2>&1").c_str()) != 0)
    throw std::runtime_error("emulation build failed: " + cmd + "\n" + read_file(log).substr(0, 6000));
}

// Files are built under a unique name and renamed into place, so concurrent test processes can share
// the cache directory (CTILE_EMU_CACHE, kept across runs: a rebuild only compiles what changed).
// No multiply-add contraction: the device code rounds each float op as the GPU does (philox.h).
const std::string kFlags = std::string(" -std=c++20 -O1 -g0 -w -fPIC -pthread -ffp-contract=off -I") + CTILE_EMU_INCLUDE;

// A precompiled header of the prelude and the device library (halves every kernel's build time).
const fs::path& pch_header() {
  static const fs::path header = [] {
    std::string key = read_file(CTILE_EMU_PRELUDE) + kFlags;
    for (const auto& h : ctile::backend::cuda::device_headers()) key += h.text;
    const fs::path dir = fs::path(CTILE_EMU_CACHE) / ("pch-" + hex(std::hash<std::string>{}(key)));
    const fs::path hdr = dir / "emu_all.h";
    if (!fs::exists(dir / "emu_all.h.gch")) {
      const fs::path tmp = fs::path(CTILE_EMU_CACHE) / ("tmp-" + std::to_string(getpid()));
      fs::create_directories(tmp);
      std::ofstream(tmp / "emu_all.h") << "#include \"" << CTILE_EMU_PRELUDE << "\"\n#include \"ctile/device/tile.h\"\n";
      run(std::string(CTILE_EMU_CXX) + kFlags + " -x c++-header " + (tmp / "emu_all.h").string() + " -o " +
              (tmp / "emu_all.h.gch").string(),
          tmp / "pch.log");
      std::error_code ec;
      fs::rename(tmp, dir, ec);  // another process may have won the race: then use its copy
      fs::remove_all(tmp, ec);
    }
    return hdr;
  }();
  return header;
}

}  // namespace

LaunchFn build(const ctile::backend::cuda::GeneratedKernel& g) {
  static std::mutex mu;
  static std::map<std::string, LaunchFn> loaded;
  std::lock_guard lk(mu);
  if (auto it = loaded.find(g.source); it != loaded.end()) return it->second;
  const fs::path& pch = pch_header();
  const std::string id = hex(std::hash<std::string>{}(g.source + pch.string()));
  const fs::path so = fs::path(CTILE_EMU_CACHE) / (g.entry + "-" + id + ".so");
  if (!fs::exists(so)) {
    const std::string tmp = (fs::path(CTILE_EMU_CACHE) / (g.entry + "-" + id + "-" + std::to_string(getpid()))).string();
    {
      std::ofstream o(tmp + ".cpp");
      o << g.source << "\n"
        << "extern \"C\" void ct_emu_launch(const void* params, long long grid_x, unsigned long long smem) {\n"
        << "  ::ct_emu::launch(" << g.threads << ", grid_x, smem, [&] { " << g.entry << "(*static_cast<const "
        << g.entry << "_params*>(params)); });\n"
        << "}\n";
    }
    run(std::string(CTILE_EMU_CXX) + kFlags + " -shared -include " + pch.string() + " " + tmp + ".cpp -o " + tmp + ".so",
        tmp + ".log");
    std::error_code ec;
    fs::rename(tmp + ".so", so, ec);
    fs::remove(tmp + ".cpp", ec);
    fs::remove(tmp + ".log", ec);
  }
  void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) throw std::runtime_error(std::string("dlopen: ") + dlerror());
  void* f = dlsym(h, "ct_emu_launch");
  if (!f) throw std::runtime_error("ct_emu_launch not found in " + so.string());
  LaunchFn fn;
  static_assert(sizeof(fn) == sizeof(f));
  std::memcpy(&fn, &f, sizeof f);
  loaded.emplace(g.source, fn);
  return fn;
}

namespace {

// The emulator's tensor maps (emu/ct_emu.h's EmuTensorMap, the same layout), checked like the
// platform checks a real one (UserError for a view a tensor map cannot describe).
struct EmuTensorMap {
  const void* data;
  long long cols, rows, row_bytes;
  int box_cols, box_rows, swizzle, elem_bytes;
  int rank;
  long long lead[3], lead_bytes[3];
};
void write_emulated_map(std::byte* out, const ctile::backend::cuda::GeneratedKernel::Map& m, const be::TensorArg& t) {
  const auto slot = ctile::backend::cuda::tensor_map_slot(m);
  const int rank = static_cast<int>(t.shape.size());
  const auto e = ctile::platform::tensor_map_encoding(slot, t.data, t.shape.data(), t.strides.data(), rank);
  if (!e.error.empty()) throw ctile::UserError("argument " + std::to_string(m.use.param) + ": " + e.error);
  std::memset(out, 0, 128);
  if (e.empty) return;
  EmuTensorMap em{t.data, static_cast<long long>(e.dims[0]), static_cast<long long>(e.dims[1]),
                  static_cast<long long>(e.strides_bytes[0]), static_cast<int>(e.box[0]), static_cast<int>(e.box[1]),
                  m.use.swizzle, static_cast<int>(ctile::dtype_size(m.use.dtype)), static_cast<int>(e.rank), {}, {}};
  for (std::uint32_t i = 2; i < e.rank; ++i) {
    em.lead[i - 2] = static_cast<long long>(e.dims[i]);
    em.lead_bytes[i - 2] = static_cast<long long>(e.strides_bytes[i - 1]);
  }
  static_assert(sizeof em <= 128);
  std::memcpy(out, &em, sizeof em);
}

class EmuCompiled final : public be::CompiledKernel {
 public:
  EmuCompiled(std::shared_ptr<const ctile::ir::Kernel> k, ctile::backend::cuda::GeneratedKernel g, LaunchFn fn)
      : k_(std::move(k)), g_(std::move(g)), fn_(fn) {}
  const ctile::ir::Kernel& kernel() const override { return *k_; }
  const ctile::backend::cuda::GeneratedKernel& generated() const { return g_; }
  LaunchFn fn() const { return fn_; }

 private:
  std::shared_ptr<const ctile::ir::Kernel> k_;
  ctile::backend::cuda::GeneratedKernel g_;
  LaunchFn fn_;
};

class EmuBackend final : public be::Backend {
 public:
  std::string_view name() const override { return "cuda-emulation"; }
  std::shared_ptr<const be::CompiledKernel> compile(std::shared_ptr<const ctile::ir::Kernel> k) override {
    ctile::ir::verify(*k);
    // The backend's options, so CTILE_PREFETCH=1 (a second CTest run) reaches the generator.
    auto g = ctile::backend::cuda::generate(*k, ctile::backend::cuda::codegen_options_from_env(90));
    LaunchFn fn = build(g);
    return std::make_shared<EmuCompiled>(std::move(k), std::move(g), fn);
  }
  void run(const be::CompiledKernel& ck, const be::LaunchConfig& cfg, std::span<const be::ArgValue> args) override {
    const auto& c = dynamic_cast<const EmuCompiled&>(ck);
    const auto params = ctile::backend::cuda::pack_params(c.kernel(), cfg, args, &c.generated(), write_emulated_map);
    std::int64_t blocks = 0;
    if (!ctile::checked_numel(cfg.grid, blocks)) throw ctile::UserError("bad grid");
    if (blocks == 0) return;
    c.fn()(params.data(), std::min<std::int64_t>(blocks, 3), c.generated().smem_bytes);
  }
};

}  // namespace

std::shared_ptr<be::Backend> backend() {
  static const auto b = std::make_shared<EmuBackend>();
  return b;
}

}  // namespace cuda_emu

// Stands in for cpu_backend() in the CPU backend's own tests, compiled into test_cuda_emulation with
// -Dcpu_backend=emu_backend: every kernel they launch runs through the generated CUDA code.
namespace ctile::backend {
std::shared_ptr<Backend> emu_backend() { return cuda_emu::backend(); }
}  // namespace ctile::backend
