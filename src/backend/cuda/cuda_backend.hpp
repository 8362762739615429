// The CUDA backend: compile = IR -> CUDA C++ (codegen.hpp) -> NVRTC cubin for the device's exact
// architecture -> cuModuleLoadData; run = cuLaunchKernel on the CUDA stream whose task is running
// (cuda_stream.hpp). One instance per device (a CUfunction belongs to one context). Private to the
// library; launch.cpp reaches it through backend_for(Device).
#pragma once

#include "ctile/backend/backend.hpp"

namespace ctile::backend::cuda {

// The backend of cuda:index (created on first use; never destroyed). Throws UserError when the
// device cannot be used.
Backend& backend(int index);

}  // namespace ctile::backend::cuda
