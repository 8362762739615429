// Tile kernels and SIMT kernels together: shared by the unit tests (CPU, fake GPU) and the SIMT
// GPU suite, which runs the same code on the GPU and the CPU and compares.
#pragma once

#include <cstdint>
#include <utility>

#include <ctile/ctile.hpp>

#include "kernels.hpp"

namespace simt_test {

// A tile kernel: z = 2 * x.
inline void tile_double(ctile::Mut<float, 1> z, ctile::Ref<float, 1> x) { z.store(ctile::load_like(x, z) * 2.0f); }

// A graph of a tile launch and a SIMT launch on device `d`: z = 2x (tile), w = scale * z (SIMT
// k_slow_scale, scale 1.5). The graph holds (w, z, spins, scale); the output w is made before the
// capture (nothing is allocated inside one).
inline auto capture_tile_then_simt(ctile::Device d, std::int64_t n, ctile::Shared<float> x, ctile::Tensor<float> w) {
  ctile::Tensor<float> z = ctile::zeros<float>({n}, d);
  return ctile::capture(d, [&](ctile::Capture& cap) {
    return ctile::launch(tile_double, std::move(z).partition({128}), x)
        .async_on(cap.stream())
        .then([n, w = std::move(w)](auto&& r) mutable {
          auto& [zp, x2] = r;
          return ctile::simt::prepare(k_slow_scale, ctile::simt::cover(n), std::move(w), std::move(zp).unpartition().share(),
                                      std::int64_t{10}, 1.5f);
        });
  });
}

}  // namespace simt_test
