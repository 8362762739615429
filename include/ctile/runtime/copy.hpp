// A device copy as a lazy operation: ctile::copy(std::move(dst), src) copies every element of `src`
// into `dst`, both on one device, as a command of the stream it is submitted to (so a graph
// capture records it as a copy node).
//
//   auto [dst2, src2] = ctile::copy(std::move(dst), src).sync();       // dst2 now equals src2
//   auto f = ctile::copy(std::move(kv_slot), new_kv).async_on(stream);  // ordered like a launch
//
// `dst` is a Tensor, Partition or UncheckedTensor (moved in: the copy writes it); `src` a Shared
// handle (or a Tensor / Partition, moved in). Element types must match (compile time); shapes must
// be equal and both must be contiguous, on the same device (UserError before anything is
// submitted). The future gives both back once the copy has finished; tensors' events order it
// after earlier work on them and later work after it, as for launches.
#pragma once

#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

#include "ctile/runtime/future.hpp"
#include "ctile/runtime/launch.hpp"

namespace ctile {

namespace detail {
// Validates and submits (or records into a capture) the copy of `src` into `dst` on `s`.
Event submit_copy(const std::shared_ptr<const TensorCore>& dst, const std::shared_ptr<const TensorCore>& src, const Stream& s);

template <class H> struct copy_dst : std::false_type {};
template <class T> struct copy_dst<Tensor<T>> : std::true_type {};
template <class T> struct copy_dst<Partition<T>> : std::true_type {};
template <class T> struct copy_dst<UncheckedTensor<T>> : std::true_type {};
template <class H> struct copy_src : std::false_type {};
template <class T> struct copy_src<Shared<T>> : std::true_type {};
template <class T> struct copy_src<Tensor<T>> : std::true_type {};
template <class T> struct copy_src<Partition<T>> : std::true_type {};
}  // namespace detail

template <class D, class S>
class [[nodiscard]] CopyOp {
 public:
  using Result = std::tuple<D, S>;
  CopyOp(D dst, S src) : args_(std::move(dst), std::move(src)) {}
  CopyOp(CopyOp&&) noexcept = default;
  CopyOp& operator=(CopyOp&&) noexcept = default;
  CopyOp(const CopyOp&) = delete;
  CopyOp& operator=(const CopyOp&) = delete;

  Future<Result> async_on(const Stream& s) && {
    const D& d = std::get<0>(args_);
    const S& src = std::get<1>(args_);
    if (!d.valid()) throw UserError("ctile::copy: the destination was moved from (use of a moved-from value)");
    if (!src.valid()) throw UserError("ctile::copy: the source was moved from or is empty");
    Event done = detail::submit_copy(d.core(unchecked), src.core(unchecked), s);
    auto st = detail::make_pooled<FutureState<Result>>();
    st->done = std::move(done);
    st->stream = s;
    st->payload.emplace(std::move(args_));
    return Future<Result>(std::move(st));
  }
  Result sync_on(const Stream& s) && { return std::move(*this).async_on(s).get(); }
  // On the default stream of the destination's device.
  Result sync() && {
    const Device dev = std::get<0>(args_).valid() ? std::get<0>(args_).device() : default_device();
    return std::move(*this).sync_on(default_stream(dev));
  }

 private:
  std::tuple<D, S> args_;
};

// The arguments are taken by value: move in the destination (and a Tensor or Partition source).
template <class D, class S>
[[nodiscard]] CopyOp<D, S> copy(D dst, S src) {
  static_assert(detail::copy_dst<D>::value,
                "ctile::copy(dst, src): dst must be a Tensor, Partition or UncheckedTensor, moved in (the copy writes it)");
  static_assert(detail::copy_src<S>::value,
                "ctile::copy(dst, src): src must be a Shared handle, or a Tensor or Partition moved in");
  static_assert(std::is_same_v<typename D::element_type, typename S::element_type>,
                "ctile::copy(dst, src): the element types differ; convert with a kernel");
  return CopyOp<D, S>(std::move(dst), std::move(src));
}

}  // namespace ctile
