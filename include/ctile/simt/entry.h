// How a kernel's parameters travel: one descriptor per parameter (span.h), packed in a struct with
// the same layout on the host and the device, passed as the kernel's only argument. invoke() builds
// the parameter objects from their descriptors (each a prvalue: the types cannot be copied) and
// calls the kernel body; the GPU entry point and the CPU emulator both use it.
#pragma once

#include "ctile/simt/span.h"

namespace ctile::simt::detail {

template <class... D>
struct Pack;
template <>
struct Pack<> {};
template <class D0, class... D>
struct Pack<D0, D...> {
  D0 head;
  Pack<D...> tail;
};

template <int I>
struct PackGet {
  template <class P>
  static const auto& get(const P& p) {
    return PackGet<I - 1>::get(p.tail);
  }
  template <class P>
  static auto& get(P& p) {
    return PackGet<I - 1>::get(p.tail);
  }
};
template <>
struct PackGet<0> {
  template <class P>
  static const auto& get(const P& p) {
    return p.head;
  }
  template <class P>
  static auto& get(P& p) {
    return p.head;
  }
};

template <class F>
struct signature;
template <class... P>
struct signature<void(P...)> {
  using pack = Pack<typename param_traits<P>::desc...>;
  static constexpr int count = sizeof...(P);
};
template <class F>
using pack_t = typename signature<F>::pack;

template <int... I>
struct ints {};
template <int N, int... I>
struct make_ints : make_ints<N - 1, N - 1, I...> {};
template <int... I>
struct make_ints<0, I...> {
  using type = ints<I...>;
};

template <class... P, int... I>
inline void invoke_with(void (*body)(P...), const Pack<typename param_traits<P>::desc...>& p, ints<I...>) {
  body(Access::param<P>(PackGet<I>::get(p))...);
}
// Calls body(P0(desc0), P1(desc1), ...).
template <class... P>
inline void invoke(void (*body)(P...), const Pack<typename param_traits<P>::desc...>& p) {
  invoke_with(body, p, typename make_ints<sizeof...(P)>::type{});
}

// The I-th parameter type of a kernel signature, and that parameter made from its descriptor (the
// generated GPU entry point calls the body with these, so the call inlines).
template <int I, class... P>
struct nth;
template <class P0, class... P>
struct nth<0, P0, P...> {
  using type = P0;
};
template <int I, class P0, class... P>
struct nth<I, P0, P...> {
  using type = typename nth<I - 1, P...>::type;
};
template <class F, int I>
struct param_at;
template <class... P, int I>
struct param_at<void(P...), I> {
  using type = typename nth<I, P...>::type;
};
template <class F, int I>
inline typename param_at<F, I>::type make_param(const pack_t<F>& p) {
  return Access::param<typename param_at<F, I>::type>(PackGet<I>::get(p));
}

}  // namespace ctile::simt::detail
