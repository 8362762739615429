// expect: (use of deleted function .*Tensor<T>::partition\(|call to deleted member function .partition.)
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
