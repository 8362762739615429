// Pre-bound launches for hot loops: the specialisation is fixed once, from argument specs, and each
// call launches it with no lookup at all.
//
//   auto k = ctile::bind(add_one, ctile::spec::partition<float>({n}, {1024}), ctile::spec::shared<float>({n}));
//   auto f = k(stream, std::move(z), x);       // a Future<std::tuple<Partition<float>, Shared<float>>>
//   auto [z2, x2] = std::move(f).get();
//
// bind() compiles the kernel for the specs (like warm_up) and returns a BoundKernel. Its call
// operator takes the arguments exactly as launch() does (the same compile-time checks and ownership
// transfer: partitions and tensors are moved in, the future gives them back) and submits at once.
// Each argument must have the spec the kernel was bound for: the same kind, element type, rank,
// tile shape, Const value and specialisation facts (extents may differ where the facts agree);
// otherwise the call throws UserError naming the argument, before anything is submitted. A
// BoundKernel keeps its own parameter block and rewrites only what changed since its previous call,
// and a call with the views, tiles and Const values of its previous one skips the argument checks
// that depend only on them (ranks, devices, grid, aliasing, the spec; a view never changes once
// made) and checks only whether a graph owns one of them: one per thread (it is move-only; bind again for another thread, which finds the compiled kernel
// in the cache). Race checking is not available here (use launch(...).race_check()).
#pragma once

#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <tuple>
#include <utility>

#include "ctile/runtime/compile.hpp"
#include "ctile/runtime/future.hpp"
#include "ctile/runtime/launch.hpp"

namespace ctile {

namespace detail {
struct BoundState;
struct BoundDeleter {
  void operator()(BoundState* b) const noexcept;
};
using BoundPtr = std::unique_ptr<BoundState, BoundDeleter>;
// Compiles (or finds) the specialisation of the specs in the kernel cache for `d`.
BoundPtr bind_planned(const void* fn, Tracer tracer, const std::string& name, const Device& d, const LaunchPlan& plan,
                      int grid_rank_option, const KernelOptions& options);
Event submit_bound(BoundState& b, LaunchArgs& args, const std::optional<Shape>& explicit_grid, const Stream& s,
                   const Event* after = nullptr, bool wait = false);
const std::string& bound_name(const BoundState& b);
Device bound_device(const BoundState& b);

// A stream and the file:line of the call that names it: the implicit conversion from a Stream
// evaluates the default argument at the caller, so a call with a parameter pack after the stream
// still learns where it was made.
struct StreamAt {
  const Stream& stream;
  std::source_location loc;
  StreamAt(const Stream& s, std::source_location l = std::source_location::current())  // NOLINT: implicit by design
      : stream(s), loc(l) {}
};
}  // namespace detail

template <class... P>
class BoundKernel;

// A call of a BoundKernel that has not been submitted yet (BoundKernel::launch): a lazy operation,
// for Future::then chains. It refers to its BoundKernel, which must outlive it.
template <class K, class... A>
class [[nodiscard]] BoundLaunch {
 public:
  BoundLaunch(K& k, std::tuple<A...> args) : k_(&k), args_(std::move(args)) {}
  BoundLaunch(BoundLaunch&&) noexcept = default;
  BoundLaunch& operator=(BoundLaunch&&) noexcept = default;
  BoundLaunch(const BoundLaunch&) = delete;
  BoundLaunch& operator=(const BoundLaunch&) = delete;
  Future<std::tuple<A...>> async_on(const Stream& s, std::source_location loc = std::source_location::current()) && {
    return k_->submit(s, std::move(args_), nullptr, loc);
  }
  Future<std::tuple<A...>> async_after(const Stream& s, const Event& after,
                                       std::source_location loc = std::source_location::current()) && {
    return k_->submit(s, std::move(args_), &after, loc);
  }
  std::tuple<A...> sync_on(const Stream& s, std::source_location loc = std::source_location::current()) && {
    return k_->submit(s, std::move(args_), nullptr, loc, true).get();
  }

 private:
  K* k_;
  std::tuple<A...> args_;
};

template <class... P>
class [[nodiscard]] BoundKernel {
 public:
  BoundKernel(detail::BoundPtr b, void (*fn)(P...)) : b_(std::move(b)), fn_(fn) {}
  BoundKernel(BoundKernel&&) noexcept = default;
  BoundKernel& operator=(BoundKernel&&) noexcept = default;
  // No copies: a bound kernel owns its parameter block (one per thread).
  BoundKernel(const BoundKernel&) = delete;
  BoundKernel& operator=(const BoundKernel&) = delete;

