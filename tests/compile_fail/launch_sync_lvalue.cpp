// expect-gcc: ^passing .ctile::Launch<.*ctile::Partition<float> >. as .this. argument discards qualifiers \[-fpermissive\]$
// expect-clang: ^.this. argument to member function .sync. is an lvalue, but function has rvalue ref-qualifier$
// expect-note-gcc: ^in call to .*::sync\(std::source_location\) &&
// Running a lazy launch hands its arguments to the work: sync() is callable on an rvalue only.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void fill(ct::Mut<float, 1> z) { z.store(1.0f); }

int main() {
  auto op = ct::launch(fill, ct::zeros<float>({64}).partition({16}));
#ifdef CTILE_MISUSE
  auto [bad] = op.sync();
#endif
  auto [z] = std::move(op).sync();
  return std::move(z).unpartition().to_host()[0] == 1.0f ? 0 : 1;
}
