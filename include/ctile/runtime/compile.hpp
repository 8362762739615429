// Compiling without launching.
//
// Argument specs describe a launch's arguments without data: element type, shape, strides and
// alignment (from which the specialisation facts follow, ir::TensorFacts), the tile shape of a
// partition. With them,
//
//   ctile::compile_only(kernel, ctile::CompileOptions{.arch = "sm_90a"}, specs...)
//       traces the kernel and compiles it with NVRTC for the given architecture: IR text, CUDA
//       source, PTX, cubin, block size and shared memory. No GPU is needed (NVRTC only).
//   ctile::warm_up(kernel, specs...)            (the default device)
//   ctile::warm_up_on(device_or_stream, kernel, specs...)
//       traces and compiles the kernel into the in-memory cache that launch() uses (on a GPU also
//       through the disk cache), so a later launch whose arguments match the specs compiles nothing.
//
// Specs, by parameter kind (each defaults to an aligned, contiguous, row-major tensor):
//   Mut<T, N>           ctile::spec::partition<T>(shape, tile)
//   Ref<T, N>           ctile::spec::shared<T>(shape)
//   Atomic<T, N>        ctile::spec::tensor<T>(shape)
//   UncheckedMut<T, N>  ctile::spec::unchecked<T>(shape)
//   Scalar<T>           a C++ number of the parameter's kind (any value: it is not specialised on)
//   Const<T>            a C++ number of the parameter's kind (the value is part of the specialisation)
// `.strides({...})` (elements) and `.misaligned()` describe other views, e.g. a slice that starts at
// element 1; `.facts(f)` sets the facts directly. Kinds and element types are checked at compile
// time like launch() checks its arguments; ranks and tile shapes at run time (UserError naming the
// kernel and the argument).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "ctile/runtime/device.hpp"
#include "ctile/runtime/launch.hpp"
#include "ctile/runtime/stream.hpp"

namespace ctile {

namespace spec {

// Which handle a spec stands for (and so which parameter kind it fits).
enum class Handle : std::uint8_t {
  Partition,  // Partition<T> for Mut<T, N>
  Shared,     // Shared<T> for Ref<T, N>
  Tensor,     // Tensor<T> for Atomic<T, N>
  Unchecked,  // UncheckedTensor<T> for UncheckedMut<T, N>
};

// A tensor argument without data. Modifiers return a changed copy:
//   spec::shared<float>({1024}).misaligned()
//   spec::partition<float>({64, 64}, {16, 16}).strides({128, 1})
template <Element T, Handle H>
class TensorSpec {
 public:
  using element_type = T;
  static constexpr Handle handle = H;

  explicit TensorSpec(Shape shape, Shape tile = {})
      : shape_(std::move(shape)), tile_(std::move(tile)), strides_(contiguous_strides(shape_)) {}

  const Shape& shape() const { return shape_; }
  const Shape& tile() const { return tile_; }  // Partition specs
  const Shape& strides() const { return strides_; }
  bool aligned16() const { return aligned_; }
  const std::optional<ir::TensorFacts>& facts_override() const { return facts_; }
  // The facts this spec specialises on: those set with facts(f), else those a tensor of this
  // shape, these strides and this alignment has (detail::tensor_facts).
  ir::TensorFacts facts() const { return facts_ ? *facts_ : detail::tensor_facts(aligned_, shape_, strides_); }

  // Strides in elements (>= 0), one per axis; the default is row-major.
  TensorSpec strides(Shape s) const {
    TensorSpec c = *this;
    c.strides_ = std::move(s);
    return c;
  }
  // Element 0 is not on a 16-byte boundary (a view that starts at element 1, foreign memory).
  TensorSpec misaligned() const { return aligned(false); }
  TensorSpec aligned(bool on) const {
    TensorSpec c = *this;
    c.aligned_ = on;
    return c;
  }
  // Exactly these facts, whatever the shape, strides and alignment say.
  TensorSpec facts(ir::TensorFacts f) const {
    TensorSpec c = *this;
    c.facts_ = f;
    return c;
  }

