// Warp collectives: shuffles and votes among the 32 lanes of a warp (lanes are consecutive linear
// thread indices of the block: lane_id() = linear index % 32).
//
//   warp::shfl(v, src)        the v of lane src (within groups of `width` lanes)
//   warp::shfl_down(v, d)     the v of lane + d (own v when that is outside the group)
//   warp::shfl_up(v, d)       the v of lane - d (likewise)
//   warp::shfl_xor(v, m)      the v of lane ^ m (likewise)
//   warp::any(p) / all(p)     whether p holds in any / every lane
//   warp::ballot(p)           bit k set when p holds in lane k
//   warp::sync()              orders the lanes' memory accesses (like sync_threads, for a warp)
//   warp::reduce_sum(v)       the sum over the 32 lanes, in every lane (five shfl_xor steps)
//
// Every lane of the warp must take part (the full mask): a collective that only some lanes reach
// is an error on the CPU backend and undefined on the GPU, and so is a block whose size is not a
// multiple of 32. Values are 4- or 8-byte integers or floating point.
#pragma once

#include "ctile/simt/config.h"

namespace ctile::simt::warp {

namespace detail {
using namespace ::ctile::simt::detail;
template <class T>
struct shuffle_ok {
  static constexpr bool value = (sizeof(T) == 4 || sizeof(T) == 8) && (is_integer<T>::value || is_floating<T>::value);
};
#if !CTILE_SIMT_DEVICE
template <class T>
CTILE_SIMT_SYNC_FN T host_shuffle(WarpOp op, T v, u32 arg, u32 width, const std::source_location& loc) {
  static_assert(shuffle_ok<T>::value, "warp shuffles take 4- or 8-byte integers or floating point values");
  u64 bits = 0;
  if constexpr (sizeof(T) == 4)
    bits = bit_cast<u32>(v);
  else
    bits = bit_cast<u64>(v);
  const u64 r = warp_collective(current("a warp shuffle"), op, bits, arg, width, loc);
  if constexpr (sizeof(T) == 4)
    return bit_cast<T>(static_cast<u32>(r));
  else
    return bit_cast<T>(static_cast<u64>(r));
}
#endif
}  // namespace detail

inline constexpr unsigned kFullMask = 0xffffffffu;

template <class T>
CTILE_SIMT_SYNC_FN T shfl(T v, u32 src_lane, u32 width = kWarpSize CTILE_SIMT_LOC) {
  static_assert(detail::shuffle_ok<T>::value, "warp::shfl takes a 4- or 8-byte integer or floating point value");
#if CTILE_SIMT_DEVICE
  return __shfl_sync(kFullMask, v, (int)src_lane, (int)width);
#else
  return detail::host_shuffle(detail::WarpOp::Shfl, v, src_lane, width, CTILE_SIMT_LOC_ARG);
#endif
}
template <class T>
CTILE_SIMT_SYNC_FN T shfl_down(T v, u32 delta, u32 width = kWarpSize CTILE_SIMT_LOC) {
  static_assert(detail::shuffle_ok<T>::value, "warp::shfl_down takes a 4- or 8-byte integer or floating point value");
#if CTILE_SIMT_DEVICE
  return __shfl_down_sync(kFullMask, v, delta, (int)width);
#else
  return detail::host_shuffle(detail::WarpOp::ShflDown, v, delta, width, CTILE_SIMT_LOC_ARG);
#endif
}
template <class T>
CTILE_SIMT_SYNC_FN T shfl_up(T v, u32 delta, u32 width = kWarpSize CTILE_SIMT_LOC) {
  static_assert(detail::shuffle_ok<T>::value, "warp::shfl_up takes a 4- or 8-byte integer or floating point value");
#if CTILE_SIMT_DEVICE
  return __shfl_up_sync(kFullMask, v, delta, (int)width);
#else
  return detail::host_shuffle(detail::WarpOp::ShflUp, v, delta, width, CTILE_SIMT_LOC_ARG);
#endif
}
template <class T>
CTILE_SIMT_SYNC_FN T shfl_xor(T v, u32 lane_mask, u32 width = kWarpSize CTILE_SIMT_LOC) {
  static_assert(detail::shuffle_ok<T>::value, "warp::shfl_xor takes a 4- or 8-byte integer or floating point value");
#if CTILE_SIMT_DEVICE
  return __shfl_xor_sync(kFullMask, v, (int)lane_mask, (int)width);
#else
  return detail::host_shuffle(detail::WarpOp::ShflXor, v, lane_mask, width, CTILE_SIMT_LOC_ARG);
#endif
}

CTILE_SIMT_SYNC_FN bool any(bool p CTILE_SIMT_LOC) {
#if CTILE_SIMT_DEVICE
  return __any_sync(kFullMask, p) != 0;
#else
  return detail::warp_collective(detail::current("warp::any"), detail::WarpOp::Any, p, 0, kWarpSize, CTILE_SIMT_LOC_ARG) != 0;
#endif
}
CTILE_SIMT_SYNC_FN bool all(bool p CTILE_SIMT_LOC) {
#if CTILE_SIMT_DEVICE
  return __all_sync(kFullMask, p) != 0;
#else
  return detail::warp_collective(detail::current("warp::all"), detail::WarpOp::All, p, 0, kWarpSize, CTILE_SIMT_LOC_ARG) != 0;
#endif
}
CTILE_SIMT_SYNC_FN u32 ballot(bool p CTILE_SIMT_LOC) {
#if CTILE_SIMT_DEVICE
  return __ballot_sync(kFullMask, p);
#else
  return static_cast<u32>(
      detail::warp_collective(detail::current("warp::ballot"), detail::WarpOp::Ballot, p, 0, kWarpSize, CTILE_SIMT_LOC_ARG));
#endif
}
CTILE_SIMT_SYNC_FN void sync(CTILE_SIMT_LOC_ONLY) {
#if CTILE_SIMT_DEVICE
  __syncwarp(kFullMask);
#else
  (void)detail::warp_collective(detail::current("warp::sync"), detail::WarpOp::Sync, 0, 0, kWarpSize, CTILE_SIMT_LOC_ARG);
#endif
}

template <class T>
inline T reduce_sum(T v CTILE_SIMT_LOC) {
  for (u32 m = kWarpSize / 2; m > 0; m /= 2) v += shfl_xor(v, m, kWarpSize CTILE_SIMT_LOC_PASS);
  return v;
}

}  // namespace ctile::simt::warp
