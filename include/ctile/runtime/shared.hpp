// Shared<T>: a copyable, read-only handle to a tensor (kernel parameter Ref<T, N>). Any number of
// launches may read it, none may write it, and its memory lives while any handle or any launch
// that reads it exists. unshare() turns the last handle back into a mutable Tensor.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "ctile/runtime/tensor.hpp"

namespace ctile {

template <Element T>
class Shared {
 public:
  using element_type = T;

  // An empty handle (throws on use, like a moved-from one).
  Shared() = default;
  Shared(const Shared&) = default;
  Shared& operator=(const Shared&) = default;
  Shared(Shared&&) noexcept = default;  // the source becomes empty
  Shared& operator=(Shared&&) noexcept = default;
  ~Shared() = default;

  [[nodiscard]] const Shape& shape() const { return c().shape; }
  [[nodiscard]] const Shape& strides() const { return c().strides; }
  [[nodiscard]] int rank() const { return static_cast<int>(c().shape.size()); }
  [[nodiscard]] std::int64_t numel() const { return c().numel(); }
  [[nodiscard]] Device device() const { return c().storage->device; }
  [[nodiscard]] DType dtype() const { return c().dtype; }
  [[nodiscard]] bool valid() const noexcept { return core_ != nullptr; }

  // The elements, row-major; waits for pending writes (rethrows a failed write's error).
  [[nodiscard]] std::vector<T> to_host() const { return detail::to_host<T>(c()); }
  // A new tensor on `d` with the same elements (always a copy, also on the same device); ordered
  // after pending writes. This handle stays valid.
  [[nodiscard]] Tensor<T> to(Device d) const {
    return Tensor<T>::from_core(unchecked, 
        detail::copy_to_device(c_ptr(), d, detail::cat("Shared<", dtype_name(dtype_of<T>), ">::to(", d.str(), ")")));
  }
  // Read-only raw pointer to element 0, after pending writes (a device address on a GPU).
  [[nodiscard]] const T* data(unchecked_t) const {
    c().storage->wait_writes();
    return reinterpret_cast<const T*>(c().data());
  }

  // Read-only views: no copy, the same memory, and each counts as one more holder (unshare()
  // waits for every view to go). Each is checked against this handle's extents and strides and
  // throws UserError naming the view, the shapes and the problem; this handle stays as it was.
  // Elements [start, stop) along `axis`.
  [[nodiscard]] Shared slice(int axis, std::int64_t start, std::int64_t stop) const {
    return view(detail::slice_view(c(), axis, start, stop));
  }
  // The axes reordered: axis i of the view is axis order[i] of this handle (order is a
  // permutation of 0..rank-1), e.g. permute({1, 0}) transposes a matrix.
  [[nodiscard]] Shared permute(const std::vector<int>& order) const {
    return view(detail::permute_view(c(), order, detail::cat("Shared<", dtype_name(dtype_of<T>), ">::permute")));
  }
  // Broadcast to `shape` (rank >= this rank; trailing axes line up): an axis of extent 1, or a new
  // leading axis, is repeated with stride 0; the other extents must be equal. The view reads every
  // element many times, so unshare() of it is refused.
  [[nodiscard]] Shared expand(const Shape& shape) const {
    return view(detail::expand_view(c(), shape, detail::cat("Shared<", dtype_name(dtype_of<T>), ">::expand")));
  }
  // The same elements, row-major, with another shape of the same element count: any handle whose
  // strides allow it without a copy (contiguous ones always; a permuted or sliced one when the
  // merged or split axes stay evenly strided).
  [[nodiscard]] Shared reshape(Shape shape) const {
    return view(detail::reshape_view(c(), std::move(shape), detail::cat("Shared<", dtype_name(dtype_of<T>), ">::reshape")));
  }
  [[nodiscard]] bool contiguous() const { return c().contiguous(); }

  // Handles (copies and views of the handle made by share()) alive now, this one included.
  [[nodiscard]] long holders() const {
    c();
    return group_.use_count();
  }

  // Back to a mutable tensor. Succeeds only for the last holder when no launch still reads the
  // memory; otherwise throws UserError and the handle stays as it was.
  [[nodiscard]] Tensor<T> unshare() && { return std::move(*this).unshare_impl(true); }
  Tensor<T> unshare() & = delete;       // use std::move(s).unshare()
  Tensor<T> unshare() const& = delete;  // use std::move(s).unshare()
  // For a library operation that hands the tensor back in a Future's payload (the caller's only once
  // the work is done): unshare() while launches may still read it. Those reads stay on the memory,
  // so every later writer waits for them (a launch is ordered after them, a host write waits).
  [[nodiscard]] Tensor<T> unshare(unchecked_t) && { return std::move(*this).unshare_impl(false); }

  // For the launch glue.
  [[nodiscard]] const std::shared_ptr<const detail::TensorCore>& core(unchecked_t) const {
    c();
    return core_;
  }

 private:
  [[nodiscard]] Tensor<T> unshare_impl(bool refuse_pending_reads) && {
    const auto& core = c();
    detail::check_free_for(*core.storage, true, detail::cat("Shared<", dtype_name(dtype_of<T>), ">::unshare of a tensor of shape ",
                                                          shape_str(core.shape)));
    const long others = group_.use_count() - 1;
    if (others > 0)
      throw UserError(detail::cat("Shared<", dtype_name(dtype_of<T>), ">::unshare of a tensor of shape ",
                                  shape_str(core.shape), ": ", others, " other holder", others == 1 ? "" : "s",
                                  " (copies or views of this shared handle) still exist; drop them first"));
    if (core.aliases_itself())
      throw UserError(detail::cat("Shared<", dtype_name(dtype_of<T>), ">::unshare of a view of shape ",
                                  shape_str(core.shape), " with strides ", shape_str(core.strides),
                                  ": it reaches some elements through several indices (a broadcast made by expand), so "
                                  "it cannot become a mutable tensor; unshare the handle it was expanded from"));
    if (refuse_pending_reads && core.storage->has_pending_reads())
      throw UserError(detail::cat("Shared<", dtype_name(dtype_of<T>), ">::unshare of a tensor of shape ",
                                  shape_str(core.shape),
                                  ": a launch still reads it (in flight); wait for that launch first"));
    auto owned = std::make_shared<detail::TensorCore>(core);  // a fresh, non-const view: nobody else has it
    core_.reset();
    group_.reset();
    return Tensor<T>::from_core(unchecked, std::move(owned));
  }
  friend class Tensor<T>;
  struct Group {};
  explicit Shared(std::shared_ptr<detail::TensorCore> core)
      : core_(std::move(core)), group_(std::make_shared<const Group>()) {}
  const detail::TensorCore& c() const {
    if (!core_) detail::throw_moved_from("Shared", dtype_of<T>, "or empty: default-constructed or unshared");
    return *core_;
  }
  // A view in this handle's group; a Tensor's slice parent stays behind (only Tensor::unslice
  // gives it back, and a shared handle has no mutable parent).
  Shared view(std::shared_ptr<detail::TensorCore> v) const {
    v->parent.reset();
    Shared s;
    s.core_ = std::move(v);
    s.group_ = group_;
    return s;
  }
  const std::shared_ptr<const detail::TensorCore>& c_ptr() const {
    c();
    return core_;
  }

  std::shared_ptr<const detail::TensorCore> core_;  // null: empty
  std::shared_ptr<const Group> group_;              // one per share(); every copy and view holds it
};

template <Element T>
Shared<T> Tensor<T>::share() && {
  c();
  return Shared<T>(std::move(core_));
}

}  // namespace ctile