 private:
  Shape shape_;
  Shape tile_;
  Shape strides_;
  bool aligned_ = true;
  std::optional<ir::TensorFacts> facts_;
};

// For a Mut<T, N> parameter: a tensor of `shape` partitioned into tiles of `tile`.
template <Element T>
TensorSpec<T, Handle::Partition> partition(Shape shape, Shape tile) {
  return TensorSpec<T, Handle::Partition>(std::move(shape), std::move(tile));
}
// For a Ref<T, N> parameter.
template <Element T>
TensorSpec<T, Handle::Shared> shared(Shape shape) {
  return TensorSpec<T, Handle::Shared>(std::move(shape));
}
// For an Atomic<T, N> parameter.
template <Element T>
TensorSpec<T, Handle::Tensor> tensor(Shape shape) {
  return TensorSpec<T, Handle::Tensor>(std::move(shape));
}
// For an UncheckedMut<T, N> parameter.
template <Element T>
TensorSpec<T, Handle::Unchecked> unchecked(Shape shape) {
  return TensorSpec<T, Handle::Unchecked>(std::move(shape));
}

}  // namespace spec

struct CompileOptions {
  // "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", and newer in the same form (sm_<NN>, sm_<NN>a
  // from 90, sm_<NN>f from 100) that the installed NVRTC supports.
  std::string arch = "sm_90a";
  // Kernels without a Mut parameter: the rank of the grid they are launched with (.grid({...})).
  // 0: taken from the partition specs (with a Mut parameter, a value given must agree).
  int grid_rank = 0;
  // The kernel options to compile with (warps, stages, fast_math, ...: core/options.hpp), as a
  // launch's .options() gives them. The environment's overrides (CTILE_WARPS, ...) do not apply here.
  KernelOptions kernel;
};

struct WarmUpOptions {
  int grid_rank = 0;  // as CompileOptions::grid_rank
  // As CompileOptions::kernel: a launch finds this compiled kernel when it gives the same options.
  KernelOptions kernel;
};

// What compile_only produces for one specialisation.
struct CompileOnlyResult {
  std::string kernel;                       // the kernel's name
  std::string entry;                        // extern "C" symbol of the generated kernel
  std::string arch;                         // the architecture compiled for, e.g. "sm_90a"
  int grid_rank = 0;
  std::string ir;                           // ir::print of the traced kernel (facts included)
  std::shared_ptr<const ir::Kernel> ir_kernel;
  std::string cuda_source;                  // the generated CUDA C++ (it includes the device library)
  std::string ptx;                          // PTX (".target <arch>")
  std::vector<std::byte> cubin;             // an ELF image for <arch>
  int threads_per_block = 0;
  std::size_t dynamic_smem_bytes = 0;       // dynamic shared memory per block
  std::size_t params_bytes = 0;             // size of the kernel's parameter block
  bool prefetches = false;                  // loads pipelined over tile blocks: launched as a resident grid
  std::string nvrtc_version;                // "13.0"
  std::string nvrtc_log;                    // NVRTC's warnings; empty when clean
};

struct WarmUpResult {
  std::string backend;       // the backend the kernel was compiled for: "cpu", "cuda:0", ...
  bool was_cached = false;   // the specialisation was in the cache already (nothing compiled)
};

namespace detail {

template <class S> struct is_tensor_spec : std::false_type {};
template <class T, spec::Handle H> struct is_tensor_spec<spec::TensorSpec<T, H>> : std::true_type {};
template <class S, spec::Handle H> struct spec_is : std::false_type {};
template <class T, spec::Handle H> struct spec_is<spec::TensorSpec<T, H>, H> : std::true_type {};
template <class S> struct spec_element { using type = void; };
template <class T, spec::Handle H> struct spec_element<spec::TensorSpec<T, H>> { using type = T; };

// Compile-time check of one spec against its parameter (the counterpart of check_kind).
template <class P, class A>
constexpr void check_spec_kind() {
  using Tr = param_traits<P>;
  using D = std::remove_cvref_t<A>;
  using T = typename Tr::element;
  constexpr auto kind = Tr::kind;
  if constexpr (kind == ParamSpec::Kind::Piece) {
    static_assert(spec_is<D, spec::Handle::Partition>::value,
                  "ctile::compile_only/warm_up: a Mut<T, N> parameter takes ctile::spec::partition<T>(shape, tile)");
    static_assert(std::is_same_v<typename spec_element<D>::type, T>,
                  "ctile::compile_only/warm_up: the spec's element type differs from the Mut<T, N> parameter's");
  } else if constexpr (kind == ParamSpec::Kind::Read) {
    static_assert(spec_is<D, spec::Handle::Shared>::value,
                  "ctile::compile_only/warm_up: a Ref<T, N> parameter takes ctile::spec::shared<T>(shape)");
    static_assert(std::is_same_v<typename spec_element<D>::type, T>,
                  "ctile::compile_only/warm_up: the spec's element type differs from the Ref<T, N> parameter's");
  } else if constexpr (kind == ParamSpec::Kind::Atomic) {
    static_assert(spec_is<D, spec::Handle::Tensor>::value,
                  "ctile::compile_only/warm_up: an Atomic<T, N> parameter takes ctile::spec::tensor<T>(shape)");
    static_assert(std::is_same_v<typename spec_element<D>::type, T>,
                  "ctile::compile_only/warm_up: the spec's element type differs from the Atomic<T, N> parameter's");
  } else if constexpr (kind == ParamSpec::Kind::Unchecked) {
    static_assert(spec_is<D, spec::Handle::Unchecked>::value,
                  "ctile::compile_only/warm_up: an UncheckedMut<T, N> parameter takes ctile::spec::unchecked<T>(shape)");
    static_assert(std::is_same_v<typename spec_element<D>::type, T>,
                  "ctile::compile_only/warm_up: the spec's element type differs from the UncheckedMut<T, N> parameter's");
  } else {
    static_assert(!is_tensor_spec<D>::value,
                  "ctile::compile_only/warm_up: a Scalar<T> or Const<T> parameter takes a C++ number, not a tensor spec");
    static_assert(std::is_arithmetic_v<D> || is_narrow_float_element<D>,
                  "ctile::compile_only/warm_up: a Scalar<T> or Const<T> parameter takes a C++ number");
    static_assert(std::is_same_v<D, T> || (std::is_arithmetic_v<D> && !std::is_same_v<D, bool> &&
                                           ((is_float_element<T> && std::is_floating_point_v<D>) ||
                                            (is_int_element<T> && std::is_integral_v<D>))),
                  "ctile::compile_only/warm_up: a scalar argument must be of the parameter's kind (integer for "
                  "integer, floating point for floating point); convert it explicitly");
  }
}

template <class P, class A>
constexpr bool check_spec() {
  static_assert(param_traits<P>::is_param,
                "ctile: every kernel parameter must be Mut<T,N>, Ref<T,N>, Atomic<T,N>, UncheckedMut<T,N>, Scalar<T> "
                "or Const<T>");
  if constexpr (param_traits<P>::is_param) check_spec_kind<P, A>();
  return true;
}

// Non-template parts (src/runtime/compile.cpp).
// Validates a tensor spec (rank, extents, strides, tile shape, the kernel's static tile shape) and
// adds its ParamSpec (facts included) and, for a partition, its grid to the plan.
void plan_tensor_spec(LaunchPlan& p, const std::string& kernel, int arg, ParamSpec spec, int rank, const Shape& shape,
                      const Shape& strides, const Shape& tile, const Shape& static_tile, bool aligned16,
                      const std::optional<ir::TensorFacts>& facts);
CompileOnlyResult compile_only_planned(const void* fn, Tracer tracer, const std::string& name, const CompileOptions& opt,
                                       const LaunchPlan& plan);
WarmUpResult warm_up_planned(const void* fn, Tracer tracer, const std::string& name, const Device& d,
                             const WarmUpOptions& opt, const LaunchPlan& plan);

template <class P, class A>
void plan_spec(LaunchPlan& p, const std::string& kernel, int i, const A& a) {
  using Tr = param_traits<P>;
  if constexpr (Tr::kind == ParamSpec::Kind::Scalar || Tr::kind == ParamSpec::Kind::Const) {
    plan_argument<P>(p, kernel, i, a);  // a number, as in a launch
  } else {
    ParamSpec spec(Tr::kind, dtype_of<typename Tr::element>, Tr::rank);
    Shape static_tile;
    if constexpr (Tr::kind == ParamSpec::Kind::Piece) static_tile = Tr::static_tile();
    plan_tensor_spec(p, kernel, i, std::move(spec), Tr::rank, a.shape(), a.strides(), a.tile(), static_tile,
                     a.aligned16(), a.facts_override());
  }
}

template <class... P, class... A>
LaunchPlan plan_specs(const char* action, const Kernel<P...>& k, const A&... specs) {
  LaunchPlan plan;
  plan.action = action;
  const auto t = std::forward_as_tuple(specs...);
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (plan_spec<P>(plan, k.name, static_cast<int>(I), std::get<I>(t)), ...);
  }(std::index_sequence_for<P...>{});
  return plan;
}

template <class... P>
Kernel<P...> as_kernel(const Kernel<P...>& k) {
  return k;
}
template <class... P>
Kernel<P...> as_kernel(void (*fn)(P...)) {
  return Kernel<P...>{fn, kernel_name_of(reinterpret_cast<const void*>(fn))};
}
template <KernelLambda F>
auto as_kernel(const F& f) {
  return as_kernel(kernel_function(f));
}

template <class... P, class... A>
WarmUpResult warm_up_kernel(const Device& d, const Kernel<P...>& k, const WarmUpOptions& opt, const A&... specs) {
  static_assert(sizeof...(P) == sizeof...(A),
                "ctile::warm_up: the number of argument specs differs from the kernel's parameters");
  static_assert((check_spec<P, A>() && ...));
  const LaunchPlan plan = plan_specs("warm_up", k, specs...);
  return warm_up_planned(reinterpret_cast<const void*>(k.fn), &trace_erased<P...>, k.name, d, opt, plan);
}

}  // namespace detail

