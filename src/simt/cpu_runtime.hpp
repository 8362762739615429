// The CPU backend of SIMT kernels: runs every thread of the grid, block by block, each thread a
// fiber (fiber.hpp). Blocks run in parallel on ctile's worker threads; with the race checker on
// they run one after another. Private to src/simt.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ctile/simt/kernel.hpp"

namespace ctile::simt::cpu {

// One argument's memory, for race messages ("element 5 of argument 0 (out)").
struct ArgRange {
  const std::byte* lo = nullptr;
  const std::byte* hi = nullptr;
  std::int64_t element_bytes = 1;
  std::string name;  // "argument 0 (out)"
};

// The argument ranges of a pack of descriptors (host or copied device memory).
std::vector<ArgRange> arg_ranges(const detail::KernelInfo& k, const std::byte* pack);

// Runs the launch to completion on this thread and the worker pool. Throws the error of the
// lowest-numbered block that failed (a UserError or RaceError from the kernel or the emulator).
void run(const detail::KernelInfo& k, const std::byte* pack, const LaunchDims& dims, bool race_check);

}  // namespace ctile::simt::cpu
