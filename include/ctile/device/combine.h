// ctile device library: the values a user's combine function works on (ct.reduce_with,
// ct.scan_with). The generated code defines each function as an Op for dist.h's reduce_by,
// reduce_one_by and scan_lines:
//
//   struct Combine7 {
//     typedef ct::Pack<float, long long> Acc;       // one value of each combined tile
//     static CT_DEV Acc combine(const Acc& a, const Acc& b);
//   };
//
// with no identity (the algorithms start from the first element of each group) and no lift or
// finish (the values are the tiles' elements themselves).
#pragma once

#include "ctile/device/block.h"

namespace ct {

// k values of possibly different types: h, then the rest in t (Pack<float, long long, bool>:
// .h, .t.h, .t.t.h). Every member is at most 8 bytes, so a Pack of k values is at most 8k bytes
// (the scratch smem-alloc gives a reduction across warps).
template <class H, class... T>
struct Pack {
  H h;
  Pack<T...> t;
};
template <class H>
struct Pack<H> {
  H h;
};

// Warp shuffles of the narrow floats (by their bits) and of packs (member by member).
CT_DEV f16 shfl_xor(f16 v, int m) { return f16{(u16)__shfl_xor_sync(0xffffffffu, (unsigned)v.bits, m)}; }
CT_DEV f16 shfl_from(f16 v, int lane) { return f16{(u16)__shfl_sync(0xffffffffu, (unsigned)v.bits, lane)}; }
CT_DEV bf16 shfl_xor(bf16 v, int m) { return bf16{(u16)__shfl_xor_sync(0xffffffffu, (unsigned)v.bits, m)}; }
CT_DEV bf16 shfl_from(bf16 v, int lane) { return bf16{(u16)__shfl_sync(0xffffffffu, (unsigned)v.bits, lane)}; }
CT_DEV f8e4m3 shfl_xor(f8e4m3 v, int m) { return f8e4m3{(u8)__shfl_xor_sync(0xffffffffu, (unsigned)v.bits, m)}; }
CT_DEV f8e4m3 shfl_from(f8e4m3 v, int lane) { return f8e4m3{(u8)__shfl_sync(0xffffffffu, (unsigned)v.bits, lane)}; }
CT_DEV f8e5m2 shfl_xor(f8e5m2 v, int m) { return f8e5m2{(u8)__shfl_xor_sync(0xffffffffu, (unsigned)v.bits, m)}; }
CT_DEV f8e5m2 shfl_from(f8e5m2 v, int lane) { return f8e5m2{(u8)__shfl_sync(0xffffffffu, (unsigned)v.bits, lane)}; }

template <class H>
CT_DEV Pack<H> shfl_xor(const Pack<H>& p, int m) {
  Pack<H> r;
  r.h = shfl_xor(p.h, m);
  return r;
}
template <class H, class T1, class... T>
CT_DEV Pack<H, T1, T...> shfl_xor(const Pack<H, T1, T...>& p, int m) {
  Pack<H, T1, T...> r;
  r.h = shfl_xor(p.h, m);
  r.t = shfl_xor(p.t, m);
  return r;
}
template <class H>
CT_DEV Pack<H> shfl_from(const Pack<H>& p, int lane) {
  Pack<H> r;
  r.h = shfl_from(p.h, lane);
  return r;
}
template <class H, class T1, class... T>
CT_DEV Pack<H, T1, T...> shfl_from(const Pack<H, T1, T...>& p, int lane) {
  Pack<H, T1, T...> r;
  r.h = shfl_from(p.h, lane);
  r.t = shfl_from(p.t, lane);
  return r;
}

}  // namespace ct
