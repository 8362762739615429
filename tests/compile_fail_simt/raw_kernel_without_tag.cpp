// expect: no matching function|no viable|could not convert|cannot convert
// Raw CUDA kernels are unchecked: making one takes the tag.
#include <ctile/runtime/creation.hpp>
#include <ctile/simt.hpp>

namespace ct = ctile;
namespace cs = ctile::simt;



int main() {
  auto k = cs::RawKernel::from_source(ct::unchecked, "extern \"C\" __global__ void f() {}", "f");
  (void)k;
#ifdef CTILE_MISUSE
  auto k2 = cs::RawKernel::from_source("extern \"C\" __global__ void f() {}", "f");
#endif
  return 0;
}
