// Launching SIMT kernels with ownership: prepare() checks a launch and returns a PreparedLaunch,
// the only thing that can run it (host only).
//
//   auto p = ctile::simt::prepare(vector_add, ctile::simt::cover(n), std::move(out), a, b);
//   auto [out2, a2, b2] = std::move(p).sync();                 // or .async_on(stream) -> Future
//
// Arguments by parameter type (checked at compile time; move-only handles must be moved in):
//   DisjointSpan<T>, DisjointSpan2D<T>, AtomicSpan<T>   Tensor<T>, moved in (exclusive while in flight)
//   Span<T>, Span2D<T>                                  Shared<T> (read-only; copied or moved)
//   UncheckedPtr<T>                                     UncheckedTensor<T> (ctile::unchecked_mut), moved in
//   Uniform<T>                                          a C++ number of the same kind
// 1-D parameters take any contiguous tensor (flattened); 2-D ones a rank-2 tensor whose last axis
// is contiguous (the row stride becomes ld()).
//
// prepare() checks, before anything is enqueued, and throws UserError naming the kernel (and the
// argument): moved-from handles, non-contiguous tensors, ranks, arguments on different devices,
// written memory that overlaps another argument, integers that do not fit, the launch shape
// against the device (validate_launch: block, grid, shared memory, compute capability, 64-bit
// thread counts), and the contract's requires relations. The PreparedLaunch is branded with the
// device it was checked for: running it on a stream of another device is a UserError. The launch
// then follows the host API's ownership rules: the future owns the arguments until the work has
// completed, and work on the same tensors is ordered across streams (and with tile kernels) by
// the storages' events.
//
// prepare(ctile::unchecked, ...) skips the device-limit checks and the requires relations (the
// ownership checks still apply): an unchecked launch, visibly marked.
#pragma once

#include <cstring>
#include <memory>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "ctile/runtime/future.hpp"
#include "ctile/runtime/shared.hpp"
#include "ctile/runtime/stream.hpp"
#include "ctile/runtime/tensor.hpp"
#include "ctile/runtime/unchecked_tensor.hpp"
#include "ctile/simt/contract.hpp"
#include "ctile/simt/kernel.hpp"

