// The kernels the CUDA code generator is tested on: traced from C++ (traced_kernels.cpp) and built
// by hand to cover every op kind and element type (ir_kernels.cpp).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ctile/ir/ir.hpp"

namespace cuda_codegen_test {

namespace ir = ctile::ir;

struct Case {
  std::string name;
  std::function<std::shared_ptr<const ir::Kernel>()> make;
};

void add_traced_cases(std::vector<Case>& out);
void add_ir_cases(std::vector<Case>& out);
// "<name>_tma" for each wgmma K-loop case of `out`: compiled with the option tma = 1 and its
// read-only tensors promised 16-byte aligned with 16-element row strides (make_inputs then gives
// them such views), so their operand rings are copied by TMA; and "<name>_tma_ws", the same with
// the option warp_specialize = 1 (a producer warpgroup issues the copies); and "<name>_whole", with
// cp.async copies (tma = -1) and the last extents also promised multiples of 16, so the copies
// take whole vectors only (the element-by-element path is not compiled) on partial tiles.
void add_tma_cases(std::vector<Case>& out);

// Promises what a TMA copy needs of each read-only tensor parameter of `k` (of rank `rank`; 0: of
// any rank): 16-byte aligned, contiguous rows, and the strides of the axes in the bit mask
// `strides16` multiples of 16 elements. Tests then give such views (make_inputs).
inline void promise_tma_facts(ir::Kernel& k, int rank, unsigned strides16) {
  for (ir::Param& p : k.params)
    if (p.type.kind == ir::TypeKind::Tensor && p.type.access == ir::Access::Read && (rank == 0 || p.type.rank == rank)) {
      p.facts.aligned16 = true;
      p.facts.contiguous_last = true;
      p.facts.stride_div16 |= strides16;
    }
}

inline const std::vector<Case>& all_cases() {
  static const std::vector<Case> cases = [] {
    std::vector<Case> c;
    add_traced_cases(c);
    add_ir_cases(c);
    add_tma_cases(c);
    return c;
  }();
  return cases;
}

}  // namespace cuda_codegen_test
