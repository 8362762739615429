// Self-tests of the harness's proof that the GPU ran (run only when a filter names them; CTest
// runs them on tests/unit/cuda_runtime's fake driver, see CMakeLists.txt):
//   selftest_counter   ctile::cuda_launch_count grows by one per launch, not for a race-checked
//                      launch (which runs on the CPU interpreter): must pass.
//   selftest_cpu_only  a test whose only launch is race-checked: the harness must fail it.
#include "harness.hpp"

namespace ct = ctile;
using gpu_test::gpu;

namespace {
void times3(ct::Mut<float, 1> z, ct::Ref<float, 1> x) { z.store(ct::load_like(x, z) * 3.0f); }
}  // namespace

GPU_TEST(selftest_counter) {
  auto x = ct::ones<float>({512}, gpu()).share();
  const std::uint64_t before = ct::cuda_launch_count(0);
  auto z = ct::zeros<float>({512}, gpu()).partition({128});
  for (int i = 0; i < 3; ++i) std::tie(z, std::ignore) = ct::launch(times3, std::move(z), x).sync();
  CHECK(ct::cuda_launch_count(0) == before + 3) << "3 launches counted as " << ct::cuda_launch_count(0) - before;
  auto r = ct::launch(times3, std::move(z), x).race_check().sync();
  (void)r;
  CHECK(ct::cuda_launch_count(0) == before + 3) << "a race-checked launch (run on the CPU) was counted";
  CHECK(ct::cuda_launch_count(1000) == 0 && ct::cuda_launch_count(-1) == 0);
}

GPU_TEST(selftest_cpu_only) {
  auto x = ct::ones<float>({512}, gpu()).share();
  auto [z, x2] = ct::launch(times3, ct::zeros<float>({512}, gpu()).partition({128}), x).race_check().sync();
  CHECK(std::move(z).unpartition().to_host() == std::vector<float>(512, 3.0f));  // right, but not on the GPU
}
