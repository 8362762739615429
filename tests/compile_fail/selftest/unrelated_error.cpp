// expect: no matching (member )?function for call to .*store
// harness-rejects: does not match the expected regex
// SELF-TEST: a broken copy of store_wrong_element_type that the harness must reject. The misuse
// `z.store(t)` is replaced by an unrelated error, and the expect line is the case's old, loose
// regex: the word "store" still follows "no matching function for call to" in the compiler's
// output (in the quoted source line), but not in the error's own message.
#include <algorithm>

#include <ctile/ctile.hpp>

namespace ct = ctile;

void fill(ct::Mut<float, 1> z) {
  auto t = ct::Tile<double>::full({16}, 0.5);
  z.store(t.to<float>());
#ifdef CTILE_MISUSE
  (void)std::max(1, 2.0);  // instead of z.store(t)
#endif
}

int main() {
  auto [z] = ct::launch(fill, ct::zeros<float>({64}).partition({16})).sync();
  return std::move(z).unpartition().to_host()[0] == 0.5f ? 0 : 1;
}