// A kernel function (pointer) or a ctile::Kernel (function with a name).
template <class K>
concept KernelRef = requires(const K& k) { detail::as_kernel(k); };

// Traces the kernel for the specs and compiles it with NVRTC for opt.arch. Needs NVRTC, not a GPU.
// Throws UserError for a bad architecture, a spec that does not fit its parameter, a kernel error
// found while tracing, or when NVRTC is unavailable.
template <KernelRef K, class... A>
CompileOnlyResult compile_only(const K& kernel, const CompileOptions& opt, const A&... specs) {
  const auto k = detail::as_kernel(kernel);
  return [&]<class... P>(const Kernel<P...>& kk) {
    static_assert(sizeof...(P) == sizeof...(A),
                  "ctile::compile_only: the number of argument specs differs from the kernel's parameters");
    static_assert((detail::check_spec<P, A>() && ...));
    const detail::LaunchPlan plan = detail::plan_specs("compile_only", kk, specs...);
    return detail::compile_only_planned(reinterpret_cast<const void*>(kk.fn), &detail::trace_erased<P...>, kk.name, opt,
                                        plan);
  }(k);
}

// Traces and compiles the kernel for the specs into launch()'s cache for a device (a GPU: also
// through the disk cache; the CPU: the interpreter's kernel), unless it is there already.
template <KernelRef K, class... A>
WarmUpResult warm_up_on(const Device& d, const K& kernel, const WarmUpOptions& opt, const A&... specs) {
  return detail::warm_up_kernel(d, detail::as_kernel(kernel), opt, specs...);
}
template <KernelRef K, class... A>
WarmUpResult warm_up_on(const Device& d, const K& kernel, const A&... specs) {
  return detail::warm_up_kernel(d, detail::as_kernel(kernel), WarmUpOptions{}, specs...);
}
template <KernelRef K, class... A>
WarmUpResult warm_up_on(const Stream& s, const K& kernel, const WarmUpOptions& opt, const A&... specs) {
  return detail::warm_up_kernel(s.device(), detail::as_kernel(kernel), opt, specs...);
}
template <KernelRef K, class... A>
WarmUpResult warm_up_on(const Stream& s, const K& kernel, const A&... specs) {
  return detail::warm_up_kernel(s.device(), detail::as_kernel(kernel), WarmUpOptions{}, specs...);
}
// On default_device(), where a launch without a stream runs when its arguments live there.
template <KernelRef K, class... A>
WarmUpResult warm_up(const K& kernel, const WarmUpOptions& opt, const A&... specs) {
  return detail::warm_up_kernel(default_device(), detail::as_kernel(kernel), opt, specs...);
}
template <KernelRef K, class... A>
WarmUpResult warm_up(const K& kernel, const A&... specs) {
  return detail::warm_up_kernel(default_device(), detail::as_kernel(kernel), WarmUpOptions{}, specs...);
}

}  // namespace ctile
