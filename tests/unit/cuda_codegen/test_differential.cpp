// Differential tests: every kernel of cases.hpp runs on the CPU interpreter and, through the CUDA
// code generator, on the host emulator (emulator.hpp), from identical random inputs (non-contiguous
// and misaligned views included); every tensor the kernel may write must match within the bound
// derived from the error-bound table (differential.hpp, error_bounds.hpp). Also: the comparison's
// own self-tests (a wrong kernel, a result a few ulps past its bound, a NaN where the reference is
// finite must all fail).
#undef cpu_backend  // the real interpreter is the reference here (see CMakeLists.txt)
#include <gtest/gtest.h>

#include "cases.hpp"
#include "differential.hpp"
#include "emulator.hpp"
#include "special_values.hpp"
#include "../cpu_backend/helpers.hpp"

namespace cuda_codegen_test {
namespace {

void run_emulated(const std::shared_ptr<const ir::Kernel>& k, const backend::LaunchConfig& cfg, Inputs& in) {
  auto eb = cuda_emu::backend();
  eb->run(*eb->compile(k), cfg, in.args);
}

class Differential : public ::testing::TestWithParam<std::size_t> {};

TEST_P(Differential, GeneratedCodeMatchesTheInterpreter) {
  const Case& c = all_cases()[GetParam()];
  const auto k = c.make();
  for (const auto& [seed, fill] : run_inputs())
    for (const std::string& f : check_case(c, k, run_emulated, seed, fill)) ADD_FAILURE() << f;
}

INSTANTIATE_TEST_SUITE_P(AllKernels, Differential, ::testing::Range<std::size_t>(0, all_cases().size()),
                         [](const ::testing::TestParamInfo<std::size_t>& i) { return all_cases()[i.param].name; });

// ---- the special values, with the results the IR's semantics prescribe ----

class SpecialValues : public ::testing::TestWithParam<std::size_t> {};

TEST_P(SpecialValues, InterpreterAndGeneratedCodeGiveThePrescribedResults) {
  const SpecialCase& sc = special_cases()[GetParam()];
  for (const std::string& f : check_special(sc, nullptr)) ADD_FAILURE() << "interpreter: " << f;
  for (const std::string& f : check_special(sc, run_emulated)) ADD_FAILURE() << "generated code: " << f;
}

INSTANTIATE_TEST_SUITE_P(Ops, SpecialValues, ::testing::Range<std::size_t>(0, special_cases().size()),
                         [](const ::testing::TestParamInfo<std::size_t>& i) { return special_cases()[i.param].name; });

// ---- self-tests: the comparison rejects what it must ----

const Case& find_case(const std::string& name) {
  for (const Case& c : all_cases())
    if (c.name == name) return c;
  throw std::runtime_error("no case " + name);
}

Buffer f32_buffer(std::vector<float> v) {
  Buffer b;
  b.d = DType::f32;
  b.shape = {static_cast<std::int64_t>(v.size())};
  b.strides = {1};
  b.mem.resize(v.size() * 4);
  std::memcpy(b.mem.data(), v.data(), b.mem.size());
  return b;
}

TEST(DifferentialSelfTest, ExactComparisonRejectsOneUlpNanAndTheSignOfZero) {
  const Tolerance exact;
  const Buffer want = f32_buffer({1.0f, -0.0f, NAN, 3.0f});
  EXPECT_EQ(compare(want, f32_buffer({1.0f, -0.0f, NAN, 3.0f}), exact), "");
  EXPECT_NE(compare(want, f32_buffer({std::nextafter(1.0f, 2.0f), -0.0f, NAN, 3.0f}), exact), "");
  EXPECT_NE(compare(want, f32_buffer({1.0f, 0.0f, NAN, 3.0f}), exact), "");
  EXPECT_NE(compare(want, f32_buffer({1.0f, -0.0f, 0.0f, 3.0f}), exact), "");
  const std::string e = compare(want, f32_buffer({1.0f, -0.0f, NAN, NAN}), exact);
  EXPECT_NE(e.find("NaN where the reference is not"), std::string::npos) << e;
  Tolerance zeros = exact;
  zeros.signed_zeros = false;
  EXPECT_EQ(compare(want, f32_buffer({1.0f, 0.0f, NAN, 3.0f}), zeros), "");
}

TEST(DifferentialSelfTest, BoundedComparisonRejectsAResultJustPastItsBound) {
  Tolerance t;
  t.exact = false;
  t.c_ulps = 3;
  t.model = "3 ulps";
  const float x = 1.5f;
  auto ulps_away = [&](int n) {
    float v = x;
    for (int i = 0; i < n; ++i) v = std::nextafter(v, 2.0f);
    return v;
  };
  EXPECT_EQ(compare(f32_buffer({x}), f32_buffer({ulps_away(3)}), t), "");
  EXPECT_NE(compare(f32_buffer({x}), f32_buffer({ulps_away(4)}), t), "");
  EXPECT_NE(compare(f32_buffer({x}), f32_buffer({NAN}), t), "") << "NaN never passes for a finite reference";
  EXPECT_NE(compare(f32_buffer({x}), f32_buffer({INFINITY}), t), "");
  EXPECT_EQ(compare(f32_buffer({INFINITY}), f32_buffer({INFINITY}), t), "");
  EXPECT_NE(compare(f32_buffer({INFINITY}), f32_buffer({-INFINITY}), t), "");
  // A clean run whose reference is all NaN compares nothing: that is a failure too.
  EXPECT_NE(compare(f32_buffer({NAN, NAN}), f32_buffer({NAN, NAN}), t, nullptr, /*vacuity=*/true), "");
}

// The interpreter's own exp results moved past the table's bound (3 ulps of f32) must fail; moved
// to the bound they must pass.
TEST(DifferentialSelfTest, AnExpResultPerturbedPastTheTableBoundFails) {
  const Case& c = find_case("unary_f32");
  const auto k = c.make();
  const double bound = error_bounds::ulps(error_bounds::Fn::Exp, DType::f32);
  for (int extra : {0, 1}) {
    const int steps = static_cast<int>(bound) + extra;
    Runner perturbed = [&](const std::shared_ptr<const ir::Kernel>& kk, const backend::LaunchConfig& cfg, Inputs& in) {
      auto cb = backend::cpu_backend();
      cb->run(*cb->compile(kk), cfg, in.args);
      // out1 is exp (outputs follow UnaryFn order: neg, exp, ...); move element 5 `steps` ulps up
      for (std::size_t i = 0; i < kk->params.size(); ++i)
        if (kk->params[i].name == "out1") {
          float* p = reinterpret_cast<float*>(in.bufs[i].mem.data()) + 5;
          for (int s = 0; s < steps; ++s) *p = std::nextafter(*p, INFINITY);
        }
    };
    const auto fails = check_case(c, k, perturbed, 7, Fill::Clean);
    if (extra == 0) {
      EXPECT_TRUE(fails.empty()) << "moved to the bound: " << (fails.empty() ? "" : fails[0]);
    } else {
      ASSERT_EQ(fails.size(), 1u) << "moved past the bound must fail exactly the exp output";
      EXPECT_NE(fails[0].find("parameter 'out1'"), std::string::npos) << fails[0];
      EXPECT_NE(fails[0].find("exp f32: 3"), std::string::npos) << fails[0];
    }
  }
}

// A generated kernel with one op altered (the add of vector_add emitted as a subtract) must fail.
TEST(DifferentialSelfTest, AGeneratedKernelWithOneOpAlteredFails) {
  const Case& c = find_case("example_vector_add");
  const auto k = c.make();
  Runner altered = [](const std::shared_ptr<const ir::Kernel>& kk, const backend::LaunchConfig& cfg, Inputs& in) {
    auto g = backend::cuda::generate(*kk, backend::cuda::codegen_options_from_env(90));
    const std::string from = "ct::op_add(", to = "ct::op_sub(";
    const auto at = g.source.find(from);
    ASSERT_NE(at, std::string::npos) << "the generated source has no " << from;
    g.source.replace(at, from.size(), to);
    const auto params = backend::cuda::pack_params(*kk, cfg, in.args);
    cuda_emu::build(g)(params.data(), 2, g.smem_bytes);
  };
  const auto fails = check_case(c, k, altered, 8, Fill::Clean);
  ASSERT_FALSE(fails.empty()) << "an altered kernel passed the differential comparison";
  EXPECT_NE(fails[0].find("must be bit-identical"), std::string::npos) << fails[0];
}

// A kernel whose bound does not follow op by op and that has no declared model fails: there is no
// default tolerance.
TEST(DifferentialSelfTest, AKernelWithoutAnErrorModelFails) {
  cpu_test::KB kb("exp_of_exp");
  const auto x = kb.tensor("x", DType::f32, 1);
  const auto o = kb.piece("out", DType::f32, {64});
  const auto v = kb.load(kb.partition(x, {64}), {kb.block_id(0)});
  kb.store_piece(o, kb.unary(ir::UnaryFn::Exp, kb.unary(ir::UnaryFn::Exp, v)));
  const auto k = kb.finish();
  const Case c{"exp_of_exp", [k] { return k; }};
  const auto fails = check_case(c, k, run_emulated, 9, Fill::Clean);
  ASSERT_EQ(fails.size(), 1u);
  EXPECT_NE(fails[0].find("declare a model"), std::string::npos) << fails[0];
}

}  // namespace
}  // namespace cuda_codegen_test
