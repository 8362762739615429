// ctile SIMT kernels: per-thread CUDA-style kernels with safe types (docs/simt.md).
//
//   include/ctile/simt/*.h    the portable kernel API (host and NVRTC): index spaces and tokens,
//                             spans, Uniform, atomics, barriers, warp collectives, shared memory
//   kernel.hpp                CTILE_SIMT_KERNEL
//   contract.hpp              launch contracts, device limits, validate_launch
//   launch.hpp                prepare() and PreparedLaunch
//   raw.hpp                   raw CUDA kernels through the unchecked API
//   compile.hpp               compile_only (CUDA source, PTX, cubin without a GPU)
#pragma once

#include "ctile/simt/compile.hpp"
#include "ctile/simt/contract.hpp"
#include "ctile/simt/kernel.hpp"
#include "ctile/simt/launch.hpp"
#include "ctile/simt/raw.hpp"
#include "ctile/simt/simt.h"
