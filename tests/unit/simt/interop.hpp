// Tile kernels and SIMT kernels together: shared by the unit tests (CPU, fake GPU) and the SIMT
// GPU suite, which runs the same code on the GPU and the CPU and compares.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

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

// k_small_ints over n elements on device `d`: a = i % 256 - 128 (i8), b = i % 256 (u8),
// c = (257 i) % 65536 - 32768 (i16), d = (263 i) % 65536 (u16): at n = 65536 every value of each.
inline std::vector<std::int64_t> run_small_ints(ctile::Device d, std::int64_t n) {
  std::vector<std::int8_t> a(static_cast<std::size_t>(n));
  std::vector<std::uint8_t> b(a.size());
  std::vector<std::int16_t> c(a.size());
  std::vector<std::uint16_t> e(a.size());
  for (std::int64_t i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    a[k] = static_cast<std::int8_t>(i % 256 - 128);
    b[k] = static_cast<std::uint8_t>(i % 256);
    c[k] = static_cast<std::int16_t>((257 * i) % 65536 - 32768);
    e[k] = static_cast<std::uint16_t>((263 * i) % 65536);
  }
  auto [out, a2, b2, c2, e2] =
      ctile::simt::prepare(k_small_ints, ctile::simt::cover(n), ctile::zeros<std::int64_t>({n}, d),
                           ctile::from_host(std::span<const std::int8_t>(a), {n}, d).share(),
                           ctile::from_host(std::span<const std::uint8_t>(b), {n}, d).share(),
                           ctile::from_host(std::span<const std::int16_t>(c), {n}, d).share(),
                           ctile::from_host(std::span<const std::uint16_t>(e), {n}, d).share())
          .sync();
  return out.to_host();
}

}  // namespace simt_test
