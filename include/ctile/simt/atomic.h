// Atomics, typed by their scope: the set of threads that see them as indivisible.
//
//   scope::Block   the threads of one block: shared memory only (SharedSpan::atomic_add, ...)
//   scope::Device  every thread of the GPU: global memory (AtomicSpan<T>, the default)
//   scope::System  the GPU and the host (AtomicSpan<T, scope::System>)
//
// AtomicSpan<T, Scope> is a kernel parameter (the host passes a Tensor<T>, moved in) that every
// thread may update at any index, through atomics only: there is no plain store. Each operation
// checks the index and returns Maybe<old value> (fetch_*) or whether it happened (add, ...).
// A block-scoped atomic on global memory would race with other blocks, so AtomicSpan<T,
// scope::Block> does not compile. Element types: 32- and 64-bit integers, float and double (add,
// exchange, compare_exchange); max, min, and, or, xor need an integer. All are relaxed.
#pragma once

#include "ctile/simt/maybe.h"
#include "ctile/simt/span.h"

#if !CTILE_SIMT_DEVICE
#include <atomic>
#endif

namespace ctile::simt {

namespace scope {
struct Block {};
struct Device {};
struct System {};
}  // namespace scope

namespace detail {

template <class S>
struct is_scope {
  static constexpr bool value = same<S, scope::Block>::value || same<S, scope::Device>::value || same<S, scope::System>::value;
};
template <class T>
struct atomic_ok {
  static constexpr bool value = (sizeof(T) == 4 || sizeof(T) == 8) && (is_integer<T>::value || is_floating<T>::value);
};

#if CTILE_SIMT_DEVICE
// The CUDA atomics of each scope, for the types CUDA has them for.
#define CTILE_SIMT_ATOMIC_SCOPED(NAME, FN)                                                   \
  template <class S, class U>                                                                \
  inline U NAME(U* p, U v) {                                                                 \
    if constexpr (same<S, scope::Block>::value) return FN##_block(p, v);                     \
    else if constexpr (same<S, scope::System>::value) return FN##_system(p, v);              \
    else return FN(p, v);                                                                    \
  }
CTILE_SIMT_ATOMIC_SCOPED(cu_add, atomicAdd)
CTILE_SIMT_ATOMIC_SCOPED(cu_max, atomicMax)
CTILE_SIMT_ATOMIC_SCOPED(cu_min, atomicMin)
CTILE_SIMT_ATOMIC_SCOPED(cu_exch, atomicExch)
CTILE_SIMT_ATOMIC_SCOPED(cu_and, atomicAnd)
CTILE_SIMT_ATOMIC_SCOPED(cu_or, atomicOr)
CTILE_SIMT_ATOMIC_SCOPED(cu_xor, atomicXor)
#undef CTILE_SIMT_ATOMIC_SCOPED
template <class S, class U>
inline U cu_cas(U* p, U expected, U desired) {
  if constexpr (same<S, scope::Block>::value) return atomicCAS_block(p, expected, desired);
  else if constexpr (same<S, scope::System>::value) return atomicCAS_system(p, expected, desired);
  else return atomicCAS(p, expected, desired);
}
#endif

enum class AtomicOp { Add, Max, Min, And, Or, Xor, Exch };

template <class S, class T>
inline T atomic_rmw(AtomicOp op, T* p, T v) {
#if CTILE_SIMT_DEVICE
  // Where CUDA has no atomic for T itself, T travels as the integer of its size (add, and, or,
  // xor, exchange and CAS are the same bits for signed and unsigned; max and min are not).
  constexpr bool is64 = sizeof(T) == 8;
  using UT = conditional_t<is64, unsigned long long, unsigned>;
  if (op == AtomicOp::Add) {
    if constexpr (is_floating<T>::value || same<T, int>::value || same<T, unsigned>::value ||
                  same<T, unsigned long long>::value)
      return cu_add<S>(p, v);
    else
      return bit_cast<T>(cu_add<S>(reinterpret_cast<UT*>(p), bit_cast<UT>(v)));
  }
  if (op == AtomicOp::Exch) {
    if constexpr (same<T, float>::value || same<T, int>::value || same<T, unsigned>::value ||
                  same<T, unsigned long long>::value)
      return cu_exch<S>(p, v);
    else
      return bit_cast<T>(cu_exch<S>(reinterpret_cast<UT*>(p), bit_cast<UT>(v)));
  }
  if constexpr (is_integer<T>::value) {
    // max / min compare as signed or unsigned; and / or / xor are bitwise.
    using ST = conditional_t<is64, long long, int>;
    constexpr bool is_signed = T(-1) < T(0);
    if (op == AtomicOp::Max || op == AtomicOp::Min) {
      if constexpr (is_signed) {
        ST* q = reinterpret_cast<ST*>(p);
        return (T)(op == AtomicOp::Max ? cu_max<S>(q, (ST)v) : cu_min<S>(q, (ST)v));
      } else {
        UT* q = reinterpret_cast<UT*>(p);
        return (T)(op == AtomicOp::Max ? cu_max<S>(q, (UT)v) : cu_min<S>(q, (UT)v));
      }
    }
    UT* q = reinterpret_cast<UT*>(p);
    if (op == AtomicOp::And) return (T)cu_and<S>(q, (UT)v);
    if (op == AtomicOp::Or) return (T)cu_or<S>(q, (UT)v);
    return (T)cu_xor<S>(q, (UT)v);
  }
  return v;  // unreachable: the callers static_assert the operation's types
#else
  std::atomic_ref<T> a(*p);
  switch (op) {
    case AtomicOp::Add:
      return a.fetch_add(v, std::memory_order_relaxed);
    case AtomicOp::Exch:
      return a.exchange(v, std::memory_order_relaxed);
    default:
      break;
  }
  if constexpr (is_integer<T>::value) {
    switch (op) {
      case AtomicOp::And:
        return a.fetch_and(v, std::memory_order_relaxed);
      case AtomicOp::Or:
        return a.fetch_or(v, std::memory_order_relaxed);
      case AtomicOp::Xor:
        return a.fetch_xor(v, std::memory_order_relaxed);
      default: {
        T old = a.load(std::memory_order_relaxed);
        while ((op == AtomicOp::Max ? old < v : v < old) &&
               !a.compare_exchange_weak(old, v, std::memory_order_relaxed)) {
        }
        return old;
      }
    }
  }
  return v;
#endif
}

template <class S, class T>
inline T atomic_cas(T* p, T expected, T desired) {
#if CTILE_SIMT_DEVICE
  if constexpr (same<T, int>::value || same<T, unsigned>::value || same<T, unsigned long long>::value) {
    return cu_cas<S>(p, expected, desired);
  } else {
    using UT = conditional_t<sizeof(T) == 8, unsigned long long, unsigned>;
    return bit_cast<T>(cu_cas<S>(reinterpret_cast<UT*>(p), bit_cast<UT>(expected), bit_cast<UT>(desired)));
  }
#else
  std::atomic_ref<T> a(*p);
  a.compare_exchange_strong(expected, desired, std::memory_order_relaxed);
  return expected;  // the old value either way
#endif
}

template <class T>
inline T atomic_load(const T* p) {
#if CTILE_SIMT_DEVICE
  return *reinterpret_cast<const volatile T*>(p);
#else
  return std::atomic_ref<T>(*const_cast<T*>(p)).load(std::memory_order_relaxed);
#endif
}

}  // namespace detail

template <class T, class Scope = scope::Device>
class AtomicSpan {
  static_assert(detail::is_scope<Scope>::value, "AtomicSpan<T, Scope>: Scope must be scope::Device or scope::System");
  static_assert(!detail::same<Scope, scope::Block>::value,
                "AtomicSpan<T, scope::Block>: a block-scoped atomic on global memory races with the other blocks; "
                "use scope::Device, or block-scoped atomics on shared memory (SharedSpan::atomic_add)");
  static_assert(detail::atomic_ok<T>::value,
                "AtomicSpan<T>: atomics need a 32- or 64-bit integer, float or double element type");

