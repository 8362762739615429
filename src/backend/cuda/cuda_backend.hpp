// The CUDA backend: compile = IR -> CUDA C++ (codegen.hpp) -> NVRTC cubin for the device's exact
// architecture -> a KernelArtifact that the CUDA platform loads (src/platform/cuda/kernel.hpp); its
// compiled kernels expose the loaded platform kernel, which the launch path submits to CUDA streams
// natively. run() (race-checked launches, callers of the backend interface) launches from inside an
// inline task of a CUDA stream. One instance per device (a CUfunction belongs to one context). Private to the
// library; launch.cpp reaches it through backend_for(Device).
#pragma once

#include "../../platform/kernel.hpp"
#include "codegen.hpp"
#include "ctile/backend/backend.hpp"

namespace ctile::backend::cuda {

// The backend of cuda:index (created on first use; never destroyed). Throws UserError when the
// device cannot be used.
Backend& backend(int index);

// How the generated code takes its arguments (the generator's parameter struct, codegen.hpp, as the
// platform's ParamLayout). The compiler owns this contract: when it changes the struct, it changes
// this (tests/unit/cuda_runtime/test_param_layout.cpp checks both against each other).
platform::ParamLayout param_layout_of(const ir::Kernel& k, const GeneratedKernel& g);
// The platform's description of one of g's tensor maps (what it encodes, and where it goes).
platform::TensorMapSlot tensor_map_slot(const GeneratedKernel::Map& m);

}  // namespace ctile::backend::cuda
