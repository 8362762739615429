// expect-gcc: ^use of deleted function .ctile::Partition<T> ctile::Tensor<T>::partition\(ctile::Shape\) const & \[with T = float. ctile::Shape = std::vector<long int>\].$
// expect-clang: ^call to deleted member function .partition.$
// std::move of a const tensor cannot give up ownership either: partition() on a const rvalue
// picks the deleted const& overload.
#include <ctile/ctile.hpp>

namespace ct = ctile;

int main() {
  const auto t = ct::zeros<float>({64});
#ifdef CTILE_MISUSE
  auto bad = std::move(t).partition({16});
#endif
  return t.numel() == 64 ? 0 : 1;
}
