// Shared memory: per block, visible to every thread of the block, and only through
// ctile::unchecked, because nothing stops two threads from writing one element or a thread from
// reading what another has not written yet (order accesses with sync_threads()). The CPU backend
// checks every index and, with race_check(), reports conflicting accesses between barriers.
//
//   auto sums = dynamic_shared<float>(ctile::unchecked);       // the contract's dynamic bytes
//   auto bins = dynamic_shared<u32>(ctile::unchecked, 1024);   // ... from byte offset 1024 on
//   sums[warp_id()] = v;  sync_threads();  float w = sums[0];
//   bins.atomic_add(bin, 1u);                                  // block-scoped atomics
//
// The size is the launch contract's dynamic_shared(bytes). Elements start uninitialised.
#pragma once

#include "ctile/simt/atomic.h"
#include "ctile/simt/elem_ref.h"

namespace ctile::simt {

template <class T>
class SharedSpan {
  static_assert(detail::is_element<T>::value, "SharedSpan<T>: T must be bool, an 8- to 64-bit integer, float or double");

 public:
  i64 size() const { return n_; }
  // No bounds check on the GPU (checked on the CPU).
  detail::elem_ref<T> operator[](i64 i) const {
#if CTILE_SIMT_DEVICE
    return p_[i];
#else
    if (!detail::in_range(i, n_)) detail::out_of_bounds("shared memory (SharedSpan::operator[])", i, n_);
    return detail::elem_ref<T>(p_ + i, detail::Space::Shared);
#endif
  }
  // Elements [offset, offset + count).
  SharedSpan subspan(i64 offset, i64 count) const {
#if !CTILE_SIMT_DEVICE
    if (offset < 0 || count < 0 || offset + count > n_)
      detail::out_of_bounds("SharedSpan::subspan (offset + count)", offset + count, n_);
#endif
    return SharedSpan(p_ + offset, count);
  }
  T* data() const { return p_; }

  // Block-scoped atomics (every thread of the block sees them as indivisible).
  T atomic_add(i64 i, T v) const { return rmw(detail::AtomicOp::Add, i, v); }
  T atomic_exchange(i64 i, T v) const { return rmw(detail::AtomicOp::Exch, i, v); }
  T atomic_max(i64 i, T v) const { return rmw(detail::AtomicOp::Max, i, v); }
  T atomic_min(i64 i, T v) const { return rmw(detail::AtomicOp::Min, i, v); }
  T atomic_or(i64 i, T v) const { return rmw(detail::AtomicOp::Or, i, v); }
  T atomic_and(i64 i, T v) const { return rmw(detail::AtomicOp::And, i, v); }

 private:
  friend struct detail::Access;
  SharedSpan(T* p, i64 n) : p_(p), n_(n) {}
  T rmw(detail::AtomicOp op, i64 i, T v) const {
    static_assert(detail::atomic_ok<T>::value, "SharedSpan atomics need a 32- or 64-bit integer, float or double");
#if !CTILE_SIMT_DEVICE
    if (!detail::in_range(i, n_)) detail::out_of_bounds("shared memory (SharedSpan atomic)", i, n_);
    detail::ThreadState& t = detail::current("a shared-memory atomic");
    if (t.race_check) detail::record_access(t, detail::Space::Shared, p_ + i, sizeof(T), detail::AccessKind::Atomic);
#endif
    return detail::atomic_rmw<scope::Block>(op, p_ + i, v);
  }
  T* p_;
  i64 n_;
};

namespace detail {
#if CTILE_SIMT_DEVICE
inline unsigned char* dyn_smem_base() {
  extern __shared__ __align__(16) unsigned char ctile_simt_dyn_smem[];
  return ctile_simt_dyn_smem;
}
#endif
}  // namespace detail

// The block's dynamic shared memory (the launch contract's dynamic_shared bytes) from
// `byte_offset` on, as elements of T (byte_offset a multiple of alignof(T); at most 16).
template <class T>
inline SharedSpan<T> dynamic_shared(unchecked_t, i64 byte_offset = 0 CTILE_SIMT_LOC) {
  static_assert(alignof(T) <= 16, "dynamic_shared<T>: shared memory is 16-byte aligned");
#if CTILE_SIMT_DEVICE
  return detail::Access::make<SharedSpan<T>>(reinterpret_cast<T*>(detail::dyn_smem_base() + byte_offset),
                                             (i64)((CTILE_SIMT_DYN_SMEM - byte_offset) / (i64)sizeof(T)));
#else
  (void)ctile_loc;
  detail::ThreadState& t = detail::current("dynamic_shared()");
  const i64 total = static_cast<i64>(t.dyn_smem_bytes);
  if (byte_offset < 0 || byte_offset > total || byte_offset % static_cast<i64>(alignof(T)) != 0)
    detail::out_of_bounds("dynamic_shared (byte offset; the contract's dynamic_shared bytes)", byte_offset, total);
  return detail::Access::make<SharedSpan<T>>(reinterpret_cast<T*>(t.dyn_smem + byte_offset),
                                             (total - byte_offset) / static_cast<i64>(sizeof(T)));
#endif
}

}  // namespace ctile::simt
