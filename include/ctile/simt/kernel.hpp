// Defining a SIMT kernel: CTILE_SIMT_KERNEL (host only).
//
//   CTILE_SIMT_KERNEL(vector_add,                                         // name
//       (DisjointSpan<float> out, Span<float> a, Span<float> b),          // parameters
//       Contract().block(256),                                            // launch contract
//       (out.size() == a.size(), a.size() == b.size()),                   // requires (or ())
//   {                                                                     // body: one thread
//     auto i = index_1d();
//     out.get_mut(i).set(a.get_or(i, 0.0f) + b.get_or(i, 0.0f));
//   })
//
// The body is ordinary per-thread C++ written once. The host compiler compiles it (so it is
// type-checked when the program is built, and the CPU backend runs it thread by thread with the
// race checker), and the macro also keeps its text, which ctile compiles with NVRTC for the GPU
// on the first launch there. Both see the same ctile::simt headers (include/ctile/simt/*.h), with
// `using namespace ctile::simt` in effect.
//
// What the body may use: its parameters, ctile::simt, the built-in types, CUDA's math functions
// that the host also has (sqrtf, expf, fmaf, ...), lambdas and local types. It must not use the
// rest of the translation unit (other functions, globals, macros, headers): the GPU compile sees
// only the captured text. A name that exists only on the host is an NVRTC error at the kernel's
// file:line (compile_only(), and the CI test that compiles every kernel, show it before a GPU is
// involved). Preprocessor directives cannot appear inside a macro argument.
//
// Parameters must be SIMT parameter types: DisjointSpan, DisjointSpan2D, AtomicSpan, Span,
// Span2D, Uniform, UncheckedPtr. The requires relations are C++ expressions over the parameters,
// evaluated on the host by prepare(); they may use sizes (size(), rows(), cols(), ld()) and Uniform
// values, not elements. Once checked, they are also facts for the GPU compiler (docs/simt.md).
#pragma once

#include <string>
#include <type_traits>
#include <vector>

#include "ctile/core/dtype.hpp"
#include "ctile/simt/contract.hpp"
#include "ctile/simt/simt.h"

