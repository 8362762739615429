// Special values (NaN, +-inf, +-0, subnormals, overflow, saturation) through each op family, with
// the results docs/ir.md and IEEE 754 prescribe written down per element: not compared with the
// interpreter but with the expected value, on the interpreter and on the generated code (host
// emulation, real GPU). A NaN is expected where the semantics give one, and nowhere else.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "differential.hpp"

namespace cuda_codegen_test {

// One expected element: NaN (any payload), or a value whose bits must match (the sign of a zero
// included), or within `ulps` ulps of the output type, or either zero when `any_zero_sign`.
struct Expect {
  double v;
  double ulps = 0;
  bool any_zero_sign = false;
};

struct SpecialCase {
  std::string name;
  std::function<std::shared_ptr<const ir::Kernel>()> make;  // inputs in0.., output "out"
  std::vector<DType> in_types;
  std::vector<std::vector<double>> inputs;  // per input, its elements
  std::vector<std::vector<std::int64_t>> int_inputs;  // i64 inputs given exactly (replace `inputs`)
  std::vector<Expect> expected;             // the elements of "out"
};

const std::vector<SpecialCase>& special_cases();

// Runs `sc` with `run` (the interpreter when null) and returns the elements that differ from the
// expectation.
std::vector<std::string> check_special(const SpecialCase& sc, const Runner& run);

}  // namespace cuda_codegen_test
