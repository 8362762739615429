// ct.random: counter-based random numbers. The generator and its float maps are the device
// library's own (include/ctile/device/philox.h, included here as plain C++), so the interpreter
// and the generated code agree bit for bit; this file is compiled with -ffp-contract=off.
#include "ctile/device/philox.h"

#include "interp.hpp"

namespace ctile::backend::cpu {

void op_random(ir::RandomDist d, const Tile& seed, const Tile& offsets, Tile& out) {
  const std::int64_t* s = seed.as<std::int64_t>();
  const std::int64_t* o = offsets.as<std::int64_t>();
  namespace px = ::ct::philox;
  for (std::int64_t i = 0; i < offsets.n; ++i) {
    const px::Words w = px::words(static_cast<std::uint64_t>(s[i]), static_cast<std::uint64_t>(o[i]));
    switch (d) {
      case ir::RandomDist::Bits: out.as<std::uint32_t>()[i] = w.w[0]; break;
      case ir::RandomDist::Uniform: out.as<float>()[i] = px::uniform(w.w[0]); break;
      case ir::RandomDist::Normal: out.as<float>()[i] = px::normal(w.w[0], w.w[1]); break;
    }
  }
}

}  // namespace ctile::backend::cpu
