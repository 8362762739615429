// The race checker of the SIMT CPU backend. Safe code cannot race (DisjointSpan writes go through
// tokens, Spans are read-only, AtomicSpans are atomic); what can is marked ctile::unchecked:
// shared memory, get_unchecked_mut, UncheckedPtr. With race checking on, every such access (and
// every get_mut write, which an unchecked access elsewhere could collide with) is recorded here
// with the thread, its block and the number of barriers (and warp::sync()s) it has passed.
//
// Two accesses to one element race when they come from different threads, at least one writes
// (an atomic counts as a write, except against another atomic), and nothing orders them: the same
// block and a sync_threads() between them (different barrier counts), or the same warp and a
// warp::sync() between them. Accesses from different blocks are never ordered within a launch.
// The first race found fails the launch with a RaceError naming the element and both threads.
// Private to src/simt.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ctile/simt/host_runtime.h"

namespace ctile::simt::cpu {

struct Accessor {
  std::uint32_t thread = 0;       // linear in the block
  std::uint64_t block = 0;        // linear in the grid
  std::uint64_t block_epoch = 0;  // barriers passed
  std::uint64_t warp_epoch = 0;   // warp::sync()s passed (its warp's)
  detail::AccessKind kind = detail::AccessKind::Read;
};

class RaceChecker {
 public:
  // `describe` names an address ("element 5 of argument 0 (out)", "byte 12 of shared memory");
  // `thread_name` names an accessor ("thread (3,0,0) of block (1,0,0)").
  RaceChecker(std::function<std::string(const void*)> describe,
              std::function<std::string(const Accessor&)> thread_name);
  // Throws RaceError when `a` races with an earlier access to the element at addr.
  void access(const void* addr, const Accessor& a, const std::string& kernel);
  void clear() { cells_.clear(); }

 private:
  struct Cell {
    bool has_writer = false;
    Accessor writer;
    std::vector<Accessor> reads;  // plain reads since the last write, one per thread
  };
  std::unordered_map<const void*, Cell> cells_;
  std::function<std::string(const void*)> describe_;
  std::function<std::string(const Accessor&)> thread_name_;
};

}  // namespace ctile::simt::cpu
