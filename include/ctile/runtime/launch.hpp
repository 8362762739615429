// Launching a kernel with ownership. `launch(kernel, args...)` builds a lazy operation that owns
// its arguments; nothing runs before `.sync()`, `.sync_on(stream)` or `.async_on(stream)`.
//
//   auto [z, x, y] = ctile::launch(vector_add, std::move(zp), xs, ys).sync();
//
// Arguments by parameter kind:
//   Mut<T, N>           Partition<T>, moved in (the grid comes from it)
//   Ref<T, N>           Shared<T> (copied or moved)
//   Atomic<T, N>        Tensor<T>, moved in
//   UncheckedMut<T, N>  UncheckedTensor<T> (ctile::unchecked_mut(ctile::unchecked, std::move(t))), moved in
//   Scalar<T>, Const<T> a C++ value of the same kind (integer or floating point)
// Element types and kinds are checked at compile time; ranks, tile shapes, grids and memory
// overlap are checked before anything is enqueued, each failure naming the kernel and argument.
#pragma once

#include <array>
#include <optional>
#include <source_location>
#include <tuple>
#include <type_traits>
#include <utility>

#include "ctile/backend/backend.hpp"
#include "ctile/core/options.hpp"
#include "ctile/frontend/kernel.hpp"
#include "ctile/runtime/future.hpp"
#include "ctile/runtime/partition.hpp"
#include "ctile/runtime/small_vec.hpp"
#include "ctile/runtime/shared.hpp"
#include "ctile/runtime/stream.hpp"
#include "ctile/runtime/tensor.hpp"
#include "ctile/runtime/unchecked_tensor.hpp"

