// What an unchecked element access returns: a T& on the GPU; on the CPU a proxy that checks the
// index against its buffer and tells the race checker about every read and write.
//
// The proxy is usable only as a temporary (every member is &&-qualified): `s[i] = v`, `s[i] += v`,
// `float x = s[i]`, `s[i] = s[j]` work; naming it (`auto r = s[i]; r = v;`) or binding a
// reference to it does not compile on the host. That is deliberate: on the GPU `auto r = s[i]`
// copies the value, so host and device would disagree about what `r = v` writes.
#pragma once

#include "ctile/simt/config.h"

#if !CTILE_SIMT_DEVICE
#include <utility>
#endif

namespace ctile::simt::detail {

#if CTILE_SIMT_DEVICE
template <class T>
using elem_ref = T&;
#else
template <class T>
class ElemRef {
 public:
  ElemRef(T* p, Space space) : p_(p), space_(space) {}
  ElemRef(const ElemRef&) = delete;
  ElemRef& operator=(const ElemRef&) = delete;
  const ElemRef* operator&() const = delete;

  operator T() const&& { return read(); }  // NOLINT(google-explicit-constructor)
  T operator=(T v) && { return write(v); }
  T operator=(ElemRef&& o) && { return write(std::move(o).read()); }
  T operator+=(T v) && { return write(read() + v); }
  T operator-=(T v) && { return write(read() - v); }
  T operator*=(T v) && { return write(read() * v); }
  T operator/=(T v) && { return write(read() / v); }
  T operator%=(T v) && { return write(read() % v); }
  T operator&=(T v) && { return write(read() & v); }
  T operator|=(T v) && { return write(read() | v); }
  T operator^=(T v) && { return write(read() ^ v); }
  T operator<<=(int v) && { return write(read() << v); }
  T operator>>=(int v) && { return write(read() >> v); }
  T operator++() && { return write(read() + 1); }
  T operator--() && { return write(read() - 1); }
  T operator++(int) && {
    const T old = read();
    write(old + 1);
    return old;
  }
  T operator--(int) && {
    const T old = read();
    write(old - 1);
    return old;
  }

 private:
  T read() const {
    note(AccessKind::Read);
    return *p_;
  }
  T write(T v) const {
    note(AccessKind::Write);
    *p_ = v;
    return v;
  }
  void note(AccessKind k) const {
    ThreadState& t = current("an unchecked element access");
    if (t.race_check) record_access(t, space_, p_, sizeof(T), k);
  }
  T* p_;
  Space space_;
};
template <class T>
using elem_ref = ElemRef<T>;
#endif

}  // namespace ctile::simt::detail
