// The non-template half of launching: argument validation, the kernel cache (one trace and one
// compiled kernel per specialisation), dependency tracking and enqueueing.
#include "ctile/runtime/launch.hpp"

#include <cxxabi.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "../backend/cuda/cuda_backend.hpp"
#include "kernel_cache.hpp"
#include "stage_timings.hpp"

namespace ctile::detail {

void plan_error(const char* action, const std::string& kernel, int arg, const std::string& param, const std::string& msg) {
  const std::string head = std::string(action) + " of kernel '" + kernel + "'";
  if (arg < 0) throw UserError(head + ": " + msg);
  throw UserError(head + ", argument " + std::to_string(arg) + " (" + param + "): " + msg);
}

void launch_error(const std::string& kernel, int arg, const std::string& param, const std::string& msg) {
  plan_error("launch", kernel, arg, param, msg);
}

std::string param_desc(const ParamSpec& s, int rank) {
  std::string r = param_kind_name(s.kind) + "<" + std::string(dtype_name(s.dtype));
  if (s.kind != ParamSpec::Kind::Scalar && s.kind != ParamSpec::Kind::Const) r += ", " + std::to_string(rank);
  return r + ">";
}

void plan_shape(LaunchPlan& p, const std::string& kernel, int arg, const ParamSpec& spec, int rank, const Shape& shape) {
  const int have = static_cast<int>(shape.size());
  if (have != rank)
    plan_error(p.action, kernel, arg, param_desc(spec, rank),
               "the kernel expects a rank-" + std::to_string(rank) + " tensor, got rank " + std::to_string(have) +
                   " with shape " + shape_str(shape));
}

void plan_grid(LaunchPlan& p, const std::string& kernel, int arg, const ParamSpec& spec, int rank, const Shape& shape) {
  if (spec.kind != ParamSpec::Kind::Piece) return;
  Shape g(shape.size());
  for (std::size_t i = 0; i < g.size(); ++i) g[i] = ceil_div(shape[i], spec.tile_shape[i]);
  if (p.grid && *p.grid != g)
    plan_error(p.action, kernel, arg, param_desc(spec, rank),
               "its partition has grid " + shape_str(g) + " (tensor " + shape_str(shape) + " in tiles of " +
                   shape_str(spec.tile_shape) + ") but argument " + std::to_string(p.grid_source) + " has grid " +
                   shape_str(*p.grid) + "; every Mut argument must have the same grid");
  if (!p.grid) {
    p.grid = g;
    p.grid_source = arg;
  }
}

void plan_tensor(LaunchPlan& p, const std::string& kernel, int arg, const ParamSpec& spec, int rank,
                 const std::shared_ptr<const TensorCore>& core, bool writes) {
  plan_shape(p, kernel, arg, spec, rank, core->shape);
  if (p.device && !(*p.device == core->storage->device))
    plan_error(p.action, kernel, arg, param_desc(spec, rank),
               "the tensor lives on " + core->storage->device.str() + " but earlier arguments live on " + p.device->str());
  p.device = core->storage->device;
  plan_grid(p, kernel, arg, spec, rank, core->shape);
  backend::ArgValue av;
  av.tensor = core->arg();
  p.args.push_back(av);
  ParamSpec s = spec;
  s.facts = tensor_facts(*core);  // part of the specialisation (and of the cache key)
  p.specs.push_back(std::move(s));
  (writes ? p.writes : p.reads).push_back(core);
  (writes ? p.write_arg : p.read_arg).push_back(arg);
}

ir::TensorFacts tensor_facts(bool aligned16, const Shape& shape, const Shape& strides) {
  ir::TensorFacts f;
  f.aligned16 = aligned16;
  const std::size_t rank = std::min(shape.size(), strides.size());
  for (std::size_t d = 0; d < rank; ++d) {
    const std::uint32_t bit = std::uint32_t{1} << d;
    if (shape[d] % 16 == 0) f.extent_div16 |= bit;
    if (d + 1 < rank && (strides[d] % 16 == 0 || shape[d] == 1)) f.stride_div16 |= bit;
  }
  if (rank > 0) f.contiguous_last = strides[rank - 1] == 1 || shape[rank - 1] == 1;
  // Offsets fit in 32 bits: the farthest element is below 2^31 elements from element 0.
  std::int64_t far = 0;
  bool small = true;
  for (std::size_t d = 0; d < rank && small; ++d) {
    if (shape[d] <= 0) {
      far = 0;
      break;  // no elements: nothing is ever accessed
    }
    if (strides[d] == INT64_MIN) {
      small = false;
      break;
    }
    const std::int64_t s = strides[d] < 0 ? -strides[d] : strides[d];
    if (s != 0 && shape[d] - 1 > (std::int64_t{1} << 31) / s) small = false;
    else far += (shape[d] - 1) * s;
    small = small && far < (std::int64_t{1} << 31) && shape[d] < (std::int64_t{1} << 31);
  }
  f.small = small;
  return f;
}

ir::TensorFacts tensor_facts(const TensorCore& c) {
  return tensor_facts(reinterpret_cast<std::uintptr_t>(c.data()) % 16 == 0, c.shape, c.strides);
}

ir::Scalar scalar_argument(const std::string& kernel, int arg, const ParamSpec& spec, ir::Scalar given,
                           bool given_is_float, const char* action) {
  const ir::Scalar v = ir::scalar_cast(given, spec.dtype);
  if (!given_is_float && is_integer(spec.dtype) && v.i != given.i)
    plan_error(action, kernel, arg, param_desc(spec, 0),
               "the value " + std::to_string(given.i) + " does not fit in " + std::string(dtype_name(spec.dtype)));
  return v;
}

namespace {

// The name of the function symbol at `addr` in the ELF file `path` loaded at `base`, searching the
// full symbol table (.symtab): dladdr only sees exported symbols, and kernels are often static or
// in an anonymous namespace. Empty when the file is stripped or unreadable.
std::string elf_symbol_at(const char* path, std::uintptr_t base, std::uintptr_t addr) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  struct stat st{};
  std::string result;
  if (::fstat(fd, &st) == 0 && st.st_size > static_cast<off_t>(sizeof(Elf64_Ehdr))) {
    void* map = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (map != MAP_FAILED) {
      const auto* bytes = static_cast<const unsigned char*>(map);
      const auto size = static_cast<std::uint64_t>(st.st_size);
      const auto* eh = static_cast<const Elf64_Ehdr*>(map);
      const bool ok = std::memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_ident[EI_CLASS] == ELFCLASS64 &&
                      eh->e_shoff + std::uint64_t{eh->e_shnum} * sizeof(Elf64_Shdr) <= size;
      // Position-independent files hold addresses relative to their load base.
      const std::uintptr_t want = ok && eh->e_type == ET_EXEC ? addr : addr - base;
      for (int i = 0; ok && result.empty() && i < eh->e_shnum; ++i) {
        const auto* sh = reinterpret_cast<const Elf64_Shdr*>(bytes + eh->e_shoff) + i;
        if (sh->sh_type != SHT_SYMTAB || sh->sh_link >= eh->e_shnum) continue;
        const auto* strh = reinterpret_cast<const Elf64_Shdr*>(bytes + eh->e_shoff) + sh->sh_link;
        if (sh->sh_offset + sh->sh_size > size || strh->sh_offset + strh->sh_size > size) continue;
        const auto* syms = reinterpret_cast<const Elf64_Sym*>(bytes + sh->sh_offset);
        for (std::uint64_t k = 0; k < sh->sh_size / sizeof(Elf64_Sym); ++k) {
          if (ELF64_ST_TYPE(syms[k].st_info) == STT_FUNC && syms[k].st_value == want && syms[k].st_name < strh->sh_size) {
            const char* n = reinterpret_cast<const char*>(bytes + strh->sh_offset + syms[k].st_name);
            result.assign(n, ::strnlen(n, strh->sh_size - syms[k].st_name));
            break;
          }
        }
      }
      ::munmap(map, static_cast<std::size_t>(st.st_size));
    }
  }
  ::close(fd);
  return result;
}

// "ns::gemm<64>(ctile::Mut<...>, ...)" -> "ns::gemm<64>"; "{anonymous}::" is dropped.
std::string readable(const std::string& mangled) {
  int status = 0;
  char* dem = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  std::string name = status == 0 && dem ? dem : mangled;
  std::free(dem);
  for (std::size_t p; (p = name.find("(anonymous namespace)::")) != std::string::npos;) name.erase(p, 23);
  if (name.rfind("void ", 0) == 0) name.erase(0, 5);  // templates demangle with their return type
  int depth = 0;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '<') ++depth;
    else if (name[i] == '>') --depth;
    else if (name[i] == '(' && depth == 0) {
      name.resize(i);
      break;
    }
  }
  return name;
}

}  // namespace