namespace ctile::simt {

template <class Def, class... A>
class PreparedLaunch;

namespace detail {

using ::ctile::detail::cat;
using ::ctile::detail::TensorCore;

template <class T> struct is_tensor_h : std::false_type {};
template <class T> struct is_tensor_h<Tensor<T>> : std::true_type {};
template <class T> struct is_shared_h : std::false_type {};
template <class T> struct is_shared_h<Shared<T>> : std::true_type {};
template <class T> struct is_unchecked_h : std::false_type {};
template <class T> struct is_unchecked_h<UncheckedTensor<T>> : std::true_type {};
template <class T> struct is_partition_h : std::false_type {};
template <class T> struct is_partition_h<Partition<T>> : std::true_type {};
template <class H> struct handle_elem { using type = void; };
template <template <class> class H, class T> struct handle_elem<H<T>> { using type = T; };

// The compile-time check of one argument against its parameter; each message says what to pass.
template <class P, class A>
constexpr bool check_arg() {
  using Tr = param_traits<P>;
  using D = std::remove_cvref_t<A>;
  using T = typename Tr::element;
  if constexpr (Tr::kind == ParamKind::Write || Tr::kind == ParamKind::Atomic) {
    static_assert(!is_shared_h<D>::value,
                  "ctile::simt::prepare: a DisjointSpan/AtomicSpan parameter is written; it takes a Tensor<T> moved in, "
                  "not a read-only Shared<T> handle");
    static_assert(!is_partition_h<D>::value,
                  "ctile::simt::prepare: a DisjointSpan/AtomicSpan parameter takes the whole Tensor<T> (moved in): "
                  "std::move(partition).unpartition()");
    static_assert(is_tensor_h<D>::value,
                  "ctile::simt::prepare: a DisjointSpan/DisjointSpan2D/AtomicSpan parameter takes a Tensor<T>, moved in");
    static_assert(std::is_same_v<typename handle_elem<D>::type, T>,
                  "ctile::simt::prepare: the Tensor's element type differs from the parameter's");
  } else if constexpr (Tr::kind == ParamKind::Read) {
    static_assert(is_shared_h<D>::value,
                  "ctile::simt::prepare: a Span/Span2D parameter takes a read-only Shared<T> handle: "
                  "std::move(tensor).share()");
    static_assert(std::is_same_v<typename handle_elem<D>::type, T>,
                  "ctile::simt::prepare: the Shared handle's element type differs from the Span's");
  } else if constexpr (Tr::kind == ParamKind::Unchecked) {
    static_assert(is_unchecked_h<D>::value,
                  "ctile::simt::prepare: an UncheckedPtr<T> parameter takes "
                  "ctile::unchecked_mut(ctile::unchecked, std::move(tensor))");
    static_assert(std::is_same_v<typename handle_elem<D>::type, T>,
                  "ctile::simt::prepare: the UncheckedTensor's element type differs from the parameter's");
  } else {
    static_assert(std::is_arithmetic_v<D>, "ctile::simt::prepare: a Uniform<T> parameter takes a C++ number");
    static_assert(std::is_same_v<D, T> || (!std::is_same_v<D, bool> && !std::is_same_v<T, bool> &&
                                           std::is_floating_point_v<D> == std::is_floating_point_v<T>),
                  "ctile::simt::prepare: a Uniform argument must be of the parameter's kind (integer for integer, "
                  "floating point for floating point); convert it explicitly");
  }
  return true;
}

// What prepare() found, for the non-template half (src/simt/launch.cpp).
struct Prepared {
  const KernelInfo* kernel = nullptr;
  LaunchDims dims;
  Device device;
  bool race_check = false;
  bool checked = true;          // false: prepare(unchecked, ...)
  std::vector<std::byte> pack;  // the descriptors, as the kernel receives them
  std::vector<std::shared_ptr<const TensorCore>> reads, writes;
  std::vector<int> read_arg, write_arg;
  std::optional<Device> arg_device;
};

// Only prepare() makes a PreparePass, so only prepare() makes a PreparedLaunch.
class PreparePass {
  PreparePass() = default;
  friend struct Preparer;
};

[[noreturn]] void arg_error(const KernelInfo& k, int arg, const std::string& msg);
// Checks a tensor argument (moved-from, contiguity, rank, device) and records it.
void bind_tensor(Prepared& p, int arg, const std::shared_ptr<const TensorCore>& core, bool valid, bool writes, int rank);
// An integer Uniform that does not fit its type.
void check_uniform_int(const KernelInfo& k, int arg, long double given, DType want);
// The device, the launch shape (limits: nullptr = the device's), the requires relations, overlaps.
void finish_prepare(Prepared& p, const GridSpec& grid, const DeviceLimits* limits, bool checked);
// Enqueues a prepared launch on `stream` with its dependencies; the event of the work.
Event enqueue(const Prepared& p, const Stream& stream);

template <class P, class A>
void bind_arg(Prepared& p, void* desc, int i, const A& a) {
  using Tr = param_traits<P>;
  using T = typename Tr::element;
  if constexpr (Tr::kind == ParamKind::Value) {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
      check_uniform_int(*p.kernel, i, static_cast<long double>(a), dtype_of<T>);
    static_cast<ValueDesc<T>*>(desc)->value = static_cast<T>(a);
  } else {
    const bool writes = Tr::kind != ParamKind::Read;
    const bool valid = a.valid();
    std::shared_ptr<const TensorCore> core;
    if (valid) core = a.core(unchecked);
    bind_tensor(p, i, core, valid, writes, Tr::rank);
    using DT = typename Tr::desc;
    DT* d = static_cast<DT*>(desc);
    using Ptr = decltype(d->data);
    d->data = reinterpret_cast<Ptr>(core->data());
    if constexpr (Tr::rank == 1) {
      d->size = core->numel();
    } else {
      d->rows = core->shape[0];
      d->cols = core->shape[1];
      d->ld = core->shape[0] <= 1 ? core->shape[1] : core->strides[0];
    }
  }
}

struct Preparer {
  template <class Def, class... A, class... P>
  static auto make(void (*)(P...), const GridSpec& grid, const DeviceLimits* limits, bool checked, A... args) {
    static_assert(sizeof...(P) == sizeof...(A),
                  "ctile::simt::prepare: the number of arguments differs from the kernel's parameters");
    static_assert((check_arg<P, A>() && ...));
    Prepared p;
    p.kernel = &Kernel<Def>::info();
    pack_t<void(P...)> pack{};
    [&]<int... I>(ints<I...>) {
      (bind_arg<P>(p, &PackGet<I>::get(pack), I, std::as_const(args)), ...);
    }(typename make_ints<sizeof...(P)>::type{});
    p.pack.resize(sizeof(pack));
    std::memcpy(p.pack.data(), &pack, sizeof(pack));
    finish_prepare(p, grid, limits, checked);
    return PreparedLaunch<Def, A...>(PreparePass(), std::move(p), std::tuple<A...>(std::move(args)...));
  }
};

}  // namespace detail

// A checked launch of kernel Def over its arguments. Move-only: it owns them.
template <class Def, class... A>
class [[nodiscard]] PreparedLaunch {
 public:
  using Result = std::tuple<A...>;

