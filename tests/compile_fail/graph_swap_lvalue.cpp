// expect: Graph::swap: move the replacement in
// Graph::swap takes ownership of the replacement: it must be moved in.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void add_one(ct::Mut<float, 1> z, ct::Ref<float, 1> x) { z.store(ct::load_like(x, z) + 1.0f); }

int main() {
  auto x = ct::ones<float>({64}, ct::cpu()).share();
  auto z = ct::zeros<float>({64}, ct::cpu()).partition({64});
  auto g = ct::capture(ct::cpu(), [&](ct::Capture& cap) { return ct::launch(add_one, std::move(z), x).async_on(cap.stream()); });
  auto other = ct::zeros<float>({64}, ct::cpu()).partition({64});
#ifdef CTILE_MISUSE
  auto old = g.swap<0>(other);
#else
  auto old = g.swap<0>(std::move(other));
#endif
  return old.valid() ? 0 : 1;
}
