// Shapes of tensors (run-time extents) and tiles (trace-time extents): 64-bit throughout, so
// tensors past 2^31 elements work.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace ctile {

using Shape = std::vector<std::int64_t>;

inline constexpr int kMaxRank = 6;  // tensors, partitions and tiles alike

inline constexpr bool is_pow2(std::int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

inline constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Product of the extents; false on overflow of int64 (the caller reports where the shape came from).
inline bool checked_numel(const Shape& s, std::int64_t& out) {
  std::int64_t n = 1;
  for (std::int64_t d : s) {
    if (d < 0) return false;
    if (d != 0 && n > INT64_MAX / d) return false;
    n *= d;
  }
  out = n;
  return true;
}

inline std::int64_t numel(const Shape& s) {
  std::int64_t n = 1;
  for (std::int64_t d : s) n *= d;
  return n;
}

// Row-major strides in elements.
inline Shape contiguous_strides(const Shape& s) {
  Shape st(s.size());
  std::int64_t acc = 1;
  for (std::size_t i = s.size(); i-- > 0;) {
    st[i] = acc;
    acc *= s[i] == 0 ? 1 : s[i];
  }
  return st;
}

inline std::string shape_str(const Shape& s) {
  std::string r = "[";
  for (std::size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

}  // namespace ctile
