// ctile device library: atomic read-modify-writes of f16 and bf16 elements (add, max, min,
// exchange), as overloads of memory.h's atomic_rmw. A compare-and-swap loop on the aligned 32-bit
// word that holds the element: the new value is the element op of docs/ir.md (computed in f32,
// rounded once to the 16-bit type, like the interpreter), the other half of the word is written
// back as it was read (a concurrent change to it makes the swap fail and retry), and the word
// never leaves the element's 4-byte-aligned block, so it is never outside the allocation's pages.
#pragma once

#include "ctile/device/memory.h"
#include "ctile/device/numeric.h"

namespace ct {

template <int OP, class H>
CT_DEV H atomic16_rmw(H* p, H v) {
  u32* w = (u32*)((unsigned long long)p & ~3ull);
  const unsigned shift = ((unsigned long long)p & 2ull) ? 16u : 0u;
  u32 cur = *(volatile u32*)w;
  for (;;) {
    H old;
    old.bits = (u16)(cur >> shift);
    H nv;
    if constexpr (OP == kAtomicAdd) nv = op_add<H>(old, v);
    else if constexpr (OP == kAtomicMax) nv = op_max<H>(old, v);
    else if constexpr (OP == kAtomicMin) nv = op_min<H>(old, v);
    else nv = v;
    if (OP != kAtomicExch && nv.bits == old.bits) return old;  // nothing to write
    const u32 next = (cur & ~(0xffffu << shift)) | ((u32)nv.bits << shift);
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

}  // namespace ct
