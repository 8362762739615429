// ctile: ownership-safe tile kernels in C++20. Include this one header.
//
// Layers (docs/architecture.md):
//   core/      element types, shapes, errors, the `unchecked` tag
//   ir/        the typed tile IR, builder, printer, verifier
//   frontend/  the kernel DSL (Tile<T>, parameter types, control flow) and tracing
//   backend/   the backend interface; the CPU interpreter is the reference backend
//   runtime/   devices, streams, events, tensors, partitions, shared handles, futures, launch,
//              compile_only / warm_up
//   simt/      SIMT kernels: per-thread kernels with safe types, launch contracts, raw CUDA kernels
//   interop/   DLPack import and export (zero-copy tensors from and to other frameworks)
#pragma once

#include "ctile/core/dtype.hpp"
#include "ctile/core/error.hpp"
#include "ctile/core/shape.hpp"
#include "ctile/core/unchecked.hpp"
#include "ctile/frontend/combine.hpp"
#include "ctile/frontend/control.hpp"
#include "ctile/frontend/kernel.hpp"
#include "ctile/frontend/params.hpp"
#include "ctile/frontend/tile.hpp"
#include "ctile/interop/dlpack.hpp"
#include "ctile/ir/ir.hpp"
#include "ctile/runtime/bind.hpp"
#include "ctile/runtime/compile.hpp"
#include "ctile/runtime/copy.hpp"
#include "ctile/runtime/creation.hpp"
#include "ctile/runtime/device.hpp"
#include "ctile/runtime/future.hpp"
#include "ctile/runtime/graph.hpp"
#include "ctile/runtime/launch.hpp"
#include "ctile/runtime/partition.hpp"
#include "ctile/runtime/shared.hpp"
#include "ctile/runtime/stream.hpp"
#include "ctile/runtime/tensor.hpp"
#include "ctile/runtime/timer.hpp"
#include "ctile/runtime/tune.hpp"
#include "ctile/runtime/unchecked_tensor.hpp"
#include "ctile/simt.hpp"
