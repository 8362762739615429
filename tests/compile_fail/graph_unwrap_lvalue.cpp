// expect: (use of deleted function .*Graph<R>::unwrap\(\) &|call to deleted member function .unwrap.)
// Graph::unwrap gives the handles back and ends the graph: std::move(g).unwrap() only.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void add_one(ct::Mut<float, 1> z, ct::Ref<float, 1> x) { z.store(ct::load_like(x, z) + 1.0f); }

int main() {
  auto x = ct::ones<float>({64}, ct::cpu()).share();
  auto z = ct::zeros<float>({64}, ct::cpu()).partition({64});
  auto g = ct::capture(ct::cpu(), [&](ct::Capture& cap) { return ct::launch(add_one, std::move(z), x).async_on(cap.stream()); });
#ifdef CTILE_MISUSE
  auto [bad, bad_x] = g.unwrap();
#endif
  auto [z2, x2] = std::move(g).unwrap();
  return z2.valid() && x2.valid() ? 0 : 1;
}
