// UncheckedTensor<T>: a whole tensor that every tile block of a launch may store into anywhere
// (kernel parameter UncheckedMut<T, N>). The ownership model cannot prove those stores disjoint,
// so making one takes `ctile::unchecked`; the CPU backend's race checker can report overlaps.
// Move-only; it owns the tensor and gives it back with into_tensor().
#pragma once

#include <utility>

#include "ctile/core/unchecked.hpp"
#include "ctile/runtime/tensor.hpp"

namespace ctile {

template <Element T>
class UncheckedTensor {
 public:
  using element_type = T;

  // No copies, for the same reason as Tensor.
  UncheckedTensor(const UncheckedTensor&) = delete;  // move-only: pass it on with std::move (a launch owns it until it completes)
  UncheckedTensor& operator=(const UncheckedTensor&) = delete;
  UncheckedTensor(UncheckedTensor&&) noexcept = default;  // the source becomes moved-from
  UncheckedTensor& operator=(UncheckedTensor&&) noexcept = default;
  ~UncheckedTensor() = default;

  // Takes the tensor (a moved-from tensor throws UserError and nothing is taken).
  [[nodiscard]] static UncheckedTensor make(unchecked_t, Tensor<T>&& t) {
    (void)t.core(unchecked);  // throws if t is moved-from
    return UncheckedTensor(std::move(t));
  }

  [[nodiscard]] const Shape& shape() const { return t().shape(); }
  [[nodiscard]] int rank() const { return t().rank(); }
  [[nodiscard]] Device device() const { return t().device(); }
  [[nodiscard]] bool valid() const noexcept { return t_.valid(); }

  // The tensor back (consumes the wrapper).
  [[nodiscard]] Tensor<T> into_tensor() && { return std::move(t()); }
  Tensor<T> into_tensor() & = delete;       // use std::move(u).into_tensor()
  Tensor<T> into_tensor() const& = delete;  // use std::move(u).into_tensor()

  // For the launch glue.
  [[nodiscard]] const std::shared_ptr<detail::TensorCore>& core(unchecked_t) const { return t().core(unchecked); }

 private:
  explicit UncheckedTensor(Tensor<T>&& t) : t_(std::move(t)) {}
  void check() const {
    if (!t_.valid()) detail::throw_moved_from("UncheckedTensor", dtype_of<T>, "it was moved into a launch or turned back into a tensor");
  }
  Tensor<T>& t() {
    check();
    return t_;
  }
  const Tensor<T>& t() const {
    check();
    return t_;
  }

  Tensor<T> t_;
};

// Same as UncheckedTensor<T>::make.
template <Element T>
[[nodiscard]] UncheckedTensor<T> unchecked_mut(unchecked_t u, Tensor<T>&& t) {
  return UncheckedTensor<T>::make(u, std::move(t));
}

}  // namespace ctile
