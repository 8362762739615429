// The non-template half of launching: argument validation, the kernel cache (one trace and one
// compiled kernel per specialisation), dependency tracking and enqueueing.
#include "ctile/runtime/launch.hpp"

#include <typeinfo>

#include <cxxabi.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>

#include "../backend/cuda/cuda_backend.hpp"
#include "../core/dump.hpp"
#include "../platform/command.hpp"
#include "../platform/kernel.hpp"
#include "capture.hpp"
#include "kernel_cache.hpp"
#include "stage_timings.hpp"

namespace ctile::detail {

void plan_error(const char* action, const std::string& kernel, int arg, const std::string& param, const std::string& msg) {
  const std::string head = std::string(action) + " of kernel '" + kernel + "'";
  if (arg < 0) throw UserError(head + ": " + msg);
  throw UserError(head + ", argument " + std::to_string(arg) + " (" + param + "): " + msg);
}

void rethrow_at(const std::source_location& loc) {
  try {
    throw;
  } catch (const UserError& e) {
    if (e.where().known()) throw;
    const SourceLoc at(loc);
    if (typeid(e) == typeid(UserError)) throw UserError(e.message(), at);
    if (typeid(e) == typeid(RaceError)) throw RaceError(e.message(), at);
    if (typeid(e) == typeid(OutOfMemoryError)) throw OutOfMemoryError(e.message(), at);
    throw;  // a UserError type this function does not know: unchanged rather than sliced
  }
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

bool merge_grid(std::int64_t* grid, int& rank, const std::int64_t* g, int r) {
  if (rank < 0) {
    std::copy(g, g + r, grid);
    rank = r;
    return true;
  }
  const int common = std::min(rank, r);
  if (!std::equal(g, g + common, grid)) return false;
  for (int i = common; i < r; ++i)
    if (g[i] != 1) return false;
  for (int i = common; i < rank; ++i)
    if (grid[i] != 1) return false;
  if (r > rank) {
    std::copy(g + rank, g + r, grid + rank);
    rank = r;
  }
  return true;
}

namespace {

[[noreturn]] void grid_conflict(const char* action, const std::string& kernel, int arg, const std::string& param,
                                const Shape& g, const Shape& shape, const Shape& tile, int source, const Shape& grid) {
  plan_error(action, kernel, arg, param,
             "its partition has grid " + shape_str(g) + " (tensor " + shape_str(shape) + " in tiles of " + shape_str(tile) +
                 ") but argument " + std::to_string(source) + " has grid " + shape_str(grid) +
                 "; the grids of the Mut arguments must be equal, except that a grid of lower rank may stand for one "
                 "whose further axes have extent 1");
}

}  // namespace

void plan_grid(LaunchPlan& p, const std::string& kernel, int arg, const ParamSpec& spec, int rank, const Shape& shape) {
  if (spec.kind != ParamSpec::Kind::Piece) return;
  Shape g(shape.size());
  for (std::size_t i = 0; i < g.size(); ++i) g[i] = ceil_div(shape[i], spec.tile_shape[i]);
  std::int64_t grid[kMaxRank] = {};
  int grid_rank = -1;
  if (p.grid) {
    std::copy(p.grid->begin(), p.grid->end(), grid);
    grid_rank = static_cast<int>(p.grid->size());
  }
  if (!merge_grid(grid, grid_rank, g.data(), static_cast<int>(g.size())))
    grid_conflict(p.action, kernel, arg, param_desc(spec, rank), g, shape, spec.tile_shape, p.grid_source, *p.grid);
  if (!p.grid) p.grid_source = arg;
  p.grid = Shape(grid, grid + grid_rank);
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
    if (shape[d] % 8 == 0) f.extent_div8 = static_cast<std::uint8_t>(f.extent_div8 | bit);
    if (d + 1 < rank && (strides[d] % 16 == 0 || shape[d] == 1)) f.stride_div16 |= bit;
    if (d + 1 < rank && (strides[d] % 8 == 0 || shape[d] == 1)) f.stride_div8 = static_cast<std::uint8_t>(f.stride_div8 | bit);
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
  // A view never changes, so its facts are computed once (packed: valid, aligned16, contiguous_last,
  // small, 6 bits of extents and 6 of strides divisible by 16, 6 of extents and 6 of strides
  // divisible by 8).
  std::uint64_t b = c.facts_cache.load(std::memory_order_relaxed);
  if (b & 1u) {
    ir::TensorFacts f;
    f.aligned16 = (b & 2u) != 0;
    f.contiguous_last = (b & 4u) != 0;
    f.small = (b & 8u) != 0;
    f.extent_div16 = (b >> 8) & 0x3fu;
    f.stride_div16 = (b >> 16) & 0x3fu;
    f.extent_div8 = static_cast<std::uint8_t>((b >> 24) & 0x3fu);
    f.stride_div8 = static_cast<std::uint8_t>((b >> 32) & 0x3fu);
    return f;
  }
  const ir::TensorFacts f = tensor_facts(reinterpret_cast<std::uintptr_t>(c.data()) % 16 == 0, c.shape, c.strides);
  b = 1u | (f.aligned16 ? 2u : 0u) | (f.contiguous_last ? 4u : 0u) | (f.small ? 8u : 0u) | (f.extent_div16 & 0x3fu) << 8 | (f.stride_div16 & 0x3fu) << 16 |
      (f.extent_div8 & 0x3fu) << 24 | std::uint64_t{f.stride_div8 & 0x3fu} << 32;
  c.facts_cache.store(b, std::memory_order_relaxed);
  return f;
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
  // Parameter lists go (a lambda kernel is its closure's static invoker, whose name also holds the
  // enclosing function's: "S::run(int)::{lambda(ctile::Mut<float, 1>)#1}::_FUN(...)" becomes
  // "S::run::{lambda#1}"); template arguments stay.
  for (std::size_t p; (p = name.find("::operator()")) != std::string::npos;) name.replace(p, 12, "::operator@");
  std::string out;
  int angle = 0;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '<') ++angle;
    else if (c == '>') --angle;
    if (c == '(' && angle == 0) {
      int d = 0;
      for (; i < name.size(); ++i) {
        if (name[i] == '(') ++d;
        else if (name[i] == ')' && --d == 0) break;
      }
      if (i >= name.size()) break;  // unbalanced: keep what came before
      for (const char* q : {" const", " volatile", " &&", " &", " noexcept"})
        if (name.compare(i + 1, std::strlen(q), q) == 0) i += std::strlen(q);
      continue;
    }
    out += c;
  }
  name = out;
  for (const char* invoker : {"::_FUN", "::operator@"})
    if (const std::size_t n = std::strlen(invoker); name.size() > n && name.compare(name.size() - n, n, invoker) == 0)
      name.resize(name.size() - n);
  for (std::size_t p; (p = name.find("::operator@")) != std::string::npos;) name.replace(p, 11, "::operator()");
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

// ---- interned kernel names -------------------------------------------------------------------

namespace {

// (function, name) pairs, never freed. Looked up lock-free by the function's address; inserted
// under a lock (the first launch of a function, or of a new name for it).
struct NameEntry {
  const void* fn;
  bool user;  // named by a ctile::Kernel (else the function's symbol)
  std::string name;
  std::atomic<NameEntry*> next{nullptr};
};
constexpr std::size_t kNameBuckets = 1024;
std::atomic<NameEntry*> g_names[kNameBuckets];
std::mutex g_names_mu;

std::size_t fn_bucket(const void* fn) {
  auto x = reinterpret_cast<std::uintptr_t>(fn);
  x ^= x >> 17;
  x *= 0xed5ad4bbu;
  x ^= x >> 11;
  return x % kNameBuckets;
}

const NameEntry* find_name(std::atomic<NameEntry*>& bucket, const void* fn, const std::string* user) {
  for (const NameEntry* e = bucket.load(std::memory_order_acquire); e; e = e->next.load(std::memory_order_acquire))
    if (e->fn == fn && e->user == (user != nullptr) && (!user || e->name == *user)) return e;
  return nullptr;
}

}  // namespace

const std::string* intern_kernel_name(const void* fn, const std::string* name) {
  std::atomic<NameEntry*>& bucket = g_names[fn_bucket(fn)];
  if (const NameEntry* e = find_name(bucket, fn, name)) return &e->name;
  std::string n = name ? *name : kernel_name_of(fn);
  std::lock_guard lk(g_names_mu);
  if (const NameEntry* e = find_name(bucket, fn, name)) return &e->name;
  auto* e = new NameEntry{fn, name != nullptr, std::move(n), {}};
  e->next.store(bucket.load(std::memory_order_relaxed), std::memory_order_relaxed);
  bucket.store(e, std::memory_order_release);
  return &e->name;
}

// ---- the kernel cache ------------------------------------------------------------------------

namespace {

struct CacheKey {
  const void* fn;
  std::vector<ParamSpec> specs;
  int grid_rank;
  std::string backend;
  KernelOptions options;
  bool operator<(const CacheKey& o) const {
    if (fn != o.fn) return std::less<const void*>()(fn, o.fn);
    if (grid_rank != o.grid_rank) return grid_rank < o.grid_rank;
    if (backend != o.backend) return backend < o.backend;
    if (options != o.options) return options < o.options;
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
  std::unique_ptr<LaunchRecord> record;               // set on success, never freed
  std::exception_ptr error;                           // set on failure
};

std::mutex g_cache_mu;
std::map<CacheKey, std::shared_ptr<CacheEntry>>& cache() {
  static auto* m = new std::map<CacheKey, std::shared_ptr<CacheEntry>>();
  return *m;
}
// Lookups per kernel function that went through the cache lock (guarded by g_cache_mu). Launches
// that find their record without the lock count in LaunchRecord::fast_hits.
struct Counters {
  std::uint64_t hits = 0, compiles = 0;
};
std::map<const void*, Counters>& counters() {
  static auto* m = new std::map<const void*, Counters>();
  return *m;
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

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

std::unique_ptr<LaunchRecord> make_record(const void* fn, const Device& d, backend::Backend& be,
                                          std::shared_ptr<const backend::CompiledKernel> ck,
                                          const std::vector<ParamSpec>& specs, int grid_rank, const KernelOptions& options) {
  auto r = std::make_unique<LaunchRecord>();
  r->fn = fn;
  r->device = d;
  r->backend = &be;
  r->kernel = std::move(ck);
  if (const auto* n = dynamic_cast<const platform::HasNativeKernel*>(r->kernel.get())) r->native = &n->native();
  r->grid_rank = grid_rank;
  r->specs = specs;
  for (const ParamSpec& s : specs) r->key.push_back(param_key(s));
  r->options = options;
  const KernelOptions defaults;
  r->hash = key_hash(fn, d, grid_rank, r->key.data(), r->key.size(), options == defaults ? nullptr : &options);
  r->arg_slot.assign(specs.size(), -1);
  const ir::Kernel& k = r->kernel->kernel();
  for (std::size_t i = 0; i < k.params.size(); ++i) {
    const int a = k.params[i].arg_index;
    CTILE_CHECK(a >= 0 && static_cast<std::size_t>(a) < specs.size(), "kernel parameter ", i, " of argument ", a);
    r->arg_slot[static_cast<std::size_t>(a)] = static_cast<int>(i);
  }
  if (r->native)
    CTILE_CHECK(r->native->layout().slots.size() == k.params.size(), "the parameter layout of kernel '", k.name, "' has ",
                r->native->layout().slots.size(), " slots for ", k.params.size(), " parameters");
  return r;
}

}  // namespace

ParamKey param_key(const ParamSpec& s) {
  ParamKey k;
  k.kind = static_cast<std::uint8_t>(s.kind);
  k.dtype = static_cast<std::uint8_t>(s.dtype);
  k.rank = static_cast<std::uint8_t>(s.rank);
  k.flags = static_cast<std::uint8_t>((s.facts.aligned16 ? 1 : 0) | (s.facts.contiguous_last ? 2 : 0) |
                                      (s.const_value.is_float ? 4 : 0) | (s.facts.small ? 8 : 0));
  k.extent_div16 = s.facts.extent_div16;
  k.stride_div16 = s.facts.stride_div16;
  k.extent_div8 = s.facts.extent_div8;
  k.stride_div8 = s.facts.stride_div8;
  for (std::size_t i = 0; i < s.tile_shape.size() && i < static_cast<std::size_t>(kMaxRank); ++i) k.tile[i] = s.tile_shape[i];
  if (s.kind == ParamSpec::Kind::Const)
    k.const_bits = s.const_value.is_float ? std::bit_cast<std::uint64_t>(s.const_value.f) : static_cast<std::uint64_t>(s.const_value.i);
  return k;
}

std::shared_ptr<const ir::Kernel> with_options(std::shared_ptr<const ir::Kernel> k, const KernelOptions& options) {
  if (options == KernelOptions{} || k->options == options) return k;
  auto m = std::make_shared<ir::Kernel>(ir::clone(*k));
  m->options = options;
  return m;
}

std::uint64_t key_hash(const void* fn, const Device& d, int grid_rank, const ParamKey* key, std::size_t n,
                       const KernelOptions* options) {
  std::uint64_t h = mix(0x51ed2701u, reinterpret_cast<std::uintptr_t>(fn));
  h = mix(h, static_cast<std::uint64_t>(d.kind) << 32 | static_cast<std::uint32_t>(d.index));
  h = mix(h, static_cast<std::uint64_t>(grid_rank));
  for (std::size_t i = 0; i < n; ++i) {
    const ParamKey& k = key[i];
    h = mix(h, static_cast<std::uint64_t>(k.kind) | static_cast<std::uint64_t>(k.dtype) << 8 |
                   static_cast<std::uint64_t>(k.rank) << 16 | static_cast<std::uint64_t>(k.flags) << 24 |
                   static_cast<std::uint64_t>(k.extent_div16 ^ k.stride_div16 << 8 ^ std::uint32_t{k.extent_div8} << 16 ^
                                              std::uint32_t{k.stride_div8} << 24) << 32);
    for (std::int64_t j = 0; j < k.rank && j < kMaxRank; ++j) h = mix(h, static_cast<std::uint64_t>(k.tile[j]));
    if (k.const_bits) h = mix(h, k.const_bits);
  }
  if (options) {
    const KernelOptions& o = *options;
    h = mix(h, static_cast<std::uint64_t>(o.warps) | static_cast<std::uint64_t>(o.stages) << 8 |
                   static_cast<std::uint64_t>(o.blocks_per_cta) << 16 | static_cast<std::uint64_t>(o.loop_prefetch) << 24 |
                   static_cast<std::uint64_t>(o.min_ctas_per_sm) << 32 | static_cast<std::uint64_t>(o.tma + 1) << 40 |
                   static_cast<std::uint64_t>(o.fast_math) << 48 | static_cast<std::uint64_t>(o.simt_mma) << 49 |
                   static_cast<std::uint64_t>(o.sync_mma) << 50 | 1ull << 51 |
                   static_cast<std::uint64_t>(o.warp_specialize + 1) << 52 | static_cast<std::uint64_t>(o.pingpong + 1) << 54 |
                   static_cast<std::uint64_t>(o.epilogue_overlap + 1) << 56 | static_cast<std::uint64_t>(o.ring_slots) << 58 |
                   static_cast<std::uint64_t>(o.acc_split + 1) << 62);
  }
  return h;
}

Device launch_device(const LaunchArgs& args) {
  for (const LaunchArg& a : args)
    if (a.core) return a.core->storage->device;
  return default_device();
}

KernelCacheStats kernel_cache_stats() {
  std::lock_guard<std::mutex> lock(g_cache_mu);
  KernelCacheStats st;
  st.specialisations = cache().size();
  for (const auto& [fn, c] : counters()) {
    st.hits += c.hits;
    st.compiles += c.compiles;
  }
  for (const auto& [key, entry] : cache()) {
    std::lock_guard lk(entry->mu);
    if (entry->record) st.hits += entry->record->fast_hits.load(std::memory_order_relaxed);
  }
  return st;
}

KernelCacheStats kernel_cache_stats_of(const void* fn) {
  std::lock_guard<std::mutex> lock(g_cache_mu);
  KernelCacheStats st;
  for (const auto& [key, entry] : cache())
    if (key.fn == fn) {
      ++st.specialisations;
      std::lock_guard lk(entry->mu);
      if (entry->record) st.hits += entry->record->fast_hits.load(std::memory_order_relaxed);
    }
  if (auto it = counters().find(fn); it != counters().end()) {
    st.hits += it->second.hits;
    st.compiles = it->second.compiles;
  }
  return st;
}

CacheLookup find_or_compile(const void* fn, Tracer tracer, const std::string& name, const std::vector<ParamSpec>& specs,
                            int grid_rank, backend::Backend& be, const Device& device, const KernelOptions& options) {
  options.validate(name);
  CacheKey key{fn, specs, grid_rank, std::string(be.name()), options};
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
    return {entry->ck, entry->record.get(), true};
  }
  std::shared_ptr<const backend::CompiledKernel> ck;
  const LaunchRecord* rec = nullptr;
  try {
    const bool timings = env_flag("CTILE_TIMINGS");
    (void)take_stage_timings();
    const auto t0 = std::chrono::steady_clock::now();
    std::shared_ptr<const ir::Kernel> k = with_options(tracer(fn, name, specs, grid_rank), options);
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
    auto record = make_record(fn, device, be, ck, specs, grid_rank, options);
    rec = record.get();
    std::lock_guard<std::mutex> lk(entry->mu);
    entry->ck = ck;
    entry->record = std::move(record);
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
  return {ck, rec, false};
}

// ---- the launch path -------------------------------------------------------------------------

[[noreturn]] void moved_from_argument(const std::string& kernel, const LaunchArg& a, const char* what) {
  launch_error(kernel, a.index, param_desc(ParamSpec(a.kind, a.dtype, a.rank), a.rank), what);
}

void check_static_tile(const std::string& kernel, const LaunchArg& a, const std::int64_t* dims, std::size_t n) {
  const Shape& t = *a.tile;
  if (t.size() != n) return;  // the rank check reports this one
  for (std::size_t i = 0; i < n; ++i)
    if (t[i] != dims[i])
      launch_error(kernel, a.index, param_desc(ParamSpec(a.kind, a.dtype, a.rank), a.rank),
                   "the kernel declares tile shape " + shape_str(Shape(dims, dims + n)) +
                       " but the partition's tile shape is " + shape_str(t));
}

namespace {

// A per-thread cache of launch records in front of the kernel cache: a launch whose
// specialisation this thread has launched before finds its record by the key's hash, takes no
// lock and allocates nothing. Each entry also keeps this thread's parameter block for the record
// (native kernels), in which a launch rewrites only what changed since the thread's previous
// launch of it: tensors by view id, scalars, the grid.
struct ThreadEntry {
  const LaunchRecord* record = nullptr;
  PackedBlock packed;
};
constexpr std::size_t kThreadEntries = 64;
struct ThreadCache {
  ThreadEntry e[kThreadEntries];
};
thread_local ThreadCache t_cache;

using Keys = SmallVec<ParamKey, 8>;

// A fact added to ir::TensorFacts must also go into a view's packed facts (tensor_facts of a
// TensorCore), param_key and arg_key, or views that differ in it would share a specialisation.
static_assert(sizeof(ir::TensorFacts) == 16 && sizeof(ir::TensorFacts::extent_div8) == 1, "ir::TensorFacts changed: pack the new fact in tensor_facts(TensorCore), param_key, arg_key");

ParamKey arg_key(const LaunchArg& a) {
  ParamKey k;
  k.kind = static_cast<std::uint8_t>(a.kind);
  k.dtype = static_cast<std::uint8_t>(a.dtype);
  k.rank = static_cast<std::uint8_t>(a.rank);
  if (a.core) {
    const ir::TensorFacts f = tensor_facts(*a.core);
    k.flags = static_cast<std::uint8_t>((f.aligned16 ? 1 : 0) | (f.contiguous_last ? 2 : 0) | (f.small ? 8 : 0));
    k.extent_div16 = f.extent_div16;
    k.stride_div16 = f.stride_div16;
    k.extent_div8 = f.extent_div8;
    k.stride_div8 = f.stride_div8;
    if (a.tile)
      for (std::size_t i = 0; i < a.tile->size() && i < static_cast<std::size_t>(kMaxRank); ++i) k.tile[i] = (*a.tile)[i];
  } else if (a.kind == ParamSpec::Kind::Const) {
    k.flags = a.scalar.is_float ? 4 : 0;
    k.const_bits = a.scalar.is_float ? std::bit_cast<std::uint64_t>(a.scalar.f) : static_cast<std::uint64_t>(a.scalar.i);
  }
  return k;
}

std::vector<ParamSpec> specs_of(const LaunchArgs& args) {
  std::vector<ParamSpec> specs;
  specs.reserve(args.size());
  for (const LaunchArg& a : args) {
    ParamSpec s(a.kind, a.dtype, a.rank);
    if (a.tile) s.tile_shape = *a.tile;
    if (a.core) s.facts = tensor_facts(*a.core);
    if (a.kind == ParamSpec::Kind::Const) s.const_value = a.scalar;
    specs.push_back(std::move(s));
  }
  return specs;
}

bool same_key(const LaunchRecord& r, const void* fn, const Device& d, int grid_rank, const Keys& keys,
              const KernelOptions* options) {
  if (r.fn != fn || r.grid_rank != grid_rank || !(r.device == d) || r.key.size() != keys.size()) return false;
  if (options ? !(r.options == *options) : !(r.options == KernelOptions{})) return false;
  for (std::size_t i = 0; i < keys.size(); ++i)
    if (!(r.key[i] == keys[i])) return false;
  return true;
}

ThreadEntry& thread_entry(const LaunchSite& site, const LaunchArgs& args, int grid_rank, const Device& d) {
  Keys keys;
  for (const LaunchArg& a : args) keys.push_back(arg_key(a));
  const std::uint64_t h = key_hash(site.fn, d, grid_rank, keys.data(), keys.size(), site.options);
  ThreadEntry& e = t_cache.e[h % kThreadEntries];
  if (e.record && e.record->hash == h && same_key(*e.record, site.fn, d, grid_rank, keys, site.options)) [[likely]] {
    e.record->fast_hits.fetch_add(1, std::memory_order_relaxed);
    return e;
  }
  // Miss: the kernel cache (tracing and compiling on the first launch of the specialisation).
  const CacheLookup found =
      find_or_compile(site.fn, site.tracer, *site.name, specs_of(args), grid_rank, backend_for(d), d,
                      site.options ? *site.options : KernelOptions{});
  e.record = found.record;
  e.packed.reset(*found.record);
  return e;
}

// What validate() derives from a launch's arguments.
struct Checked {
  std::int64_t grid[kMaxRank] = {};
  int grid_rank = -1;
  std::int64_t blocks = 0;
};

// The arguments of a launch that passed every check, by what those checks depend on: the views (a
// TensorCore is immutable and its id never reused, so the same id is the same storage, offset,
// extents, strides and device), the partitions' tiles and the Const values. A later launch of the
// same kernel with the same ones and no explicit grid skips validate() and the specialisation's
// key (the grid and the record are the ones found then) and checks only what changes between
// launches of the same views: whether a graph owns one of them (check_graph_ownership).
struct SeenArgs {
  struct Arg {
    std::uint64_t core_id = 0;  // 0: not a tensor
    std::int64_t tile[kMaxRank] = {};
    int tile_rank = -1;
    ir::Scalar konst;
  };
  std::vector<Arg> args;
  Checked checked;
  bool valid = false;

