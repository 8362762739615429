// expect-gcc: {aka .class ctile::Shared<float>.} has no member named .partition.$
// expect-clang: ^no member named .partition. in .ctile::Shared<float>.$
// A view of a shared handle is read-only: it cannot be partitioned for writing (only a Tensor,
// which has one owner, can be, e.g. a mutable slice made by std::move(t).slice(...)).
#include <ctile/ctile.hpp>

namespace ct = ctile;

int main() {
  auto s = ct::zeros<float>({8, 8}).share();
  auto t = s.permute({1, 0});
#ifdef CTILE_MISUSE
  auto p = std::move(t).partition({8, 8});
#endif
  return t.shape()[0] == 8 ? 0 : 1;
}
