// expect-gcc: ^static assertion failed: ctile::randn<T>: T must be a floating-point element type \(f16, bf16, f8e4m3, f8e5m2, float, double\)$
// expect-clang: ^static_assert failed due to requirement .* .ctile::randn<T>: T must be a floating-point element type \(f16, bf16, f8e4m3, f8e5m2, float, double\).$
// Normally distributed values exist for floating-point element types only.
#include <cstdint>

#include <ctile/ctile.hpp>

namespace ct = ctile;

int main() {
  auto ok = ct::randn<float>({4}, 1);
#ifdef CTILE_MISUSE
  auto bad = ct::randn<std::int32_t>({4}, 1);
#endif
  return ok.numel() == 4 ? 0 : 1;
}
