// expect: (use of deleted function .*BoundKernel<P>::BoundKernel\(const ctile::BoundKernel<P>&\)|call to deleted constructor of .*BoundKernel<)
// A BoundKernel owns its parameter block (one per thread): no copies; bind again for another thread.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void add_one(ct::Mut<float, 1> z, ct::Ref<float, 1> x) { z.store(ct::load_like(x, z) + 1.0f); }

int main() {
  auto k = ct::bind_on(ct::cpu(), add_one, ct::spec::partition<float>({64}, {64}), ct::spec::shared<float>({64}));
#ifdef CTILE_MISUSE
  auto copy = k;
#endif
  return k.valid() ? 0 : 1;
}
