// Tracing a kernel function into IR: one trace per specialisation (parameter kinds, element types,
// ranks, tile shapes of the outputs, trace-time constants, grid rank).
#pragma once

#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "ctile/frontend/control.hpp"
#include "ctile/frontend/params.hpp"

namespace ctile {

namespace detail {

// What each kernel parameter type is, for tracing and for launch validation.
template <class P>
struct param_traits {
  static constexpr bool is_param = false;
};
template <Element T, int N, std::int64_t... D>
struct param_traits<Mut<T, N, D...>> {
  static constexpr bool is_param = true;
  static constexpr ParamSpec::Kind kind = ParamSpec::Kind::Piece;
  using element = T;
  static constexpr int rank = N;
  static Mut<T, N, D...> make(ValueId v, const ParamSpec& s) { return Mut<T, N, D...>(v, s.tile_shape); }
  static Shape static_tile() { return Shape{D...}; }
};
template <Element T, int N>
struct param_traits<Ref<T, N>> {
  static constexpr bool is_param = true;
  static constexpr ParamSpec::Kind kind = ParamSpec::Kind::Read;
  using element = T;
  static constexpr int rank = N;
  static Ref<T, N> make(ValueId v, const ParamSpec&) { return Ref<T, N>(v); }
};
template <Element T, int N>
struct param_traits<Atomic<T, N>> {
  static constexpr bool is_param = true;
  static constexpr ParamSpec::Kind kind = ParamSpec::Kind::Atomic;
  using element = T;
  static constexpr int rank = N;
  static Atomic<T, N> make(ValueId v, const ParamSpec&) { return Atomic<T, N>(v); }
};
template <Element T, int N>
struct param_traits<UncheckedMut<T, N>> {
  static constexpr bool is_param = true;
  static constexpr ParamSpec::Kind kind = ParamSpec::Kind::Unchecked;
  using element = T;
  static constexpr int rank = N;
  static UncheckedMut<T, N> make(ValueId v, const ParamSpec&) { return UncheckedMut<T, N>(v); }
};
template <Element T>
struct param_traits<Scalar<T>> {
  static constexpr bool is_param = true;
  static constexpr ParamSpec::Kind kind = ParamSpec::Kind::Scalar;
  using element = T;
  static constexpr int rank = 0;
  static Scalar<T> make(ValueId v, const ParamSpec&) { return Scalar<T>(v, SourceLoc{}); }
};
template <Element T>
struct param_traits<Const<T>> {
  static constexpr bool is_param = true;
  static constexpr ParamSpec::Kind kind = ParamSpec::Kind::Const;
  using element = T;
  static constexpr int rank = 0;
  static Const<T> make(ValueId, const ParamSpec& s) {
    if constexpr (is_narrow_float_element<T>) return Const<T>(T(static_cast<float>(s.const_value.f)));
    else if constexpr (std::is_floating_point_v<T>) return Const<T>(static_cast<T>(s.const_value.f));
    else return Const<T>(static_cast<T>(s.const_value.i));
  }
};

std::string param_kind_name(ParamSpec::Kind k);

// A kernel written as a lambda. A lambda without captures converts to a function pointer, but
// template argument deduction never considers conversions, so a template taking `void (*)(P...)`
// does not accept the lambda itself (hence the old `+[](...) {...}` idiom). The launch entry points
// take the lambda as a class type and convert it here. Kernels are traced through a function
// pointer, so a lambda that captures (or has `auto` parameters) cannot be one.
template <class F>
struct is_kernel_function_pointer : std::false_type {};
template <class... P>
struct is_kernel_function_pointer<void (*)(P...)> : std::true_type {};

template <class F>
concept KernelLambda = std::is_class_v<F> && requires(const F& f) { +f; } &&
                       is_kernel_function_pointer<decltype(+std::declval<const F&>())>::value;

template <class F>
inline constexpr bool always_false = false;

// The function pointer of a kernel lambda; any other class type is a compile error that says why.
template <class F>
auto kernel_function(const F& f) {
  if constexpr (KernelLambda<F>) {
    return +f;
  } else {
    static_assert(always_false<F>,
                  "ctile: a kernel lambda must not capture anything and must not have auto parameters (kernels are "
                  "traced through a function pointer): pass values as Scalar<T> or Const<T> parameters");
    return static_cast<void (*)()>(nullptr);
  }
}

// Creates the kernel, its parameters and the trace context; `run` calls the user's function.
struct TraceSession {
  TraceSession(std::string name, int grid_rank, const std::vector<ParamSpec>& specs);
  std::shared_ptr<ir::Kernel> kernel;
  std::unique_ptr<TraceContext> ctx;
  std::vector<ValueId> values;  // per C++ parameter (kNoValue for Const)
  // Closes the body, checks for unfinished constructs and verifies the IR.
  std::shared_ptr<const ir::Kernel> finish();
};

template <class... P, std::size_t... I>
void call_traced(void (*fn)(P...), const TraceSession& s, const std::vector<ParamSpec>& specs, std::index_sequence<I...>) {
  fn(param_traits<P>::make(s.values[I], specs[I])...);
}

}  // namespace detail

// Traces `fn` for one specialisation and returns verified IR. Throws UserError for kernel mistakes.
template <class... P>
std::shared_ptr<const ir::Kernel> trace(void (*fn)(P...), const std::string& name,
                                        const std::vector<detail::ParamSpec>& specs, int grid_rank) {
  static_assert((detail::param_traits<P>::is_param && ...),
                "ctile: every kernel parameter must be Mut<T,N>, Ref<T,N>, Atomic<T,N>, UncheckedMut<T,N>, Scalar<T> "
                "or Const<T>");
  detail::TraceSession s(name, grid_rank, specs);
  {
    detail::TraceScope scope(*s.ctx);
    detail::call_traced(fn, s, specs, std::index_sequence_for<P...>{});
  }
  return s.finish();
}

}  // namespace ctile
