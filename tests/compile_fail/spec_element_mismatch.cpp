// expect-gcc: ^static assertion failed: ctile::compile_only/warm_up: the spec.s element type differs from the Ref<T, N> parameter.s$
// expect-clang: ^static_assert failed due to requirement .* .ctile::compile_only/warm_up: the spec.s element type differs from the Ref<T, N> parameter.s.$
// compile_only / warm_up check their argument specs like launch() checks its arguments: a spec of
// double cannot stand for the Ref<float, 1> parameter.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void copy(ct::Mut<float, 1> z, ct::Ref<float, 1> x) { z.store(ct::load_like(x, z)); }

int main() {
  auto w = ct::warm_up(copy, ct::spec::partition<float>({64}, {16}), ct::spec::shared<float>({64}));
#ifdef CTILE_MISUSE
  auto bad = ct::warm_up(copy, ct::spec::partition<float>({64}, {16}), ct::spec::shared<double>({64}));
#endif
  return w.was_cached ? 1 : 0;
}
