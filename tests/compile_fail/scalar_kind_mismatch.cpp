// expect-gcc: ^static assertion failed: ctile::launch: a scalar argument must be of the parameter.s kind \(integer for integer, floating point for floating point\). convert it explicitly$
// expect-clang: ^static_assert failed due to requirement .* .ctile::launch: a scalar argument must be of the parameter.s kind \(integer for integer, floating point for floating point\). convert it explicitly.$
// A Scalar<std::int32_t> parameter takes an integer; 2.5 would be truncated silently, so it is
// rejected (convert explicitly).
#include <cstdint>

#include <ctile/ctile.hpp>

namespace ct = ctile;

void fill(ct::Mut<std::int32_t, 1> z, ct::Scalar<std::int32_t> v) { z.store(v); }

int main() {
  auto [z, v] = ct::launch(fill, ct::zeros<std::int32_t>({64}).partition({16}), 3).sync();
#ifdef CTILE_MISUSE
  auto bad = ct::launch(fill, ct::zeros<std::int32_t>({64}).partition({16}), 2.5).sync();
#endif
  return std::move(z).unpartition().to_host()[0] == v ? 0 : 1;
}
