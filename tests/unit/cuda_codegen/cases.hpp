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
