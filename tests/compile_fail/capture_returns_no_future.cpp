// expect: ctile::capture\(fn\): fn\(ctile::Capture&\) must return the ctile::Future of its last operation
// The capture function returns the future of its last operation (the graph keeps its handles).
#include <ctile/ctile.hpp>

namespace ct = ctile;

void add_one(ct::Mut<float, 1> z, ct::Ref<float, 1> x) { z.store(ct::load_like(x, z) + 1.0f); }

int main() {
  auto x = ct::ones<float>({64}, ct::cpu()).share();
  auto z = ct::zeros<float>({64}, ct::cpu()).partition({64});
#ifdef CTILE_MISUSE
  auto g = ct::capture(ct::cpu(), [&](ct::Capture& cap) { return ct::launch(add_one, std::move(z), x); });
#else
  auto g = ct::capture(ct::cpu(), [&](ct::Capture& cap) { return ct::launch(add_one, std::move(z), x).async_on(cap.stream()); });
#endif
  return g.valid() ? 0 : 1;
}
