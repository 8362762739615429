// Scalar slots and tensor maps of a parameter block (kernel.hpp).
#include "kernel.hpp"

#include <bit>
#include <cstdint>

#include "ctile/core/error.hpp"

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

TensorMapEncoding tensor_map_encoding(const TensorMapSlot& m, const void* data, const std::int64_t* shape,
                                      const std::int64_t* strides, int rank) {
  TensorMapEncoding e;
  auto fail = [&](std::string why) {
    e.error = std::move(why);
    return e;
  };
  if (rank != 2) return fail(detail::cat("a TMA copy reads rank-2 tensors, this one has rank ", rank));
  const std::int64_t es = dtype_size(m.dtype);
  switch (m.dtype) {
    case DType::f16: e.data_type = 6; break;   // CU_TENSOR_MAP_DATA_TYPE_FLOAT16
    case DType::bf16: e.data_type = 9; break;  // CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
    default:
      if (es == 2) e.data_type = 1;  // CU_TENSOR_MAP_DATA_TYPE_UINT16
      else return fail(detail::cat("TMA copies of ", dtype_name(m.dtype), " elements are not supported"));
  }
  switch (m.swizzle) {
    case 32: e.swizzle = 1; break;
    case 64: e.swizzle = 2; break;
    case 128: e.swizzle = 3; break;
    default: return fail(detail::cat("a TMA swizzle of ", m.swizzle, " bytes"));
  }
  e.box[0] = m.box_cols;
  e.box[1] = m.box_rows;
  if (shape[0] <= 0 || shape[1] <= 0) {
    e.empty = true;
    return e;
  }
  if (shape[0] > kTensorMapMaxExtent || shape[1] > kTensorMapMaxExtent)
    return fail(detail::cat("its shape ", shape[0], "x", shape[1], " has an extent above 2^30, the most a TMA copy of "
                            "this kernel addresses (compile it with the option tma = -1 for cp.async copies)"));
  // One row or one column: that axis's stride is never stepped along.
  const std::int64_t row = shape[0] == 1 ? (shape[1] * es + 15) / 16 * 16 : strides[0] * es;
  if ((strides[1] != 1 && shape[1] != 1) || row < shape[1] * es || row % 16 != 0 ||
      reinterpret_cast<std::uintptr_t>(data) % 16 != 0)
    return fail(detail::cat("the view (shape ", shape[0], "x", shape[1], ", strides ", strides[0], ", ", strides[1],
                            ") is not a row-major tensor with 16-byte aligned rows, which the kernel's TMA copies need "
                            "(compile it with the option tma = -1 for cp.async copies)"));
  e.dims[0] = static_cast<std::uint64_t>(shape[1]);
  e.dims[1] = static_cast<std::uint64_t>(shape[0]);
  e.row_stride_bytes = static_cast<std::uint64_t>(row);
  return e;
}

void NativeKernel::write_tensor_maps(std::byte*, std::size_t, const void*, const std::int64_t*, const std::int64_t*,
                                     int) const {
  throw InternalError("platform: this kernel's platform cannot encode TMA tensor maps");
}

}  // namespace ctile::platform
