// The mutable outputs of a SIMT kernel. The host passes a Tensor<T> (moved in: the launch owns it
// exclusively until the work completes).
//
//   DisjointSpan<T, Idx>    1-D; Idx is the index space it is disjoint over: ThreadIndex (the
//                           default: index_1d(), grid_stride()), BlockIndex (one element per
//                           block: block_leader()), WarpIndex (one per warp: warp_leader()) or
//                           Vec4Index (four consecutive elements per thread: index_1d_vec4())
//   DisjointSpan2D<T, Idx>  2-D (rows x cols, row stride ld); Idx is ThreadIndex2D (index_2d())
//                           or a TileIndex<R, C, transposed> (tile_2d(), tile_2d_transposed())
//
// get_mut(token) is the only safe way to write, and it takes a token of the span's own index
// type: no two threads hold tokens naming one element, so these writes never race. It returns a
// MaybeMut (maybe.h): a token outside the span (the grid's last, partial block) writes nothing.
//
//   out.get_mut(i).set(a.get_or(i, 0.0f) + b.get_or(i, 0.0f));
//
// Everything else is marked ctile::unchecked: get_unchecked_mut(unchecked, i) (any element; no
// bounds check on the GPU, checked and race-checked on the CPU) and data(unchecked). Spans cannot
// be copied or moved (a second handle would be a second writer); pass them by reference.
#pragma once

#include "ctile/simt/elem_ref.h"
#include "ctile/simt/span.h"

namespace ctile::simt {

namespace detail {
template <class Idx>
struct is_index_1d {
  static constexpr bool value = same<Idx, ThreadIndex>::value || same<Idx, BlockIndex>::value ||
                                same<Idx, WarpIndex>::value || same<Idx, Vec4Index>::value;
};
template <class Idx>
struct is_index_2d {
  static constexpr bool value = same<Idx, ThreadIndex2D>::value;
};
template <int R, int C, bool T>
struct is_index_2d<TileIndex<R, C, T>> {
  static constexpr bool value = true;
};
inline bool token_valid(const ThreadIndex&) { return true; }
inline bool token_valid(const BlockIndex& b) { return b.valid(); }
inline bool token_valid(const WarpIndex& w) { return w.valid(); }

#if !CTILE_SIMT_DEVICE
// get_mut writes are disjoint by construction; the race checker still sees them, in case an
// unchecked access of another thread reaches the same element.
template <class T>
void note_write(T* p) {
  ThreadState& t = current("DisjointSpan::get_mut");
  if (t.race_check) record_access(t, Space::Global, p, sizeof(T), AccessKind::Write);
}
#endif
}  // namespace detail

template <class T, class Idx = ThreadIndex>
class DisjointSpan {
  static_assert(detail::is_element<T>::value,
                "DisjointSpan<T>: T must be bool, an 8- to 64-bit integer, float or double");
  static_assert(detail::is_index_1d<Idx>::value,
                "DisjointSpan<T, Idx>: Idx must be ThreadIndex, BlockIndex or WarpIndex (a 2-D index needs "
                "DisjointSpan2D)");

 public:
  DisjointSpan(const DisjointSpan&) = delete;  // one writer per element: pass it by reference
  DisjointSpan& operator=(const DisjointSpan&) = delete;
  DisjointSpan(DisjointSpan&&) = delete;
  DisjointSpan& operator=(DisjointSpan&&) = delete;

  i64 size() const { return d_.size; }
  MaybeMut<T> get_mut(const Idx& i) const {
    const i64 k = i.get();
    const bool ok = detail::token_valid(i) && detail::in_range(k, d_.size);
#if !CTILE_SIMT_DEVICE
    if (ok) detail::note_write(d_.data + k);
#endif
    return detail::Access::make<MaybeMut<T>>(d_.data + k, ok);
  }
  // This token's own element (what get_mut writes), or nothing.
  Maybe<T> get(const Idx& i) const {
    const i64 k = i.get();
    if (!detail::token_valid(i) || !detail::in_range(k, d_.size)) return Maybe<T>();
    return detail::Access::make<Maybe<T>>(d_.data[k]);
  }
  detail::elem_ref<T> get_unchecked_mut(unchecked_t, i64 i) const {
#if CTILE_SIMT_DEVICE
    return d_.data[i];
#else
    if (!detail::in_range(i, d_.size)) detail::out_of_bounds("DisjointSpan::get_unchecked_mut", i, d_.size);
    return detail::elem_ref<T>(d_.data + i, detail::Space::Global);
#endif
  }
  T* data(unchecked_t) const { return d_.data; }

