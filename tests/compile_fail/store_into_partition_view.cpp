// expect-gcc: ^.class ctile::PartitionView<float, 1>. has no member named .store.$
// expect-clang: ^no member named .store. in .ctile::PartitionView<float, 1>.$
// Cutting a shared input into tiles (Ref::tiles) gives a read-only view: it can load, not store.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void copy(ct::Mut<float, 1> z, ct::Ref<float, 1> x) {
  auto view = x.tiles({16});
  auto t = view.load({ct::block_id(0)});
  z.store(t);
#ifdef CTILE_MISUSE
  view.store({ct::block_id(0)}, t);
#endif
}

int main() {
  auto x = ct::ones<float>({64}).share();
  auto z = ct::zeros<float>({64}).partition({16});
  auto [z2, x2] = ct::launch(copy, std::move(z), x).sync();
  (void)x2;
  return std::move(z2).unpartition().to_host().size() == 64 ? 0 : 1;
}
