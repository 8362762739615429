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
  long long base[R > 0 ? R : 1], lo[R > 0 ? R : 1], hi[R > 0 ? R : 1];
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
    w.lo[d] = ok ? (c0 < 0 ? -c0 : 0) : 0;
    w.hi[d] = ok ? (room < ts ? room : ts) : 0;
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

// ---- tile loads and stores (Load, LoadPiece, StorePiece) -------------------------------------------------
// RO: the tensor is read-only for the whole kernel (a Read parameter): non-coherent loads are allowed.
// A group of V consecutive elements starting at i0 whose row is shared (the tile's last extent is a
// multiple of V): `row_in` says whether the row lies inside the tensor, `off` is the offset of the
// group's first element and `c` its coordinate along the last axis.
template <class Sh>
CT_DEV void group_row(const TensorDesc& td, const Window<Sh::rank>& w, int i0, bool& row_in, long long& off, long long& c) {
  constexpr int R = Sh::rank;
  row_in = true;
  off = 0;
#pragma unroll
  for (int d = 0; d < R - 1; ++d) {
    const long long cd = Sh::coord(d, i0);
    row_in = row_in & (cd >= w.lo[d]) & (cd < w.hi[d]);  // no short circuit: straight-line code
    off += (w.base[d] + cd) * td.stride[d];
  }
  c = Sh::coord(R - 1, i0);
  off += (w.base[R - 1] + c) * td.stride[R - 1];
}

// Loads a spread tile. When the tile's rows are whole groups (last extent a multiple of V), each
// group is checked once: if every group of this thread is an in-bounds, unit-stride, aligned run
// (the common case) all of them are loaded with back-to-back vector loads; otherwise each element
// is loaded or padded on its own (partial tiles, strided or misaligned views).
template <class L, class Sh, bool RO, class T, int S>
CT_DEV void load_tile(Regs<T, S>& out, const TensorDesc& td, const Window<Sh::rank>& w, T pad, int tid) {
  typedef typename Traits<T>::Mem M;
  typedef VecOf<M, L::vec> Vec;
  constexpr int V = L::vec;
  constexpr int G = S / V;
  constexpr int N = Sh::numel;
  const M* base = (const M*)td.data;
  if constexpr (Sh::rank > 0 && Sh::ext(Sh::rank - 1) % V == 0) {
    constexpr int R = Sh::rank;
    bool row_in[G];
    long long offs[G], cs[G];
    bool all = Vec::ok & (td.stride[R - 1] == 1);
#pragma unroll
    for (int g = 0; g < G; ++g) {
      const int i0 = g * L::span + tid * V;
      group_row<Sh>(td, w, i0, row_in[g], offs[g], cs[g]);
      if (L::template group_in<N>(g, tid))
        all = all & row_in[g] & (cs[g] >= w.lo[R - 1]) & (cs[g] + V <= w.hi[R - 1]) & aligned_to(base + offs[g], Vec::W);
    }
    if constexpr (Vec::ok) {
      if (all) {
#pragma unroll
        for (int g = 0; g < G; ++g) {
          if (L::template group_in<N>(g, tid)) {
            typename Vec::U u;
#pragma unroll
            for (int c = 0; c < Vec::C; ++c) u.c[c] = ld_chunk<RO>((const Chunk<Vec::W>*)(base + offs[g]) + c);
#pragma unroll
            for (int j = 0; j < V; ++j) out.v[g * V + j] = from_mem<T>(u.m[j]);
          } else {
#pragma unroll
            for (int j = 0; j < V; ++j) out.v[g * V + j] = pad;
          }
        }
        return;
      }
    }
    const long long sl = td.stride[R - 1];
#pragma unroll
    for (int g = 0; g < G; ++g) {
      const bool live = L::template group_in<N>(g, tid) && row_in[g];
#pragma unroll
      for (int j = 0; j < V; ++j) {
        const long long c = cs[g] + j;
        out.v[g * V + j] = live && c >= w.lo[R - 1] && c < w.hi[R - 1] ? from_mem<T>(base[offs[g] + j * sl]) : pad;
      }
    }
  } else {
#pragma unroll
    for (int s = 0; s < S; ++s) {
      const int i = L::elem(tid, s);
      long long off = 0;
      out.v[s] = i < N && window_locate<Sh>(td, w, i, off) ? from_mem<T>(base[off]) : pad;
    }
  }
}

// A tile of one element (every thread loads it).
template <class Sh, class T>
CT_DEV T load_one(const TensorDesc& td, const Window<Sh::rank>& w, T pad) {
  typedef typename Traits<T>::Mem M;
  long long off = 0;
  if (!window_locate<Sh>(td, w, 0, off)) return pad;
  return from_mem<T>(((const M*)td.data)[off]);
}

template <class L, class Sh, class T, int S>
CT_DEV void store_tile(const Regs<T, S>& x, const TensorDesc& td, const Window<Sh::rank>& w, int tid) {
  typedef typename Traits<T>::Mem M;
  typedef VecOf<M, L::vec> Vec;
  constexpr int V = L::vec;
  constexpr int N = Sh::numel;
  M* base = (M*)td.data;
  if constexpr (Sh::rank > 0 && Sh::ext(Sh::rank - 1) % V == 0) {
    constexpr int R = Sh::rank;
    const long long sl = td.stride[R - 1];
#pragma unroll
    for (int g = 0; g < S / V; ++g) {
      const int i0 = g * L::span + tid * V;
      if (!L::template group_in<N>(g, tid)) continue;
      bool row_in;
      long long off, c0;
      group_row<Sh>(td, w, i0, row_in, off, c0);
      if constexpr (Vec::ok) {
        if (row_in && sl == 1 && c0 >= w.lo[R - 1] && c0 + V <= w.hi[R - 1] && aligned_to(base + off, Vec::W)) {
          typename Vec::U u;
#pragma unroll
          for (int j = 0; j < V; ++j) u.m[j] = to_mem<T>(x.v[g * V + j]);
#pragma unroll
          for (int c = 0; c < Vec::C; ++c) {
            CT_CHECK_ALIGNED((Chunk<Vec::W>*)(base + off) + c, Vec::W);
            ((Chunk<Vec::W>*)(base + off))[c] = u.c[c];
          }
          continue;
        }
      }
      if (!row_in) continue;
#pragma unroll
      for (int j = 0; j < V; ++j) {
        const long long c = c0 + j;
        if (c >= w.lo[R - 1] && c < w.hi[R - 1]) base[off + j * sl] = to_mem<T>(x.v[g * V + j]);
      }
    }
  } else {
#pragma unroll
    for (int s = 0; s < S; ++s) {
      const int i = L::elem(tid, s);
      long long off = 0;
      if (i < N && window_locate<Sh>(td, w, i, off)) base[off] = to_mem<T>(x.v[s]);
    }
  }
}

// A tile of one element: stored by thread 0 only.
template <class Sh, class T>
CT_DEV void store_one(T x, const TensorDesc& td, const Window<Sh::rank>& w, int tid) {
  typedef typename Traits<T>::Mem M;
  long long off = 0;
  if (tid == 0 && window_locate<Sh>(td, w, 0, off)) ((M*)td.data)[off] = to_mem<T>(x);
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
