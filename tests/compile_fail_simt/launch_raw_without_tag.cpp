// expect: no matching function|no viable|could not convert|cannot convert
// ... and so does launching one.
#include <ctile/runtime/creation.hpp>
#include <ctile/simt.hpp>

namespace ct = ctile;
namespace cs = ctile::simt;



int main() {
  auto k = cs::RawKernel::from_source(ct::unchecked, "extern \"C\" __global__ void f(float*) {}", "f");
  (void)k;
#ifdef CTILE_MISUSE
  auto l = cs::launch_raw(k, cs::grid(1), cs::Dims{32}, 0, ct::zeros<float>({4}));
#endif
  return 0;
}
