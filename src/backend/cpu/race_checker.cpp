#include "race_checker.hpp"

#include <algorithm>
#include <tuple>

namespace ctile::backend::cpu {

void RaceChecker::record(const std::byte* addr, int param, const std::int64_t* coords, int rank, std::int64_t block) {
  const auto key = reinterpret_cast<std::uintptr_t>(addr);
  Shard& s = shards_[static_cast<std::size_t>(((key >> 2) * 0x9E3779B97F4A7C15ull) >> 58) % kShards];
  std::int64_t other;
  {
    std::lock_guard lk(s.m);
    auto [it, inserted] = s.owner.try_emplace(key, block);
    if (inserted || it->second == block) return;
    other = it->second;
  }
  RaceReport r;
  r.param = param;
  r.element.assign(coords, coords + rank);
  r.first = std::min(other, block);
  r.second = std::max(other, block);
  std::lock_guard lk(race_m_);
  if (!race_ || r.key() < race_->key()) race_ = std::move(r);
}

std::optional<RaceReport> RaceChecker::report() const {
  std::lock_guard lk(race_m_);
  return race_;
}

}  // namespace ctile::backend::cpu
