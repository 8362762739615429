// The typed commands a stream runs (StreamImpl::submit). Commands are data, not closures, so that
// a graph capture can turn each one into a graph node and a stream can launch a kernel without
// calling back into the runtime. Private to the library; docs/cuda_runtime.md ("Commands").
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "ctile/runtime/stream.hpp"
#include "ctile/runtime/small_vec.hpp"
#include "launch_shape.hpp"

namespace ctile::platform {
class NativeKernel;
class GraphExec;
}  // namespace ctile::platform

namespace ctile::detail {

// What a command's work uses; released once the work has finished, before its event completes (so
// that use counts are exact when an event is done).
using KeepAlive = SmallVec<std::shared_ptr<const void>, 6>;

struct Command {
  enum class Kind : std::uint8_t {
    Kernel,  // `kernel` over `tile_blocks` tile blocks (or `shape`), from the parameter block `params`
    Copy,    // `bytes` from `src` to `dst`, both memory of the stream's device
    Graph,   // one run of an executable graph of the stream's device
    Host,    // `fn` on the host, in stream order, after the work before it
    Inline,  // CUDA streams: `fn` on the submitting thread with the stream current (Stream::enqueue)
    Marker,  // no work: its event completes after everything before it (and after wait_for)
  };
  Kind kind = Kind::Marker;

  // Kernel
  const platform::NativeKernel* kernel = nullptr;
  std::int64_t tile_blocks = 0;
  const std::byte* params = nullptr;  // kernel->layout().bytes bytes; only read during submit
  platform::LaunchShape shape;        // given: the launch's own grid and block (SIMT kernels), not tile_blocks

  // Copy
  std::byte* dst = nullptr;
  const std::byte* src = nullptr;
  std::int64_t bytes = 0;

  // Graph
  platform::GraphExec* graph = nullptr;

  // Host, Inline
  StreamTask fn;

  KeepAlive keep;
  std::string_view name;  // for messages: the kernel's name (must outlive the submit)
  // The submitter waits for the work as soon as submit returns (a launch's sync()): a stream may
  // then finish a kernel, copy or graph within submit, on the submitting thread, and return a done
  // event (CUDA streams do when nothing earlier is pending: no completion thread in between).
  bool wait = false;
};

}  // namespace ctile::detail
