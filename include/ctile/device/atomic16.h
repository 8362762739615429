// ctile device library: atomic read-modify-writes of the narrow floats, f16, bf16, f8e4m3 and
// f8e5m2 (add, max, min, exchange), as overloads of memory.h's atomic_rmw. A compare-and-swap loop
// on the aligned 32-bit word that holds the element: the new value is the element op of docs/ir.md
// (computed in f32, rounded once to the narrow type, like the interpreter), the rest of the word is
// written back as it was read (a concurrent change to it makes the swap fail and retry), and the
// word never leaves the element's 4-byte-aligned block, so it is never outside the allocation's pages.
#pragma once

#include "ctile/device/memory.h"
#include "ctile/device/numeric.h"

namespace ct {

template <int OP, class H>
CT_DEV H atomic16_rmw(H* p, H v) {
  constexpr u32 kMask = sizeof(H) == 1 ? 0xffu : 0xffffu;
  u32* w = (u32*)((unsigned long long)p & ~3ull);
  const unsigned shift = (unsigned)((unsigned long long)p & (4ull - sizeof(H))) * 8u;  // the element's byte offset in the word
  u32 cur = *(volatile u32*)w;
  for (;;) {
    H old;
    old.bits = (decltype(old.bits))((cur >> shift) & kMask);
    H nv;
    if constexpr (OP == kAtomicAdd) nv = op_add<H>(old, v);
    else if constexpr (OP == kAtomicMax) nv = op_max<H>(old, v);
    else if constexpr (OP == kAtomicMin) nv = op_min<H>(old, v);
    else nv = v;
    if (OP != kAtomicExch && nv.bits == old.bits) return old;  // nothing to write
    const u32 next = (cur & ~(kMask << shift)) | ((u32)nv.bits << shift);
    const u32 prev = atomicCAS(w, cur, next);
    if (prev == cur) return old;
    cur = prev;
  }
}
template <int OP>
CT_DEV f16 atomic_rmw(f16* p, f16 v) {
  return atomic16_rmw<OP>(p, v);
}
template <int OP>
CT_DEV bf16 atomic_rmw(bf16* p, bf16 v) {
  return atomic16_rmw<OP>(p, v);
}
template <int OP>
CT_DEV f8e4m3 atomic_rmw(f8e4m3* p, f8e4m3 v) {
  return atomic16_rmw<OP>(p, v);
}
template <int OP>
CT_DEV f8e5m2 atomic_rmw(f8e5m2* p, f8e5m2 v) {
  return atomic16_rmw<OP>(p, v);
}

}  // namespace ct