std::string kernel_name_of(const void* fn) {
  static std::mutex mu;
  static std::map<const void*, std::string> names;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = names.find(fn); it != names.end()) return it->second;
  std::string name;
  Dl_info info{};
  if (dladdr(fn, &info)) {
    // dladdr names the nearest exported symbol, which is another function unless it starts at fn.
    if (info.dli_sname && info.dli_saddr == fn) name = readable(info.dli_sname);
    else if (info.dli_fname) {
      const std::string sym = elf_symbol_at(info.dli_fname, reinterpret_cast<std::uintptr_t>(info.dli_fbase),
                                            reinterpret_cast<std::uintptr_t>(fn));
      if (!sym.empty()) name = readable(sym);
    }
  }
  if (name.empty()) {
    std::ostringstream os;
    os << "kernel@" << fn;
    name = os.str();
  }
  names.emplace(fn, name);
  return name;
}

backend::Backend& backend_for(const Device& d) {
  if (d.kind == DeviceKind::Cpu) return *backend::cpu_backend();
  return backend::cuda::backend(d.index);
}

namespace {

struct CacheKey {
  const void* fn;
  std::vector<ParamSpec> specs;
  int grid_rank;
  std::string backend;
  bool operator<(const CacheKey& o) const {
    if (fn != o.fn) return std::less<const void*>()(fn, o.fn);
    if (grid_rank != o.grid_rank) return grid_rank < o.grid_rank;
    if (backend != o.backend) return backend < o.backend;
    if (specs.size() != o.specs.size()) return specs.size() < o.specs.size();
    // ParamSpec's order compares Const floats by bit pattern: a strict weak order even with NaN.
    for (std::size_t i = 0; i < specs.size(); ++i)
      if (!(specs[i] == o.specs[i])) return specs[i] < o.specs[i];
    return false;
  }
};

// One specialisation in the cache. The first launch that misses compiles it (without holding the
// cache lock, so other kernels and cache hits are not held up); launches of the same
// specialisation meanwhile wait for it and share its result or its error. A failed compile is
// removed from the cache, so a later launch tries again.
struct CacheEntry {
  std::mutex mu;
  std::condition_variable cv;
  bool finished = false;
  std::shared_ptr<const backend::CompiledKernel> ck;  // set on success
  std::exception_ptr error;                           // set on failure
};

std::mutex g_cache_mu;
std::map<CacheKey, std::shared_ptr<CacheEntry>>& cache() {
  static auto* m = new std::map<CacheKey, std::shared_ptr<CacheEntry>>();
  return *m;
}
// Lookups per kernel function (guarded by g_cache_mu).
struct Counters {
  std::uint64_t hits = 0, compiles = 0;
};
std::map<const void*, Counters>& counters() {
  static auto* m = new std::map<const void*, Counters>();
  return *m;
}

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::strcmp(v, "0") != 0;
}

