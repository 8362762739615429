// expect: (use of deleted function .*Graph<R>::replay\(const ctile::Stream&\) &|call to deleted member function .replay.)
// Graph::replay hands the graph to the replay's future: std::move(g).replay(s) only.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void add_one(ct::Mut<float, 1> z, ct::Ref<float, 1> x) { z.store(ct::load_like(x, z) + 1.0f); }

int main() {
  auto x = ct::ones<float>({64}, ct::cpu()).share();
  auto z = ct::zeros<float>({64}, ct::cpu()).partition({64});
  auto g = ct::capture(ct::cpu(), [&](ct::Capture& cap) { return ct::launch(add_one, std::move(z), x).async_on(cap.stream()); });
  auto s = ct::Stream::create(ct::cpu());
#ifdef CTILE_MISUSE
  auto f = g.replay(s);
#endif
  g = std::move(g).replay(s).get();
  return g.read<0>()[0] == 2.0f ? 0 : 1;
}
