// Tiled matmul C = A @ B with bf16 inputs and f32 accumulation: each tile block owns a BM x BN
// tile of C and walks K in a run-time loop; `acc` is carried by the loop automatically.
#include <cstdio>

#include <ctile/ctile.hpp>

#include "example_util.hpp"

namespace ct = ctile;

template <int BK>
void matmul(ct::Mut<float, 2> c, ct::Ref<ct::bf16, 2> a, ct::Ref<ct::bf16, 2> b) {
  const auto [bm, bn] = c.tile_shape();
  auto [i, j] = c.tile_index();
  auto pa = a.tiles({bm, BK});  // A in [BM, BK] tiles
  auto pb = b.tiles({BK, bn});  // B in [BK, BN] tiles
  auto acc = ct::Tile<float>::zeros({bm, bn});
  for (auto k : ct::range(pa.count(1)))  // a run-time loop over K tiles; the K tail pads with 0
    acc = ct::mma(pa.load({i, k}), pb.load({k, j}), acc);
  c.store(acc);
}

int main() {
  const std::int64_t m = 200, n = 136, k = 300;  // none divisible by the tiles
  auto a = ct::randn<ct::bf16>({m, k}, 8).share();
  auto b = ct::randn<ct::bf16>({k, n}, 9).share();
  auto c = ct::zeros<float>({m, n}).partition({64, 64});
  auto [c2, a2, b2] = ct::launch(matmul<32>, std::move(c), a, b).sync();

  const auto got = std::move(c2).unpartition().to_host();
  const auto ha = a2.to_host(), hb = b2.to_host();
  std::vector<double> ref(static_cast<std::size_t>(m * n), 0.0);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t kk = 0; kk < k; ++kk) {
      const double av = float(ha[std::size_t(i * k + kk)]);
      for (std::int64_t j = 0; j < n; ++j) ref[std::size_t(i * n + j)] += av * double(float(hb[std::size_t(kk * n + j)]));
    }
  const double err = example::rel_l2(got, ref);
  std::printf("  [%lld x %lld] @ [%lld x %lld] in 64x64 tiles, K step 32\n", (long long)m, (long long)k, (long long)k,
              (long long)n);
  return example::verdict("matmul", err < 1e-5, err);
}