 private:
  friend struct detail::Access;
  explicit DisjointSpan(const detail::SpanDesc<T>& d) : d_(d) {}
  detail::SpanDesc<T> d_;
};

// The elements a Vec4Index names in a DisjointSpan<T, Vec4Index>: all four, the ones inside the
// span (the output's last group), or none.
template <class T>
class MaybeMutVec4 {
 public:
  explicit operator bool() const { return n_ > 0; }
  bool has_value() const { return n_ > 0; }
  int count() const { return n_; }  // elements inside the span: 0 to 4
  // Writes v.x, v.y, v.z, v.w into the elements there are (one 16-byte store when all four are
  // there and element 4q is 16-byte aligned); returns whether it wrote any.
  bool set(const Vec4<T>& v) const {
#if CTILE_SIMT_DEVICE
    if (n_ == 4 && ((u64)p_ % 16) == 0) {
      *reinterpret_cast<uint4*>(p_) = make_uint4(detail::bit_cast<u32>(v.x), detail::bit_cast<u32>(v.y),
                                                 detail::bit_cast<u32>(v.z), detail::bit_cast<u32>(v.w));
      return true;
    }
#endif
    const T e[4] = {v.x, v.y, v.z, v.w};
    for (int k = 0; k < n_; ++k) p_[k] = e[k];
    return n_ > 0;
  }

  MaybeMutVec4(const MaybeMutVec4&) = delete;  // it stays where get_mut() made it
  MaybeMutVec4& operator=(const MaybeMutVec4&) = delete;
  MaybeMutVec4* operator&() const = delete;

 private:
  friend struct detail::Access;
  MaybeMutVec4(T* p, int n) : p_(p), n_(n) {}
  T* p_;
  int n_;
};

// A 1-D output written four elements at a time: the token q (index_1d_vec4()) names elements
// [4q, 4q + 4), and get_mut(q) returns those of them inside the span. 4-byte elements only.
template <class T>
class DisjointSpan<T, Vec4Index> {
  static_assert(detail::is_element<T>::value && sizeof(T) == 4,
                "DisjointSpan<T, Vec4Index>: vector stores need a 4-byte element type (float, i32, u32)");

 public:
  DisjointSpan(const DisjointSpan&) = delete;  // one writer per element: pass it by reference
  DisjointSpan& operator=(const DisjointSpan&) = delete;
  DisjointSpan(DisjointSpan&&) = delete;
  DisjointSpan& operator=(DisjointSpan&&) = delete;

  i64 size() const { return d_.size; }
  MaybeMutVec4<T> get_mut(const Vec4Index& q) const {
    const i64 i = q.first();
    const i64 left = d_.size - i;
    const int n = (q.get() < 0 || left <= 0) ? 0 : left >= 4 ? 4 : static_cast<int>(left);
#if !CTILE_SIMT_DEVICE
    for (int k = 0; k < n; ++k) detail::note_write(d_.data + i + k);
#endif
    return detail::Access::make<MaybeMutVec4<T>>(d_.data + (n > 0 ? i : 0), n);
  }
  detail::elem_ref<T> get_unchecked_mut(unchecked_t, i64 i) const {
#if CTILE_SIMT_DEVICE
    return d_.data[i];
#else
    if (!detail::in_range(i, d_.size)) detail::out_of_bounds("DisjointSpan::get_unchecked_mut", i, d_.size);
    return detail::elem_ref<T>(d_.data + i, detail::Space::Global);
#endif
  }
  T* data(unchecked_t) const { return d_.data; }

 private:
  friend struct detail::Access;
  explicit DisjointSpan(const detail::SpanDesc<T>& d) : d_(d) {}
  detail::SpanDesc<T> d_;
};

template <class T, class Idx = ThreadIndex2D>
class DisjointSpan2D {
  static_assert(detail::is_element<T>::value,
                "DisjointSpan2D<T>: T must be bool, an 8- to 64-bit integer, float or double");
  static_assert(detail::is_index_2d<Idx>::value,
                "DisjointSpan2D<T, Idx>: Idx must be ThreadIndex2D or a TileIndex<R, C, transposed>");

