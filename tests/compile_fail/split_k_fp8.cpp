// expect: matmul_split_k: fp8 operands need per-tensor scales: use ctile::kernels::matmul_fp8
// The split-K product takes 16-bit operands; fp8 ones go through matmul_fp8, whose per-tensor
// scales are part of the call.
#include <ctile/ctile.hpp>
#include <ctile/kernels/matmul_split_k.hpp>

namespace ct = ctile;

int main() {
  auto a = ct::ones<ct::bf16>({16, 128}).share();
  auto b = ct::ones<ct::bf16>({128, 64}).share();
  auto a8 = ct::ones<ct::f8e4m3>({16, 128}).share();
  auto b8 = ct::ones<ct::f8e4m3>({128, 64}).share();
#ifdef CTILE_MISUSE
  auto [c8, x, y] = ct::kernels::matmul_split_k(ct::zeros<ct::f8e4m3>({16, 64}), a8, b8).sync();
  (void)c8;
  (void)x;
  (void)y;
#endif
  auto [c, a2, b2] = ct::kernels::matmul_split_k(ct::zeros<ct::bf16>({16, 64}), a, b).sync();
  (void)a2;
  (void)b2;
  (void)a8;
  (void)b8;
  return float(c.to_host()[0]) == 128.0f ? 0 : 1;
}
