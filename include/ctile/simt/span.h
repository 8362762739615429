// Read-only kernel parameters: Span<T> and Span2D<T> (inputs; the host passes Shared<T> handles,
// so nothing writes them while the kernel runs), and Uniform<T> (a scalar, the same in every
// thread). None of them has a member that writes.
//
//   float x = a.get_or(i, 0.0f);          // index outside the span: the fallback
//   Maybe<float> y = a.get(idx);           // or a Maybe
//   float z = a.get_unchecked(ctile::unchecked, i);  // no check on the GPU (checked on the CPU)
//
// On the GPU the reads go through the read-only data cache (__ldg): the ownership model guarantees
// that no thread of the launch writes the memory of a Span.
#pragma once

#include "ctile/simt/index.h"
#include "ctile/simt/maybe.h"

namespace ctile::simt {

namespace detail {

// Kernel parameter descriptors: what the host passes for each parameter (same layout on both sides).
template <class T>
struct SpanDesc {
  T* data;
  i64 size;
};
template <class T>
struct Span2DDesc {
  T* data;
  i64 rows, cols, ld;  // ld: elements from one row to the next
};
template <class T>
struct ValueDesc {
  T value;
};

enum class ParamKind { Read, Write, Atomic, Unchecked, Value };

// What a kernel parameter type is. Every SIMT parameter type specialises this (is_param = true):
// desc (its descriptor), element, kind, rank (1 or 2; 0 for a Uniform).
template <class P>
struct param_traits {
  static constexpr bool is_param = false;
};

template <class T>
inline T load_ro(const T* p) {
#if CTILE_SIMT_DEVICE
  if constexpr (same<T, bool>::value) {
    return *p;
  } else if constexpr (sizeof(T) < 4) {
    // 8- and 16-bit integers: the load widens into a 32-bit register, and the compiler is told the
    // value's range. CUDA's __ldg for these is inline asm whose result the compiler cannot see
    // into: an index made from the byte is masked again (a histogram's bin: shl + and per element,
    // 2% of the SIMT histogram's time on the H200).
    constexpr bool is_signed = T(-1) < T(0);
    int v;
    if constexpr (sizeof(T) == 1 && is_signed) asm("ld.global.nc.s8 %0, [%1];" : "=r"(v) : "l"(p));
    else if constexpr (sizeof(T) == 1) asm("ld.global.nc.u8 %0, [%1];" : "=r"(v) : "l"(p));
    else if constexpr (is_signed) asm("ld.global.nc.s16 %0, [%1];" : "=r"(v) : "l"(p));
    else asm("ld.global.nc.u16 %0, [%1];" : "=r"(v) : "l"(p));
    constexpr int lo = is_signed ? -(1 << (8 * sizeof(T) - 1)) : 0;
    constexpr int hi = is_signed ? (1 << (8 * sizeof(T) - 1)) - 1 : (1 << (8 * sizeof(T))) - 1;
    __builtin_assume(v >= lo && v <= hi);
    return static_cast<T>(v);
  } else {
    return __ldg(p);
  }
#else
  if (!tls_thread) not_in_kernel("reading an element of a Span (a requires relation may use sizes and Uniform values only)");
  return *p;
#endif
}

}  // namespace detail

// Four consecutive elements, loaded at once (Span<T>::get_vec4_or).
template <class T>
struct Vec4 {
  T x, y, z, w;
};

// The four neighbours of an element of a matrix (Span2D::neighbours).
template <class T>
struct Neighbours {
  T up, down, left, right;
};

// An element of a span as grid_stride(span) hands it out: its index and its value.
template <class T>
struct Element {
  i64 index;
  T value;
};

template <class T>
class Span {
  static_assert(detail::is_element<T>::value, "Span<T>: T must be bool, an 8- to 64-bit integer, float or double");

 public:
  i64 size() const { return d_.size; }
  Maybe<T> get(i64 i) const {
    return detail::in_range(i, d_.size) ? detail::Access::make<Maybe<T>>(detail::load_ro(d_.data + i)) : Maybe<T>();
  }
  Maybe<T> get(const ThreadIndex& i) const { return get(i.get()); }
  T get_or(i64 i, T fallback) const { return detail::in_range(i, d_.size) ? detail::load_ro(d_.data + i) : fallback; }
  T get_or(const ThreadIndex& i, T fallback) const { return get_or(i.get(), fallback); }
  // No bounds check on the GPU; the CPU backend still checks and reports the index.
  T get_unchecked(unchecked_t, i64 i) const {
#if !CTILE_SIMT_DEVICE
    if (!detail::in_range(i, d_.size)) detail::out_of_bounds("Span::get_unchecked", i, d_.size);
#endif
    return detail::load_ro(d_.data + i);
  }
  const T* data(unchecked_t) const { return d_.data; }

