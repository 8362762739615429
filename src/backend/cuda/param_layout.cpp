// backend::cuda::param_layout_of (cuda_backend.hpp): the code generator's parameter struct as the
// platform's ParamLayout.
#include <cstdint>

#include "cuda_backend.hpp"

namespace ctile::backend::cuda {

// The offsets the generated code declares (codegen.hpp): grid at 0, tensor descriptors from 48, 104
// bytes each, then 8-byte scalar slots, each group in parameter order, then the tensor maps.
platform::ParamLayout param_layout_of(const ir::Kernel& k, const GeneratedKernel& g) {
  platform::ParamLayout l;
  std::uint32_t nt = 0, ns = 0;
  for (const ir::Param& p : k.params) (p.type.kind == ir::TypeKind::Tile ? ns : nt)++;
  constexpr std::uint32_t kGrid = 48, kTensor = static_cast<std::uint32_t>(platform::kTensorSlotBytes);
  l.grid_offset = 0;
  l.bytes = kGrid + kTensor * nt + 8 * ns;
  std::uint32_t ti = 0, si = 0;
  for (const ir::Param& p : k.params) {
    platform::ParamSlot s;
    s.dtype = p.type.dtype;
    s.rank = static_cast<std::uint8_t>(p.type.rank);
    if (p.type.kind == ir::TypeKind::Tile) {
      s.kind = platform::ParamSlot::Kind::Scalar;
      s.offset = kGrid + kTensor * nt + 8 * si++;
    } else {
      s.kind = platform::ParamSlot::Kind::Tensor;
      s.offset = kGrid + kTensor * ti++;
    }
    l.slots.push_back(s);
  }
  for (const GeneratedKernel::Map& m : g.maps) l.maps.push_back(tensor_map_slot(m));
  if (!g.maps.empty()) l.bytes = static_cast<std::uint32_t>(g.params_bytes);
  return l;
}

platform::TensorMapSlot tensor_map_slot(const GeneratedKernel::Map& m) {
  platform::TensorMapSlot t;
  t.slot = static_cast<std::uint32_t>(m.use.param);
  t.offset = static_cast<std::uint32_t>(m.offset);
  t.dtype = m.use.dtype;
  t.rank = static_cast<std::uint32_t>(m.use.rank);
  t.box_rows = static_cast<std::uint32_t>(m.use.box_rows);
  t.box_cols = static_cast<std::uint32_t>(m.use.box_cols);
  t.swizzle = static_cast<std::uint32_t>(m.use.swizzle);
  return t;
}

}  // namespace ctile::backend::cuda
