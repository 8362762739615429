// The in-memory kernel cache of src/runtime/launch.cpp, shared by launch() and warm_up() (private
// to the library). One entry per specialisation: kernel function, ParamSpecs (facts included),
// grid rank and backend name.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ctile/backend/backend.hpp"
#include "ctile/runtime/launch.hpp"

namespace ctile::detail {

// The backend that runs work on a device (one CUDA backend per GPU: a loaded kernel belongs to one
// context). Throws UserError when the device cannot be used.
backend::Backend& backend_for(const Device& d);

struct CacheLookup {
  std::shared_ptr<const backend::CompiledKernel> kernel;
  bool hit = false;  // the specialisation was in the cache (compiled earlier, or by another thread meanwhile)
};

// Finds the specialisation or traces (with `tracer`) and compiles it on `be`, once: concurrent
// lookups of one specialisation wait for the first and share its kernel or its error; a failed
// compile is not cached. Honours CTILE_DUMP_IR and CTILE_TIMINGS.
CacheLookup find_or_compile(const void* fn, Tracer tracer, const std::string& name, const std::vector<ParamSpec>& specs,
                            int grid_rank, backend::Backend& be);

}  // namespace ctile::detail