// Lowest and one-past-highest byte a view can touch.
std::pair<const std::byte*, const std::byte*> byte_range(const TensorCore& c) {
  const std::int64_t es = dtype_size(c.dtype);
  std::int64_t hi = 0;
  for (std::size_t i = 0; i < c.shape.size(); ++i) {
    if (c.shape[i] == 0) return {nullptr, nullptr};
    hi += (c.shape[i] - 1) * c.strides[i];
  }
  const std::byte* base = c.data();
  return {base, base + (hi + 1) * es};
}

}  // namespace

Device launch_device(const LaunchPlan& plan) { return plan.device ? *plan.device : default_device(); }

KernelCacheStats kernel_cache_stats() {
  std::lock_guard<std::mutex> lock(g_cache_mu);
  KernelCacheStats st;
  st.specialisations = cache().size();
  for (const auto& [fn, c] : counters()) {
    st.hits += c.hits;
    st.compiles += c.compiles;
  }
  return st;
}

KernelCacheStats kernel_cache_stats_of(const void* fn) {
  std::lock_guard<std::mutex> lock(g_cache_mu);
  KernelCacheStats st;
  for (const auto& [key, entry] : cache())
    if (key.fn == fn) ++st.specialisations;
  if (auto it = counters().find(fn); it != counters().end()) {
    st.hits = it->second.hits;
    st.compiles = it->second.compiles;
  }
  return st;
}

