// The in-memory kernel cache of src/runtime/launch.cpp, shared by launch(), warm_up(), bind() and
// graph captures (private to the library). One entry per specialisation: kernel function,
// ParamSpecs (facts included), grid rank and backend name. Each compiled entry has a LaunchRecord:
// what a launch of that specialisation needs, prepared once (docs/cuda_runtime.md, "The launch
// path").
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "../platform/kernel.hpp"
#include "ctile/backend/backend.hpp"
#include "ctile/core/options.hpp"
#include "ctile/runtime/bind.hpp"
#include "ctile/runtime/launch.hpp"

namespace ctile::detail {

// The backend that runs work on a device (one CUDA backend per GPU: a loaded kernel belongs to one
// context). Throws UserError when the device cannot be used.
backend::Backend& backend_for(const Device& d);

// One parameter of a specialisation key, flat and comparable without allocation: what a launch's
// argument contributes to the specialisation (kind, element type, rank, tensor facts, a Mut's tile
// shape, a Const's value as a bit pattern).
struct ParamKey {
  std::uint8_t kind = 0, dtype = 0, rank = 0, flags = 0;  // flags: aligned16, contiguous_last, const is_float
  std::uint8_t extent_div8 = 0, stride_div8 = 0;
  std::uint32_t extent_div16 = 0, stride_div16 = 0;
  std::int64_t tile[kMaxRank] = {};
  std::uint64_t const_bits = 0;
  friend bool operator==(const ParamKey&, const ParamKey&) = default;
};
ParamKey param_key(const ParamSpec& s);

// A specialisation prepared for launching: immutable once made, never freed (kept by its cache
// entry), so launch paths hold plain pointers to it.
struct LaunchRecord {
  const void* fn = nullptr;
  Device device;
  backend::Backend* backend = nullptr;
  std::shared_ptr<const backend::CompiledKernel> kernel;
  // The platform kernel when the backend launches natively from a parameter block (a GPU); null
  // when the backend runs the kernel itself on the host (the CPU interpreter).
  const platform::NativeKernel* native = nullptr;
  int grid_rank = 0;
  std::vector<ParamSpec> specs;
  std::vector<ParamKey> key;  // param_key of each spec
  std::uint64_t hash = 0;     // key_hash(fn, device, grid_rank, key, options)
  // The kernel options it was compiled with (a launch's .options(), CompileOptions::kernel,
  // WarmUpOptions::kernel); part of the key.
  KernelOptions options;
  // Per C++ argument: its slot in the parameter layout (= its ir::Kernel::params index), -1 for a
  // Const (folded into the kernel).
  std::vector<int> arg_slot;
  // Launches that found this record without the cache lock (per-thread caches, bound kernels).
  mutable std::atomic<std::uint64_t> fast_hits{0};
};

// The traced kernel `k` with `options` (a copy when they are not the defaults: a trace result is
// shared and immutable).
std::shared_ptr<const ir::Kernel> with_options(std::shared_ptr<const ir::Kernel> k, const KernelOptions& options);

// The hash of a specialisation key; `options` null for the defaults (hashed as nothing, so the
// default launch path does not pay for them).
std::uint64_t key_hash(const void* fn, const Device& d, int grid_rank, const ParamKey* key, std::size_t n,
                       const KernelOptions* options);

// A parameter block of one record for one user (a thread's cache entry, a BoundKernel): rewritten
// only where the arguments changed since its previous launch (tensors by view id).
struct PackedBlock {
  std::unique_ptr<std::byte[]> block;
  std::vector<std::uint64_t> ids;  // per C++ argument: the view written last (0: none)
  std::int64_t grid[kMaxRank] = {};
  int grid_rank = -1;
  void reset(const LaunchRecord& r);
  void pack(const LaunchRecord& r, const LaunchArgs& args, const std::int64_t* grid, int grid_rank);
};

// A BoundKernel's state for a record (bind.hpp).
BoundPtr make_bound(const LaunchRecord& r, const std::string& name);

struct CacheLookup {
  std::shared_ptr<const backend::CompiledKernel> kernel;
  const LaunchRecord* record = nullptr;
  bool hit = false;  // the specialisation was in the cache (compiled earlier, or by another thread meanwhile)
};

// Finds the specialisation or traces (with `tracer`) and compiles it on `be`, once: concurrent
// lookups of one specialisation wait for the first and share its kernel or its error (single
// flight); a failed compile is not cached. The traced kernel is compiled with `options` (validated
// first: a bad option is a UserError naming the kernel). Honours CTILE_DUMP_IR and CTILE_TIMINGS.
CacheLookup find_or_compile(const void* fn, Tracer tracer, const std::string& name, const std::vector<ParamSpec>& specs,
                            int grid_rank, backend::Backend& be, const Device& device, const KernelOptions& options = {});

}  // namespace ctile::detail