  bool same(const LaunchArgs& now) const {
    if (!valid || now.size() != args.size()) return false;
    for (std::size_t i = 0; i < now.size(); ++i) {
      const LaunchArg& a = now[i];
      const Arg& s = args[i];
      if (a.core) {
        if (a.core->id != s.core_id) return false;
        if (a.tile) {
          if (static_cast<int>(a.tile->size()) != s.tile_rank || !std::equal(a.tile->begin(), a.tile->end(), s.tile)) return false;
        } else if (s.tile_rank != -1) {
          return false;
        }
      } else if (s.core_id != 0) {
        return false;
      } else if (a.kind == ParamSpec::Kind::Const && !(a.scalar.is_float == s.konst.is_float && a.scalar.i == s.konst.i &&
                                                       std::bit_cast<std::uint64_t>(a.scalar.f) == std::bit_cast<std::uint64_t>(s.konst.f))) {
        return false;
      }
    }
    return true;
  }
  void remember(const LaunchArgs& now, const Checked& v) {
    valid = false;
    args.resize(now.size());
    for (std::size_t i = 0; i < now.size(); ++i) {
      const LaunchArg& a = now[i];
      Arg& s = args[i];
      s = Arg{};
      if (a.core) {
        s.core_id = a.core->id;
        if (a.tile) {
          if (a.tile->size() > static_cast<std::size_t>(kMaxRank)) return;
          s.tile_rank = static_cast<int>(a.tile->size());
          std::copy(a.tile->begin(), a.tile->end(), s.tile);
        }
      } else if (a.kind == ParamSpec::Kind::Const) {
        s.konst = a.scalar;
      }
    }
    checked = v;
    valid = true;
  }
};

// This thread's last launch of each kernel (by the function's address; a slot is shared by the
// kernels whose addresses meet there, the later one replacing the earlier): the site it came from,
// the stream's device, the thread cache's entry and record it used, and its arguments (SeenArgs).
// A launch of the same site with the same arguments takes that record without validate(), the
// specialisation's key or the thread cache's hash, as a bound launch does.
struct LastLaunch {
  const void* fn = nullptr;
  const std::string* name = nullptr;
  Device device;
  std::optional<KernelOptions> options;  // none: the defaults (LaunchSite::options null)
  ThreadEntry* entry = nullptr;
  const LaunchRecord* record = nullptr;
  SeenArgs seen;

