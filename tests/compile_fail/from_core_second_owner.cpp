// expect: (is private|is protected|private member|protected member|inaccessible|deleted|no matching (member )?function for call to .*(core|from_core))
// A second owner of a tensor, made without a copy and without ctile::unchecked: the public
// "launch glue" members Tensor::core() and Tensor::from_core() hand out and adopt the shared core,
// so two Tensors (or a Tensor and a Partition, via Partition::from_core) can write one storage.
//
// KNOWN HOLE (this test fails until it is closed): the misuse compiles today. Making core() /
// from_core() reachable only by the launch glue (a passkey or friend), or tagging them with
// ctile::unchecked, closes it.
#include <ctile/ctile.hpp>

namespace ct = ctile;

int main() {
  auto t = ct::zeros<float>({64});
#ifdef CTILE_MISUSE
  auto twin = ct::Tensor<float>::from_core(t.core());
  auto p = std::move(twin).partition({16});  // a writable partition of memory `t` still owns
#endif
  return t.numel() == 64 ? 0 : 1;
}