  // Launches on `s` (a stream of the device it was bound for); the future owns the arguments until
  // the work completes. Arguments as for launch(). A mismatched argument is a UserError at the
  // caller's file:line.
  template <class... A>
  [[nodiscard]] Future<std::tuple<A...>> operator()(detail::StreamAt s, A... args) {
    static_assert(sizeof...(P) == sizeof...(A), "ctile::BoundKernel: the number of arguments differs from the kernel's parameters");
    static_assert((detail::check_argument<P, A>() && ...));
    return submit(s.stream, std::tuple<A...>(std::move(args)...), nullptr, s.loc);
  }
  // The same call as a lazy operation (submitted by async_on, or by Future::then: then the launch
  // waits for the previous step itself). The BoundKernel must outlive it.
  template <class... A>
  [[nodiscard]] BoundLaunch<BoundKernel, A...> launch(A... args) {
    static_assert(sizeof...(P) == sizeof...(A), "ctile::BoundKernel: the number of arguments differs from the kernel's parameters");
    static_assert((detail::check_argument<P, A>() && ...));
    return BoundLaunch<BoundKernel, A...>(*this, std::tuple<A...>(std::move(args)...));
  }
  // The grid of a kernel without a Mut parameter, for the calls from now on.
  BoundKernel& grid(Shape g) & {
    grid_ = std::move(g);
    return *this;
  }

  [[nodiscard]] const std::string& name() const { return detail::bound_name(b()); }
  [[nodiscard]] Device device() const { return detail::bound_device(b()); }
  [[nodiscard]] bool valid() const noexcept { return b_ != nullptr; }

 private:
  template <class K, class... A>
  friend class BoundLaunch;
  template <class... A>
  Future<std::tuple<A...>> submit(const Stream& s, std::tuple<A...> args, const Event* after, const std::source_location& loc,
                                  bool wait = false) {
    try {
      auto st = detail::make_pooled<FutureState<std::tuple<A...>>>();
      st->payload.emplace(std::move(args));
      detail::LaunchArgs la;
      detail::collect_arguments<P...>(la, name(), *st->payload);
      st->done = detail::submit_bound(b(), la, grid_, s, after, wait);
      st->stream = s;
      return Future<std::tuple<A...>>(std::move(st));
    } catch (...) {
      detail::rethrow_at(loc);
    }
  }
  detail::BoundState& b() const {
    if (!b_) throw UserError("use of a moved-from BoundKernel");
    return *b_;
  }
  detail::BoundPtr b_;
  void (*fn_)(P...);
  std::optional<Shape> grid_;
};

namespace detail {
template <class... P, class... A>
BoundKernel<P...> bind_kernel(const Device& d, const Kernel<P...>& k, const WarmUpOptions& opt, const A&... specs) {
  static_assert(sizeof...(P) == sizeof...(A), "ctile::bind: the number of argument specs differs from the kernel's parameters");
  static_assert((check_spec<P, A>() && ...));
  const LaunchPlan plan = plan_specs("bind", k, specs...);
  return BoundKernel<P...>(bind_planned(reinterpret_cast<const void*>(k.fn), &trace_erased<P...>,
                                        *intern_kernel_name(reinterpret_cast<const void*>(k.fn), &k.name), d, plan,
                                        opt.grid_rank, opt.kernel),
                           k.fn);
}
}  // namespace detail

// Binds the kernel for the specs (ctile::spec::..., as for warm_up) on default_device(), or on a
// given device or stream's device. Compiles it now unless the kernel cache has it.
template <KernelRef K, class... A>
[[nodiscard]] auto bind(const K& kernel, const A&... specs) {
  return detail::bind_kernel(default_device(), detail::as_kernel(kernel), WarmUpOptions{}, specs...);
}
template <KernelRef K, class... A>
[[nodiscard]] auto bind(const K& kernel, const WarmUpOptions& opt, const A&... specs) {
  return detail::bind_kernel(default_device(), detail::as_kernel(kernel), opt, specs...);
}
template <KernelRef K, class... A>
[[nodiscard]] auto bind_on(const Device& d, const K& kernel, const A&... specs) {
  return detail::bind_kernel(d, detail::as_kernel(kernel), WarmUpOptions{}, specs...);
}
template <KernelRef K, class... A>
[[nodiscard]] auto bind_on(const Stream& s, const K& kernel, const A&... specs) {
  return detail::bind_kernel(s.device(), detail::as_kernel(kernel), WarmUpOptions{}, specs...);
}
template <KernelRef K, class... A>
[[nodiscard]] auto bind_on(const Device& d, const K& kernel, const WarmUpOptions& opt, const A&... specs) {
  return detail::bind_kernel(d, detail::as_kernel(kernel), opt, specs...);
}
template <KernelRef K, class... A>
[[nodiscard]] auto bind_on(const Stream& s, const K& kernel, const WarmUpOptions& opt, const A&... specs) {
  return detail::bind_kernel(s.device(), detail::as_kernel(kernel), opt, specs...);
}

}  // namespace ctile