CacheLookup find_or_compile(const void* fn, Tracer tracer, const std::string& name, const std::vector<ParamSpec>& specs,
                            int grid_rank, backend::Backend& be) {
  CacheKey key{fn, specs, grid_rank, std::string(be.name())};
  std::shared_ptr<CacheEntry> entry;
  bool compile_here = false;
  {
    std::lock_guard<std::mutex> lock(g_cache_mu);
    auto& slot = cache()[key];
    if (!slot) {
      slot = std::make_shared<CacheEntry>();
      compile_here = true;
    }
    entry = slot;
    Counters& c = counters()[fn];
    ++(compile_here ? c.compiles : c.hits);
  }
  if (!compile_here) {
    std::unique_lock<std::mutex> lk(entry->mu);
    entry->cv.wait(lk, [&] { return entry->finished; });
    if (entry->error) std::rethrow_exception(entry->error);
    return {entry->ck, true};
  }
  std::shared_ptr<const backend::CompiledKernel> ck;
  try {
    const bool timings = env_flag("CTILE_TIMINGS");
    (void)take_stage_timings();
    const auto t0 = std::chrono::steady_clock::now();
    std::shared_ptr<const ir::Kernel> k = tracer(fn, name, specs, grid_rank);
    const double trace_ms = ms_since(t0);
    if (env_flag("CTILE_DUMP_IR")) std::fprintf(stderr, "%s", ir::print(*k).c_str());
    const auto t1 = std::chrono::steady_clock::now();
    ck = be.compile(k);
    const double compile_ms = ms_since(t1);
    const auto stages = take_stage_timings();
    if (timings) {
      std::string line = "ctile: timings of kernel '" + name + "' on " + std::string(be.name()) + ": trace " +
                         cat(trace_ms) + " ms";
      for (const auto& [stage, ms] : stages) line += ", " + stage + " " + cat(ms) + " ms";
      line += "; compile total " + cat(compile_ms) + " ms\n";
      std::fputs(line.c_str(), stderr);
    }
    std::lock_guard<std::mutex> lk(entry->mu);
    entry->ck = ck;
    entry->finished = true;
  } catch (...) {
    {
      std::lock_guard<std::mutex> lock(g_cache_mu);
      cache().erase(key);  // not cached: the next launch compiles again
    }
    {
      std::lock_guard<std::mutex> lk(entry->mu);
      entry->error = std::current_exception();
      entry->finished = true;
    }
    entry->cv.notify_all();
    throw;
  }
  entry->cv.notify_all();
  return {ck, false};
}

