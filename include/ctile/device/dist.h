// ctile device library: tile algorithms over distributed layouts (regs.h describes the layout
// structs D the generated code defines). Loads and stores move 16-byte vectors along the last axis;
// a tile block whose window is full (every element inside the tensor) and whose rows are aligned
// takes the unmasked path, decided once per tile block. Reductions combine in registers, then with
// warp shuffles, then across warps through shared memory. Layout conversions that move data between
// threads go through shared memory. Functions that synchronise must be reached by the whole team.
#pragma once

#include "ctile/device/block.h"
#include "ctile/device/memory.h"
#include "ctile/device/regs.h"

namespace ct {

// ---- windows: the tile's place in the tensor, with the per-tile-block facts of the fast path ----------
template <int R>
struct Win {
  Window<R> w;
  bool full;    // every element of the tile is inside the tensor
  bool vec_ok;  // unit last stride, and every vector of VB bytes the layout forms is aligned
};

// The per-tile-block facts of a window. VB: the bytes one vector moves (0: no vectors).
template <class Sh, int VB>
CT_DEV Win<Sh::rank> win_of(const TensorDesc& td, const Window<Sh::rank>& w, int elem_bytes) {
  Win<Sh::rank> r;
  r.w = w;
  bool full = true;
#pragma unroll
  for (int d = 0; d < Sh::rank; ++d) full = full && r.w.lo[d] == 0 && r.w.hi[d] == Sh::ext(d);
  r.full = full;
  bool ok = VB > 0 && (Sh::rank == 0 || td.stride[Sh::rank - 1] == 1);
  if constexpr (VB > 0) {
    long long origin = 0;
#pragma unroll
    for (int d = 0; d < Sh::rank; ++d) {
      origin += r.w.base[d] * td.stride[d];
      if (d + 1 < Sh::rank) ok = ok && ((td.stride[d] * elem_bytes) % VB == 0 || Sh::ext(d) == 1);
    }
    ok = ok && aligned_to((const unsigned char*)td.data + origin * elem_bytes, VB);
  }
  r.vec_ok = ok;
  return r;
}
template <class Sh, int VB>
CT_DEV Win<Sh::rank> make_win(const TensorDesc& td, const Idx<Sh::rank>& ti, int elem_bytes) {
  return win_of<Sh, VB>(td, make_window<Sh>(td, ti), elem_bytes);
}
// ct.load_window: element 0 at element coordinates `org`.
template <class Sh, int VB>
CT_DEV Win<Sh::rank> make_win_at(const TensorDesc& td, const Idx<Sh::rank>& org, int elem_bytes) {
  return win_of<Sh, VB>(td, make_window_at<Sh>(td, org), elem_bytes);
}
// ct.store_window: at piece-relative offsets `off` in the piece of shape PSh at block `blk`.
template <class Sh, class PSh, int VB>
CT_DEV Win<Sh::rank> make_win_in_piece(const TensorDesc& td, const Idx<Sh::rank>& blk, const Idx<Sh::rank>& off,
                                       int elem_bytes) {
  return win_of<Sh, VB>(td, make_window_in_piece<Sh, PSh>(td, blk, off), elem_bytes);
}

// The window of a tile whose indices are block ids (in [0, 2^31): no overflow, no negative origin).
// PIECE: the tile is the kernel's own piece, whose block index is below ceil(extent / tile), so an
// axis of tile extent 1 is always inside. VB as in make_win (0: the facts prove vectors aligned).
template <class Sh, int VB, bool PIECE>
CT_DEV Win<Sh::rank> make_win_grid(const TensorDesc& td, const Idx<Sh::rank>& ti, int elem_bytes) {
  Win<Sh::rank> r;
  bool full = true;
  long long origin = 0;
#pragma unroll
  for (int d = 0; d < Sh::rank; ++d) {
    const long long base = ti.v[d] << Sh::lg(d);
    r.w.base[d] = base;
    r.w.lo[d] = 0;
    if (PIECE && Sh::ext(d) == 1) {
      r.w.hi[d] = 1;
    } else {
      const long long room = td.shape[d] - base;
      r.w.hi[d] = room < Sh::ext(d) ? (room < 0 ? 0 : (int)room) : Sh::ext(d);
      full = full && room >= Sh::ext(d);
    }
    if constexpr (VB > 0) origin += base * td.stride[d];
  }
  r.full = full;
  bool ok = VB > 0 && (Sh::rank == 0 || td.stride[Sh::rank - 1] == 1);
  if constexpr (VB > 0) {
#pragma unroll
    for (int d = 0; d + 1 < Sh::rank; ++d) ok = ok && ((td.stride[d] * elem_bytes) % VB == 0 || Sh::ext(d) == 1);
    ok = ok && aligned_to((const unsigned char*)td.data + origin * elem_bytes, VB);
  }
  r.vec_ok = ok;
  return r;
}

// The coordinates along axis d of element `tp + reg` (disjoint bits: the sum of the two parts, the
// register part a compile-time constant once unrolled).
template <class Sh>
CT_DEV int coord_of(int d, int tp, int reg) {
  return Sh::coord(d, tp) + Sh::coord(d, reg);
}

// Memory vector g (registers g*VM .. g*VM + VM - 1) to registers and back; 16-bit types move
// whole packed words.
template <int VM, class T, int N, class U>
CT_DEV void vec_to_regs(Regs<T, N>& out, int g, const U& u) {
  if constexpr (sizeof(T) == 2 && VM % 2 == 0 && N % 2 == 0) {
    const u32* words = (const u32*)&u;
#pragma unroll
    for (int k = 0; k < VM / 2; ++k) out.w[(g * VM) / 2 + k] = words[k];
  } else {
#pragma unroll
    for (int j = 0; j < VM; ++j) out.set(g * VM + j, from_mem<T>(u.m[j]));
  }
}
template <int VM, class T, int N, class U>
CT_DEV void regs_to_vec(U& u, const Regs<T, N>& x, int g) {
  if constexpr (sizeof(T) == 2 && VM % 2 == 0 && N % 2 == 0) {
    u32* words = (u32*)&u;
#pragma unroll
    for (int k = 0; k < VM / 2; ++k) words[k] = x.w[(g * VM) / 2 + k];
  } else {
#pragma unroll
    for (int j = 0; j < VM; ++j) u.m[j] = to_mem<T>(x.get(g * VM + j));
  }
}

// ---- loads -----------------------------------------------------------------------------------------------
// VM: elements per memory vector (a divisor of D::vec and of the tile's last extent; 1: no vectors).
// FULL / ALIGNED: the facts prove every tile block full / every vector aligned (no run-time test).
// O32: every in-bounds offset fits in 32 bits (the tensor's `small` fact).
// WHOLE: the facts prove every window whole vectors along the last axis (aligned vectors, and an
// extent of the last axis that is a multiple of VM: a tile grid's windows then start and end on
// vectors), so a partial tile never needs the element-by-element path, which is not compiled.
template <class D, class Sh, bool RO, int VM, bool FULL, bool ALIGNED, bool O32, class T, bool WHOLE = false>
CT_DEV void load(Regs<T, D::regs>& out, const TensorDesc& td, const Win<Sh::rank>& wn, T pad, int tp) {
  typedef typename Traits<T>::Mem M;
  constexpr int R = Sh::rank;
  const M* base = (const M*)td.data;
  const Window<R>& w = wn.w;
  if constexpr (VM > 1) {
    typedef VecOf<M, VM> Vec;
    if ((FULL || wn.full) && (ALIGNED || wn.vec_ok)) {
      // Every group in bounds and aligned: back-to-back vector loads, offsets from the thread's part
      // (once) and each group's constant part.
      typedef typename Cond<O32, int, long long>::type Off;
      Off toff = 0;
#pragma unroll
      for (int d = 0; d < R; ++d) toff += (Off)(w.base[d] + Sh::coord(d, tp)) * (d + 1 == R ? (Off)1 : (Off)td.stride[d]);
#pragma unroll
      for (int g = 0; g < D::regs / VM; ++g) {
        Off off = toff;
#pragma unroll
        for (int d = 0; d < R; ++d) {
          const int c = Sh::coord(d, D::reg(g * VM));
          if (c != 0) off += (Off)c * (d + 1 == R ? (Off)1 : (Off)td.stride[d]);
        }
        typename Vec::U u;
#pragma unroll
        for (int c = 0; c < Vec::C; ++c) u.c[c] = ld_chunk<RO>((const Chunk<Vec::W>*)(base + off) + c);
        vec_to_regs<VM>(out, g, u);
      }
      return;
    }
    if ((WHOLE && ALIGNED) || ((ALIGNED || wn.vec_ok) && w.lo[R - 1] % VM == 0 && w.hi[R - 1] % VM == 0)) {
      // A partial tile whose window along the last axis is whole vectors: each vector is inside or
      // outside as a unit (one test per vector, like a masked vector load).
      typedef typename Cond<O32, int, long long>::type Off;
#pragma unroll
      for (int g = 0; g < D::regs / VM; ++g) {
        bool in = true;
        Off off = 0;
#pragma unroll
        for (int d = 0; d < R; ++d) {
          const int c = coord_of<Sh>(d, tp, D::reg(g * VM));
          in = in & (c >= w.lo[d]) & (c < w.hi[d]);
          off += (Off)(w.base[d] + c) * (d + 1 == R ? (Off)1 : (Off)td.stride[d]);
        }
        typename Vec::U u;
        if (in) {
#pragma unroll
          for (int c = 0; c < Vec::C; ++c) u.c[c] = ld_chunk<RO>((const Chunk<Vec::W>*)(base + off) + c);
        } else {
#pragma unroll
          for (int j = 0; j < VM; ++j) u.m[j] = to_mem<T>(pad);
        }
        vec_to_regs<VM>(out, g, u);
      }
      return;
    }
  }
  // Partial tiles, strided or misaligned views: element by element, in 64 bits.
  if constexpr (!(WHOLE && ALIGNED && VM > 1)) {
  const long long sl = td.stride[R - 1];
#pragma unroll
  for (int r = 0; r < D::regs; ++r) {
    bool in = true;
    long long off = 0;
#pragma unroll
    for (int d = 0; d < R; ++d) {
      const int c = coord_of<Sh>(d, tp, D::reg(r));
      in = in & (c >= w.lo[d]) & (c < w.hi[d]);
      off += (w.base[d] + c) * (d + 1 == R ? sl : td.stride[d]);
    }
    out.set(r, in ? from_mem<T>(base[off]) : pad);
  }
  }
}

// ---- stores (copies of an element are held by several threads: only the owner writes) --------------------
template <class D, class Sh, int VM, bool FULL, bool ALIGNED, bool O32, class T, bool WHOLE = false>
CT_DEV void store(const Regs<T, D::regs>& x, const TensorDesc& td, const Win<Sh::rank>& wn, int tp, bool owner) {
  typedef typename Traits<T>::Mem M;
  constexpr int R = Sh::rank;
  M* base = (M*)td.data;
  const Window<R>& w = wn.w;
  if (!owner) return;
  if constexpr (VM > 1) {
    typedef VecOf<M, VM> Vec;
    if ((FULL || wn.full) && (ALIGNED || wn.vec_ok)) {
      typedef typename Cond<O32, int, long long>::type Off;
      Off toff = 0;
#pragma unroll
      for (int d = 0; d < R; ++d) toff += (Off)(w.base[d] + Sh::coord(d, tp)) * (d + 1 == R ? (Off)1 : (Off)td.stride[d]);
#pragma unroll
      for (int g = 0; g < D::regs / VM; ++g) {
        Off off = toff;
#pragma unroll
        for (int d = 0; d < R; ++d) {
          const int c = Sh::coord(d, D::reg(g * VM));
          if (c != 0) off += (Off)c * (d + 1 == R ? (Off)1 : (Off)td.stride[d]);
        }
        typename Vec::U u;
        regs_to_vec<VM>(u, x, g);
#pragma unroll
        for (int c = 0; c < Vec::C; ++c) {
          CT_CHECK_ALIGNED((Chunk<Vec::W>*)(base + off) + c, Vec::W);
          ((Chunk<Vec::W>*)(base + off))[c] = u.c[c];
        }
      }
      return;
    }
    if ((WHOLE && ALIGNED) || ((ALIGNED || wn.vec_ok) && w.lo[R - 1] % VM == 0 && w.hi[R - 1] % VM == 0)) {
      // Whole vectors inside or outside (as in load).
      typedef typename Cond<O32, int, long long>::type Off;
#pragma unroll
      for (int g = 0; g < D::regs / VM; ++g) {
        bool in = true;
        Off off = 0;
#pragma unroll
        for (int d = 0; d < R; ++d) {
          const int c = coord_of<Sh>(d, tp, D::reg(g * VM));
          in = in & (c >= w.lo[d]) & (c < w.hi[d]);
          off += (Off)(w.base[d] + c) * (d + 1 == R ? (Off)1 : (Off)td.stride[d]);
        }
        if (!in) continue;
        typename Vec::U u;
        regs_to_vec<VM>(u, x, g);
#pragma unroll
        for (int c = 0; c < Vec::C; ++c) {
          CT_CHECK_ALIGNED((Chunk<Vec::W>*)(base + off) + c, Vec::W);
          ((Chunk<Vec::W>*)(base + off))[c] = u.c[c];
        }
      }
      return;
    }
  }
  if constexpr (!(WHOLE && ALIGNED && VM > 1)) {
  const long long sl = td.stride[R - 1];
#pragma unroll
  for (int r = 0; r < D::regs; ++r) {
    bool in = true;
    long long off = 0;
#pragma unroll
    for (int d = 0; d < R; ++d) {
      const int c = coord_of<Sh>(d, tp, D::reg(r));
      in = in & (c >= w.lo[d]) & (c < w.hi[d]);
      off += (w.base[d] + c) * (d + 1 == R ? sl : td.stride[d]);
    }
    if (in) {
      CT_CHECK_ALIGNED(base + off, sizeof(M));
      base[off] = to_mem<T>(x.get(r));
    }
  }
  }
}

// ---- shared memory: a tile by linear element index ------------------------------------------------------
// How many consecutive registers of layout D hold consecutive elements (D's first register bits
// are the element index's lowest bits), up to 16 bytes of M: stage and unstage move them as one
// shared-memory access (a wgmma accumulator's pairs: 4 bytes of bf16; a row layout's vectors: 16)
// instead of one access per element. The scratch is 16-byte aligned (smem-alloc).
template <class D, class M>
CT_DEV constexpr int smem_run() {
  int v = 1;
  while (2 * v <= D::regs && 2 * v * (int)sizeof(M) <= 16 && D::reg(v) == v) v *= 2;
  return v;
}
// Where element e of a tile lies in scratch: in place, or (RC >= 8: rows of RC 16-byte chunks of
// E elements) with each chunk's index within its row XORed with the row's low 3 bits, so that the
// 8 rows one warp's store of a row-split layout (a wgmma accumulator: 8 rows, 16 bytes each) meets
// fall in different banks; chunks stay whole, so vectors of up to 16 bytes stay contiguous.
template <int RC, int E>
CT_DEV constexpr int scratch_at(int e) {
  if constexpr (RC < 8) {
    return e;
  } else {
    const int c = e / E;
    return (c ^ ((c / RC) & 7)) * E + e % E;
  }
}
template <class D, class T, int RC = 0>
CT_DEV void stage(T* s, const Regs<T, D::regs>& x, int tp, bool owner) {
  if (!owner) return;
  typedef typename Traits<T>::Mem M;
  constexpr int V = smem_run<D, M>(), E = 16 / (int)sizeof(M) > 0 ? 16 / (int)sizeof(M) : 1;
  if constexpr (V > 1 && VecOf<M, V>::ok) {
    typedef VecOf<M, V> VO;
#pragma unroll
    for (int g = 0; g < D::regs / V; ++g) {
      typename VO::U u;
#pragma unroll
      for (int j = 0; j < V; ++j) u.m[j] = to_mem<T>(x.get(g * V + j));
      Chunk<VO::W>* p = (Chunk<VO::W>*)((M*)s + scratch_at<RC, E>(tp + D::reg(g * V)));
      CT_CHECK_ALIGNED(p, VO::W);
#pragma unroll
      for (int c = 0; c < VO::C; ++c) p[c] = u.c[c];
    }
  } else {
#pragma unroll
    for (int r = 0; r < D::regs; ++r) s[scratch_at<RC, E>(tp + D::reg(r))] = x.get(r);
  }
}
// The elements of layout D back from the scratch stage wrote (or any tile by element index).
template <class D, class T, int RC = 0>
CT_DEV void unstage(Regs<T, D::regs>& out, const T* s, int tp) {
  typedef typename Traits<T>::Mem M;
  constexpr int V = smem_run<D, M>(), E = 16 / (int)sizeof(M) > 0 ? 16 / (int)sizeof(M) : 1;
  if constexpr (V > 1 && VecOf<M, V>::ok) {
    typedef VecOf<M, V> VO;
#pragma unroll
    for (int g = 0; g < D::regs / V; ++g) {
      typename VO::U u;
      const Chunk<VO::W>* p = (const Chunk<VO::W>*)((const M*)s + scratch_at<RC, E>(tp + D::reg(g * V)));
      CT_CHECK_ALIGNED(p, VO::W);
#pragma unroll
      for (int c = 0; c < VO::C; ++c) u.c[c] = p[c];
#pragma unroll
      for (int j = 0; j < V; ++j) out.set(g * V + j, from_mem<T>(u.m[j]));
    }
  } else {
#pragma unroll
    for (int r = 0; r < D::regs; ++r) out.set(r, s[scratch_at<RC, E>(tp + D::reg(r))]);
  }
}
template <class D, class T, class F>
CT_DEV void gen(Regs<T, D::regs>& out, int tp, F f) {
#pragma unroll
  for (int r = 0; r < D::regs; ++r) out.set(r, f(tp + D::reg(r)));
}

// ct.convert_layout through shared memory: owners in A write, the team syncs, every thread reads
// its elements of B. RC: the tile's rows in 16-byte chunks (its last extent's bytes / 16): from 8
// on the scratch is swizzled (scratch_at).
template <class DA, class DB, int RC = 0, class Team, class T>
CT_DEV void relayout(Regs<T, DB::regs>& out, const Regs<T, DA::regs>& x, T* s, int tpa, bool owner_a, int tpb,
                     const Team& team) {
  stage<DA, T, RC>(s, x, tpa, owner_a);
  team.sync();
  unstage<DB, T, RC>(out, s, tpb);
}

// ---- reductions -------------------------------------------------------------------------------------------
// An Op with identity() starts each accumulator there; one without (a user's combine function,
// combine.h) starts at the first element of each group.
template <class Op, class = void>
struct HasIdentity {
  static constexpr bool value = false;
};
template <class Op>
struct HasIdentity<Op, decltype((void)Op::identity())> {
  static constexpr bool value = true;
};

// Reduction along an axis whose element bits are [SHIFT, SHIFT + log2(LEN)) of a tile in layout
// DX into a tile in layout DR (the slice of DX). src(r, k) gives register r's element as an Op::Acc
// (k: its index along the axis), sink(i, acc) takes result register i's accumulator. RMASK / LMASK
// / WMASK: the register / lane / warp bits of DX on the axis. The result element of result register
// i is tpr + DR::reg(i).
template <class Op, class DX, class DR, int SHIFT, int LEN, int RMASK, int LMASK, int WMASK, class Team, class Src,
          class Sink>
CT_DEV void reduce_by(const Src& src, const Sink& sink, unsigned char* scratch, int tpx, int tpr, const Team& team) {
  typedef typename Op::Acc Acc;
  constexpr int RR = DR::regs;
  constexpr int KEEP = (DX::regs - 1) & ~RMASK;
  Acc acc[RR];
  if constexpr (HasIdentity<Op>::value) {
#pragma unroll
    for (int i = 0; i < RR; ++i) acc[i] = Op::identity();
  }
#pragma unroll
  for (int r = 0; r < DX::regs; ++r) {
    const int i = pext(r, KEEP);
    const int k = ((tpx + DX::reg(r)) >> SHIFT) & (LEN - 1);
    // Without an identity, the group's first register (no RMASK bits) starts it.
    if (!HasIdentity<Op>::value && (r & RMASK) == 0) acc[i] = src(r, k);
    else acc[i] = Op::combine(acc[i], src(r, k));
  }
  if constexpr (LMASK != 0) {
#pragma unroll
    for (int b = 0; b < 5; ++b)
      if ((LMASK >> b) & 1) {
#pragma unroll
        for (int i = 0; i < RR; ++i) acc[i] = Op::combine(acc[i], shfl_xor(acc[i], 1 << b));
      }
    // The lowest lane's bits everywhere (max of +0 and -0 need not commute).
#pragma unroll
    for (int i = 0; i < RR; ++i) acc[i] = shfl_from(acc[i], team.lane & ~LMASK);
  }
  if constexpr (WMASK != 0) {
    constexpr int NW = 1 << popcount(WMASK);
    Acc* sc = (Acc*)scratch;
    const bool writer = (team.lane & DR::copy_lanes) == 0 && (team.warp & DR::copy_warps & ~WMASK) == 0;
    if (writer) {
#pragma unroll
      for (int i = 0; i < RR; ++i) sc[(tpr + DR::reg(i)) * NW + pext(team.warp, WMASK)] = acc[i];
    }
    team.sync();
#pragma unroll
    for (int i = 0; i < RR; ++i) {
      const Acc* p = sc + (tpr + DR::reg(i)) * NW;
      Acc a = p[0];
#pragma unroll
      for (int j = 1; j < NW; ++j) a = Op::combine(a, p[j]);
      acc[i] = a;
    }
  }
#pragma unroll
  for (int i = 0; i < RR; ++i) sink(i, acc[i]);
}

// reduce_by over one tile x of element type T, into out (Op's lift and finish around the combine).
template <class Op, class DX, class DR, int SHIFT, int LEN, int RMASK, int LMASK, int WMASK, class Team, class T>
CT_DEV void reduce(Regs<typename Op::R, DR::regs>& out, const Regs<T, DX::regs>& x, unsigned char* scratch, int tpx,
                   int tpr, const Team& team) {
  reduce_by<Op, DX, DR, SHIFT, LEN, RMASK, LMASK, WMASK>([&](int r, int k) { return Op::lift(x.get(r), k); },
                                                       [&](int i, const typename Op::Acc& a) { out.set(i, Op::finish(a)); },
                                                       scratch, tpx, tpr, team);
}

// A reduction whose result is one element (the same accumulator in every thread); src(r, e) as in
// reduce_by (e: the element's index, the whole tile being the axis).
template <class Op, class DX, int LMASK, int WMASK, class Team, class Src>
CT_DEV typename Op::Acc reduce_one_by(const Src& src, unsigned char* scratch, int tpx, const Team& team) {
  typedef typename Op::Acc Acc;
  Acc a;
  if constexpr (HasIdentity<Op>::value) a = Op::identity();
#pragma unroll
  for (int r = 0; r < DX::regs; ++r) {
    if (!HasIdentity<Op>::value && r == 0) a = src(r, tpx + DX::reg(r));
    else a = Op::combine(a, src(r, tpx + DX::reg(r)));
  }
  if constexpr (LMASK != 0) {
#pragma unroll
    for (int b = 0; b < 5; ++b)
      if ((LMASK >> b) & 1) a = Op::combine(a, shfl_xor(a, 1 << b));
    a = shfl_from(a, team.lane & ~LMASK);
  }
  if constexpr (WMASK != 0) {
    constexpr int NW = 1 << popcount(WMASK);
    Acc* sc = (Acc*)scratch;
    if (team.lane == 0 && (team.warp & ~WMASK) == 0) sc[pext(team.warp, WMASK)] = a;
    team.sync();
    a = sc[0];
#pragma unroll
    for (int j = 1; j < NW; ++j) a = Op::combine(a, sc[j]);
  }
  return a;
}
template <class Op, class DX, int RMASK_UNUSED, int LMASK, int WMASK, class Team, class T>
CT_DEV typename Op::R reduce_one(const Regs<T, DX::regs>& x, unsigned char* scratch, int tpx, const Team& team) {
  return Op::finish(
      reduce_one_by<Op, DX, LMASK, WMASK>([&](int r, int e) { return Op::lift(x.get(r), e); }, scratch, tpx, team));
}

// A reduction along an axis in index order, like the reference (float products: a tree of partial
// products may underflow or overflow where the reference does not): x staged in shared memory as
// [OUTER, LEN, INNER], each result element walks its line. RR: registers of the result (1 and a
// plain value when the result has one element).
template <class Op, class DX, class DR, int OUTER, int LEN, int INNER, class Team, class T>
CT_DEV void reduce_in_order(Regs<typename Op::R, DR::regs>& out, const Regs<T, DX::regs>& x, T* s, int tpx, bool ownx,
                            int tpr, const Team& team) {
  stage<DX>(s, x, tpx, ownx);
  team.sync();
  gen<DR>(out, tpr, [&](int i) {
    const unsigned o = (unsigned)i / INNER, in = (unsigned)i % INNER;
    typename Op::Acc a = Op::identity();
    for (int k = 0; k < LEN; ++k) a = Op::combine(a, Op::lift(s[(o * LEN + k) * INNER + in], k));
    return Op::finish(a);
  });
}
template <class Op, class DX, int N, class Team, class T>
CT_DEV typename Op::R reduce_one_in_order(const Regs<T, DX::regs>& x, T* s, int tpx, bool ownx, const Team& team) {
  stage<DX>(s, x, tpx, ownx);
  team.sync();
  typename Op::Acc a = Op::identity();
  for (int k = 0; k < N; ++k) a = Op::combine(a, Op::lift(s[k], k));
  return Op::finish(a);
}

// ---- scans (staged: one thread per line walks it in order, like the reference) ----------------------------
// The combine of a scan (the interpreter's ScanCombine): Acc the running value (double for float
// sums and products, rounded once per output; the compute type for max/min; the wrapping type W for
// integers), identity() the first output of an exclusive scan.
template <class T, bool WIDE = is_floaty_v<T>>
struct ScanAcc {
  typedef typename Traits<T>::W type;  // integers: wrap
  static CT_DEV type lift(T v) { return (type)v; }
  static CT_DEV T down(type a) { return (T)a; }
};
template <class T>
struct ScanAcc<T, true> {
  typedef double type;
  static CT_DEV double lift(T v) { return (double)up(v); }
  static CT_DEV T down(double a) { return float_from_double<T>(a); }
};
template <class T>
struct ScanSum {
  typedef ScanAcc<T> S;
  typedef typename S::type Acc;
  static CT_DEV Acc identity() { return (Acc)0; }
  static CT_DEV Acc lift(T v) { return S::lift(v); }
  static CT_DEV Acc combine(Acc a, Acc b) { return (Acc)(a + b); }
  static CT_DEV T down(Acc a) { return S::down(a); }
};
template <class T>
struct ScanProd {
  typedef ScanAcc<T> S;
  typedef typename S::type Acc;
  static CT_DEV Acc identity() { return (Acc)1; }
  static CT_DEV Acc lift(T v) { return S::lift(v); }
  static CT_DEV Acc combine(Acc a, Acc b) { return (Acc)(a * b); }
  static CT_DEV T down(Acc a) { return S::down(a); }
};
// max/min: floats like fmax/fmin (a NaN operand yields the other), bool as any/all.
template <class T, bool MAX>
struct ScanMinMax {
  typedef typename Traits<T>::C Acc;
  static CT_DEV Acc identity() {
    if constexpr (is_same<Acc, float>::value) return __uint_as_float(MAX ? 0xff800000u : 0x7f800000u);
    else if constexpr (is_same<Acc, double>::value)
      return __longlong_as_double(MAX ? (long long)0xfff0000000000000ULL : 0x7ff0000000000000LL);
    else return MAX ? Traits<T>::lowest() : Traits<T>::highest();
  }
  static CT_DEV Acc lift(T v) { return up(v); }
  static CT_DEV Acc combine(Acc a, Acc b) {
    if constexpr (is_floaty_v<T>) return MAX ? m_fmax(a, b) : m_fmin(a, b);
    else if constexpr (MAX) return b > a ? b : a;
    else return b < a ? b : a;
  }
  static CT_DEV T down(Acc a) { return ct::down<T>(a); }
};

// Each line along the axis walked in order (from its end when REV); the inclusive run starts at
// the first element itself, the exclusive output lags it by one and starts at the identity.
template <class Op, class D, int OUTER, int LEN, int INNER, bool EXCL, bool REV, class Team, class T>
CT_DEV void scan(Regs<T, D::regs>& out, const Regs<T, D::regs>& x, T* s, int tp, bool owner, const Team& team) {
  typedef typename Op::Acc Acc;
  stage<D>(s, x, tp, owner);
  team.sync();
  for (int line = team.tid; line < OUTER * INNER; line += Team::threads) {
    const unsigned o = (unsigned)line / INNER, in = (unsigned)line % INNER;
    Acc run = Op::identity();
    for (int step = 0; step < LEN; ++step) {
      const int k = REV ? LEN - 1 - step : step;
      T& e = s[(o * LEN + k) * INNER + in];
      const Acc v = Op::lift(e);
      const Acc next = step == 0 ? v : Op::combine(run, v);
      e = Op::down(EXCL ? run : next);
      run = next;
    }
  }
  team.sync();
  unstage<D>(out, s, tp);
}

// The same walk over tiles staged as [OUTER, LEN, INNER] for a combine function (combine.h): get(e)
// gives staged element e of each tile as an Op::Acc, put(e, acc) stores the output there, and an
// exclusive scan starts at `id`. (ct.scan keeps its own loop above: the CUDA compiler vectorises its
// shared-memory accesses, which it does not do through these functions.)
template <class Op, int OUTER, int LEN, int INNER, bool EXCL, bool REV, class Team, class Get, class Put>
CT_DEV void scan_lines(const Get& get, const Put& put, const typename Op::Acc& id, const Team& team) {
  typedef typename Op::Acc Acc;
  for (int line = team.tid; line < OUTER * INNER; line += Team::threads) {
    const unsigned o = (unsigned)line / INNER, in = (unsigned)line % INNER;
    Acc run = id;
    for (int step = 0; step < LEN; ++step) {
      const int k = REV ? LEN - 1 - step : step;
      const unsigned e = (o * LEN + k) * INNER + in;
      const Acc v = get(e);
      const Acc next = step == 0 ? v : Op::combine(run, v);
      put(e, EXCL ? run : next);
      run = next;
    }
  }
}

// ---- matrix multiply-accumulate from staged operands (rows of a and b in shared memory) --------------------
template <class D, int M, int N, int K, class TA, class TB, class TC>
CT_DEV void mma(Regs<TC, D::regs>& out, const Regs<TC, D::regs>& acc, const TA* sa, const TB* sb, int tp) {
  typedef typename MmaAcc<TA, TC>::type Acc;
  constexpr int V = (D::vec < N ? D::vec : N);
#pragma unroll
  for (int g = 0; g < D::regs / V; ++g) {
    const int e0 = tp + D::reg(g * V);
    const int row = e0 / N, c0 = e0 % N;
    Acc s[V];
#pragma unroll
    for (int j = 0; j < V; ++j) s[j] = mma_start<TC, Acc>(acc.get(g * V + j));
#pragma unroll 2
    for (int k = 0; k < K; ++k) {
      const TA a = sa[row * K + k];
#pragma unroll
      for (int j = 0; j < V; ++j) s[j] = mac(a, sb[k * N + c0 + j], s[j]);
    }
#pragma unroll
    for (int j = 0; j < V; ++j) out.set(g * V + j, mma_finish<TC>(s[j]));
  }
}

// ---- gathers, scatters, atomics over a distributed tile ----------------------------------------------------
template <class D, bool SHARED, class T, class... I>
CT_DEV void gather_d(Regs<T, D::regs>& out, const TensorDesc& td, T pad, const I&... idx) {
#pragma unroll
  for (int r = 0; r < D::regs; ++r) {
    long long off = 0;
    out.set(r, locate(td, off, to_index(idx.get(r))...) ? load_elem<SHARED, T>(td, off) : pad);
  }
}

// ScatterPiece (see block.h's scatter_piece for the rules): duplicates resolved in shared memory,
// the last element in row-major order wins.
template <class D, class PSh, class Team, class T, class... I>
CT_DEV void scatter_piece_d(const TensorDesc& td, const Idx<PSh::rank>& blk, const Regs<T, D::regs>& val, int* win, int tp,
                            bool owner, const Team& team, const I&... idx) {
  Idx<PSh::rank> org;
  const bool ok = piece_origin<PSh>(blk, org);
  team.sync();
  for (int k = team.tid; k < PSh::numel; k += Team::threads) win[k] = -1;
  team.sync();
  int lin[D::regs];
  long long off[D::regs];
  bool in[D::regs];
#pragma unroll
  for (int r = 0; r < D::regs; ++r) {
    const int e = tp + D::reg(r);
    const long long c[sizeof...(I)] = {to_index(idx.get(r))...};
    bool w = ok && owner;
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
    if (w) atomicMax(&win[l], e);
    lin[r] = l;
    off[r] = o;
    in[r] = w;
  }
  team.sync();
#pragma unroll
  for (int r = 0; r < D::regs; ++r)
    if (in[r] && win[lin[r]] == tp + D::reg(r)) store_at<T>(td, off[r], val.get(r));
  team.sync();
}

// ScatterUnchecked: the last element in row-major order wins among duplicates. `soff` holds N
// offsets and two flags. When the offsets of the tile are strictly increasing (or decreasing) in
// element order, up to a tail of elements outside the tensor, there are no duplicates and every
// element stores (an iota-based scatter: one pass over neighbours); otherwise each element looks
// for a later one with its offset (quadratic in N: docs/compiler.md).
template <class D, int N, class Team, class T, class... I>
CT_DEV void scatter_unchecked_d(const TensorDesc& td, const Regs<T, D::regs>& val, long long* soff, int tp, bool owner,
                                const Team& team, const I&... idx) {
  long long off[D::regs];
  int* unordered = (int*)(soff + N);  // [0]: not increasing, [1]: not decreasing
  team.sync();
  if (team.leader()) {
    unordered[0] = 0;
    unordered[1] = 0;
  }
#pragma unroll
  for (int r = 0; r < D::regs; ++r) {
    long long o = 0;
    off[r] = locate(td, o, to_index(idx.get(r))...) ? o : -1;
    if (owner) soff[tp + D::reg(r)] = off[r];
  }
  team.sync();
  if (owner) {
    bool up = true, down = true;
#pragma unroll
    for (int r = 0; r < D::regs; ++r) {
      const int e = tp + D::reg(r);
      if (e + 1 < N) {
        const long long next = soff[e + 1];
        if (next >= 0) {  // an element outside the tensor may follow anything
          up = up && off[r] >= 0 && off[r] < next;
          down = down && off[r] >= 0 && off[r] > next;
        }
      }
    }
    if (!up) atomicExch(&unordered[0], 1);
    if (!down) atomicExch(&unordered[1], 1);
  }
  team.sync();
  const bool distinct = unordered[0] == 0 || unordered[1] == 0;
#pragma unroll
  for (int r = 0; r < D::regs; ++r) {
    if (!owner || off[r] < 0) continue;
    bool last = true;
    if (!distinct)
      for (int k = tp + D::reg(r) + 1; k < N; ++k)
        if (soff[k] == off[r]) {
          last = false;
          break;
        }
    if (last) store_at<T>(td, off[r], val.get(r));
  }
  team.sync();
}

// Atomics: the owner of each element performs it; copies get the old value through `share`
// (shared memory, one slot per element) when the layout has copies (SHARE).
template <int OP, class D, bool SHARE, class Team, class T, class... I>
CT_DEV void atomic_d(Regs<T, D::regs>& old, const TensorDesc& td, const Regs<T, D::regs>& val, T* share, int tp, bool owner,
                     const Team& team, const I&... idx) {
  team.sync();
#pragma unroll
  for (int r = 0; r < D::regs; ++r) {
    long long off = 0;
    T o = T{};  // 0 (also for the 16-bit float structs)
    if (owner && locate(td, off, to_index(idx.get(r))...)) o = atomic_rmw<OP>(ptr_at<T>(td, off), val.get(r));
    old.set(r, o);
    if constexpr (SHARE)
      if (owner) share[tp + D::reg(r)] = o;
  }
  team.sync();
  if constexpr (SHARE) {
    gen<D>(old, tp, [&](int e) { return share[e]; });
    team.sync();
  }
}
template <class D, bool SHARE, class Team, class T, class... I>
CT_DEV void cas_d(Regs<T, D::regs>& old, const TensorDesc& td, const Regs<T, D::regs>& expected, const Regs<T, D::regs>& desired,
                  T* share, int tp, bool owner, const Team& team, const I&... idx) {
  team.sync();
#pragma unroll
  for (int r = 0; r < D::regs; ++r) {
    long long off = 0;
    T o = (T)0;
    if (owner && locate(td, off, to_index(idx.get(r))...)) o = atomic_cas(ptr_at<T>(td, off), expected.get(r), desired.get(r));
    old.set(r, o);
    if constexpr (SHARE)
      if (owner) share[tp + D::reg(r)] = o;
  }
  team.sync();
  if constexpr (SHARE) {
    gen<D>(old, tp, [&](int e) { return share[e]; });
    team.sync();
  }
}

// ---- one-element tiles (every thread holds the value; the leader writes) -----------------------------------
template <class Sh, class Team, class T>
CT_DEV void store_one_t(T x, const TensorDesc& td, const Window<Sh::rank>& w, const Team& team) {
  team.sync();
  long long off = 0;
  if (team.leader() && window_locate<Sh>(td, w, 0, off)) ((typename Traits<T>::Mem*)td.data)[off] = to_mem<T>(x);
  team.sync();
}
template <class T, class Team, class... I>
CT_DEV T gather_one_shared_t(const TensorDesc& td, T pad, unsigned char* scratch, const Team& team, I... idx) {
  team.sync();
  if (team.leader()) {
    long long off = 0;
    T v = pad;
    if (locate(td, off, to_index(idx)...)) v = load_elem<true, T>(td, off);
    *(T*)scratch = v;
  }
  team.sync();
  const T r = *(T*)scratch;
  team.sync();
  return r;
}
template <class PSh, class Team, class T, class... I>
CT_DEV void scatter_piece_one_t(const TensorDesc& td, const Idx<PSh::rank>& blk, T val, const Team& team, I... idx) {
  team.sync();
  if (team.leader()) {
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
  team.sync();
}
template <class T, class Team, class... I>
CT_DEV void scatter_unchecked_one_t(const TensorDesc& td, T val, const Team& team, I... idx) {
  team.sync();
  long long off = 0;
  if (team.leader() && locate(td, off, to_index(idx)...)) store_at<T>(td, off, val);
  team.sync();
}
template <int OP, class T, class Team, class... I>
CT_DEV T atomic_one_t(const TensorDesc& td, T val, unsigned char* scratch, const Team& team, I... idx) {
  team.sync();
  if (team.leader()) {
    long long off = 0;
    *(T*)scratch = locate(td, off, to_index(idx)...) ? atomic_rmw<OP>(ptr_at<T>(td, off), val) : T{};
  }
  team.sync();
  const T r = *(T*)scratch;
  team.sync();
  return r;
}
template <class T, class Team, class... I>
CT_DEV T cas_one_t(const TensorDesc& td, T expected, T desired, unsigned char* scratch, const Team& team, I... idx) {
  team.sync();
  if (team.leader()) {
    long long off = 0;
    *(T*)scratch = locate(td, off, to_index(idx)...) ? atomic_cas(ptr_at<T>(td, off), expected, desired) : (T)0;
  }
  team.sync();
  const T r = *(T*)scratch;
  team.sync();
  return r;
}

CT_DEV void trap_step_t(const char* where, long long step, bool leader) {
  if (leader) printf("ctile: %s: ct.for step must be positive (got %lld)\n", where, step);
  __trap();
}

}  // namespace ct
