// expect: (use of deleted function .*Graph<R>::Graph\(const ctile::Graph<R>&\)|call to deleted constructor of .*Graph<)
// A Graph owns the tensors its nodes use: one graph, one owner (no copies).
#include <ctile/ctile.hpp>

namespace ct = ctile;

void add_one(ct::Mut<float, 1> z, ct::Ref<float, 1> x) { z.store(ct::load_like(x, z) + 1.0f); }

int main() {
  auto x = ct::ones<float>({64}, ct::cpu()).share();
  auto z = ct::zeros<float>({64}, ct::cpu()).partition({64});
  auto g = ct::capture(ct::cpu(), [&](ct::Capture& cap) { return ct::launch(add_one, std::move(z), x).async_on(cap.stream()); });
#ifdef CTILE_MISUSE
  auto copy = g;
#endif
  g = std::move(g).sync_on(ct::Stream::create(ct::cpu()));
  return g.read<0>()[0] == 2.0f ? 0 : 1;
}
