// Scalar slots of a parameter block (kernel.hpp).
#include "kernel.hpp"

#include <bit>

namespace ctile::platform {

std::uint64_t scalar_bits(const ir::Scalar& v, DType dtype) {
  switch (dtype) {
    case DType::b1: return v.i != 0 ? 1u : 0u;
    case DType::f16: return f16(static_cast<float>(v.f)).bits;
    case DType::bf16: return bf16(static_cast<float>(v.f)).bits;
    case DType::f32: return std::bit_cast<std::uint32_t>(static_cast<float>(v.f));
    case DType::f64: return std::bit_cast<std::uint64_t>(v.f);
    default: break;
  }
  const auto u = static_cast<std::uint64_t>(v.i);
  switch (dtype_size(dtype)) {
    case 1: return u & 0xffu;
    case 2: return u & 0xffffu;
    case 4: return u & 0xffffffffu;
    default: return u;
  }
}

}  // namespace ctile::platform