  // Vector loads of 4-byte elements: elements [4q, 4q + 4) for q < vec4_count(), which is
  // size() / 4 when element 0 is 16-byte aligned and 0 otherwise (then read element by element).
  i64 vec4_count() const {
    static_assert(sizeof(T) == 4, "Span<T>::vec4_count: vector loads need a 4-byte element type");
    return ((u64)d_.data % 16 == 0) ? d_.size / 4 : 0;
  }
  Vec4<T> get_vec4_or(i64 q, T fallback) const {
    static_assert(sizeof(T) == 4, "Span<T>::get_vec4_or: vector loads need a 4-byte element type");
    if (!detail::in_range(q, vec4_count())) return Vec4<T>{fallback, fallback, fallback, fallback};
#if CTILE_SIMT_DEVICE
    const uint4 v = __ldg(reinterpret_cast<const uint4*>(d_.data) + q);
    return Vec4<T>{detail::bit_cast<T>(v.x), detail::bit_cast<T>(v.y), detail::bit_cast<T>(v.z),
                   detail::bit_cast<T>(v.w)};
#else
    const T* p = d_.data + 4 * q;
    return Vec4<T>{p[0], p[1], p[2], p[3]};
#endif
  }
  // The elements [4q, 4q + 4) of a Vec4Index q (of the output they are read for): one 16-byte load
  // when all four are inside and element 0 is 16-byte aligned, else one by one, with `fallback`
  // for those outside.
  Vec4<T> get_vec4_or(const Vec4Index& q, T fallback) const {
    static_assert(sizeof(T) == 4, "Span<T>::get_vec4_or: vector loads need a 4-byte element type");
    const i64 i = q.first();
    if ((u64)d_.data % 16 == 0 && i >= 0 && i <= d_.size - 4) {
#if CTILE_SIMT_DEVICE
      const uint4 v = __ldg(reinterpret_cast<const uint4*>(d_.data + i));
      return Vec4<T>{detail::bit_cast<T>(v.x), detail::bit_cast<T>(v.y), detail::bit_cast<T>(v.z),
                     detail::bit_cast<T>(v.w)};
#else
      return Vec4<T>{detail::load_ro(d_.data + i), detail::load_ro(d_.data + i + 1), detail::load_ro(d_.data + i + 2),
                     detail::load_ro(d_.data + i + 3)};
#endif
    }
    return Vec4<T>{get_or(i, fallback), get_or(i + 1, fallback), get_or(i + 2, fallback), get_or(i + 3, fallback)};
  }

 private:
  friend struct detail::Access;
  explicit Span(const detail::SpanDesc<const T>& d) : d_(d) {}
  detail::SpanDesc<const T> d_;
};

// A read-only matrix: rows x cols elements, row r starting ld elements after row r - 1.
template <class T>
class Span2D {
  static_assert(detail::is_element<T>::value, "Span2D<T>: T must be bool, an 8- to 64-bit integer, float or double");

