// KernelOptions (core/options.hpp).
#include "ctile/core/options.hpp"

#include <cstdlib>
#include <cstring>
#include <optional>

#include "ctile/core/error.hpp"

namespace ctile {
namespace {

bool pow2_in(int v, int lo, int hi) { return v >= lo && v <= hi && (v & (v - 1)) == 0; }

int env_int(const char* name, int lo, int hi, bool pow2) {
  const char* v = std::getenv(name);
  if (!v || !*v) return -1;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (*end != '\0' || n < lo || n > hi || (pow2 && !pow2_in(static_cast<int>(n), lo, hi)))
    throw UserError(detail::cat(name, "='", v, "' is not ", pow2 ? "a power of two" : "a number", " from ", lo, " to ", hi));
  return static_cast<int>(n);
}

// -1, 0, 1 (or up to hi) from the environment; nullopt when unset.
std::optional<int> env_tristate(const char* name, const char* meaning, int hi = 1) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (*end != '\0' || n < -1 || n > hi) throw UserError(detail::cat(name, "='", v, "' is not ", meaning));
  return static_cast<int>(n);
}

}  // namespace

std::string KernelOptions::str() const {
  std::string s;
  auto add = [&](const std::string& x) { s += (s.empty() ? "" : ",") + x; };
  if (warps) add("warps=" + std::to_string(warps));
  if (stages) add("stages=" + std::to_string(stages));
  if (blocks_per_cta) add("blocks_per_cta=" + std::to_string(blocks_per_cta));
  if (fast_math) add("fast_math");
  if (simt_mma) add("simt_mma");
  if (sync_mma) add("sync_mma");
  if (loop_prefetch) add("loop_prefetch=" + std::to_string(loop_prefetch));
  if (min_ctas_per_sm) add("min_ctas_per_sm=" + std::to_string(min_ctas_per_sm));
  if (tma) add("tma=" + std::to_string(tma));
  if (warp_specialize) add("warp_specialize=" + std::to_string(warp_specialize));
  if (pingpong) add("pingpong=" + std::to_string(pingpong));
  if (epilogue_overlap) add("epilogue_overlap=" + std::to_string(epilogue_overlap));
  if (ring_slots) add("ring_slots=" + std::to_string(ring_slots));
  if (acc_split) add("acc_split=" + std::to_string(acc_split));
  return s;
}

void KernelOptions::validate(const std::string& kernel) const {
  auto bad = [&](const std::string& what) {
    throw UserError(detail::cat("kernel '", kernel, "': compile option ", what));
  };
  if (warps != 0 && !pow2_in(warps, 1, 32)) bad(detail::cat("warps = ", warps, " is not a power of two from 1 to 32"));
  if (stages < 0 || stages > 4) bad(detail::cat("stages = ", stages, " is not in 1..4 (0: the compiler chooses)"));
  if (loop_prefetch < 0 || loop_prefetch > 3)
    bad(detail::cat("loop_prefetch = ", loop_prefetch, " is not in 1..3 (0: the compiler chooses)"));
  if (min_ctas_per_sm < 0 || min_ctas_per_sm > 8)
    bad(detail::cat("min_ctas_per_sm = ", min_ctas_per_sm, " is not in 1..8 (0: no occupancy target)"));
  if (tma < -1 || tma > 1) bad(detail::cat("tma = ", tma, " is not 1 (TMA), -1 (cp.async) or 0 (the compiler chooses)"));
  if (warp_specialize < -1 || warp_specialize > 1)
    bad(detail::cat("warp_specialize = ", warp_specialize, " is not 1 (a producer warpgroup), -1 (off) or 0 (the compiler chooses)"));
  if (pingpong < -1 || pingpong > 1)
    bad(detail::cat("pingpong = ", pingpong, " is not 1 (the consumer warpgroups take turns), -1 (off) or 0 (the compiler chooses)"));
  if (epilogue_overlap < -1 || epilogue_overlap > 1)
    bad(detail::cat("epilogue_overlap = ", epilogue_overlap,
                    " is not 1 (the next tile block's copies during the epilogue), -1 (off) or 0 (the compiler chooses)"));
  if (acc_split < -1 || acc_split > 2)
    bad(detail::cat("acc_split = ", acc_split,
                    " is not 1 (two accumulators), 2 (two consumer warpgroups), -1 (one) or 0 (the compiler chooses)"));
  if (ring_slots != 0 && (ring_slots < 2 || ring_slots > 32))
    bad(detail::cat("ring_slots = ", ring_slots, " is not in 2..32 (0: the compiler chooses)"));
  if (blocks_per_cta != 0 && !pow2_in(blocks_per_cta, 1, 32))
    bad(detail::cat("blocks_per_cta = ", blocks_per_cta, " is not a power of two from 1 to 32"));
  if (warps > 1 && blocks_per_cta > 8)
    bad(detail::cat("blocks_per_cta = ", blocks_per_cta, " with warps = ", warps,
                    ": tile blocks of several warps synchronise on named barriers, at most 8 per CTA here"));
  if (warps != 0 && blocks_per_cta != 0 && warps * blocks_per_cta > 32)
    bad(detail::cat("warps = ", warps, " with blocks_per_cta = ", blocks_per_cta, " needs ", warps * blocks_per_cta * 32,
                    " threads per CTA, more than 1024"));
}

KernelOptions KernelOptions::with_env_overrides() const {
  KernelOptions o = *this;
  if (int v = env_int("CTILE_WARPS", 1, 32, true); v > 0) o.warps = v;
  if (int v = env_int("CTILE_STAGES", 1, 4, false); v > 0) o.stages = v;
  if (int v = env_int("CTILE_BLOCKS_PER_CTA", 1, 32, true); v > 0) o.blocks_per_cta = v;
  if (int v = env_int("CTILE_LOOP_PREFETCH", 1, 3, false); v > 0) o.loop_prefetch = v;
  if (int v = env_int("CTILE_MIN_CTAS", 1, 8, false); v > 0) o.min_ctas_per_sm = v;
  if (int v = env_int("CTILE_RING_SLOTS", 2, 32, false); v > 0) o.ring_slots = v;
  if (auto v = env_tristate("CTILE_TMA", "1 (TMA), -1 (cp.async) or 0 (the compiler chooses)")) o.tma = *v;
  if (auto v = env_tristate("CTILE_WARP_SPECIALIZE", "1 (a producer warpgroup), -1 (off) or 0 (the compiler chooses)"))
    o.warp_specialize = *v;
  if (auto v = env_tristate("CTILE_PINGPONG", "1 (the consumer warpgroups take turns), -1 (off) or 0 (the compiler chooses)"))
    o.pingpong = *v;
  if (auto v = env_tristate("CTILE_EPILOGUE_OVERLAP",
                            "1 (the next tile block's copies during the epilogue), -1 (off) or 0 (the compiler chooses)"))
    o.epilogue_overlap = *v;
  if (auto v = env_tristate("CTILE_ACC_SPLIT",
                            "1 (two accumulators), 2 (two consumer warpgroups), -1 (one) or 0 (the compiler chooses)", 2))
    o.acc_split = *v;
  if (const char* v = std::getenv("CTILE_FAST_MATH"); v && *v) o.fast_math = std::strcmp(v, "0") != 0;
  if (const char* v = std::getenv("CTILE_SIMT_MMA"); v && *v) o.simt_mma = std::strcmp(v, "0") != 0;
  if (const char* v = std::getenv("CTILE_SYNC_MMA"); v && *v) o.sync_mma = std::strcmp(v, "0") != 0;
  return o;
}

}  // namespace ctile