namespace ctile::simt {

namespace detail {

// The requires relations' results (at most 31; the first is always true).
struct Requirements {
  bool ok[32];
};

struct ParamInfo {
  ParamKind kind;
  DType dtype;
  int rank;           // 1 or 2 for tensors, 0 for a Uniform
  std::string type;   // "DisjointSpan<f32>"
  std::string name;   // "out"
};

// A kernel as the runtime sees it (one per kernel, made on first use).
struct KernelInfo {
  std::string name, file;
  int line = 0;
  std::string params_text, body_text, requires_text;
  Contract contract;
  std::vector<ParamInfo> params;
  std::vector<std::string> relations;  // the requires text, one entry per relation
  std::size_t pack_bytes = 0;
  std::vector<std::size_t> desc_offsets;  // of each parameter's descriptor in the pack
  void (*thread_entry)(const void* pack) = nullptr;                 // one thread of the body
  Requirements (*requirements)(const void* pack) = nullptr;         // the relations (host descriptors)
  const void* id = nullptr;                                         // identity for caches
  // "SIMT kernel 'vector_add' (examples/simt_kernels.hpp:12)"
  [[nodiscard]] std::string describe() const;
};

// Fills params[i].name and relations from the texts; checks what the macro could not.
void finish_kernel_info(KernelInfo& k);

template <class P>
struct param_type_name;
template <class T, class I>
struct param_type_name<DisjointSpan<T, I>> {
  static std::string get() {
    std::string idx = same<I, ThreadIndex>::value  ? ""
                      : same<I, BlockIndex>::value ? ", BlockIndex"
                      : same<I, Vec4Index>::value  ? ", Vec4Index"
                                                   : ", WarpIndex";
    return "DisjointSpan<" + std::string(dtype_name(dtype_of<T>)) + idx + ">";
  }
};
template <class T, class I>
struct param_type_name<DisjointSpan2D<T, I>> {
  static std::string get() { return "DisjointSpan2D<" + std::string(dtype_name(dtype_of<T>)) + ">"; }
};
template <class T, class S>
struct param_type_name<AtomicSpan<T, S>> {
  static std::string get() {
    return "AtomicSpan<" + std::string(dtype_name(dtype_of<T>)) + (same<S, scope::System>::value ? ", System>" : ">");
  }
};
template <class T>
struct param_type_name<Span<T>> {
  static std::string get() { return "Span<" + std::string(dtype_name(dtype_of<T>)) + ">"; }
};
template <class T>
struct param_type_name<Span2D<T>> {
  static std::string get() { return "Span2D<" + std::string(dtype_name(dtype_of<T>)) + ">"; }
};
template <class T>
struct param_type_name<Uniform<T>> {
  static std::string get() { return "Uniform<" + std::string(dtype_name(dtype_of<T>)) + ">"; }
};
template <class T>
struct param_type_name<UncheckedPtr<T>> {
  static std::string get() { return "UncheckedPtr<" + std::string(dtype_name(dtype_of<T>)) + ">"; }
};

template <class P>
constexpr bool check_param() {
  static_assert(param_traits<std::remove_cv_t<P>>::is_param,
                "CTILE_SIMT_KERNEL: every parameter must be a SIMT parameter type (DisjointSpan<T>, DisjointSpan2D<T>, "
                "AtomicSpan<T>, Span<T>, Span2D<T>, Uniform<T>, UncheckedPtr<T>), passed by value; raw pointers and "
                "plain scalars are not parameters (use UncheckedPtr<T> and Uniform<T>)");
  return true;
}

template <class... P>
constexpr bool signature_ok(void (*)(P...)) {
  return (check_param<P>() && ...);
}

template <class Def, class... P>
KernelInfo make_kernel_info(void (*)(P...)) {
  KernelInfo k;
  k.name = Def::name;
  k.file = Def::file;
  k.line = Def::line;
  k.params_text = Def::params_text;
  k.body_text = Def::body_text;
  k.requires_text = Def::requires_text;
  k.contract = Def::contract();
  k.params = {ParamInfo{param_traits<P>::kind, dtype_of<typename param_traits<P>::element>, param_traits<P>::rank,
                        param_type_name<P>::get(), ""}...};
  k.pack_bytes = sizeof(pack_t<void(P...)>);
  [&]<int... I>(ints<I...>) {
    const pack_t<void(P...)> probe{};
    const char* base = reinterpret_cast<const char*>(&probe);
    k.desc_offsets = {static_cast<std::size_t>(reinterpret_cast<const char*>(&PackGet<I>::get(probe)) - base)...};
  }(typename make_ints<sizeof...(P)>::type{});
  k.thread_entry = [](const void* pack) { invoke(&Def::body, *static_cast<const pack_t<void(P...)>*>(pack)); };
  k.requirements = [](const void* pack) -> Requirements {
    const auto& p = *static_cast<const pack_t<void(P...)>*>(pack);
    return [&]<int... I>(ints<I...>) { return Def::requirements(Access::param<P>(PackGet<I>::get(p))...); }(
        typename make_ints<sizeof...(P)>::type{});
  };
  static const int anchor = 0;
  k.id = &anchor;
  finish_kernel_info(k);
  return k;
}

}  // namespace detail

// A SIMT kernel: the object CTILE_SIMT_KERNEL defines. Pass it to prepare() or compile_only().
template <class Def>
struct Kernel {
  using definition = Def;
  using signature = typename Def::signature;
  [[nodiscard]] static const detail::KernelInfo& info() {
    static const detail::KernelInfo k = detail::make_kernel_info<Def>(static_cast<signature*>(nullptr));
    return k;
  }
};

}  // namespace ctile::simt

#define CTILE_SIMT_UNPAREN(...) __VA_ARGS__

// See the top of this file. PARAMS and REQUIRES are parenthesised lists; the body comes last.
#define CTILE_SIMT_KERNEL(NAME, PARAMS, CONTRACT, REQUIRES, ...)                                           \
  namespace ctile_simt_kernel_##NAME {                                                                     \
  using namespace ::ctile::simt;                                                                           \
  struct Def {                                                                                             \
    using signature = void PARAMS;                                                                         \
    static constexpr const char* name = #NAME;                                                             \
    static constexpr const char* file = __FILE__;                                                          \
    static constexpr int line = __LINE__;                                                                  \
    static constexpr const char* params_text = #PARAMS;                                                    \
    static constexpr const char* body_text = #__VA_ARGS__;                                                 \
    static constexpr const char* requires_text = #REQUIRES;                                                \
    static ::ctile::simt::Contract contract() { return CONTRACT; }                                         \
    /* a parameter may serve only the requires relations, or only the GPU: no unused-parameter warnings */ \
    _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wunused-parameter\"")                \
    static void body PARAMS __VA_ARGS__                                                                    \
    static ::ctile::simt::detail::Requirements requirements PARAMS {                                       \
      return ::ctile::simt::detail::Requirements{{true, CTILE_SIMT_UNPAREN REQUIRES}};                     \
    }                                                                                                      \
    _Pragma("GCC diagnostic pop")                                                                          \
  };                                                                                                       \
  inline constexpr bool params_ok = ::ctile::simt::detail::signature_ok(static_cast<Def::signature*>(nullptr)); \
  }                                                                                                        \
  inline constexpr ::ctile::simt::Kernel<ctile_simt_kernel_##NAME::Def> NAME {};