 public:
  DisjointSpan2D(const DisjointSpan2D&) = delete;
  DisjointSpan2D& operator=(const DisjointSpan2D&) = delete;
  DisjointSpan2D(DisjointSpan2D&&) = delete;
  DisjointSpan2D& operator=(DisjointSpan2D&&) = delete;

  i64 rows() const { return d_.rows; }
  i64 cols() const { return d_.cols; }
  i64 ld() const { return d_.ld; }
  MaybeMut<T> get_mut(const Idx& i) const {
    const bool ok = contains(i.row(), i.col());
    T* p = d_.data + i.row() * d_.ld + i.col();
#if !CTILE_SIMT_DEVICE
    if (ok) detail::note_write(p);
#endif
    return detail::Access::make<MaybeMut<T>>(p, ok);
  }
  Maybe<T> get(const Idx& i) const {
    if (!contains(i.row(), i.col())) return Maybe<T>();
    return detail::Access::make<Maybe<T>>(d_.data[i.row() * d_.ld + i.col()]);
  }
  detail::elem_ref<T> get_unchecked_mut(unchecked_t, i64 r, i64 c) const {
#if CTILE_SIMT_DEVICE
    return d_.data[r * d_.ld + c];
#else
    if (!contains(r, c))
      detail::out_of_bounds("DisjointSpan2D::get_unchecked_mut (row * cols + col)", r * d_.cols + c, d_.rows * d_.cols);
    return detail::elem_ref<T>(d_.data + r * d_.ld + c, detail::Space::Global);
#endif
  }
  T* data(unchecked_t) const { return d_.data; }

 private:
  friend struct detail::Access;
  bool contains(i64 r, i64 c) const { return detail::in_range(r, d_.rows) && detail::in_range(c, d_.cols); }
  explicit DisjointSpan2D(const detail::Span2DDesc<T>& d) : d_(d) {}
  detail::Span2DDesc<T> d_;
};

// Raw access to a whole buffer, every element from every thread: the host passes an
// UncheckedTensor<T> (ctile::unchecked_mut(ctile::unchecked, std::move(t))), and every access takes
// the tag. Nothing stops two threads from writing one element; the CPU backend's race checker
// (race_check()) reports it.
template <class T>
class UncheckedPtr {
  static_assert(detail::is_element<T>::value,
                "UncheckedPtr<T>: T must be bool, an 8- to 64-bit integer, float or double");

 public:
  UncheckedPtr(const UncheckedPtr&) = delete;
  UncheckedPtr& operator=(const UncheckedPtr&) = delete;

  i64 size() const { return d_.size; }
  detail::elem_ref<T> at(unchecked_t, i64 i) const {
#if CTILE_SIMT_DEVICE
    return d_.data[i];
#else
    if (!detail::in_range(i, d_.size)) detail::out_of_bounds("UncheckedPtr::at", i, d_.size);
    return detail::elem_ref<T>(d_.data + i, detail::Space::Global);
#endif
  }
  T* data(unchecked_t) const { return d_.data; }

 private:
  friend struct detail::Access;
  explicit UncheckedPtr(const detail::SpanDesc<T>& d) : d_(d) {}
  detail::SpanDesc<T> d_;
};

namespace detail {
template <class T, class Idx>
struct param_traits<DisjointSpan<T, Idx>> {
  static constexpr bool is_param = true;
  using desc = SpanDesc<T>;
  using element = T;
  static constexpr ParamKind kind = ParamKind::Write;
  static constexpr int rank = 1;
};
template <class T, class Idx>
struct param_traits<DisjointSpan2D<T, Idx>> {
  static constexpr bool is_param = true;
  using desc = Span2DDesc<T>;
  using element = T;
  static constexpr ParamKind kind = ParamKind::Write;
  static constexpr int rank = 2;
};
template <class T>
struct param_traits<UncheckedPtr<T>> {
  static constexpr bool is_param = true;
  using desc = SpanDesc<T>;
  using element = T;
  static constexpr ParamKind kind = ParamKind::Unchecked;
  static constexpr int rank = 1;
};
}  // namespace detail

}  // namespace ctile::simt