  PreparedLaunch(detail::PreparePass, detail::Prepared p, std::tuple<A...> args)
      : p_(std::move(p)), args_(std::move(args)) {}
  PreparedLaunch(PreparedLaunch&&) noexcept = default;
  PreparedLaunch& operator=(PreparedLaunch&&) noexcept = default;
  PreparedLaunch(const PreparedLaunch&) = delete;
  PreparedLaunch& operator=(const PreparedLaunch&) = delete;

  // The CPU backend records the unchecked accesses (shared memory, get_unchecked_mut,
  // UncheckedPtr) and fails the launch with a RaceError on conflicting ones between barriers. A
  // GPU launch then runs on the CPU, over copies of its arguments. Also enabled by
  // CTILE_RACE_CHECK=1.
  PreparedLaunch race_check(bool on = true) && {
    p_.race_check = on;
    return std::move(*this);
  }

  [[nodiscard]] const LaunchDims& dims() const { return p_.dims; }
  [[nodiscard]] Device device() const { return p_.device; }

  // Enqueues on `stream` (of the device it was prepared for); the future owns the arguments until
  // the work completes.
  Future<Result> async_on(const Stream& stream) && {
    Event done = detail::enqueue(p_, stream);
    auto st = std::make_shared<FutureState<Result>>();
    st->done = std::move(done);
    st->stream = stream;
    st->payload.emplace(std::move(args_));
    return Future<Result>(std::move(st));
  }
  Result sync_on(const Stream& stream) && { return std::move(*this).async_on(stream).get(); }
  Result sync() && {
    const Stream s = default_stream(p_.device);
    return std::move(*this).async_on(s).get();
  }
  Future<Result> async_on(const Stream&) & = delete;  // use std::move(p).async_on(stream): it consumes the launch
  Result sync_on(const Stream&) & = delete;           // use std::move(p).sync_on(stream)
  Result sync() & = delete;                           // use std::move(p).sync()

 private:
  detail::Prepared p_;
  std::tuple<A...> args_;
};

// Checks the launch of `k` over `grid` with `args` against the device the arguments live on (the
// default device when none is a tensor) and returns it prepared.
template <class Def, class... A>
auto prepare(const Kernel<Def>&, const GridSpec& grid, A... args) {
  return detail::Preparer::make<Def>(static_cast<typename Def::signature*>(nullptr), grid, nullptr, true,
                                     std::move(args)...);
}
// The same against explicit limits (what a test uses to stand for another device); the launch
// still runs on the arguments' device.
template <class Def, class... A>
auto prepare(const DeviceLimits& limits, const Kernel<Def>&, const GridSpec& grid, A... args) {
  return detail::Preparer::make<Def>(static_cast<typename Def::signature*>(nullptr), grid, &limits, true,
                                     std::move(args)...);
}
// An unchecked launch: no device-limit checks, no requires relations (ownership still checked).
template <class Def, class... A>
auto prepare(unchecked_t, const Kernel<Def>&, const GridSpec& grid, A... args) {
  return detail::Preparer::make<Def>(static_cast<typename Def::signature*>(nullptr), grid, nullptr, false,
                                     std::move(args)...);
}

}  // namespace ctile::simt
