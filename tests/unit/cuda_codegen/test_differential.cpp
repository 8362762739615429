// Differential tests: every kernel of cases.hpp runs on the CPU interpreter and, through the CUDA
// code generator, on the host emulator (emulator.hpp), from identical random inputs (non-contiguous
// and misaligned views included); every tensor the kernel may write must come out the same.
#undef cpu_backend  // the real interpreter is the reference here (see CMakeLists.txt)
#include <gtest/gtest.h>

#include "cases.hpp"
#include "differential.hpp"
#include "emulator.hpp"

namespace cuda_codegen_test {
namespace {

class Differential : public ::testing::TestWithParam<std::size_t> {};

TEST_P(Differential, GeneratedCodeMatchesTheInterpreter) {
  const Case& c = all_cases()[GetParam()];
  const auto k = c.make();
  // Atomics run here for crashes and hangs; the CPU suite checks their semantics (CpuAtomics.*).
  const Policy pol = policy(c.name);
  for (unsigned seed : {1u, 2u, 3u}) {
    Inputs cpu = make_inputs(*k, pol.one_block, seed);
    Inputs emu = make_inputs(*k, pol.one_block, seed);
    backend::LaunchConfig cfg;
    cfg.grid = cpu.grid;
    cfg.kernel_name = c.name;
    auto cb = backend::cpu_backend();
    cb->run(*cb->compile(k), cfg, cpu.args);
    auto eb = cuda_emu::backend();
    eb->run(*eb->compile(k), cfg, emu.args);
    if (pol.racy) continue;
    for (std::size_t i = 0; i < k->params.size(); ++i) {
      const ir::Param& p = k->params[i];
      if (p.type.kind == ir::TypeKind::Tile || p.type.access == ir::Access::Read) continue;
      const std::string err = compare(cpu.bufs[i], emu.bufs[i], pol.scale, pol.min_tol);
      EXPECT_EQ(err, "") << c.name << ", parameter '" << p.name << "' (" << type_str(p.type) << "), seed " << seed;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllKernels, Differential, ::testing::Range<std::size_t>(0, all_cases().size()),
                         [](const ::testing::TestParamInfo<std::size_t>& i) { return all_cases()[i.param].name; });

}  // namespace
}  // namespace cuda_codegen_test
