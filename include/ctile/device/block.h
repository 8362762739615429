// ctile device library: operations that move data between the threads of a block. Operands are
// staged through the kernel's dynamic shared memory by linear index (stage), the block synchronises,
// and each thread computes its own result elements (gen). Full reductions use warp shuffles and one
// shared-memory slot per warp. Every function that synchronises must be called by all threads.
#pragma once

#include "ctile/device/memory.h"

namespace ct {

// ---- staging through shared memory ---------------------------------------------------------------------
// dst[i] = element i of x, for the elements this thread holds (16-byte chunks where a whole group
// is in range; dst must be 16-byte aligned).
template <class L, class T, int S>
CT_DEV void stage(T* dst, const Regs<T, S>& x, int n, int tid) {
  typedef VecOf<T, L::vec> Vec;
  constexpr int V = L::vec;
#pragma unroll
  for (int g = 0; g < S / V; ++g) {
    const int i0 = g * L::span + tid * V;
    if constexpr (Vec::ok) {
      if (i0 + V <= n) {
        typename Vec::U u;
#pragma unroll
        for (int j = 0; j < V; ++j) u.m[j] = x.v[g * V + j];
#pragma unroll
        for (int c = 0; c < Vec::C; ++c) {
          CT_CHECK_ALIGNED((Chunk<Vec::W>*)(dst + i0) + c, Vec::W);
          ((Chunk<Vec::W>*)(dst + i0))[c] = u.c[c];
        }
        continue;
      }
    }
#pragma unroll
    for (int j = 0; j < V; ++j)
      if (i0 + j < n) dst[i0 + j] = x.v[g * V + j];
  }
}
// A one-element tile: thread 0 writes it.
template <class T>
CT_DEV void stage_one(T* dst, T x, int tid) {
  if (tid == 0) dst[0] = x;
}

// out[slot] = f(i) for each element i this thread holds (T() past the end).
template <class L, class T, int S, class F>
CT_DEV void gen(Regs<T, S>& out, int n, int tid, F f) {
#pragma unroll
  for (int s = 0; s < S; ++s) {
    const int i = L::elem(tid, s);
    out.v[s] = i < n ? f(i) : T();
  }
}

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
  typedef typename ArithAcc<T, EXACT>::type Acc;
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

template <class T, bool MAX>
struct RMinMax {
  typedef typename Traits<T>::C Acc;
  typedef T R;
  static CT_DEV Acc identity() {
    if constexpr (is_same<Acc, float>::value) return __uint_as_float(0x7fc00000u);  // fmax(NaN, x) = x
    else if constexpr (is_same<Acc, double>::value) return __longlong_as_double(0x7ff8000000000000LL);
    else return MAX ? Traits<T>::lowest() : Traits<T>::highest();
  }
  static CT_DEV Acc lift(T x, int) { return up(x); }
  static CT_DEV Acc combine(Acc a, Acc b) {
    if constexpr (is_floaty_v<T>) return MAX ? m_fmax(a, b) : m_fmin(a, b);
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

// ---- full reductions: every thread gets the same value ---------------------------------------------------
// Needs L::threads / 32 * sizeof(Acc) bytes of shared memory at `scratch` (none for one warp).
template <class L, class Op>
CT_DEV typename Op::Acc block_allreduce(typename Op::Acc a, unsigned char* scratch, int tid) {
  typedef typename Op::Acc Acc;
#pragma unroll
  for (int m = 16; m > 0; m >>= 1) a = Op::combine(a, shfl_xor(a, m));
  if constexpr (L::threads == 32) {
    return shfl_from(a, 0);  // lane 0's bits everywhere (fmax of +0/-0 need not commute)
  } else {
    // Second stage in every warp at once: lane w takes warp w's partial and the warp combines
    // them with shuffles (W is a power of two, so lanes below W only meet each other), then
    // lane 0's bits go everywhere. Every warp computes the same value from the same partials.
    constexpr int W = L::threads / 32;
    Acc* sc = (Acc*)scratch;
    if ((tid & 31) == 0) sc[tid >> 5] = a;
    __syncthreads();
    Acc r = sc[tid & (W - 1)];
#pragma unroll
    for (int m = W / 2; m > 0; m >>= 1) r = Op::combine(r, shfl_xor(r, m));
    r = shfl_from(r, 0);
    __syncthreads();
    return r;
  }
}

// The full reduction of a spread tile of N elements. The per-slot test stays even when N is a
// multiple of the span: without it ptxas hoists every slot's producer ahead of the chain (twice
// the registers for a 16K-wide softmax row, half the occupancy).
template <class L, class Op, int N, class T, int S>
CT_DEV typename Op::R reduce_all(const Regs<T, S>& x, unsigned char* scratch, int tid) {
  typename Op::Acc a = Op::identity();
#pragma unroll
  for (int s = 0; s < S; ++s) {
    const int i = L::elem(tid, s);
    if (i < N) a = Op::combine(a, Op::lift(x.v[s], i));
  }
  return Op::finish(block_allreduce<L, Op>(a, scratch, tid));
}

// Reduction along an axis of a staged operand [OUTER, LEN, INNER] -> [OUTER, INNER]: each result
// element walks the axis in order (use an EXACT operator to match the reference bit for bit).
template <class L, class Op, int OUTER, int LEN, int INNER, class T, class R, int S>
CT_DEV void reduce_axis(Regs<R, S>& out, const T* sx, int tid) {
  gen<L>(out, OUTER * INNER, tid, [&](int i) {
    const unsigned o = (unsigned)i / INNER, in = (unsigned)i % INNER;
    typename Op::Acc a = Op::identity();
#pragma unroll 1
    for (int k = 0; k < LEN; ++k) a = Op::combine(a, Op::lift(sx[(o * LEN + k) * INNER + in], k));
    return Op::finish(a);
  });
}

// Inclusive cumulative sum along the axis of a staged [OUTER, LEN, INNER] operand, in place: one
// thread per line; floats accumulate in f64 and round each output once; integers wrap.
template <class L, int OUTER, int LEN, int INNER, class T>
CT_DEV void scan_lines(T* sx, int tid) {
  for (int line = tid; line < OUTER * INNER; line += L::threads) {
    const unsigned o = (unsigned)line / INNER, in = (unsigned)line % INNER;
    if constexpr (is_floaty_v<T>) {
      double run = 0.0;
      for (int k = 0; k < LEN; ++k) {
        T& e = sx[(o * LEN + k) * INNER + in];
        run += (double)up(e);
        e = float_from_double<T>(run);
      }
    } else {
      typename Traits<T>::W run = 0;
      for (int k = 0; k < LEN; ++k) {
        T& e = sx[(o * LEN + k) * INNER + in];
        run = (typename Traits<T>::W)(run + (typename Traits<T>::W)e);
        e = (T)run;
      }
    }
  }
}

// ---- matrix multiply-accumulate from staged operands ------------------------------------------------------
// result[i,j] = acc[i,j] + sum_k a[i,k] * b[k,j]; f16/bf16/f32 products and sums in f32, f64 in f64,
// i8/u8 in i32 (wrapping), rounded once to acc's type.
template <class TA, class TC>
struct MmaAcc {
  typedef typename Cond<is_floaty_v<TC>, typename Cond<is_same<TC, double>::value, double, float>::type, u32>::type type;
};
template <class TA, class Acc>
CT_DEV Acc mac(TA a, TA b, Acc s) {
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
template <int N, int K, class TA, class TC>
CT_DEV TC mma_elem(TC acc, const TA* sa, const TA* sb, int r, int c) {
  typedef typename MmaAcc<TA, TC>::type Acc;
  Acc s = mma_start<TC, Acc>(acc);
#pragma unroll 4
  for (int k = 0; k < K; ++k) s = mac(sa[r * K + k], sb[k * N + c], s);
  return mma_finish<TC>(s);
}

template <class L, int M, int N, int K, class TA, class TC, int S>
CT_DEV void mma(Regs<TC, S>& out, const Regs<TC, S>& acc, const TA* sa, const TA* sb, int tid) {
  typedef typename MmaAcc<TA, TC>::type Acc;
  constexpr int V = L::vec;
#pragma unroll
  for (int g = 0; g < S / V; ++g) {
    const int i0 = g * L::span + tid * V;
    if constexpr (N % V == 0) {
      // The group's V elements share a row: one read of a[r, k] per k.
      if (i0 < M * N) {
        const int r = i0 / N, c0 = i0 % N;
        Acc s[V];
#pragma unroll
        for (int j = 0; j < V; ++j) s[j] = mma_start<TC, Acc>(acc.v[g * V + j]);
#pragma unroll 2
        for (int k = 0; k < K; ++k) {
          const TA a = sa[r * K + k];
#pragma unroll
          for (int j = 0; j < V; ++j) s[j] = mac(a, sb[k * N + c0 + j], s[j]);
        }
#pragma unroll
        for (int j = 0; j < V; ++j) out.v[g * V + j] = mma_finish<TC>(s[j]);
      } else {
#pragma unroll
        for (int j = 0; j < V; ++j) out.v[g * V + j] = TC();
      }
    } else {
#pragma unroll
      for (int j = 0; j < V; ++j) {
        const int i = i0 + j;
        out.v[g * V + j] = i < M * N ? mma_elem<N, K>(acc.v[g * V + j], sa, sb, i / N, i % N) : TC();
      }
    }
  }
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
    else if constexpr (is_half_v<T>) return T{u};
    else return from_mem<T>((M)u);
  } else {
    return from_mem<T>(((const M*)td.data)[off]);
  }
}

template <class L, int N, bool SHARED, class T, int S, class... I>
CT_DEV void gather(Regs<T, S>& out, const TensorDesc& td, T pad, int tid, const I&... idx) {
#pragma unroll
  for (int s = 0; s < S; ++s) {
    const int i = L::elem(tid, s);
    long long off = 0;
    out.v[s] = (i < N && locate(td, off, to_index(idx.v[s])...)) ? load_elem<SHARED, T>(td, off) : pad;
  }
}
template <class T, class... I>
CT_DEV T gather_one(const TensorDesc& td, T pad, I... idx) {
  long long off = 0;
  return locate(td, off, to_index(idx)...) ? load_at<T>(td, off) : pad;
}
// The same from a tensor other blocks may write (Atomic, Unchecked): thread 0 reads, every thread
// gets that value (so control flow stays uniform).
template <class T, class... I>
CT_DEV T gather_one_shared(const TensorDesc& td, T pad, unsigned char* scratch, int tid, I... idx) {
  if (tid == 0) {
    long long off = 0;
    T v = pad;
    if (locate(td, off, to_index(idx)...)) v = load_elem<true, T>(td, off);
    *(T*)scratch = v;
  }
  __syncthreads();
  const T r = *(T*)scratch;
  __syncthreads();
  return r;
}

// ScatterPiece: indices relative to the piece origin; an element is written when 0 <= idx_d < tile_d
// and the coordinate is inside the tensor. Of several elements with one target, the last in
// row-major order wins (resolved with one int per piece element in shared memory at `win`).
template <class L, class PSh, int N, class T, int S, class... I>
CT_DEV void scatter_piece(const TensorDesc& td, const Idx<PSh::rank>& blk, const Regs<T, S>& val, int* win, int tid,
                          const I&... idx) {
  Idx<PSh::rank> org;
  const bool ok = piece_origin<PSh>(blk, org);
  for (int k = tid; k < PSh::numel; k += L::threads) win[k] = -1;
  __syncthreads();
  int lin[S];
  long long off[S];
  bool in[S];
#pragma unroll
  for (int s = 0; s < S; ++s) {
    const int i = L::elem(tid, s);
    const long long c[sizeof...(I)] = {to_index(idx.v[s])...};
    bool w = ok && i < N;
    int l = 0;
    long long o = 0;
#pragma unroll
    for (int d = 0; d < PSh::rank; ++d) {
      const bool cd = c[d] >= 0 && c[d] < PSh::ext(d);
      const long long gd = org.v[d] + (cd ? c[d] : 0);
      w = w && cd && gd >= 0 && gd < td.shape[d];
      l += cd ? (int)c[d] << PSh::shift(d) : 0;
      o += gd * td.stride[d];
    }
    if (w) atomicMax(&win[l], i);
    lin[s] = l;
    off[s] = o;
    in[s] = w;
  }
  __syncthreads();
#pragma unroll
  for (int s = 0; s < S; ++s)
    if (in[s] && win[lin[s]] == L::elem(tid, s)) store_at<T>(td, off[s], val.v[s]);
  __syncthreads();
}

// ScatterUnchecked: every in-bounds element is written; of several with one target within the tile,
// the last in row-major order wins (each element looks for a later one with the same target among
// the offsets staged at `soff`, N of them).
template <class L, int N, class T, int S, class... I>
CT_DEV void scatter_unchecked(const TensorDesc& td, const Regs<T, S>& val, long long* soff, int tid, const I&... idx) {
  long long off[S];
#pragma unroll
  for (int s = 0; s < S; ++s) {
    const int i = L::elem(tid, s);
    long long o = 0;
    off[s] = (i < N && locate(td, o, to_index(idx.v[s])...)) ? o : -1;
    if (i < N) soff[i] = off[s];
  }
  __syncthreads();
#pragma unroll
  for (int s = 0; s < S; ++s) {
    if (off[s] < 0) continue;
    bool last = true;
    for (int k = L::elem(tid, s) + 1; k < N; ++k)
      if (soff[k] == off[s]) {
        last = false;
        break;
      }
    if (last) store_at<T>(td, off[s], val.v[s]);
  }
  __syncthreads();
}

// One-element scatters: thread 0 writes, between barriers (ordering against the block's other accesses).
template <class PSh, class T, class... I>
CT_DEV void scatter_piece_one(const TensorDesc& td, const Idx<PSh::rank>& blk, T val, int tid, I... idx) {
  __syncthreads();
  if (tid == 0) {
    Idx<PSh::rank> org;
    bool w = piece_origin<PSh>(blk, org);
    const long long c[sizeof...(I)] = {to_index(idx)...};
    long long o = 0;
#pragma unroll
    for (int d = 0; d < PSh::rank; ++d) {
      const long long gd = org.v[d] + c[d];
      w = w && c[d] >= 0 && c[d] < PSh::ext(d) && gd >= 0 && gd < td.shape[d];
      o += gd * td.stride[d];
    }
    if (w) store_at<T>(td, o, val);
  }
  __syncthreads();
}
template <class T, class... I>
CT_DEV void scatter_unchecked_one(const TensorDesc& td, T val, int tid, I... idx) {
  __syncthreads();
  long long off = 0;
  if (tid == 0 && locate(td, off, to_index(idx)...)) store_at<T>(td, off, val);
  __syncthreads();
}

// Tile atomics, between barriers (ordering against gathers of the same tensor by other threads).
template <int OP, class L, int N, class T, int S, class... I>
CT_DEV void atomic_tile(Regs<T, S>& old, const TensorDesc& td, const Regs<T, S>& val, int tid, const I&... idx) {
  __syncthreads();
#pragma unroll
  for (int s = 0; s < S; ++s) {
    const int i = L::elem(tid, s);
    long long off = 0;
    old.v[s] = (i < N && locate(td, off, to_index(idx.v[s])...)) ? atomic_rmw<OP>(ptr_at<T>(td, off), val.v[s]) : (T)0;
  }
  __syncthreads();
}
template <class L, int N, class T, int S, class... I>
CT_DEV void cas_tile(Regs<T, S>& old, const TensorDesc& td, const Regs<T, S>& expected, const Regs<T, S>& desired, int tid,
                     const I&... idx) {
  __syncthreads();
#pragma unroll
  for (int s = 0; s < S; ++s) {
    const int i = L::elem(tid, s);
    long long off = 0;
    old.v[s] = (i < N && locate(td, off, to_index(idx.v[s])...))
                   ? atomic_cas(ptr_at<T>(td, off), expected.v[s], desired.v[s])
                   : (T)0;
  }
  __syncthreads();
}
// One-element atomics: performed once, by thread 0; every thread gets the old value.
template <int OP, class T, class... I>
CT_DEV T atomic_one(const TensorDesc& td, T val, unsigned char* scratch, int tid, I... idx) {
  __syncthreads();
  if (tid == 0) {
    long long off = 0;
    *(T*)scratch = locate(td, off, to_index(idx)...) ? atomic_rmw<OP>(ptr_at<T>(td, off), val) : (T)0;
  }
  __syncthreads();
  const T r = *(T*)scratch;
  __syncthreads();
  return r;
}
template <class T, class... I>
CT_DEV T cas_one(const TensorDesc& td, T expected, T desired, unsigned char* scratch, int tid, I... idx) {
  __syncthreads();
  if (tid == 0) {
    long long off = 0;
    *(T*)scratch = locate(td, off, to_index(idx)...) ? atomic_cas(ptr_at<T>(td, off), expected, desired) : (T)0;
  }
  __syncthreads();
  const T r = *(T*)scratch;
  __syncthreads();
  return r;
}

// ---- errors raised on the device ------------------------------------------------------------------------------
// The reference raises a UserError for a non-positive loop step; on the GPU the block prints the
// location and traps (the launch fails with an illegal-instruction error).
CT_DEV void trap_step(const char* where, long long step, int tid) {
  if (tid == 0) printf("ctile: %s: ct.for step must be positive (got %lld)\n", where, step);
  __trap();
}

}  // namespace ct
