// ctile device library: global memory. Tile loads and stores with per-axis bounds checks against the
// run-time extents (64-bit), 16-byte vector accesses when a group of V elements is contiguous, in
// bounds and aligned (decided per group at run time), element-wise gathers, scatters and atomics.
// Nothing outside a tensor is ever touched, whatever the indices.
#pragma once

#include "ctile/device/layout.h"
#include "ctile/device/numeric.h"

namespace ct {

// ---- elements in memory (bool is a byte: non-zero reads as true, stores write 0 or 1) ------------------
template <class T>
CT_DEV T from_mem(typename Traits<T>::Mem m) {
  if constexpr (is_same<T, bool>::value) return m != 0;
  else return m;
}
template <class T>
CT_DEV typename Traits<T>::Mem to_mem(T v) {
  if constexpr (is_same<T, bool>::value) return (u8)(v ? 1 : 0);
  else return v;
}

// ---- raw vector accesses -----------------------------------------------------------------------------------
template <int W>
struct Chunk;
template <>
struct __align__(16) Chunk<16> { u32 x, y, z, w; };
template <>
struct __align__(8) Chunk<8> { u32 x, y; };
template <>
struct Chunk<4> { u32 x; };

// V elements of M moved as C chunks of W bytes.
template <class M, int V>
struct VecOf {
  static constexpr int bytes = V * (int)sizeof(M);
  static constexpr int W = bytes >= 16 ? 16 : bytes;
  static constexpr int C = bytes / W;
  static constexpr bool ok = bytes >= 4;  // narrower groups use the element path
  union U {
    Chunk<W> c[C];
    M m[V];
  };
};

// Read-only (kernel-wide) data may use the non-coherent path (__ldg: a load the compiler knows,
// so it is never speculated ahead of the alignment and bounds checks, as inline asm could be).
template <bool RO>
CT_DEV Chunk<16> ld_chunk(const Chunk<16>* p) {
  CT_CHECK_ALIGNED(p, 16);
#if defined(__CUDA_ARCH__)
  if constexpr (RO) {
    const uint4 r = __ldg((const uint4*)p);
    return Chunk<16>{r.x, r.y, r.z, r.w};
  }
#endif
  return *p;
}
template <bool RO>
CT_DEV Chunk<8> ld_chunk(const Chunk<8>* p) {
  CT_CHECK_ALIGNED(p, 8);
#if defined(__CUDA_ARCH__)
  if constexpr (RO) {
    const uint2 r = __ldg((const uint2*)p);
    return Chunk<8>{r.x, r.y};
  }
#endif
  return *p;
}
template <bool RO>
CT_DEV Chunk<4> ld_chunk(const Chunk<4>* p) {
  CT_CHECK_ALIGNED(p, 4);
#if defined(__CUDA_ARCH__)
  if constexpr (RO) return Chunk<4>{__ldg((const unsigned*)p)};
#endif
  return *p;
}

CT_DEV bool aligned_to(const void* p, int bytes) { return ((unsigned long long)p & (unsigned long long)(bytes - 1)) == 0; }

// ---- the window of a tile over a tensor --------------------------------------------------------------------
// Along axis d, tile elements e with lo[d] <= e < hi[d] are inside the tensor, at coordinate base[d] + e.
// A tile origin that overflows or lies outside the tensor gives an empty window.
template <int R>
struct Window {
  // base: the coordinates of tile element 0 (any value); lo, hi: the tile elements kept along each
  // axis, [lo, hi) within [0, the tile's extent], so 32 bits (per-vector bounds tests in 32 bits).
  long long base[R > 0 ? R : 1];
  int lo[R > 0 ? R : 1], hi[R > 0 ? R : 1];
};

template <class Sh>
CT_DEV Window<Sh::rank> make_window(const TensorDesc& td, const Idx<Sh::rank>& ti) {
  Window<Sh::rank> w;
#pragma unroll
  for (int d = 0; d < Sh::rank; ++d) {
    const long long ts = Sh::ext(d);
    const int sh = Sh::lg(d);
    const long long idx = ti.v[d];
    const long long ext = td.shape[d];
    const long long c0 = (long long)((u64)idx << sh);
    const bool ok = idx <= (kI64Max >> sh) && idx >= (kI64Min >> sh) && c0 > -ts && c0 < ext;
    const long long room = (c0 < 0 && ext > kI64Max + c0) ? ts : ext - c0;
    w.base[d] = c0;
    w.lo[d] = ok ? (int)(c0 < 0 ? -c0 : 0) : 0;
    w.hi[d] = ok ? (int)(room < ts ? room : ts) : 0;
  }
  return w;
}

// Along one axis: tile elements e in [keep_lo, keep_hi) of a tile of extent ts whose element 0 sits
// at coordinate c0 (any value), kept where c0 + e lies inside [0, ext).
CT_DEV void window_axis(Window<1>& w, long long c0, long long ts, long long ext, long long keep_lo, long long keep_hi) {
  const bool ok = c0 < ext && c0 > -ts;
  long long lo = ok && c0 < 0 ? -c0 : 0;  // -c0 < ts when ok (never -INT64_MIN)
  long long hi = ok ? ext - c0 : 0;  // c0 in (-ts, ext): no overflow for extents below 2^62
  if (hi > ts) hi = ts;
  if (lo < keep_lo) lo = keep_lo;
  if (hi > keep_hi) hi = keep_hi;
  w.base[0] = ok ? c0 : 0;  // an empty window keeps no far-off origin for the alignment test
  w.lo[0] = ok ? (int)lo : 0;
  w.hi[0] = ok && hi > lo ? (int)hi : (ok ? (int)lo : 0);
}

// The window of a tile (ct.load_window) whose element 0 lies at element coordinates `org`: any
// values, negative or past the end (those elements are outside).
template <class Sh>
CT_DEV Window<Sh::rank> make_window_at(const TensorDesc& td, const Idx<Sh::rank>& org) {
  Window<Sh::rank> w;
#pragma unroll
  for (int d = 0; d < Sh::rank; ++d) {
    Window<1> a;
    window_axis(a, org.v[d], Sh::ext(d), td.shape[d], 0, Sh::ext(d));
    w.base[d] = a.base[0];
    w.lo[d] = a.lo[0];
    w.hi[d] = a.hi[0];
  }
  return w;
}

// The window of a tile (ct.store_window) at piece-relative element offsets `off` in the piece of
// shape PSh at block `blk`: only elements inside both the piece and the tensor are kept.
template <class Sh, class PSh>
CT_DEV Window<Sh::rank> make_window_in_piece(const TensorDesc& td, const Idx<Sh::rank>& blk, const Idx<Sh::rank>& off) {
  Window<Sh::rank> w;
#pragma unroll
  for (int d = 0; d < Sh::rank; ++d) {
    const long long o = off.v[d], ts = Sh::ext(d), ps = PSh::ext(d);
    Window<1> a;
    if (o >= ps || o <= -ts) {  // misses the piece (and keeps the sum below from overflowing)
      a.base[0] = 0;
      a.lo[0] = a.hi[0] = 0;
    } else {
      window_axis(a, (blk.v[d] << PSh::lg(d)) + o, ts, td.shape[d], o < 0 ? -o : 0, ps - o);
    }
    w.base[d] = a.base[0];
    w.lo[d] = a.lo[0];
    w.hi[d] = a.hi[0];
  }
  return w;
}

// Offset (elements) of tile element i, false when it lies outside the tensor.
template <class Sh>
CT_DEV bool window_locate(const TensorDesc& td, const Window<Sh::rank>& w, int i, long long& off) {
  bool in = true;
  off = 0;
#pragma unroll
  for (int d = 0; d < Sh::rank; ++d) {
    const long long c = Sh::coord(d, i);
    in = in && c >= w.lo[d] && c < w.hi[d];
    off += (w.base[d] + c) * td.stride[d];
  }
  return in;
}

// A tile of one element (every thread loads it).
template <class Sh, class T>
CT_DEV T load_one(const TensorDesc& td, const Window<Sh::rank>& w, T pad) {
  typedef typename Traits<T>::Mem M;
  long long off = 0;
  if (!window_locate<Sh>(td, w, 0, off)) return pad;
  return from_mem<T>(((const M*)td.data)[off]);
}

// ---- element-wise addressing (Gather, scatters, atomics) ----------------------------------------------------
// Offset of the element at global coordinates c..., false when outside the tensor.
template <class... I>
CT_DEV bool locate(const TensorDesc& td, long long& off, I... c) {
  bool in = true;
  int d = 0;
  off = 0;
  ((in = in && (long long)c >= 0 && (long long)c < td.shape[d], off += (long long)c * td.stride[d], ++d), ...);
  return in;
}

template <class T>
CT_DEV T load_at(const TensorDesc& td, long long off) {
  CT_CHECK_ALIGNED((const typename Traits<T>::Mem*)td.data + off, sizeof(typename Traits<T>::Mem));
  return from_mem<T>(((const typename Traits<T>::Mem*)td.data)[off]);
}
template <class T>
CT_DEV void store_at(const TensorDesc& td, long long off, T v) {
  CT_CHECK_ALIGNED((typename Traits<T>::Mem*)td.data + off, sizeof(typename Traits<T>::Mem));
  ((typename Traits<T>::Mem*)td.data)[off] = to_mem<T>(v);
}
template <class T>
CT_DEV T* ptr_at(const TensorDesc& td, long long off) {
  CT_CHECK_ALIGNED((T*)td.data + off, sizeof(T));
  return (T*)td.data + off;
}

// The origin of the block's piece (tile index * tile extent per axis); false on overflow.
template <class Sh>
CT_DEV bool piece_origin(const Idx<Sh::rank>& ti, Idx<Sh::rank>& org) {
  bool ok = true;
#pragma unroll
  for (int d = 0; d < Sh::rank; ++d) {
    const int sh = Sh::lg(d);
    ok = ok && ti.v[d] <= (kI64Max >> sh) && ti.v[d] >= (kI64Min >> sh);
    org.v[d] = (long long)((u64)ti.v[d] << sh);
  }
  return ok;
}

// ---- atomics (i32, i64, u32, u64, f32, f64; relaxed, device scope) -----------------------------------------
enum AtomicOp { kAtomicAdd, kAtomicMax, kAtomicMin, kAtomicExch };

CT_DEV float atomic_fminmax(float* p, float v, bool mx) {
  u32* a = (u32*)p;
  u32 cur = *(volatile u32*)a;
  for (;;) {
    const float c = __uint_as_float(cur);
    const u32 nb = __float_as_uint(mx ? fmaxf(c, v) : fminf(c, v));
    if (nb == cur) break;
    const u32 prev = atomicCAS(a, cur, nb);
    if (prev == cur) break;
    cur = prev;
  }
  return __uint_as_float(cur);
}
CT_DEV double atomic_fminmax(double* p, double v, bool mx) {
  u64* a = (u64*)p;
  u64 cur = *(volatile u64*)a;
  for (;;) {
    const double c = __longlong_as_double((long long)cur);
    const u64 nb = (u64)__double_as_longlong(mx ? fmax(c, v) : fmin(c, v));
    if (nb == cur) break;
    const u64 prev = atomicCAS(a, cur, nb);
    if (prev == cur) break;
    cur = prev;
  }
  return __longlong_as_double((long long)cur);
}

// One atomic read-modify-write; returns the previous value.
template <int OP, class T>
CT_DEV T atomic_rmw(T* p, T v) {
  if constexpr (OP == kAtomicAdd) {
    if constexpr (is_same<T, i64>::value) return (i64)atomicAdd((u64*)p, (u64)v);
    else return atomicAdd(p, v);
  } else if constexpr (OP == kAtomicMax || OP == kAtomicMin) {
    if constexpr (is_floaty_v<T>) return atomic_fminmax(p, v, OP == kAtomicMax);
    else if constexpr (OP == kAtomicMax) return atomicMax(p, v);
    else return atomicMin(p, v);
  } else {
    if constexpr (is_same<T, i64>::value) return (i64)atomicExch((u64*)p, (u64)v);
    else if constexpr (is_same<T, double>::value)
      return __longlong_as_double((long long)atomicExch((u64*)p, (u64)__double_as_longlong(v)));
    else return atomicExch(p, v);
  }
}

// Compare-and-swap, bitwise also for floats; returns the value seen.
template <class T>
CT_DEV T atomic_cas(T* p, T expected, T desired) {
  if constexpr (is_same<T, i64>::value) return (i64)atomicCAS((u64*)p, (u64)expected, (u64)desired);
  else if constexpr (is_same<T, float>::value)
    return __uint_as_float(atomicCAS((u32*)p, __float_as_uint(expected), __float_as_uint(desired)));
  else if constexpr (is_same<T, double>::value)
    return __longlong_as_double((long long)atomicCAS((u64*)p, (u64)__double_as_longlong(expected),
                                                     (u64)__double_as_longlong(desired)));
  else return atomicCAS(p, expected, desired);
}

}  // namespace ct
