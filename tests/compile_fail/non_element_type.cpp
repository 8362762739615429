// expect-gcc: ^template constraint failure for .template<class T>  requires  Element<T> class ctile::Tensor.$
// expect-clang: ^constraints not satisfied for class template .Tensor. \[with T = char\]$
// expect-note-gcc: ^the required expression .ctile::dtype_traits<T>::value. is invalid$
// expect-note-clang: ^because .char. does not satisfy .Element.$
// Tensors and tiles hold one of ctile's element types; `char` (neither i8 nor u8) is not one.
#include <cstdint>

#include <ctile/ctile.hpp>

namespace ct = ctile;

int main() {
  ct::Tensor<std::int8_t> ok = ct::zeros<std::int8_t>({4});
#ifdef CTILE_MISUSE
  ct::Tensor<char> bad = ct::zeros<std::int8_t>({4});
#endif
  return ok.numel() == 4 ? 0 : 1;
}
