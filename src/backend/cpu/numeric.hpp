// The interpreter computes with the IR's shared numeric rules (src/core/numeric.hpp).
#pragma once

#include "../../core/numeric.hpp"

namespace ctile::backend::cpu {
using namespace ::ctile::numeric;  // NOLINT(google-build-using-namespace): the interpreter's own vocabulary
}  // namespace ctile::backend::cpu