namespace ctile {

// A kernel function with a name for messages and dumps.
template <class... P>
struct Kernel {
  void (*fn)(P...);
  std::string name;
};
template <class... P>
Kernel<P...> kernel(void (*fn)(P...), std::string name) {
  return Kernel<P...>{fn, std::move(name)};
}
// A lambda kernel (no captures): ctile::kernel([](ct::Mut<float, 1> z) {...}, "fill").
template <class F>
  requires std::is_class_v<F>
auto kernel(const F& f, std::string name) {
  return kernel(detail::kernel_function(f), std::move(name));
}

namespace detail {

template <class T> struct is_partition : std::false_type {};
template <class T> struct is_partition<Partition<T>> : std::true_type {};
template <class T> struct is_shared : std::false_type {};
template <class T> struct is_shared<Shared<T>> : std::true_type {};
template <class T> struct is_tensor : std::false_type {};
template <class T> struct is_tensor<Tensor<T>> : std::true_type {};
template <class T> struct is_unchecked_tensor : std::false_type {};
template <class T> struct is_unchecked_tensor<UncheckedTensor<T>> : std::true_type {};
template <class H> struct handle_element { using type = void; };
template <template <class> class H, class T> struct handle_element<H<T>> { using type = T; };

// Compile-time check of one argument (its decayed type) against its parameter; each message says
// what to pass instead. launch() takes its arguments by value, so a move-only handle passed as an
// lvalue does not compile (its copy constructor is deleted: move it in), and a Shared handle
// passed as an lvalue is copied, which clang-tidy's use-after-move check can see.
template <class P, class A>
constexpr void check_kind() {
  using Tr = param_traits<P>;
  using D = std::remove_cvref_t<A>;
  using T = typename Tr::element;
  constexpr auto kind = Tr::kind;
  if constexpr (kind == ParamSpec::Kind::Piece) {
    static_assert(!is_shared<D>::value,
                  "ctile::launch: a Mut<T, N> parameter needs an exclusive Partition<T>; a Shared<T> handle is "
                  "read-only and cannot be passed where the kernel writes");
    static_assert(is_partition<D>::value,
                  "ctile::launch: a Mut<T, N> parameter takes a Partition<T>: std::move(tensor).partition({tile...})");
    static_assert(std::is_same_v<typename handle_element<D>::type, T>,
                  "ctile::launch: the Partition's element type differs from the Mut<T, N> parameter's");
  } else if constexpr (kind == ParamSpec::Kind::Read) {
    static_assert(is_shared<D>::value,
                  "ctile::launch: a Ref<T, N> parameter takes a Shared<T> handle: std::move(tensor).share()");
    static_assert(std::is_same_v<typename handle_element<D>::type, T>,
                  "ctile::launch: the Shared handle's element type differs from the Ref<T, N> parameter's");
  } else if constexpr (kind == ParamSpec::Kind::Atomic) {
    static_assert(is_tensor<D>::value, "ctile::launch: an Atomic<T, N> parameter takes a Tensor<T>, moved in");
    static_assert(std::is_same_v<typename handle_element<D>::type, T>,
                  "ctile::launch: the Tensor's element type differs from the Atomic<T, N> parameter's");
  } else if constexpr (kind == ParamSpec::Kind::Unchecked) {
    static_assert(is_unchecked_tensor<D>::value,
                  "ctile::launch: an UncheckedMut<T, N> parameter takes "
                  "ctile::unchecked_mut(ctile::unchecked, std::move(tensor))");
    static_assert(std::is_same_v<typename handle_element<D>::type, T>,
                  "ctile::launch: the UncheckedTensor's element type differs from the parameter's");
  } else {
    static_assert(std::is_arithmetic_v<D> || is_narrow_float_element<D>,
                  "ctile::launch: a Scalar<T> or Const<T> parameter takes a C++ number");
    static_assert(std::is_same_v<D, T> || (std::is_arithmetic_v<D> && !std::is_same_v<D, bool> &&
                                           ((is_float_element<T> && std::is_floating_point_v<D>) ||
                                            (is_int_element<T> && std::is_integral_v<D>))),
                  "ctile::launch: a scalar argument must be of the parameter's kind (integer for integer, floating "
                  "point for floating point); convert it explicitly");
  }
}

template <class P, class A>
constexpr bool check_argument() {
  static_assert(param_traits<P>::is_param,
                "ctile: every kernel parameter must be Mut<T,N>, Ref<T,N>, Atomic<T,N>, UncheckedMut<T,N>, Scalar<T> "
                "or Const<T>");
  if constexpr (param_traits<P>::is_param) check_kind<P, A>();
  return true;
}

// Everything the launcher derives from the arguments of one launch (or, for compile_only and
// warm_up, from argument specs: then `args`, `reads` and `writes` stay empty).
struct LaunchPlan {
  const char* action = "launch";            // starts error messages: "launch of kernel 'k', argument 1 (...)"
  std::vector<ParamSpec> specs;             // per C++ parameter
  std::vector<backend::ArgValue> args;      // per IR parameter (Const excluded)
  std::vector<std::shared_ptr<const TensorCore>> reads, writes;  // for dependencies and overlap checks
  std::vector<int> read_arg, write_arg;     // argument positions of the above
  std::optional<Shape> grid;                // from the Mut arguments
  int grid_source = -1;
  std::optional<Device> device;
};

// Non-template parts of launching (src/runtime/launch.cpp).
// Called inside a catch block: rethrows the error being handled, a UserError (of the same type:
// RaceError, OutOfMemoryError, ...) that names no place yet at `loc`, the caller's file:line;
// anything else (an error at the kernel's own line, an InternalError) unchanged.
[[noreturn]] void rethrow_at(const std::source_location& loc);
[[noreturn]] void launch_error(const std::string& kernel, int arg, const std::string& param, const std::string& msg);
// The same with another verb: "<action> of kernel 'k', argument i (param): msg".
[[noreturn]] void plan_error(const char* action, const std::string& kernel, int arg, const std::string& param,
                             const std::string& msg);
std::string param_desc(const ParamSpec& s, int rank);
void plan_tensor(LaunchPlan& p, const std::string& kernel, int arg, const ParamSpec& spec, int rank,
                 const std::shared_ptr<const TensorCore>& core, bool writes);
// The rank check and, for a Mut argument, the grid (ceil(extent / tile) per axis; the Mut arguments
// must agree, see merge_grid) of a tensor argument of `shape`; shared by launches and argument specs.
void plan_shape(LaunchPlan& p, const std::string& kernel, int arg, const ParamSpec& spec, int rank, const Shape& shape);
// Merges the grid `g` (rank r) of one Mut argument into `grid` (rank `rank`; -1: none yet). Grids
// agree when they are equal after the shorter one is padded with trailing axes of extent 1, so a
// [rows] output (grid [R]) may sit beside a [rows, cols] one in tiles of whole rows (grid [R, 1]);
// the merged grid is the longer one. Returns false, with `grid` and `rank` unchanged, when they
// disagree.
bool merge_grid(std::int64_t* grid, int& rank, const std::int64_t* g, int r);
void plan_grid(LaunchPlan& p, const std::string& kernel, int arg, const ParamSpec& spec, int rank, const Shape& shape);
ir::Scalar scalar_argument(const std::string& kernel, int arg, const ParamSpec& spec, ir::Scalar given, bool given_is_float,
                           const char* action = "launch");
std::string kernel_name_of(const void* fn);

// The specialisation facts of a tensor argument (ir::TensorFacts: exact meanings there and in
// docs/ir.md): from the address of its element 0, its extents and its strides (elements).
ir::TensorFacts tensor_facts(bool aligned16, const Shape& shape, const Shape& strides);
ir::TensorFacts tensor_facts(const TensorCore& c);

// The in-memory kernel cache shared by launch(), warm_up() and warm_up_on() (one entry per
// specialisation: kernel function, ParamSpecs, grid rank, backend). For tests and diagnostics.
struct KernelCacheStats {
  std::size_t specialisations = 0;  // entries (compiled, or being compiled)
  std::uint64_t hits = 0;           // lookups that found an entry (launches and warm-ups)
  std::uint64_t compiles = 0;       // lookups that traced and compiled (successfully or not)
};
KernelCacheStats kernel_cache_stats();                  // every kernel
KernelCacheStats kernel_cache_stats_of(const void* fn);  // one kernel function
template <class... P>
KernelCacheStats kernel_cache_stats(void (*fn)(P...)) {
  return kernel_cache_stats_of(reinterpret_cast<const void*>(fn));
}
template <class F>
  requires std::is_class_v<F>
KernelCacheStats kernel_cache_stats(const F& f) {
  return kernel_cache_stats(detail::kernel_function(f));
}
inline std::size_t kernel_cache_size() { return kernel_cache_stats().specialisations; }

// Traces the kernel for a plan's specs (one instantiation per kernel signature).
using Tracer = std::shared_ptr<const ir::Kernel> (*)(const void* fn, const std::string& name,
                                                     const std::vector<ParamSpec>& specs, int grid_rank);

template <class... P>
std::shared_ptr<const ir::Kernel> trace_erased(const void* fn, const std::string& name, const std::vector<ParamSpec>& specs,
                                               int grid_rank) {
  return ::ctile::trace(reinterpret_cast<void (*)(P...)>(const_cast<void*>(fn)), name, specs, grid_rank);
}

template <class P, class A>
void plan_argument(LaunchPlan& p, const std::string& kernel, int i, const A& a) {
  using Tr = param_traits<P>;
  ParamSpec spec;
  spec.kind = Tr::kind;
  spec.dtype = dtype_of<typename Tr::element>;
  spec.rank = Tr::rank;
  if constexpr (Tr::kind == ParamSpec::Kind::Piece) {
    if (!a.valid()) launch_error(kernel, i, param_desc(spec, Tr::rank), "the Partition was moved from (use of a moved-from value)");
    spec.tile_shape = a.tile_shape();
    const Shape want = Tr::static_tile();
    if (!want.empty() && a.rank() == Tr::rank && want != spec.tile_shape)
      launch_error(kernel, i, param_desc(spec, Tr::rank),
                   "the kernel declares tile shape " + shape_str(want) + " but the partition's tile shape is " +
                       shape_str(spec.tile_shape));
    plan_tensor(p, kernel, i, spec, Tr::rank, a.core(unchecked), true);
  } else if constexpr (Tr::kind == ParamSpec::Kind::Read) {
    if (!a.valid()) launch_error(kernel, i, param_desc(spec, Tr::rank), "the Shared handle is empty (moved from)");
    plan_tensor(p, kernel, i, spec, Tr::rank, a.core(unchecked), false);
  } else if constexpr (Tr::kind == ParamSpec::Kind::Atomic || Tr::kind == ParamSpec::Kind::Unchecked) {
    if (!a.valid()) launch_error(kernel, i, param_desc(spec, Tr::rank), "the tensor was moved from (use of a moved-from value)");
    plan_tensor(p, kernel, i, spec, Tr::rank, a.core(unchecked), true);
  } else {
    using D = std::remove_cvref_t<A>;
    ir::Scalar given;
    bool is_f = false;
    if constexpr (is_narrow_float_element<D>) { given = ir::Scalar::of_float(static_cast<float>(a)); is_f = true; }
    else if constexpr (std::is_floating_point_v<D>) { given = ir::Scalar::of_float(static_cast<double>(a)); is_f = true; }
    else if constexpr (std::is_unsigned_v<D>) given = ir::Scalar::of_int(static_cast<std::int64_t>(static_cast<std::uint64_t>(a)));
    else given = ir::Scalar::of_int(static_cast<std::int64_t>(a));
    const ir::Scalar v = scalar_argument(kernel, i, spec, given, is_f, p.action);
    if constexpr (Tr::kind == ParamSpec::Kind::Const) {
      spec.const_value = v;
    } else {
      backend::ArgValue av;
      av.scalar = v;
      p.args.push_back(av);
    }
    p.specs.push_back(spec);
  }
}

// ---- the launch path (src/runtime/launch.cpp) -------------------------------------------------

// A kernel function as the launch path sees it: the function, its tracer and its name (interned:
// the string lives until exit, so launches carry a pointer).
struct LaunchSite {
  const void* fn = nullptr;
  Tracer tracer = nullptr;
  const std::string* name = nullptr;
  const KernelOptions* options = nullptr;  // null: the defaults
};
// The interned name of `fn`: `name` when given (a ctile::Kernel), else the function's symbol
// (kernel_name_of). Lock-free after the first call for a (function, name) pair.
const std::string* intern_kernel_name(const void* fn, const std::string* name);

// One argument of a launch, as the non-template launch path sees it.
struct LaunchArg {
  ParamSpec::Kind kind = ParamSpec::Kind::Read;
  DType dtype = DType::f32;
  std::int8_t rank = 0;
  bool writes = false;
  int index = 0;                               // position among the kernel's parameters
  std::shared_ptr<const TensorCore> core;      // tensor kinds
  const Shape* tile = nullptr;                 // Piece: the partition's tile shape
  ir::Scalar scalar;                           // Scalar and Const: the value, cast to the parameter's type
};
using LaunchArgs = SmallVec<LaunchArg, 8>;

// Rejects a moved-from handle: "launch of kernel 'k', argument i (Mut<f32, 1>): ...".
[[noreturn]] void moved_from_argument(const std::string& kernel, const LaunchArg& a, const char* what);
// The static tile extents of Mut<T, N, D...> against the partition's.
void check_static_tile(const std::string& kernel, const LaunchArg& a, const std::int64_t* dims, std::size_t n);

// Validates the arguments (ranks, devices, grids, scalars, memory overlap, graph ownership), finds
// the launch record of the specialisation (tracing and compiling it on the first launch), and
// submits the kernel to `stream` (or records it into the capture `stream` belongs to) with its
// dependencies. Returns the launch's event.
// `after` (may be empty): one more event the launch waits for (Future::then's previous step: the
// launch then completes after it and carries its error, with no join of the two).
// `wait`: the caller waits for the launch at once (sync()): the stream may finish it within the
// call and return a done event.
Event submit_launch(const LaunchSite& site, LaunchArgs& args, const std::optional<Shape>& explicit_grid, bool race_check,
                    const Stream& stream, const Event* after = nullptr, bool wait = false);
// The device a launch without an explicit stream runs on: the arguments', else default_device().
Device launch_device(const LaunchArgs& args);

template <class P> struct static_tile_of {
  static constexpr std::array<std::int64_t, 0> dims{};
};
template <Element T, int N, std::int64_t... D> struct static_tile_of<Mut<T, N, D...>> {
  static constexpr std::array<std::int64_t, sizeof...(D)> dims{D...};
};

template <class P, class A>
void collect_argument(LaunchArgs& out, const std::string& kernel, int i, const A& a) {
  using Tr = param_traits<P>;
  LaunchArg& x = out.emplace_back();
  x.kind = Tr::kind;
  x.dtype = dtype_of<typename Tr::element>;
  x.rank = static_cast<std::int8_t>(Tr::rank);
  x.index = i;
  if constexpr (Tr::kind == ParamSpec::Kind::Piece) {
    if (!a.valid()) moved_from_argument(kernel, x, "the Partition was moved from (use of a moved-from value)");
    x.writes = true;
    x.tile = &a.tile_shape();
    constexpr auto& dims = static_tile_of<P>::dims;
    if constexpr (dims.size() > 0) check_static_tile(kernel, x, dims.data(), dims.size());
    x.core = a.core(unchecked);
  } else if constexpr (Tr::kind == ParamSpec::Kind::Read) {
    if (!a.valid()) moved_from_argument(kernel, x, "the Shared handle is empty (moved from)");
    x.core = a.core(unchecked);
  } else if constexpr (Tr::kind == ParamSpec::Kind::Atomic || Tr::kind == ParamSpec::Kind::Unchecked) {
    if (!a.valid()) moved_from_argument(kernel, x, "the tensor was moved from (use of a moved-from value)");
    x.writes = true;
    x.core = a.core(unchecked);
  } else {
    using D = std::remove_cvref_t<A>;
    ir::Scalar given;
    bool is_f = false;
    if constexpr (is_narrow_float_element<D>) { given = ir::Scalar::of_float(static_cast<float>(a)); is_f = true; }
    else if constexpr (std::is_floating_point_v<D>) { given = ir::Scalar::of_float(static_cast<double>(a)); is_f = true; }
    else if constexpr (std::is_unsigned_v<D>) given = ir::Scalar::of_int(static_cast<std::int64_t>(static_cast<std::uint64_t>(a)));
    else given = ir::Scalar::of_int(static_cast<std::int64_t>(a));
    ParamSpec spec(Tr::kind, x.dtype, 0);
    x.scalar = scalar_argument(kernel, i, spec, given, is_f);
  }
}

// The arguments of a tuple, for the launch path.
template <class... P, class... A>
void collect_arguments(LaunchArgs& out, const std::string& kernel, const std::tuple<A...>& args) {
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (collect_argument<P>(out, kernel, static_cast<int>(I), std::get<I>(args)), ...);
  }(std::index_sequence_for<P...>{});
}

}  // namespace detail

