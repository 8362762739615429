// Partition<T>: a mutable tensor cut into disjoint tiles, one per tile block of a launch. Each block
// gets exclusive access to exactly one tile (kernel parameter Mut<T, N>). Move-only; a moved-from
// Partition throws UserError on use.
#pragma once

#include <utility>

#include "ctile/runtime/tensor.hpp"

namespace ctile {

template <Element T>
class Partition {
 public:
  using element_type = T;

  // No copies: two partitions of one tensor would give two tile blocks the same piece to write.
  Partition(const Partition&) = delete;  // move-only: pass it on with std::move (a launch owns it until it completes)
  Partition& operator=(const Partition&) = delete;
  Partition(Partition&&) noexcept = default;  // the source becomes moved-from
  Partition& operator=(Partition&&) noexcept = default;
  ~Partition() = default;

  // Tiles per axis: ceil(extent / tile extent) (the last tile of an axis may be partial).
  [[nodiscard]] Shape grid() const {
    const auto& core = c();
    Shape g(tile_.size());
    for (std::size_t i = 0; i < g.size(); ++i) g[i] = ceil_div(core.shape[i], tile_[i]);
    return g;
  }
  [[nodiscard]] const Shape& tile_shape() const {
    c();
    return tile_;
  }
  [[nodiscard]] const Shape& shape() const { return c().shape; }  // the tensor's extents
  [[nodiscard]] int rank() const { return static_cast<int>(c().shape.size()); }
  [[nodiscard]] Device device() const { return c().storage->device; }
  [[nodiscard]] DType dtype() const { return c().dtype; }
  [[nodiscard]] bool valid() const noexcept { return core_ != nullptr; }

  // The whole tensor back (consumes the partition).
  [[nodiscard]] Tensor<T> unpartition() && {
    c();
    tile_.clear();
    return Tensor<T>::from_core(unchecked, std::move(core_));
  }
  Tensor<T> unpartition() & = delete;       // use std::move(p).unpartition()
  Tensor<T> unpartition() const& = delete;  // use std::move(p).unpartition()

  // For the launch glue.
  [[nodiscard]] const std::shared_ptr<detail::TensorCore>& core(unchecked_t) const {
    c();
    return core_;
  }
  // Adopts a core with a tile shape (validated like Tensor::partition).
  [[nodiscard]] static Partition from_core(unchecked_t, std::shared_ptr<detail::TensorCore> core, Shape tile_shape) {
    CTILE_CHECK(core != nullptr, "Partition::from_core(unchecked, nullptr)");
    CTILE_CHECK(core->dtype == dtype_of<T>, "Partition<", dtype_name(dtype_of<T>), ">::from_core of a ",
                dtype_name(core->dtype), " core");
    detail::check_tile_shape(*core, tile_shape);
    return Partition(std::move(core), std::move(tile_shape));
  }

 private:
  friend class Tensor<T>;
  Partition(std::shared_ptr<detail::TensorCore> core, Shape tile) : core_(std::move(core)), tile_(std::move(tile)) {}
  const detail::TensorCore& c() const {
    if (!core_) detail::throw_moved_from("Partition", dtype_of<T>, "it was moved into a launch or unpartitioned");
    return *core_;
  }

  std::shared_ptr<detail::TensorCore> core_;  // null once moved from
  Shape tile_;
};

template <Element T>
Partition<T> Tensor<T>::partition(Shape tile_shape) && {
  detail::check_tile_shape(c(), tile_shape);  // throws before anything moves
  return Partition<T>(std::move(core_), std::move(tile_shape));
}

}  // namespace ctile
