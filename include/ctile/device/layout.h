// ctile device library: index math over static tile shapes (the layouts of values are in regs.h).
#pragma once

#include "ctile/device/types.h"

namespace ct {

// A static tile shape (every extent a power of two), row-major.
template <int... E>
struct Shape {
  static constexpr int rank = (int)sizeof...(E);
  static constexpr int numel = (1 * ... * E);
  static __host__ __device__ constexpr int ext(int d) {
    int r = 1, k = 0;
    ((r = (k++ == d) ? E : r), ...);
    return r;
  }
  static __host__ __device__ constexpr int lg(int d) {
    int l = 0;
    while ((1 << l) < ext(d)) ++l;
    return l;
  }
  // log2 of the row-major stride of axis d
  static __host__ __device__ constexpr int shift(int d) {
    int s = 0;
    for (int k = d + 1; k < rank; ++k) s += lg(k);
    return s;
  }
  static __host__ __device__ constexpr int coord(int d, int i) { return (int)(((unsigned)i >> shift(d)) & (unsigned)(ext(d) - 1)); }
};

// Small fixed-size index lists (tile indices, coordinates).
template <int R>
struct Idx {
  long long v[R > 0 ? R : 1];
};

// ---- index maps of the data-movement ops: result linear index -> operand linear index ----------------
// ct.broadcast: operand axes of extent 1 are stretched.
template <class Src, class Dst>
CT_DEV int broadcast_src(int i) {
  int j = 0;
#pragma unroll
  for (int d = 0; d < Dst::rank; ++d)
    if (Src::ext(d) != 1) j += Dst::coord(d, i) << Src::shift(d);
  return j;
}
// ct.permute: result axis k is operand axis P[k].
template <class Src, class Dst, int... P>
CT_DEV int permute_src(int i) {
  int j = 0, k = 0;
  ((j += Dst::coord(k, i) << Src::shift(P), ++k), ...);
  return j;
}
// ct.extract: result[j] = x[offsets + j].
template <class Src, class Dst, int... O>
CT_DEV int extract_src(int i) {
  int j = 0, d = 0;
  ((j += (Dst::coord(d, i) + O) << Src::shift(d), ++d), ...);
  return j;
}
// ct.cat along AXIS: index into the staged operands, a at 0 and b at element BOFF.
template <class A, class B, class Dst, int AXIS, int BOFF>
CT_DEV int cat_src(int i) {
  const int c = Dst::coord(AXIS, i);
  const bool in_a = c < A::ext(AXIS);
  int j = 0;
#pragma unroll
  for (int d = 0; d < Dst::rank; ++d) {
    int cd = Dst::coord(d, i);
    if (d == AXIS && !in_a) cd -= A::ext(AXIS);
    j += cd << (in_a ? A::shift(d) : B::shift(d));
  }
  return in_a ? j : BOFF + j;
}

// One axis of a linear tile-block id (rem >= 0) over an axis of n tile blocks: returns rem % n and
// leaves rem / n in rem. Nothing to divide for n == 1, 32-bit division when both fit.
CT_DEV long long split_block(long long& rem, long long n) {
  if (n == 1) return 0;
  if ((unsigned long long)rem <= 0xffffffffull && (unsigned long long)n <= 0xffffffffull) {
    const unsigned r = (unsigned)rem, m = (unsigned)n;
    rem = (long long)(r / m);
    return (long long)(r % m);
  }
  const long long q = rem / n;
  const long long b = rem - q * n;
  rem = q;
  return b;
}

// The grouped order of a 2-D grid of n0 x n1 tile blocks: linear id `lin` walks groups of `g`
// rows, each column by column (row lin % rows of the group, column lin / rows of it), the last
// group holding what remains. A bijection onto [0, n0) x [0, n1).
CT_DEV void grouped_block(long long lin, long long n0, long long n1, long long g, long long& b0, long long& b1) {
  const long long per_group = g * n1;
  const long long group = lin / per_group, first = group * g;
  const long long rows = n0 - first < g ? n0 - first : g;
  const long long in = lin - group * per_group;
  b0 = first + in % rows;
  b1 = in / rows;
}

// ceil(e / 2^lg) for e >= 0: tiles of a partition along an axis.
CT_DEV long long count_tiles(long long e, int lg) { return (e >> lg) + ((e & ((1LL << lg) - 1)) != 0 ? 1 : 0); }

}  // namespace ct