 public:
  AtomicSpan(const AtomicSpan&) = delete;
  AtomicSpan& operator=(const AtomicSpan&) = delete;

  i64 size() const { return d_.size; }
  Maybe<T> fetch_add(i64 i, T v) const { return rmw(detail::AtomicOp::Add, i, v); }
  bool add(i64 i, T v) const { return rmw(detail::AtomicOp::Add, i, v).has_value(); }
  Maybe<T> exchange(i64 i, T v) const { return rmw(detail::AtomicOp::Exch, i, v); }
  // Stores `desired` when the element equals `expected`; returns the old value.
  Maybe<T> compare_exchange(i64 i, T expected, T desired) const {
    if (!detail::in_range(i, d_.size)) return Maybe<T>();
    return detail::Access::make<Maybe<T>>(detail::atomic_cas<Scope>(d_.data + i, expected, desired));
  }
  Maybe<T> load(i64 i) const {
    if (!detail::in_range(i, d_.size)) return Maybe<T>();
    return detail::Access::make<Maybe<T>>(detail::atomic_load(d_.data + i));
  }
  Maybe<T> fetch_max(i64 i, T v) const { return int_rmw(detail::AtomicOp::Max, i, v); }
  Maybe<T> fetch_min(i64 i, T v) const { return int_rmw(detail::AtomicOp::Min, i, v); }
  Maybe<T> fetch_and(i64 i, T v) const { return int_rmw(detail::AtomicOp::And, i, v); }
  Maybe<T> fetch_or(i64 i, T v) const { return int_rmw(detail::AtomicOp::Or, i, v); }
  Maybe<T> fetch_xor(i64 i, T v) const { return int_rmw(detail::AtomicOp::Xor, i, v); }

 private:
  friend struct detail::Access;
  explicit AtomicSpan(const detail::SpanDesc<T>& d) : d_(d) {}
  Maybe<T> rmw(detail::AtomicOp op, i64 i, T v) const {
    if (!detail::in_range(i, d_.size)) return Maybe<T>();
    return detail::Access::make<Maybe<T>>(detail::atomic_rmw<Scope>(op, d_.data + i, v));
  }
  Maybe<T> int_rmw(detail::AtomicOp op, i64 i, T v) const {
    static_assert(detail::is_integer<T>::value,
                  "AtomicSpan: fetch_max, fetch_min, fetch_and, fetch_or and fetch_xor need an integer element type");
    return rmw(op, i, v);
  }
  detail::SpanDesc<T> d_;
};

namespace detail {
template <class T, class S>
struct param_traits<AtomicSpan<T, S>> {
  static constexpr bool is_param = true;
  using desc = SpanDesc<T>;
  using element = T;
  static constexpr ParamKind kind = ParamKind::Atomic;
  static constexpr int rank = 1;
};
}  // namespace detail

}  // namespace ctile::simt