// The lazy launch of one kernel over its arguments. Move-only: it owns the arguments.
template <class Sig, class... A>
class [[nodiscard]] Launch;


template <class... P, class... A>
class [[nodiscard]] Launch<void(P...), A...> {
 public:
  using Result = std::tuple<A...>;

  Launch(void (*fn)(P...), const std::string* name, std::tuple<A...> args)
      : fn_(fn), name_(name), args_(std::move(args)) {}
  Launch(Launch&&) noexcept = default;
  Launch& operator=(Launch&&) noexcept = default;
  Launch(const Launch&) = delete;
  Launch& operator=(const Launch&) = delete;

  // The grid, for kernels without a Mut parameter (with one, it must agree with the partitions).
  Launch grid(Shape g) && {
    grid_ = std::move(g);
    return std::move(*this);
  }
  // Records the writer of every UncheckedMut store and fails the launch on overlapping stores
  // by different tile blocks (CPU backend). Also enabled by CTILE_RACE_CHECK=1.
  Launch race_check(bool on = true) && {
    race_check_ = on;
    return std::move(*this);
  }

  // Compiles this launch's specialisation with `o` (warps, stages, fast_math, ...: core/options.hpp).
  // The options are part of the kernel cache's key, so a launch with other options compiles and
  // keeps its own kernel. A bad option is a UserError at `loc` naming the kernel and the option.
  Launch options(const KernelOptions& o, std::source_location loc = std::source_location::current()) && {
    try {
      o.validate(*name_);
    } catch (...) {
      detail::rethrow_at(loc);
    }
    options_ = o;
    return std::move(*this);
  }

