// Runs generated CUDA kernels on the host: the generated source is compiled by the host compiler
// after emu/ct_emu.h (CUDA built-ins emulated with threads and barriers) into a shared object, which
// is loaded and called with the parameter block from pack_params. A Backend wraps it, so the CPU
// backend's own tests and differential tests can run kernels through the generated code.
#pragma once

#include <memory>
#include <string>

#include "../../../src/backend/cuda/codegen.hpp"
#include "ctile/backend/backend.hpp"

namespace cuda_emu {

using LaunchFn = void (*)(const void* params, long long grid_x, unsigned long long smem_bytes);

// Builds (once per distinct source) and loads the emulation of `g`. Throws std::runtime_error with
// the compiler's output when the host compiler rejects it.
LaunchFn build(const ctile::backend::cuda::GeneratedKernel& g);

// The emulating backend: compile = generate + build; run = pack_params + launch over min(blocks, 3)
// emulated CUDA blocks (the generated grid-stride loop covers the rest).
std::shared_ptr<ctile::backend::Backend> backend();

}  // namespace cuda_emu
