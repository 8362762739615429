#include "ctile/core/dtype.hpp"

namespace ctile {

bool parse_dtype(std::string_view s, DType& out) {
  for (int i = 0; i < kNumDTypes; ++i) {
    if (dtype_name(static_cast<DType>(i)) == s) {
      out = static_cast<DType>(i);
      return true;
    }
  }
  return false;
}

}  // namespace ctile