  bool same_site(const LaunchSite& site, const Device& d) const {
    return fn == site.fn && name == site.name && device == d && options.has_value() == (site.options != nullptr) &&
           (!options || *options == *site.options);
  }
  void remember(const LaunchSite& site, const Device& d, ThreadEntry& te, const LaunchArgs& args, const Checked& v) {
    fn = site.fn;
    name = site.name;
    device = d;
    options.reset();
    if (site.options) options = *site.options;
    entry = &te;
    record = te.record;
    seen.remember(args, v);
  }
};
constexpr std::size_t kLastLaunches = 16;
thread_local LastLaunch t_last[kLastLaunches];
LastLaunch& last_launch(const void* fn) {
  return t_last[(reinterpret_cast<std::uintptr_t>(fn) >> 4) % kLastLaunches];
}

// A tensor a graph owns is used only by that graph (state that changes between launches of the
// same views). Throws UserError naming the kernel and the argument.
void check_graph_ownership(const std::string& name, const LaunchArgs& args) {
  for (const LaunchArg& a : args) {
    if (!a.core) continue;
    const Storage& st = *a.core->storage;
    if (graph_forbids(st, a.writes)) [[unlikely]]
      check_free_for(st, a.writes,
                     "launch of kernel '" + name + "', argument " + std::to_string(a.index) + " (" +
                         param_desc(ParamSpec(a.kind, a.dtype, a.rank), a.rank) + ")");
  }
}

// Ranks, one device (the stream's), the grid from the Mut arguments or the explicit one, written
// memory that overlaps another argument, and tensors a graph owns. Throws UserError naming the
// kernel and the argument.
Checked validate(const std::string& name, const LaunchArgs& args, const std::optional<Shape>& explicit_grid,
                 const Device& sdev);

}  // namespace

void PackedBlock::reset(const LaunchRecord& r) {
  ids.assign(r.specs.size(), 0);
  grid_rank = -1;
  block.reset();
  if (r.native) {
    const std::uint32_t n = r.native->layout().bytes;
    block = std::make_unique<std::byte[]>(n ? n : 1);
    std::memset(block.get(), 0, n ? n : 1);
  }
}

void PackedBlock::pack(const LaunchRecord& r, const LaunchArgs& args, const std::int64_t* grid, int rank) {
  const platform::ParamLayout& l = r.native->layout();
  std::byte* b = block.get();
  if (grid_rank != rank || !std::equal(grid, grid + rank, this->grid)) {
    platform::write_grid(b, l, grid, rank);
    std::copy(grid, grid + rank, this->grid);
    grid_rank = rank;
  }
  for (std::size_t i = 0; i < args.size(); ++i) {
    const int slot = r.arg_slot[i];
    if (slot < 0) continue;
    const LaunchArg& a = args[i];
    const platform::ParamSlot& s = l.slots[static_cast<std::size_t>(slot)];
    if (a.core) {
      if (ids[i] == a.core->id) continue;
      platform::write_tensor_arg(*r.native, b, static_cast<std::size_t>(slot), a.core->data(), a.core->shape.data(),
                                 a.core->strides.data(), a.rank);
      ids[i] = a.core->id;
    } else {
      platform::write_scalar(b, s, a.scalar);
    }
  }
}

namespace {

Event submit_record(const std::string& name, const LaunchRecord& rec, PackedBlock& pb, LaunchArgs& args,
                    const Checked& v, bool race_check, StreamImpl& impl, const Event* after, bool wait);

}  // namespace

Event submit_launch(const LaunchSite& site, LaunchArgs& args, const std::optional<Shape>& explicit_grid, bool race_check,
                    const Stream& stream, const Event* after, bool wait) {
  StreamImpl& impl = *stream.impl();
  const Device sdev = impl.device();
  LastLaunch* last = explicit_grid ? nullptr : &last_launch(site.fn);
  if (last && last->same_site(site, sdev) && last->entry->record == last->record && last->seen.same(args)) [[likely]] {
    check_graph_ownership(*site.name, args);
    last->record->fast_hits.fetch_add(1, std::memory_order_relaxed);
    return submit_record(*site.name, *last->record, last->entry->packed, args, last->seen.checked, race_check, impl,
                         after, wait);
  }
  const Checked v = validate(*site.name, args, explicit_grid, sdev);
  // The specialisation's launch record (traced and compiled once, single flight).
  ThreadEntry& te = thread_entry(site, args, v.grid_rank, sdev);
  if (last) last->remember(site, sdev, te, args, v);
  return submit_record(*site.name, *te.record, te.packed, args, v, race_check, impl, after, wait);
}

namespace {

Checked validate(const std::string& name, const LaunchArgs& args, const std::optional<Shape>& explicit_grid,
                 const Device& sdev) {

  // Tensors: ranks, one device, the grid from the Mut arguments.
  std::int64_t grid[kMaxRank] = {};
  int grid_rank = -1, grid_source = -1;
  const Device* dev = nullptr;
  for (const LaunchArg& a : args) {
    if (!a.core) continue;
    const TensorCore& c = *a.core;
    const int have = static_cast<int>(c.shape.size());
    if (have != a.rank)
      launch_error(name, a.index, param_desc(ParamSpec(a.kind, a.dtype, a.rank), a.rank),
                   "the kernel expects a rank-" + std::to_string(a.rank) + " tensor, got rank " + std::to_string(have) +
                       " with shape " + shape_str(c.shape));
    const Device& d = c.storage->device;
    if (dev && !(*dev == d))
      launch_error(name, a.index, param_desc(ParamSpec(a.kind, a.dtype, a.rank), a.rank),
                   "the tensor lives on " + d.str() + " but earlier arguments live on " + dev->str());
    dev = &d;
    if (a.kind == ParamSpec::Kind::Piece) {
      std::int64_t g[kMaxRank];
      for (int i = 0; i < a.rank; ++i) g[i] = ceil_div(c.shape[static_cast<std::size_t>(i)], (*a.tile)[static_cast<std::size_t>(i)]);
      const int before = grid_rank;
      if (!merge_grid(grid, grid_rank, g, a.rank))  // leaves `grid` as it was
        grid_conflict("launch", name, a.index, param_desc(ParamSpec(a.kind, a.dtype, a.rank), a.rank), Shape(g, g + a.rank),
                      c.shape, *a.tile, grid_source, Shape(grid, grid + grid_rank));
      if (before < 0) grid_source = a.index;
    }
  }
  if (grid_rank >= 0) {
    if (explicit_grid && (static_cast<int>(explicit_grid->size()) != grid_rank ||
                          !std::equal(explicit_grid->begin(), explicit_grid->end(), grid)))
      launch_error(name, -1, "",
                   "the explicit grid " + shape_str(*explicit_grid) + " differs from the grid " +
                       shape_str(Shape(grid, grid + grid_rank)) + " of the partition passed as argument " +
                       std::to_string(grid_source));
  } else if (explicit_grid) {
    if (explicit_grid->empty() || static_cast<int>(explicit_grid->size()) > kMaxRank)
      launch_error(name, -1, "", "the grid " + shape_str(*explicit_grid) + " must have 1 to 6 axes");
    grid_rank = static_cast<int>(explicit_grid->size());
    std::copy(explicit_grid->begin(), explicit_grid->end(), grid);
  } else {
    launch_error(name, -1, "", "the kernel has no Mut parameter to take the grid from; give it with .grid({...})");
  }
  std::int64_t blocks = 1;
  for (int i = 0; i < grid_rank; ++i)
    if (grid[i] < 0 || __builtin_mul_overflow(blocks, grid[i], &blocks))
      launch_error(name, -1, "", "the grid " + shape_str(Shape(grid, grid + grid_rank)) + " overflows 64-bit block ids");
  if (blocks == 0) {
    std::string why = grid_source >= 0 ? " (argument " + std::to_string(grid_source) + " has a zero extent)" : "";
    launch_error(name, -1, "", "the grid " + shape_str(Shape(grid, grid + grid_rank)) + " is empty" + why +
                                   "; there is nothing to launch");
  }
  // The stream's device must be where the data is.
  if (dev && !(*dev == sdev))
    launch_error(name, -1, "", "the arguments live on " + dev->str() + " but the stream runs on " + sdev.str());
  // Memory written by the kernel must not overlap any other argument (possible only through
  // unchecked borrowing of foreign memory; the safe API cannot alias), and a tensor a graph owns is
  // used only by that graph.
  check_graph_ownership(name, args);
  for (std::size_t w = 0; w < args.size(); ++w) {
    const LaunchArg& a = args[w];
    if (!a.core || !a.writes) continue;
    const Storage& st = *a.core->storage;
    for (std::size_t o = 0; o < args.size(); ++o) {
      if (o == w || !args[o].core || (args[o].writes && o < w)) continue;
      // Two allocations ctile owns never overlap: only a shared or borrowed storage can.
      const Storage& os = *args[o].core->storage;
      if (&os != &st && st.owned && os.owned) continue;
      const auto [wlo, whi] = byte_range(*a.core);
      const auto [lo, hi] = byte_range(*args[o].core);
      if (wlo && lo && wlo < hi && lo < whi)
        launch_error(name, a.index, "written",
                     "its memory overlaps argument " + std::to_string(args[o].index) +
                         "; a written argument must not alias another");
    }
  }

  Checked v;
  std::copy(grid, grid + grid_rank, v.grid);
  v.grid_rank = grid_rank;
  v.blocks = blocks;
  return v;
}

Event submit_record(const std::string& name, const LaunchRecord& rec, PackedBlock& pb, LaunchArgs& args,
                    const Checked& v, bool race_check, StreamImpl& impl, const Event* after, bool wait) {
  const std::int64_t* grid = v.grid;
  const int grid_rank = v.grid_rank;
  const std::int64_t blocks = v.blocks;
  static const bool race_check_env = env_flag("CTILE_RACE_CHECK");  // read at the first launch
  const bool checked = race_check || race_check_env;
  // A GPU launch runs up to 2^31 - 1 blocks; a race-checked one runs on the CPU interpreter.
  if (rec.native && blocks > 0x7fffffff && !checked)
    launch_error(name, -1, "",
                 "the grid " + shape_str(Shape(grid, grid + grid_rank)) + " has " + std::to_string(blocks) +
                     " tile blocks; a launch on a GPU takes at most 2^31 - 1 (use larger tiles)");
  if (rec.native && checked && !race_check) {
    static std::once_flag noted;
    std::call_once(noted, [] {
      std::fprintf(stderr, "ctile: CTILE_RACE_CHECK is set: launches on GPUs run on the CPU interpreter with the race "
                           "checker (slow)\n");
    });
  }

  CaptureState* cap = impl.capture();
  if (cap) {
    if (checked)
      launch_error(name, -1, "", "a race-checked launch cannot be captured into a graph (it runs on the CPU interpreter)");
    for (const LaunchArg& a : args)
      if (a.core) cap->touch(a.core->storage);
  }

  // Dependencies: readers wait for the last writer, writers for everything before them.
  const std::uint64_t order = impl.order();
  Storage::Deps deps;
  for (const LaunchArg& a : args) {
    if (!a.core) continue;
    if (a.writes) a.core->storage->deps_for_write(deps, order);
    else a.core->storage->deps_for_read(deps, order);
  }
  if (after && !(after->done() && !after->error())) deps.push_back(*after);
  reject_captured_deps(std::span<const Event>(deps.data(), deps.size()), cap != nullptr,
                       [&] { return "launch of kernel '" + name + "'"; });

  Event done;
  if (cap) {
    CapturedNode node;
    node.kind = CapturedNode::Kind::Kernel;
    node.record = &rec;
    node.name = name;
    node.tile_blocks = blocks;
    node.scalars.resize(args.size());
    for (std::size_t i = 0; i < args.size(); ++i) {
      const LaunchArg& a = args[i];
      node.scalars[i] = a.scalar;
      if (a.core) node.tensors.push_back(NodeTensor{a.core, static_cast<int>(i), rec.arg_slot[i], a.writes});
    }
    if (rec.native) {
      pb.pack(rec, args, grid, grid_rank);
      const std::byte* b = pb.block.get();
      node.params.assign(b, b + rec.native->layout().bytes);
    } else {
      node.cfg.grid.assign(grid, grid + grid_rank);
      node.cfg.kernel_name = name;
      for (const LaunchArg& a : args) {
        if (a.kind == ParamSpec::Kind::Const) continue;
        backend::ArgValue av;
        if (a.core) av.tensor = a.core->arg();
        else av.scalar = a.scalar;
        node.args.push_back(std::move(av));
      }
    }
    done = cap->add(std::move(node), impl, std::span<const Event>(deps.data(), deps.size()));
  } else {
    Command cmd;
    cmd.name = name;
    cmd.wait = wait;
    if (rec.native && !checked) {
      pb.pack(rec, args, grid, grid_rank);
      cmd.kind = Command::Kind::Kernel;
      cmd.kernel = rec.native;
      cmd.tile_blocks = blocks;
      cmd.params = pb.block.get();
    } else {
      // The backend runs the kernel itself: the CPU interpreter on a host stream (a host command),
      // or a race-checked GPU launch on the interpreter over copies of its arguments, in stream
      // order (an inline command on a GPU stream).
      backend::LaunchConfig cfg;
      cfg.grid.assign(grid, grid + grid_rank);
      cfg.race_check = checked;
      cfg.kernel_name = name;
      std::vector<backend::ArgValue> avs;
      avs.reserve(args.size());
      for (const LaunchArg& a : args) {
        if (a.kind == ParamSpec::Kind::Const) continue;
        backend::ArgValue av;
        if (a.core) av.tensor = a.core->arg();
        else av.scalar = a.scalar;
        avs.push_back(std::move(av));
      }
      cmd.kind = rec.native ? Command::Kind::Inline : Command::Kind::Host;
      cmd.fn = [be = rec.backend, ck = rec.kernel, cfg = std::move(cfg), avs = std::move(avs)]() { be->run(*ck, cfg, avs); };
    }
    // The command keeps every view alive until it has run: the launch's own references move in
    // (the caller's handles keep theirs, and with them the storages recorded below).
    SmallVec<std::pair<Storage*, bool>, 8> used;
    for (LaunchArg& a : args) {
      if (!a.core) continue;
      used.emplace_back(a.core->storage.get(), a.writes);
      cmd.keep.push_back(std::move(a.core));
    }
    done = impl.submit(std::move(cmd), std::span<Event>(deps.data(), deps.size()));
    for (const auto& [st, writes] : used) {
      if (writes) st->record_write(done);
      else st->record_read(done);
    }
    return done;
  }
  for (const LaunchArg& a : args) {
    if (!a.core) continue;
    if (a.writes) a.core->storage->record_write(done);
    else a.core->storage->record_read(done);
  }
  return done;
}

}  // namespace

// ---- bound kernels (bind.hpp) ------------------------------------------------------------------

struct BoundState {
  const LaunchRecord* record = nullptr;
  const std::string* name = nullptr;
  PackedBlock packed;
  SeenArgs seen;  // the last launch that passed every check (SeenArgs)
};

void BoundDeleter::operator()(BoundState* b) const noexcept { delete b; }

BoundPtr make_bound(const LaunchRecord& r, const std::string& name) {
  BoundPtr b(new BoundState);
  b->record = &r;
  b->name = intern_kernel_name(r.fn, &name);
  b->packed.reset(r);
  return b;
}

const std::string& bound_name(const BoundState& b) { return *b.name; }
Device bound_device(const BoundState& b) { return b.record->device; }

Event submit_bound(BoundState& b, LaunchArgs& args, const std::optional<Shape>& explicit_grid, const Stream& s,
                   const Event* after, bool wait) {
  const LaunchRecord& r = *b.record;
  const std::string& name = *b.name;
  StreamImpl& impl = *s.impl();
  const Device sdev = impl.device();
  if (!(sdev == r.device))
    plan_error("bound launch", name, -1, "",
               "the kernel was bound for " + r.device.str() + " but the stream runs on " + sdev.str() +
                   " (bind it for that device)");
  if (!explicit_grid && b.seen.same(args)) [[likely]] {
    check_graph_ownership(name, args);
    r.fast_hits.fetch_add(1, std::memory_order_relaxed);
    return submit_record(name, r, b.packed, args, b.seen.checked, false, impl, after, wait);
  }
  const Checked v = validate(name, args, explicit_grid, sdev);
  if (v.grid_rank != r.grid_rank)
    plan_error("bound launch", name, -1, "",
               "the grid has " + std::to_string(v.grid_rank) + " axes but the kernel was bound for " +
                   std::to_string(r.grid_rank));
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (arg_key(args[i]) == r.key[i]) continue;
    const ParamSpec& want = r.specs[i];
    ParamSpec have(args[i].kind, args[i].dtype, args[i].rank);
    if (args[i].tile) have.tile_shape = *args[i].tile;
    if (args[i].core) have.facts = tensor_facts(*args[i].core);
    if (args[i].kind == ParamSpec::Kind::Const) have.const_value = args[i].scalar;
    auto spec_text = [](const ParamSpec& p) {
      std::string t = param_desc(p, p.rank);
      if (!p.tile_shape.empty()) t += " in tiles of " + shape_str(p.tile_shape);
      if (p.kind == ParamSpec::Kind::Const) t += " = " + ir::scalar_str(p.const_value, p.dtype);
      const std::string f = ir::facts_str(p.facts);
      if (p.kind != ParamSpec::Kind::Scalar && p.kind != ParamSpec::Kind::Const) t += f.empty() ? " without facts" : " with facts " + f;
      return t;
    };
    plan_error("bound launch", name, static_cast<int>(i), param_desc(want, want.rank),
               "the kernel was bound for " + spec_text(want) + ", but the argument is " + spec_text(have) +
                   " (bind another BoundKernel for it, or use launch())");
  }
  if (!explicit_grid) b.seen.remember(args, v);
  r.fast_hits.fetch_add(1, std::memory_order_relaxed);
  return submit_record(name, r, b.packed, args, v, false, impl, after, wait);
}

// ---- device copies (copy.hpp) ------------------------------------------------------------------

Event submit_copy(const std::shared_ptr<const TensorCore>& dst, const std::shared_ptr<const TensorCore>& src, const Stream& s) {
  StreamImpl& impl = *s.impl();
  const Device sdev = impl.device();
  const std::string head = "ctile::copy into a tensor of shape " + shape_str(dst->shape);
  if (dst->shape != src->shape)
    throw UserError(head + ": the source has shape " + shape_str(src->shape) + "; shapes must be equal");
  if (!dst->contiguous() || !src->contiguous())
    throw UserError(head + ": both tensors must be contiguous (the " + std::string(dst->contiguous() ? "source" : "destination") +
                    " has strides " + shape_str(dst->contiguous() ? src->strides : dst->strides) + ")");
  if (!(dst->storage->device == sdev) || !(src->storage->device == sdev))
    throw UserError(head + ": the destination lives on " + dst->storage->device.str() + " and the source on " +
                    src->storage->device.str() + ", but the stream runs on " + sdev.str());
  check_free_for(*dst->storage, true, head);
  check_free_for(*src->storage, false, head + " (the source)");
  const std::int64_t bytes = dst->numel() * dtype_size(dst->dtype);
  const auto [dlo, dhi] = byte_range(*dst);
  const auto [slo, shi] = byte_range(*src);
  if (dlo && slo && dlo < shi && slo < dhi) throw UserError(head + ": the source and the destination overlap");
  CaptureState* cap = impl.capture();
  if (cap) {
    cap->touch(dst->storage);
    cap->touch(src->storage);
  }
  Storage::Deps deps;
  const std::uint64_t order = impl.order();
  src->storage->deps_for_read(deps, order);
  dst->storage->deps_for_write(deps, order);
  reject_captured_deps(std::span<const Event>(deps.data(), deps.size()), cap != nullptr, [&] { return head; });
  Event done;
  if (cap) {
    CapturedNode n;
    n.kind = CapturedNode::Kind::Copy;
    n.dst = dst->data();
    n.src = src->data();
    n.bytes = bytes;
    n.tensors.push_back(NodeTensor{dst, -1, -1, true});
    n.tensors.push_back(NodeTensor{src, -1, -1, false});
    done = cap->add(std::move(n), impl, std::span<const Event>(deps.data(), deps.size()));
  } else {
    Command cmd;
    cmd.kind = Command::Kind::Copy;
    cmd.dst = dst->data();
    cmd.src = src->data();
    cmd.bytes = bytes;
    cmd.name = "copy";
    cmd.keep.push_back(dst);
    cmd.keep.push_back(src);
    done = impl.submit(std::move(cmd), std::span<Event>(deps.data(), deps.size()));
  }
  src->storage->record_read(done);
  dst->storage->record_write(done);
  return done;
}

}  // namespace ctile::detail
