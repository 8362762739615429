// "Maybe a value" and "maybe a reference": what a checked access returns, so that an index outside
// the buffer is a branch the kernel handles, never a wild access.
//
//   out.get_mut(i).set(x);                               // writes when i is inside out; returns whether
//   out.get_mut(i).apply([&](float& o) { o += x; });      // the same with read-modify-write
//   float v = in.get(i).value_or(0.0f);                   // reads with a fallback
//
// MaybeMut<T> has no operator* and no value(): the only ways to reach the element are set() and
// apply(), which check first. Writing through it without the check does not compile.
#pragma once

#include "ctile/simt/config.h"

namespace ctile::simt {

template <class T>
class Maybe {
 public:
  Maybe() = default;  // nothing
  explicit operator bool() const { return has_; }
  bool has_value() const { return has_; }
  T value_or(T fallback) const { return has_ ? v_ : fallback; }
  // Calls f(value) when there is one; returns whether it did.
  template <class F>
  bool apply(F&& f) const {
    if (has_) f(v_);
    return has_;
  }

 private:
  friend struct detail::Access;
  explicit Maybe(T v) : v_(v), has_(true) {}
  T v_;  // read only when has_ (left uninitialised otherwise: no stores for an empty Maybe)
  bool has_ = false;
};

template <class T>
class MaybeMut {
 public:
  explicit operator bool() const { return ok_; }
  bool has_value() const { return ok_; }
  // Writes v into the element when there is one; returns whether it did.
  bool set(T v) const {
    if (ok_) *p_ = v;
    return ok_;
  }
  // Calls f(T&) with the element when there is one; returns whether it did.
  template <class F>
  bool apply(F&& f) const {
    if (ok_) f(*p_);
    return ok_;
  }
  // Reads the element (this thread's own), or `fallback`.
  T value_or(T fallback) const { return ok_ ? *p_ : fallback; }

  MaybeMut(const MaybeMut&) = delete;  // it stays where get_mut() made it
  MaybeMut& operator=(const MaybeMut&) = delete;
  MaybeMut* operator&() const = delete;

 private:
  friend struct detail::Access;
  // `ok` is the very bounds check that made p: the compiler folds the two tests into one.
  MaybeMut(T* p, bool ok) : p_(p), ok_(ok) {}
  T* p_;
  bool ok_;
};

}  // namespace ctile::simt