  // Submits to `stream` (or records into the graph capture it belongs to); the future owns the
  // arguments until the work completes. An error found before anything is submitted (a bad
  // argument, grid or device) is a UserError at `loc`: the caller's file:line.
  Future<Result> async_on(const Stream& stream, std::source_location loc = std::source_location::current()) && {
    try {
      detail::LaunchArgs la;
      detail::collect_arguments<P...>(la, *name_, args_);
      return std::move(*this).submit(la, stream);
    } catch (...) {
      detail::rethrow_at(loc);
    }
  }
  // async_on after one more event (for Future::then: the launch follows the previous step).
  Future<Result> async_after(const Stream& stream, const Event& after,
                             std::source_location loc = std::source_location::current()) && {
    try {
      detail::LaunchArgs la;
      detail::collect_arguments<P...>(la, *name_, args_);
      return std::move(*this).submit(la, stream, &after);
    } catch (...) {
      detail::rethrow_at(loc);
    }
  }
  // Runs to completion and gives the arguments back.
  Result sync_on(const Stream& stream, std::source_location loc = std::source_location::current()) && {
    Future<Result> f = [&] {
      try {
        detail::LaunchArgs la;
        detail::collect_arguments<P...>(la, *name_, args_);
        return std::move(*this).submit(la, stream, nullptr, true);
      } catch (...) {
        detail::rethrow_at(loc);
      }
    }();
    return std::move(f).get();
  }
  Result sync(std::source_location loc = std::source_location::current()) && {
    Future<Result> f = [&] {
      try {
        detail::LaunchArgs la;
        detail::collect_arguments<P...>(la, *name_, args_);  // collected once: they also tell the device
        const Stream s = default_stream(detail::launch_device(la));
        return std::move(*this).submit(la, s, nullptr, true);
      } catch (...) {
        detail::rethrow_at(loc);
      }
    }();
    return std::move(f).get();
  }

