// expect-gcc: ^no matching function for call to .matmul_fp8\(
// expect-clang: ^no matching function for call to .matmul_fp8.$
// The library's FP8 product takes the per-tensor scales as part of the call: without them it does
// not compile (a product of quantized values without the scales that put it back in range is a
// wrong result that looks right).
#include <ctile/ctile.hpp>
#include <ctile/kernels/matmul_fp8.hpp>

namespace ct = ctile;

int main() {
  auto a = ct::ones<ct::f8e4m3>({64, 128}).share();
  auto bt = ct::ones<ct::f8e4m3>({64, 128}).share();
#ifdef CTILE_MISUSE
  auto [c, a2, bt2, s] = ct::kernels::matmul_fp8(ct::zeros<ct::bf16>({64, 64}), a, bt).sync();
#else
  auto [c, a2, bt2, s] = ct::kernels::matmul_fp8(ct::zeros<ct::bf16>({64, 64}), a, bt, 0.5f, 2.0f).sync();
#endif
  (void)a2;
  (void)bt2;
  (void)s;
  return float(std::move(c).unpartition().to_host()[0]) == 128.0f ? 0 : 1;
}
