// Shapes of tensors (run-time extents) and tiles (trace-time extents): 64-bit throughout, so
// tensors past 2^31 elements work.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "ctile/core/error.hpp"

namespace ctile {

using Shape = std::vector<std::int64_t>;

inline constexpr int kMaxRank = 6;  // tensors, partitions and tiles alike

inline std::string shape_str(const Shape& s) {
  std::string r = "[";
  for (std::size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

inline constexpr bool is_pow2(std::int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// ceil(a / b) for a >= 0, b > 0, without the overflow of (a + b - 1) / b near INT64_MAX.
inline constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

// Product of the extents; false if an extent is negative or if the product of the NON-ZERO extents
// overflows int64 (the caller reports where the shape came from). A shape with a zero extent has
// no element, but its row-major strides and the offsets of its views are products of the other
// extents, so it is held to the same bound: {0, INT64_MAX, 2} is rejected, whatever the order.
inline bool checked_numel(const Shape& s, std::int64_t& out) {
  std::int64_t n = 1;
  bool empty = false;
  for (std::int64_t d : s) {
    if (d < 0) return false;
    if (d == 0) {
      empty = true;
      continue;
    }
    if (__builtin_mul_overflow(n, d, &n)) return false;
  }
  out = empty ? 0 : n;
  return true;
}

// Product of the extents of a shape checked_numel accepted (unchecked here).
inline std::int64_t numel(const Shape& s) {
  std::int64_t n = 1;
  for (std::int64_t d : s) n *= d;
  return n;
}

// Row-major strides in elements (a zero extent counts as 1). Throws UserError when a stride
// overflows int64; shapes checked_numel accepted never do.
inline Shape contiguous_strides(const Shape& s) {
  Shape st(s.size());
  std::int64_t acc = 1;
  for (std::size_t i = s.size(); i-- > 0;) {
    st[i] = acc;
    if (i > 0 && __builtin_mul_overflow(acc, s[i] <= 0 ? 1 : s[i], &acc))
      throw UserError("the row-major strides of shape " + shape_str(s) + " overflow int64");
  }
  return st;
}

}  // namespace ctile