 private:
  Future<Result> submit(detail::LaunchArgs& la, const Stream& stream, const Event* after = nullptr, bool wait = false) && {
    const detail::LaunchSite site{reinterpret_cast<const void*>(fn_), &detail::trace_erased<P...>, name_,
                                  options_ ? &*options_ : nullptr};
    Event done = detail::submit_launch(site, la, grid_, race_check_, stream, after, wait);
    auto st = detail::make_pooled<FutureState<Result>>();
    st->done = std::move(done);
    st->stream = stream;
    st->payload.emplace(std::move(args_));
    return Future<Result>(std::move(st));
  }

  void (*fn_)(P...);
  const std::string* name_;
  std::tuple<A...> args_;
  std::optional<Shape> grid_;
  std::optional<KernelOptions> options_;
  bool race_check_ = false;
};

// Arguments are taken by value (see check_kind): move in what the launch owns.
template <class... P, class... A>
auto launch(const Kernel<P...>& k, A... args) {
  static_assert(sizeof...(P) == sizeof...(A), "ctile::launch: the number of arguments differs from the kernel's parameters");
  static_assert((detail::check_argument<P, A>() && ...));
  return Launch<void(P...), A...>(k.fn, detail::intern_kernel_name(reinterpret_cast<const void*>(k.fn), &k.name),
                                  std::tuple<A...>(std::move(args)...));
}
template <class... P, class... A>
auto launch(void (*fn)(P...), A... args) {
  static_assert(sizeof...(P) == sizeof...(A), "ctile::launch: the number of arguments differs from the kernel's parameters");
  static_assert((detail::check_argument<P, A>() && ...));
  return Launch<void(P...), A...>(fn, detail::intern_kernel_name(reinterpret_cast<const void*>(fn), nullptr),
                                  std::tuple<A...>(std::move(args)...));
}
// A lambda kernel (no captures), without the unary `+` (detail::kernel_function says why).
template <class F, class... A>
  requires std::is_class_v<F>
auto launch(const F& f, A... args) {
  return launch(detail::kernel_function(f), std::move(args)...);
}

}  // namespace ctile