 public:
  i64 rows() const { return d_.rows; }
  i64 cols() const { return d_.cols; }
  i64 ld() const { return d_.ld; }
  bool contains(i64 r, i64 c) const { return detail::in_range(r, d_.rows) && detail::in_range(c, d_.cols); }
  Maybe<T> get(i64 r, i64 c) const {
    return contains(r, c) ? detail::Access::make<Maybe<T>>(detail::load_ro(d_.data + r * d_.ld + c)) : Maybe<T>();
  }
  Maybe<T> get(const ThreadIndex2D& i) const { return get(i.row(), i.col()); }
  T get_or(i64 r, i64 c, T fallback) const {
    return contains(r, c) ? detail::load_ro(d_.data + r * d_.ld + c) : fallback;
  }
  // Row r as a Span (empty when r is outside the matrix): reading neighbours along a row then
  // costs one bounds check and no multiplication each.
  Span<T> row(i64 r) const {
    const bool in = detail::in_range(r, d_.rows);
    return detail::Access::make<Span<T>>(detail::SpanDesc<const T>{d_.data + (in ? r * d_.ld : 0), in ? d_.cols : 0});
  }
  // The four neighbours of (r, c) when all of them are inside the matrix (then (r, c) is an
  // interior point), else nothing: one bounds check for the four reads.
  Maybe<Neighbours<T>> neighbours(i64 r, i64 c) const {
    if (!(r >= 1 && r + 1 < d_.rows && c >= 1 && c + 1 < d_.cols)) return Maybe<Neighbours<T>>();
    const T* p = d_.data + r * d_.ld + c;
    return detail::Access::make<Maybe<Neighbours<T>>>(Neighbours<T>{detail::load_ro(p - d_.ld), detail::load_ro(p + d_.ld),
                                                                     detail::load_ro(p - 1), detail::load_ro(p + 1)});
  }
  // The same as a call: f(neighbours) when (r, c) is interior; returns whether it was (the form
  // that compiles to plain branches: if (!in.with_neighbours(r, c, f)) ...boundary...).
  template <class F>
  bool with_neighbours(i64 r, i64 c, F&& f) const {
    if (!(r >= 1 && r + 1 < d_.rows && c >= 1 && c + 1 < d_.cols)) return false;
    const T* p = d_.data + r * d_.ld + c;
    f(Neighbours<T>{detail::load_ro(p - d_.ld), detail::load_ro(p + d_.ld), detail::load_ro(p - 1), detail::load_ro(p + 1)});
    return true;
  }
  T get_unchecked(unchecked_t, i64 r, i64 c) const {
#if !CTILE_SIMT_DEVICE
    if (!contains(r, c)) detail::out_of_bounds("Span2D::get_unchecked (row * cols + col)", r * d_.cols + c, d_.rows * d_.cols);
#endif
    return detail::load_ro(d_.data + r * d_.ld + c);
  }
  const T* data(unchecked_t) const { return d_.data; }

 private:
  friend struct detail::Access;
  explicit Span2D(const detail::Span2DDesc<const T>& d) : d_(d) {}
  detail::Span2DDesc<const T> d_;
};

// A scalar argument: the same value in every thread of the launch. Only the launch makes one.
template <class T>
class Uniform {
  static_assert(detail::is_element<T>::value, "Uniform<T>: T must be bool, an 8- to 64-bit integer, float or double");

 public:
  T get() const { return d_.value; }
  operator T() const { return d_.value; }  // NOLINT(google-explicit-constructor): reads like the value

 private:
  friend struct detail::Access;
  explicit Uniform(const detail::ValueDesc<T>& d) : d_(d) {}
  detail::ValueDesc<T> d_;
};

// The elements of a span in grid-stride order: this thread gets indices i, i + T, ... below the
// span's size (i = index_1d(), T = grid_threads()) with their values. The loop's own bound is the
// bounds check, so each element costs one comparison:
//   for (auto e : grid_stride(data)) bins.atomic_add(e.value, 1u);
template <class T>
class SpanStride {
 public:
  struct End {
    i64 n;
  };
  struct Iter {
    const T* p;
    i64 i, step;
    Element<T> operator*() const { return Element<T>{i, detail::load_ro(p + i)}; }
    Iter& operator++() {
      i += step;
      return *this;
    }
    bool operator!=(const End& e) const { return i < e.n; }
  };
  Iter begin() const { return Iter{p_, start_, step_}; }
  End end() const { return End{n_}; }

 private:
  friend struct detail::Access;
  SpanStride(const T* p, i64 start, i64 step, i64 n) : p_(p), start_(start), step_(step), n_(n) {}
  const T* p_;
  i64 start_, step_, n_;
};
template <class T>
inline SpanStride<T> grid_stride(const Span<T>& s) {
  return detail::Access::make<SpanStride<T>>(s.data(unchecked), detail::linear_thread(), grid_threads(), s.size());
}

namespace detail {
template <class T>
struct param_traits<Span<T>> {
  static constexpr bool is_param = true;
  using desc = SpanDesc<const T>;
  using element = T;
  static constexpr ParamKind kind = ParamKind::Read;
  static constexpr int rank = 1;
};
template <class T>
struct param_traits<Span2D<T>> {
  static constexpr bool is_param = true;
  using desc = Span2DDesc<const T>;
  using element = T;
  static constexpr ParamKind kind = ParamKind::Read;
  static constexpr int rank = 2;
};
template <class T>
struct param_traits<Uniform<T>> {
  static constexpr bool is_param = true;
  using desc = ValueDesc<T>;
  using element = T;
  static constexpr ParamKind kind = ParamKind::Value;
  static constexpr int rank = 0;
};
}  // namespace detail

}  // namespace ctile::simt
