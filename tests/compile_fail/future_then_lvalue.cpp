// expect-gcc: ^passing .ctile::Future<std::tuple<ctile::Partition<float> > >. as .this. argument discards qualifiers \[-fpermissive\]$
// expect-clang: ^no matching member function for call to .then.$
// expect-note-gcc: ^in call to .auto ctile::Future<R>::then\(F&&, std::source_location\) &&
// expect-note-clang: ^candidate function template not viable: expects an rvalue for object argument$
// Future::then() moves the payload into the follow-up, so it consumes the future: rvalues only.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void fill(ct::Mut<float, 1> z) { z.store(1.0f); }
void twice(ct::Mut<float, 1> z) { z.store(z.load() * 2.0f); }

int main() {
  auto s = ct::Stream::create();
  auto f = ct::launch(fill, ct::zeros<float>({64}).partition({16})).async_on(s);
  auto step = [](std::tuple<ct::Partition<float>>&& r) { return ct::launch(twice, std::move(std::get<0>(r))); };
#ifdef CTILE_MISUSE
  auto bad = f.then(step);
#endif
  auto [z] = std::move(f).then(step).get();
  return std::move(z).unpartition().to_host()[0] == 2.0f ? 0 : 1;
}
