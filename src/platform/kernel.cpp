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
    case DType::f8e4m3: return f8e4m3(static_cast<float>(v.f)).bits;
    case DType::f8e5m2: return f8e5m2(static_cast<float>(v.f)).bits;
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
  if (rank != static_cast<int>(m.rank) || rank < 2 || rank > 5)
    return fail(detail::cat("the kernel's TMA copies read tensors of rank ", m.rank, ", this one has rank ", rank));
  const std::int64_t es = dtype_size(m.dtype);
  switch (m.dtype) {
    case DType::f16: e.data_type = 6; break;   // CU_TENSOR_MAP_DATA_TYPE_FLOAT16
    case DType::bf16: e.data_type = 9; break;  // CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
    default:
      if (es == 2) e.data_type = 1;  // CU_TENSOR_MAP_DATA_TYPE_UINT16
      else if (es == 1) e.data_type = 0;  // CU_TENSOR_MAP_DATA_TYPE_UINT8 (fp8: the bytes as they are)
      else return fail(detail::cat("TMA copies of ", dtype_name(m.dtype), " elements are not supported"));
  }
  switch (m.swizzle) {
    case 32: e.swizzle = 1; break;
    case 64: e.swizzle = 2; break;
    case 128: e.swizzle = 3; break;
    default: return fail(detail::cat("a TMA swizzle of ", m.swizzle, " bytes"));
  }
  e.rank = static_cast<std::uint32_t>(rank);
  e.box[0] = m.box_cols;
  e.box[1] = m.box_rows;
  for (int i = 2; i < rank; ++i) e.box[i] = 1;
  std::string shape_s, strides_s;
  bool empty = false, big = false;
  for (int d = 0; d < rank; ++d) {
    shape_s += (d ? "x" : "") + std::to_string(shape[d]);
    strides_s += (d ? ", " : "") + std::to_string(strides[d]);
    empty = empty || shape[d] <= 0;
    big = big || shape[d] > kTensorMapMaxExtent;
  }
  if (empty) {
    e.empty = true;
    return e;
  }
  if (big)
    return fail(detail::cat("its shape ", shape_s, " has an extent above 2^30, the most a TMA copy of "
                            "this kernel addresses (compile it with the option tma = -1 for cp.async copies)"));
  // Row-major with 16-byte aligned strides. An axis of extent 1 is never stepped along: its stride
  // is taken as the span of the axes inside it (rounded up to 16 bytes).
  bool ok = (strides[rank - 1] == 1 || shape[rank - 1] == 1) && reinterpret_cast<std::uintptr_t>(data) % 16 == 0;
  std::int64_t span = shape[rank - 1] * es;  // bytes the axes inside the current one cover
  for (int d = rank - 2; d >= 0; --d) {
    const std::int64_t st = shape[d] == 1 ? (span + 15) / 16 * 16 : strides[d] * es;
    ok = ok && st >= span && st % 16 == 0;
    e.strides_bytes[rank - 2 - d] = static_cast<std::uint64_t>(st);
    span = st * shape[d];
  }
  if (!ok)
    return fail(detail::cat("the view (shape ", shape_s, ", strides ", strides_s,
                            ") is not a row-major tensor with 16-byte aligned rows, which the kernel's TMA copies need "
                            "(compile it with the option tma = -1 for cp.async copies)"));
  for (int i = 0; i < rank; ++i) e.dims[i] = static_cast<std::uint64_t>(shape[rank - 1 - i]);
  return e;
}

void NativeKernel::write_tensor_maps(std::byte*, std::size_t, const void*, const std::int64_t*, const std::int64_t*,
                                     int) const {
  throw InternalError("platform: this kernel's platform cannot encode TMA tensor maps");
}

}  // namespace ctile::platform
