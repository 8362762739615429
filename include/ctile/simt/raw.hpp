// Raw CUDA kernels: CUDA C++ given as a string, compiled by NVRTC and launched with ctile's
// ownership and dependency tracking but none of the SIMT checks (host only). Everything about it
// is unchecked, so making one and launching one take ctile::unchecked.
//
//   auto k = ctile::simt::RawKernel::from_source(ctile::unchecked, R"(
//       extern "C" __global__ void scale(float* y, const float* x, float a, long n) {
//         long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
//         if (i < n) y[i] = a * x[i];
//       })", "scale");
//   auto [y2, x2, a, n] = ctile::simt::launch_raw(ctile::unchecked, k, ctile::simt::grid(blocks),
//                                                  ctile::simt::Dims{256}, 0, std::move(y), x, 2.0f, n).sync();
//
// Arguments become the kernel's parameters in order: a Tensor<T> (moved in; recorded as written)
// or an UncheckedTensor<T> is passed as T*, a Shared<T> as const T* (recorded as read), a number
// by value as its own C++ type. Nothing checks that these match the kernel's signature, or what
// the kernel does with them. The launch shape is checked against the device's limits. Raw kernels
// run on GPUs only: on the CPU the launch is a UserError.
#pragma once

#include <cstring>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "ctile/simt/launch.hpp"

namespace ctile::simt {

class RawKernel {
 public:
  [[nodiscard]] static RawKernel from_source(unchecked_t, std::string source, std::string entry, std::string name = {});
  [[nodiscard]] const std::string& source() const { return s_->source; }
  [[nodiscard]] const std::string& entry() const { return s_->entry; }
  [[nodiscard]] const std::string& name() const { return s_->name; }

 private:
  struct State {
    std::string source, entry, name;
  };
  explicit RawKernel(std::shared_ptr<const State> s) : s_(std::move(s)) {}
  std::shared_ptr<const State> s_;
};

namespace detail {

struct RawPrepared {
  std::string source, entry, name;
  LaunchDims dims;
  Device device;
  std::vector<std::uint64_t> slots;  // one 8-byte slot per parameter (a pointer or a number)
  std::vector<std::shared_ptr<const TensorCore>> reads, writes;
  std::optional<Device> arg_device;
};

void raw_bind_tensor(RawPrepared& p, int arg, const std::shared_ptr<const TensorCore>& core, bool valid, bool writes);
void raw_finish(RawPrepared& p, const GridSpec& grid, const Dims& block, std::int64_t dynamic_shared);
Event raw_enqueue(const RawPrepared& p, const Stream& stream);

template <class A>
void raw_bind(RawPrepared& p, int i, const A& a) {
  using D = std::remove_cvref_t<A>;
  if constexpr (std::is_arithmetic_v<D>) {
    static_assert(sizeof(D) <= 8, "launch_raw: numbers up to 8 bytes");
    std::uint64_t slot = 0;
    std::memcpy(&slot, &a, sizeof(D));
    p.slots.push_back(slot);
  } else {
    static_assert(is_tensor_h<D>::value || is_shared_h<D>::value || is_unchecked_h<D>::value,
                  "launch_raw: an argument is a Tensor<T> (moved in), an UncheckedTensor<T> (moved in), a Shared<T> or a "
                  "number");
    const bool valid = a.valid();
    std::shared_ptr<const TensorCore> core;
    if (valid) core = a.core(unchecked);
    raw_bind_tensor(p, i, core, valid, !is_shared_h<D>::value);
    const void* data = core->data();
    std::uint64_t slot = 0;
    std::memcpy(&slot, &data, sizeof(data));
    p.slots.push_back(slot);
  }
}

}  // namespace detail

template <class... A>
class [[nodiscard]] RawLaunch {
 public:
  using Result = std::tuple<A...>;
  RawLaunch(detail::RawPrepared p, std::tuple<A...> args) : p_(std::move(p)), args_(std::move(args)) {}
  RawLaunch(RawLaunch&&) noexcept = default;
  RawLaunch& operator=(RawLaunch&&) noexcept = default;
  RawLaunch(const RawLaunch&) = delete;
  RawLaunch& operator=(const RawLaunch&) = delete;

  Future<Result> async_on(const Stream& stream) && {
    Event done = detail::raw_enqueue(p_, stream);
    auto st = std::make_shared<FutureState<Result>>();
    st->done = std::move(done);
    st->stream = stream;
    st->payload.emplace(std::move(args_));
    return Future<Result>(std::move(st));
  }
  Result sync_on(const Stream& stream) && { return std::move(*this).async_on(stream).get(); }
  Result sync() && { return std::move(*this).async_on(default_stream(p_.device)).get(); }
  Future<Result> async_on(const Stream&) & = delete;  // use std::move(l).async_on(stream)
  Result sync() & = delete;                           // use std::move(l).sync()

  [[nodiscard]] const LaunchDims& dims() const { return p_.dims; }

 private:
  detail::RawPrepared p_;
  std::tuple<A...> args_;
};

// Checks the launch shape against the arguments' device and returns the lazy launch.
template <class... A>
auto launch_raw(unchecked_t, const RawKernel& k, const GridSpec& grid, const Dims& block, std::int64_t dynamic_shared,
                A... args) {
  detail::RawPrepared p;
  p.source = k.source();
  p.entry = k.entry();
  p.name = k.name();
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (detail::raw_bind(p, static_cast<int>(I), std::as_const(std::get<I>(std::tie(args...)))), ...);
  }(std::index_sequence_for<A...>{});
  detail::raw_finish(p, grid, block, dynamic_shared);
  return RawLaunch<A...>(std::move(p), std::tuple<A...>(std::move(args)...));
}

}  // namespace ctile::simt
