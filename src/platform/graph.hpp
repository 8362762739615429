// Executable graphs of a platform: a fixed set of commands with dependencies between them, built
// once (GraphBuilder) and run many times as one command (Command::Kind::Graph). The CUDA platform
// builds a CUDA graph (kernel, memcpy, host and empty nodes; cuGraphLaunch); the CPU platform runs
// the nodes in order on the stream's worker. The runtime's ctile::Graph (src/runtime/graph.cpp)
// records what to build. Private to the library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "launch_shape.hpp"

namespace ctile::platform {

class NativeKernel;

using NodeId = std::size_t;

class GraphExec {
 public:
  virtual ~GraphExec() = default;
  // New parameters (a block of the kernel's layout().bytes) for kernel node `node`, used by the runs
  // submitted from now on; runs already submitted keep theirs. `pointers`: the block points at other
  // memory than before (a swapped tensor), so whatever else keeps the node's parameters is updated
  // too: no live graph points at memory handed back (compute-sanitizer counts a free of such memory
  // as a use after free). Scalars alone need not.
  virtual void set_kernel_params(NodeId node, const std::byte* params, bool pointers) = 0;
  // A new function for host node `node`, likewise for later runs (the CPU platform runs kernels as
  // host nodes: the runtime replaces a node's function when its arguments change).
  virtual void set_host(NodeId node, std::function<void()> fn) = 0;
  [[nodiscard]] virtual std::size_t nodes() const = 0;
};

class GraphBuilder {
 public:
  virtual ~GraphBuilder() = default;
  // Each node runs after `deps` (ids of earlier nodes). A host function runs on a host thread of the
  // platform's choosing (on a GPU: a driver thread; it must not call the driver) and may run again
  // at every run of the graph.
  // A kernel node: `k` over `tile_blocks` tile blocks, or with `shape` where it is given (SIMT).
  virtual NodeId add_kernel(const NativeKernel& k, std::int64_t tile_blocks, const LaunchShape& shape,
                            const std::byte* params, std::span<const NodeId> deps) = 0;
  virtual NodeId add_copy(std::byte* dst, const std::byte* src, std::int64_t bytes, std::span<const NodeId> deps) = 0;
  virtual NodeId add_host(std::function<void()> fn, std::span<const NodeId> deps) = 0;
  // A node that does nothing but order: it runs after `deps`, and nodes that depend on it after it.
  virtual NodeId add_empty(std::span<const NodeId> deps) = 0;
  // Throws UserError / CudaError when the graph cannot be made executable.
  [[nodiscard]] virtual std::unique_ptr<GraphExec> instantiate() = 0;
};

}  // namespace ctile::platform
