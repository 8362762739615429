// expect-gcc: ^use of deleted function .ctile::Future<R>::Future\(const ctile::Future<R>&\) \[with R = std::tuple<ctile::Partition<float> >\].$
// expect-clang: ^call to deleted constructor of .Future<.*Partition<float>>>.
// A Future owns the handles its work gives back: one future, one owner.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void fill(ct::Mut<float, 1> z) { z.store(1.0f); }

int main() {
  auto s = ct::Stream::create();
  auto f = ct::launch(fill, ct::zeros<float>({64}).partition({16})).async_on(s);
#ifdef CTILE_MISUSE
  auto copy = f;
#endif
  auto [z] = std::move(f).get();
  return std::move(z).unpartition().to_host()[0] == 1.0f ? 0 : 1;
}
