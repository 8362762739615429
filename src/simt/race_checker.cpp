#include "race_checker.hpp"

#include "ctile/core/error.hpp"

namespace ctile::simt::cpu {

namespace {

using detail::AccessKind;

bool same_thread(const Accessor& a, const Accessor& b) { return a.block == b.block && a.thread == b.thread; }

bool ordered(const Accessor& a, const Accessor& b) {
  if (same_thread(a, b)) return true;
  if (a.block != b.block) return false;
  if (a.block_epoch != b.block_epoch) return true;
  return a.thread / 32 == b.thread / 32 && a.warp_epoch != b.warp_epoch;
}

const char* verb(AccessKind k) {
  switch (k) {
    case AccessKind::Read:
      return "read";
    case AccessKind::Write:
      return "written";
    case AccessKind::Atomic:
      return "updated atomically";
  }
  return "?";
}

}  // namespace

RaceChecker::RaceChecker(std::function<std::string(const void*)> describe,
                         std::function<std::string(const Accessor&)> thread_name)
    : describe_(std::move(describe)), thread_name_(std::move(thread_name)) {}

void RaceChecker::access(const void* addr, const Accessor& a, const std::string& kernel) {
  Cell& c = cells_[addr];
  auto race = [&](const Accessor& earlier) {
    const bool same_block = earlier.block == a.block;
    throw RaceError("data race in " + kernel + ": " + describe_(addr) + " was " + verb(earlier.kind) + " by " +
                    thread_name_(earlier) + " and " + verb(a.kind) + " by " + thread_name_(a) +
                    (same_block ? " with no sync_threads() between them"
                                : " (different blocks: nothing orders them within a launch)"));
  };
  // Against the last write (atomics do not race with atomics).
  if (c.has_writer && !ordered(c.writer, a)) {
    const bool both_atomic = c.writer.kind == AccessKind::Atomic && a.kind == AccessKind::Atomic;
    if (!both_atomic) race(c.writer);
  }
  if (a.kind == AccessKind::Read) {
    for (const Accessor& r : c.reads)
      if (same_thread(r, a)) return;
    c.reads.push_back(a);
    return;
  }
  // A write or an atomic races with unordered plain reads of other threads.
  for (const Accessor& r : c.reads)
    if (!ordered(r, a)) race(r);
  c.has_writer = true;
  c.writer = a;
  c.reads.clear();
}

}  // namespace ctile::simt::cpu
