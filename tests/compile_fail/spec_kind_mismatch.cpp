// expect-gcc: ^static assertion failed: ctile::compile_only/warm_up: a Mut<T, N> parameter takes ctile::spec::partition<T>\(shape, tile\)$
// expect-clang: ^static_assert failed due to requirement .* .ctile::compile_only/warm_up: a Mut<T, N> parameter takes ctile::spec::partition<T>\(shape, tile\).$
// compile_only / warm_up check their argument specs like launch() checks its arguments: a shared
// (read-only) spec cannot stand for the Mut<float, 1> output.
#include <ctile/ctile.hpp>

namespace ct = ctile;

void copy(ct::Mut<float, 1> z, ct::Ref<float, 1> x) { z.store(ct::load_like(x, z)); }

int main() {
  const auto opt = ct::CompileOptions{.arch = "sm_80"};
  auto r = ct::compile_only(copy, opt, ct::spec::partition<float>({64}, {16}), ct::spec::shared<float>({64}));
#ifdef CTILE_MISUSE
  auto bad = ct::compile_only(copy, opt, ct::spec::shared<float>({64}), ct::spec::shared<float>({64}));
#endif
  return r.cubin.empty() ? 1 : 0;
}
