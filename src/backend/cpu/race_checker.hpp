// The race checker of the CPU backend: remembers which tile block stored each element written by
// ScatterUnchecked (keyed by address) and records an overlap when another block stores it too.
// Private to backend/cpu.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace ctile::backend::cpu {

struct RaceReport {
  int param = -1;                    // index into Kernel::params
  std::vector<std::int64_t> element; // multi-index of the element in the tensor
  std::int64_t first = 0, second = 0;  // linear ids of the two blocks, first < second
  auto key() const { return std::tie(param, element, first, second); }
};

class RaceChecker {
 public:
  // Records that `block` stores the element at `addr` (multi-index `coords` of parameter `param`).
  void record(const std::byte* addr, int param, const std::int64_t* coords, int rank, std::int64_t block);
  // The smallest overlap found (by parameter, element, blocks), if any.
  std::optional<RaceReport> report() const;

 private:
  static constexpr std::size_t kShards = 64;
  struct Shard {
    std::mutex m;
    std::unordered_map<std::uintptr_t, std::int64_t> owner;
  };
  std::array<Shard, kShards> shards_;
  mutable std::mutex race_m_;
  std::optional<RaceReport> race_;
};

}  // namespace ctile::backend::cpu
