// ctile device library: operations that move data between the threads of a block. Operands are
// staged through the kernel's dynamic shared memory by linear index (stage), the block synchronises,
// and each thread computes its own result elements (gen). Full reductions use warp shuffles and one
// shared-memory slot per warp. Every function that synchronises must be called by all threads.
#pragma once

#include "ctile/device/memory.h"

namespace ct {

// ---- warp shuffles ---------------------------------------------------------------------------------------
#define CT_SHFL(T, W)                                                                                   \
  CT_DEV T shfl_xor(T v, int m) { return (T)__shfl_xor_sync(0xffffffffu, (W)v, m); }                    \
  CT_DEV T shfl_from(T v, int lane) { return (T)__shfl_sync(0xffffffffu, (W)v, lane); }
CT_SHFL(int, int)
CT_SHFL(unsigned, unsigned)
CT_SHFL(long long, long long)
CT_SHFL(unsigned long long, unsigned long long)
CT_SHFL(float, float)
CT_SHFL(double, double)
CT_SHFL(i8, int)
CT_SHFL(i16, int)
CT_SHFL(u8, unsigned)
CT_SHFL(u16, unsigned)
#undef CT_SHFL
CT_DEV bool shfl_xor(bool v, int m) { return __shfl_xor_sync(0xffffffffu, (int)v, m) != 0; }
CT_DEV bool shfl_from(bool v, int lane) { return __shfl_sync(0xffffffffu, (int)v, lane) != 0; }

// ---- reduction operators ---------------------------------------------------------------------------------
// Each has an accumulator Acc, identity(), lift(element, index along the axis), an associative
// combine(), and finish() -> result element. EXACT: floats accumulate in f64 and round once (the
// reference's rule, used where one thread walks the axis in order); otherwise f16/bf16/f32 sums
// accumulate in f32 and f64 in f64.
template <bool B, class X, class Y>
struct Cond {
  typedef X type;
};
template <class X, class Y>
struct Cond<false, X, Y> {
  typedef Y type;
};

// The accumulator of sums and products: integers wrap in W, floats as described above.
template <class T, bool EXACT, bool FLOAT = is_floaty_v<T>>
struct ArithAcc {
  typedef typename Traits<T>::W type;
};
template <class T, bool EXACT>
struct ArithAcc<T, EXACT, true> {
  typedef typename Cond<EXACT || is_same<T, double>::value, double, float>::type type;
};

template <class T, bool EXACT, bool PROD>
struct RArith {
  static constexpr bool fl = is_floaty_v<T>;
  // Float products accumulate in f64 in any case: in f32 a partial product of a tree can underflow
  // or overflow where the reference's f64 product in index order does not (0 * inf = NaN).
  typedef typename ArithAcc<T, EXACT || PROD>::type Acc;
  typedef T R;
  static CT_DEV Acc identity() { return (Acc)(PROD ? 1 : 0); }
  static CT_DEV Acc lift(T x, int) {
    if constexpr (fl) return (Acc)up(x);
    else return (Acc)x;
  }
  static CT_DEV Acc combine(Acc a, Acc b) { return PROD ? (Acc)(a * b) : (Acc)(a + b); }
  static CT_DEV T finish(Acc a) {
    if constexpr (fl) {
      if constexpr (is_same<Acc, double>::value) return float_from_double<T>(a);
      else return down<T>(a);
    } else {
      return (T)a;
    }
  }
};

template <class T, bool MAX, bool NAN_PROPAGATES = false>
struct RMinMax {
  typedef typename Traits<T>::C Acc;
  typedef T R;
  static CT_DEV Acc identity() {
    if constexpr (NAN_PROPAGATES && is_same<Acc, float>::value) return __uint_as_float(MAX ? 0xff800000u : 0x7f800000u);
    else if constexpr (NAN_PROPAGATES && is_same<Acc, double>::value)
      return __longlong_as_double(MAX ? (long long)0xfff0000000000000ULL : 0x7ff0000000000000LL);
    else if constexpr (is_same<Acc, float>::value) return __uint_as_float(0x7fc00000u);  // fmax(NaN, x) = x
    else if constexpr (is_same<Acc, double>::value) return __longlong_as_double(0x7ff8000000000000LL);
    else return MAX ? Traits<T>::lowest() : Traits<T>::highest();
  }
  static CT_DEV Acc lift(T x, int) { return up(x); }
  static CT_DEV Acc combine(Acc a, Acc b) {
    if constexpr (is_floaty_v<T> && NAN_PROPAGATES) return MAX ? fmax_nan(a, b) : fmin_nan(a, b);
    else if constexpr (is_floaty_v<T>) return MAX ? m_fmax(a, b) : m_fmin(a, b);
    else if constexpr (MAX) return b > a ? b : a;
    else return b < a ? b : a;
  }
  static CT_DEV T finish(Acc a) { return down<T>(a); }
};

template <class C>
struct ArgAcc {
  C v;
  int i;
  bool ok;  // a non-NaN element was seen
};
template <class C>
CT_DEV ArgAcc<C> shfl_xor(ArgAcc<C> a, int m) {
  ArgAcc<C> r;
  r.v = shfl_xor(a.v, m);
  r.i = shfl_xor(a.i, m);
  r.ok = shfl_xor(a.ok, m);
  return r;
}
template <class C>
CT_DEV ArgAcc<C> shfl_from(ArgAcc<C> a, int lane) {
  ArgAcc<C> r;
  r.v = shfl_from(a.v, lane);
  r.i = shfl_from(a.i, lane);
  r.ok = shfl_from(a.ok, lane);
  return r;
}

// argmax/argmin: NaN elements are ignored, the first index wins ties, all NaN -> 0.
template <class T, bool MAX>
struct RArg {
  typedef typename Traits<T>::C C;
  typedef ArgAcc<C> Acc;
  typedef i64 R;
  static CT_DEV Acc identity() {
    Acc a;
    a.v = C();
    a.i = 0;
    a.ok = false;
    return a;
  }
  static CT_DEV Acc lift(T x, int i) {
    Acc a;
    a.v = up(x);
    a.i = i;
    a.ok = a.v == a.v;
    return a;
  }
  static CT_DEV Acc combine(Acc a, Acc b) {
    if (!b.ok) return a;
    if (!a.ok) return b;
    if (MAX ? b.v > a.v : b.v < a.v) return b;
    if (b.v == a.v && b.i < a.i) return b;
    return a;
  }
  static CT_DEV i64 finish(Acc a) { return a.ok ? (i64)a.i : (i64)0; }
};

// ---- matrix multiply-accumulate from staged operands ------------------------------------------------------
// result[i,j] = acc[i,j] + sum_k a[i,k] * b[k,j]; f16/bf16/f32 products and sums in f32, f64 in f64,
// i8/u8 in i32 (wrapping), rounded once to acc's type. fp8 operands (e4m3 and e5m2 may mix: TB is
// b's type) become f32, where their products are exact, and sum in f32.
template <class TA, class TC>
struct MmaAcc {
  typedef typename Cond<is_floaty_v<TC>, typename Cond<is_same<TC, double>::value, double, float>::type, u32>::type type;
};
template <class TA, class TB, class Acc>
CT_DEV Acc mac(TA a, TB b, Acc s) {
  if constexpr (is_floaty_v<TA>) return m_fma((Acc)up(a), (Acc)up(b), s);
  else return (Acc)(s + (Acc)((int)a * (int)b));
}
template <class TC, class Acc>
CT_DEV Acc mma_start(TC c) {
  if constexpr (is_floaty_v<TC>) return (Acc)up(c);
  else return (Acc)c;
}
template <class TC, class Acc>
CT_DEV TC mma_finish(Acc s) {
  if constexpr (is_floaty_v<TC>) return down<TC>(s);
  else return (TC)(i32)s;
}

// One element (r, c) of the product.
template <int N, int K, class TA, class TB, class TC>
CT_DEV TC mma_elem(TC acc, const TA* sa, const TB* sb, int r, int c) {
  typedef typename MmaAcc<TA, TC>::type Acc;
  Acc s = mma_start<TC, Acc>(acc);
#pragma unroll 4
  for (int k = 0; k < K; ++k) s = mac(sa[r * K + k], sb[k * N + c], s);
  return mma_finish<TC>(s);
}

// ---- gathers, scatters and atomics over tiles ---------------------------------------------------------------
// SHARED: the tensor may be written by other blocks while the kernel runs (Atomic, Unchecked):
// volatile loads, so nothing stale is read from L1.
template <bool SHARED, class T>
CT_DEV T load_elem(const TensorDesc& td, long long off) {
  typedef typename Traits<T>::Mem M;
  if constexpr (SHARED) {
    typedef typename UnsignedOf<sizeof(M)>::type U;
    const U u = *((volatile const U*)td.data + off);
    if constexpr (is_same<M, float>::value) return __uint_as_float(u);
    else if constexpr (is_same<M, double>::value) return __longlong_as_double((long long)u);
    else if constexpr (is_narrow_v<T>) return T{u};
    else return from_mem<T>((M)u);
  } else {
    return from_mem<T>(((const M*)td.data)[off]);
  }
}

template <class T, class... I>
CT_DEV T gather_one(const TensorDesc& td, T pad, I... idx) {
  long long off = 0;
  return locate(td, off, to_index(idx)...) ? load_at<T>(td, off) : pad;
}
}  // namespace ct
