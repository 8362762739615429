// expect-gcc: ^static assertion failed: ctile::launch: a Scalar<T> or Const<T> parameter takes a C\+\+ number$
// expect-clang: ^static_assert failed due to requirement .* .ctile::launch: a Scalar<T> or Const<T> parameter takes a C\+\+ number.$
// A Scalar parameter takes a number, not a tensor handle.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void fill(ct::Mut<float, 1> z, ct::Scalar<float> v) { z.store(v); }

int main() {
  auto [z, v] = ct::launch(fill, ct::zeros<float>({64}).partition({16}), 2.0f).sync();
#ifdef CTILE_MISUSE
  auto x = ct::ones<float>({1}).share();
  auto bad = ct::launch(fill, ct::zeros<float>({64}).partition({16}), x).sync();
#endif
  return std::move(z).unpartition().to_host()[0] == v ? 0 : 1;
}
