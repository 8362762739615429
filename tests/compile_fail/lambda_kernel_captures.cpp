// expect-gcc: ctile: a kernel lambda must not capture anything
// expect-clang: ctile: a kernel lambda must not capture anything
// A lambda without captures is a kernel (no unary + needed); one that captures is not: kernels
// are traced through a function pointer, so run-time values are Scalar<T> or Const<T> parameters.
#include <ctile/ctile.hpp>

namespace ct = ctile;

int main() {
  float k = 3.0f;
  const auto scale = [](ct::Mut<float, 1> z, ct::Scalar<float> s) { z.store(s + ct::Tile<float>::zeros({16})); };
  auto [z, s] = ct::launch(scale, ct::zeros<float>({16}).partition({16}), k).sync();
  (void)s;
#ifdef CTILE_MISUSE
  const auto captures = [k](ct::Mut<float, 1> w) { w.store(k); };
  auto [w] = ct::launch(captures, ct::zeros<float>({16}).partition({16})).sync();
#endif
  return std::move(z).unpartition().to_host()[0] == 3.0f ? 0 : 1;
}
