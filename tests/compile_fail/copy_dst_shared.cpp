// expect: ctile::copy\(dst, src\): dst must be a Tensor, Partition or UncheckedTensor
// ctile::copy writes its destination, so the destination cannot be a Shared (read-only) handle.
#include <ctile/ctile.hpp>

namespace ct = ctile;

int main() {
  auto src = ct::ones<float>({64}, ct::cpu()).share();
#ifdef CTILE_MISUSE
  auto op = ct::copy(ct::zeros<float>({64}, ct::cpu()).share(), src);
#else
  auto op = ct::copy(ct::zeros<float>({64}, ct::cpu()), src);
#endif
  auto [d, s] = std::move(op).sync();
  return d.to_host()[0] == 1.0f ? 0 : 1;
}
