// Launches of kernels that another front end compiled and loaded (SIMT kernels, src/simt): the
// runtime orders, runs and captures them like tile launches (the storages' dependencies, the graph
// ownership checks, capture nodes that ctile::Graph can update), from a parameter block it reads
// only through the kernel's slots. Private to the library; docs/simt.md ("Graphs").
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "../platform/kernel.hpp"
#include "ctile/runtime/stream.hpp"
#include "ctile/runtime/tensor.hpp"

namespace ctile::detail {

// What the runtime knows of a foreign kernel: per C++ argument, a Tensor slot at the offset of its
// data pointer in the parameter block (the rest of its descriptor does not change with the
// memory), or a Scalar slot of dtype_size(dtype) bytes. Outlives every launch and graph of it.
struct ForeignKernel {
  std::string name;      // "vector_add" (Graph::kernel_name)
  std::string describe;  // "SIMT kernel 'vector_add' (examples/simt_kernels.hpp:12)", for messages
  std::vector<platform::ParamSlot> slots;
};

struct ForeignLaunch {
  const ForeignKernel* kernel = nullptr;
  // A GPU: the loaded kernel, launched over `shape` with `params` as its one by-value parameter.
  const platform::NativeKernel* native = nullptr;
  platform::LaunchShape shape;
  // The CPU: runs the whole launch on the host from a parameter block.
  std::function<void(const std::byte* params)> host;
  std::span<const std::byte> params;
  struct Arg {
    std::shared_ptr<const TensorCore> core;
    int arg = -1;  // the C++ argument (its slot)
    bool writes = false;
  };
  std::span<const Arg> args;
};

// Submits (or, on a capturing stream, records) launch `l` on `s` after the work its tensors depend
// on; returns its event. Throws UserError for a tensor a graph owns or a device mismatch.
Event submit_foreign(const ForeignLaunch& l, const Stream& s);

}  // namespace ctile::detail
