// get() consumes the future: the payload is handed back once.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void fill(ct::Mut<float, 1> z) { z.store(1.0f); }

int main() {
  auto stream = ct::Stream::create();
  auto f = ct::launch(fill, ct::zeros<float>({64}).partition({16})).async_on(stream);
  auto first = std::move(f).get();
  auto second = std::move(f).get();  // expect: bugprone-use-after-move
  (void)first;
  (void)second;
  return 0;
}