Event enqueue_launch(const void* fn, Tracer tracer, const std::string& name, LaunchPlan& plan,
                     const std::optional<Shape>& explicit_grid, bool race_check, const Stream& stream) {
  // The grid.
  Shape grid;
  if (plan.grid) {
    if (explicit_grid && *explicit_grid != *plan.grid)
      launch_error(name, -1, "",
                   "the explicit grid " + shape_str(*explicit_grid) + " differs from the grid " + shape_str(*plan.grid) +
                       " of the partition passed as argument " + std::to_string(plan.grid_source));
    grid = *plan.grid;
  } else if (explicit_grid) {
    grid = *explicit_grid;
    if (grid.empty() || static_cast<int>(grid.size()) > kMaxRank)
      launch_error(name, -1, "", "the grid " + shape_str(grid) + " must have 1 to 6 axes");
  } else {
    launch_error(name, -1, "", "the kernel has no Mut parameter to take the grid from; give it with .grid({...})");
  }
  std::int64_t blocks = 0;
  if (!checked_numel(grid, blocks)) launch_error(name, -1, "", "the grid " + shape_str(grid) + " overflows 64-bit block ids");
  if (blocks == 0) {
    std::string why = plan.grid ? " (argument " + std::to_string(plan.grid_source) + " has a zero extent)" : "";
    launch_error(name, -1, "", "the grid " + shape_str(grid) + " is empty" + why + "; there is nothing to launch");
  }
  // The stream's device must be where the data is.
  if (plan.device && !(*plan.device == stream.device()))
    launch_error(name, -1, "", "the arguments live on " + plan.device->str() + " but the stream runs on " + stream.device().str());
  // Memory written by the kernel must not overlap any other argument (possible only through
  // unchecked borrowing of foreign memory; the safe API cannot alias).
  for (std::size_t w = 0; w < plan.writes.size(); ++w) {
    const auto [wlo, whi] = byte_range(*plan.writes[w]);
    auto clash = [&](const TensorCore& o, int other) {
      const auto [lo, hi] = byte_range(o);
      if (wlo && lo && wlo < hi && lo < whi)
        launch_error(name, plan.write_arg[w], "written",
                     "its memory overlaps argument " + std::to_string(other) + "; a written argument must not alias another");
    };
    for (std::size_t r = 0; r < plan.reads.size(); ++r) clash(*plan.reads[r], plan.read_arg[r]);
    for (std::size_t o = w + 1; o < plan.writes.size(); ++o) clash(*plan.writes[o], plan.write_arg[o]);
  }

  // A CUDA launch runs up to 2^31 - 1 tile blocks. A race-checked launch on a GPU runs on the CPU
  // interpreter (the race checker lives there) over copies of its arguments (backend/cuda).
  const bool on_gpu = stream.device().kind == DeviceKind::Cuda;
  static const bool race_check_env = env_flag("CTILE_RACE_CHECK");  // read at the first launch
  const bool checked = race_check || race_check_env;
  if (on_gpu && blocks > 0x7fffffff && !checked)
    launch_error(name, -1, "",
                 "the grid " + shape_str(grid) + " has " + std::to_string(blocks) +
                     " tile blocks; a launch on a GPU takes at most 2^31 - 1 (use larger tiles)");
  if (on_gpu && checked && !race_check) {
    static std::once_flag noted;
    std::call_once(noted, [] {
      std::fprintf(stderr, "ctile: CTILE_RACE_CHECK is set: launches on GPUs run on the CPU interpreter with the race "
                           "checker (slow)\n");
    });
  }

  // Trace and compile once per specialisation (single flight per specialisation).
  backend::Backend& be = backend_for(stream.device());
  const int grid_rank = static_cast<int>(grid.size());
  const std::shared_ptr<const backend::CompiledKernel> ck =
      find_or_compile(fn, tracer, name, plan.specs, grid_rank, be).kernel;

  backend::LaunchConfig cfg;
  cfg.grid = grid;
  cfg.race_check = checked;
  cfg.kernel_name = name;

  // Dependencies: readers wait for the last writer, writers for everything before them.
  std::vector<Event> deps;
  for (const auto& c : plan.reads)
    for (Event& e : c->storage->deps_for_read()) deps.push_back(std::move(e));
  for (const auto& c : plan.writes)
    for (Event& e : c->storage->deps_for_write()) deps.push_back(std::move(e));

  // The task keeps every view alive until it has run (and drops them before its event completes).
  std::vector<std::shared_ptr<const TensorCore>> keep = plan.reads;
  keep.insert(keep.end(), plan.writes.begin(), plan.writes.end());
  backend::Backend* bp = &be;
  Stream target = stream;  // a handle; enqueue is not const
  Event done = target.enqueue(
      [bp, ck, cfg, args = std::move(plan.args), keep = std::move(keep)]() { bp->run(*ck, cfg, args); },
      std::move(deps));
  for (const auto& c : plan.reads) c->storage->record_read(done);
  for (const auto& c : plan.writes) c->storage->record_write(done);
  return done;
}

}  // namespace ctile::detail
