// The CPU platform (cpu:0): host memory (64-byte aligned; mmap from 1 MiB), streams that run their
// commands on a worker thread each, graphs that run their nodes in order on the worker. Private to
// the library.
#pragma once

#include "../platform.hpp"

namespace ctile::platform::cpu {

[[nodiscard]] DevicePlatform& platform();

}  // namespace ctile::platform::cpu
