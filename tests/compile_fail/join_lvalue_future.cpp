// expect-gcc: ^cannot bind rvalue reference of type .ctile::Future<std::tuple<ctile::Partition<float> > >&&. to lvalue of type .ctile::Future<std::tuple<ctile::Partition<float> > >.$
// expect-clang: ^no matching function for call to .join.$
// expect-note-clang: not viable: expects an rvalue for 1st argument$
// join() takes the futures it combines by rvalue: join(std::move(a), std::move(b)).
#include <ctile/ctile.hpp>

namespace ct = ctile;

void fill(ct::Mut<float, 1> z) { z.store(1.0f); }

int main() {
  auto s = ct::Stream::create();
  auto a = ct::launch(fill, ct::zeros<float>({64}).partition({16})).async_on(s);
  auto b = ct::launch(fill, ct::zeros<float>({32}).partition({16})).async_on(s);
#ifdef CTILE_MISUSE
  auto bad = ct::join(a, b);
#endif
  auto [ra, rb] = ct::join(std::move(a), std::move(b)).get();
  return std::get<0>(ra).valid() && std::get<0>(rb).valid() ? 0 : 1;
}
