// An asynchronous launch owns the partition while the work is in flight; touching the moved-from
// name while the kernel may still write it is flagged.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void fill(ct::Mut<float, 1> z) { z.store(1.0f); }

int main() {
  auto stream = ct::Stream::create();
  auto p = ct::zeros<float>({64}).partition({16});
  auto f = ct::launch(fill, std::move(p)).async_on(stream);
  const auto grid = p.grid();  // expect: bugprone-use-after-move
  auto result = std::move(f).get();
  (void)result;
  return grid[0] == 4 ? 0 : 1;
}
