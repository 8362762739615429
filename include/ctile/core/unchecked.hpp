// The tag that marks every unsafe opt-out. Each API that can break the ownership model (raw
// pointers into a tensor, stores at arbitrary indices, borrowing foreign memory) takes
// `ctile::unchecked` as its first argument, so that every such place is visible and greppable.
#pragma once

namespace ctile {

struct unchecked_t {
  explicit unchecked_t() = default;
};
inline constexpr unchecked_t unchecked{};

}  // namespace ctile
