// The host side of the SIMT headers: the state of the emulated GPU thread that is running, and the
// emulator's entry points (src/simt/cpu_runtime.cpp). Host only; the portable headers include it.
//
// The CPU backend runs every thread of a block as a fiber on one host thread. A fiber runs until it
// reaches a barrier or a warp collective, then the next one runs; when every thread of the block (or
// lane of the warp) has arrived, they continue. tls_thread points at the state of the fiber that is
// running, so thread_idx(), index_1d() and the rest read their coordinates from there.
#pragma once

#include <cstdint>
#include <source_location>

namespace ctile::simt::detail {

struct Coord {
  std::uint32_t x = 0, y = 0, z = 0;
};

// Where an access went, for the race checker.
enum class Space : std::uint8_t { Shared, Global };
enum class AccessKind : std::uint8_t { Read, Write, Atomic };

// Warp collectives, evaluated by the emulator once every lane of the warp has arrived.
enum class WarpOp : std::uint8_t { Shfl, ShflUp, ShflDown, ShflXor, Any, All, Ballot, Sync };

class BlockRun;  // src/simt/cpu_runtime.cpp

struct ThreadState {
  Coord thread, block, block_dim, grid_dim;
  std::uint32_t in_block = 0;      // linear thread index in the block (x fastest)
  std::uint64_t block_linear = 0;  // linear block index in the grid (x fastest)
  unsigned char* dyn_smem = nullptr;
  std::uint64_t dyn_smem_bytes = 0;
  bool race_check = false;
  BlockRun* run = nullptr;
};

// The thread that is running (null outside a SIMT kernel on the CPU).
extern thread_local ThreadState* tls_thread;

// Throws UserError: `what` was called outside a SIMT kernel.
[[noreturn]] void not_in_kernel(const char* what);
// The running thread; throws UserError naming `what` outside a SIMT kernel.
inline ThreadState& current(const char* what) {
  if (ThreadState* t = tls_thread) return *t;
  not_in_kernel(what);
}

// sync_threads(): waits until every thread of the block has arrived at this barrier.
void barrier(ThreadState& t, const std::source_location& loc);
// A warp collective: deposits `value` (the bits of a 4- or 8-byte value), waits for all 32 lanes,
// returns this lane's result (a shuffled value, or the vote).
std::uint64_t warp_collective(ThreadState& t, WarpOp op, std::uint64_t value, std::uint32_t arg, std::uint32_t width,
                              const std::source_location& loc);
// Race checker: an access to `bytes` bytes at `addr` (called only when t.race_check).
void record_access(ThreadState& t, Space space, const void* addr, std::uint32_t bytes, AccessKind kind);
// An unchecked index outside its buffer: a UserError naming what and where (on the GPU it would be
// an out-of-bounds access).
[[noreturn]] void out_of_bounds(const char* what, std::int64_t index, std::int64_t size);

}  // namespace ctile::simt::detail
