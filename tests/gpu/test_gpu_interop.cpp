// Host views and DLPack on a real GPU: kernels read permuted, broadcast and sliced views (the
// launch packs their strides and offsets; the specialisation facts are the views') and give the
// CPU interpreter's results exactly; a mutable slice is written and given back whole; a DLPack
// round trip of device memory needs no copy.
#include <random>

#include "harness.hpp"

namespace ct = ctile;
using gpu_test::gpu;
using gpu_test::seed;

namespace {

void add2(ct::Mut<float, 2> z, ct::Ref<float, 2> x, ct::Ref<float, 2> y) {
  z.store(ct::load_like(x, z) + ct::load_like(y, z));
}
void scale1(ct::Mut<float, 1> z, ct::Ref<float, 1> x) { z.store(ct::load_like(x, z) * 3.0f); }

std::vector<float> random_floats(std::size_t n, std::uint64_t s) {
  std::mt19937_64 g(s);
  std::uniform_real_distribution<float> d(-4.0f, 4.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(g);
  return v;
}

// add2 over views of a [c, r] matrix (read transposed, from column 1 on: a misaligned start) and a
// broadcast row, on device d.
std::vector<float> views_on(ct::Device d, const std::vector<float>& ha, const std::vector<float>& hb, std::int64_t r,
                            std::int64_t c) {
  auto a = ct::from_host<float>(ha, {c, r + 1}, d).share();
  auto b = ct::from_host<float>(hb, {c}, d).share();
  auto at = a.slice(1, 1, r + 1).permute({1, 0});  // [r, c], strides [1, r + 1], offset 1
  auto bb = b.reshape({1, c}).expand({r, c});      // [r, c], strides [0, 1]
  auto [z, a2, b2] = ct::launch(add2, ct::zeros<float>({r, c}, d).partition({16, 32}), at, bb).sync();
  return std::move(z).unpartition().to_host();
}

}  // namespace

GPU_TEST(runtime_views_are_kernel_inputs) {
  const std::int64_t r = 300, c = 200;
  const auto ha = random_floats(static_cast<std::size_t>(c * (r + 1)), seed(41));
  const auto hb = random_floats(static_cast<std::size_t>(c), seed(42));
  const auto got = views_on(gpu(), ha, hb, r, c);
  CHECK_EQUAL(got, views_on(ct::cpu(), ha, hb, r, c), "add2 over a transposed slice and a broadcast row");
  // And against the definition.
  std::vector<float> want(static_cast<std::size_t>(r * c));
  for (std::int64_t i = 0; i < r; ++i)
    for (std::int64_t j = 0; j < c; ++j)
      want[static_cast<std::size_t>(i * c + j)] = ha[static_cast<std::size_t>(j * (r + 1) + 1 + i)] + hb[static_cast<std::size_t>(j)];
  CHECK_EQUAL(got, want, "add2 over views against the host reference");
}

GPU_TEST(runtime_mutable_slice_gives_the_parent_back) {
  const std::int64_t n = 100000;
  const auto hz = random_floats(static_cast<std::size_t>(n), seed(43));
  const auto hx = random_floats(40000, seed(44));
  auto part = ct::from_host<float>(hz, {n}, gpu()).slice(0, 30001, 70001);  // starts 4 bytes past an aligned address
  auto x = ct::from_host<float>(hx, {40000}, gpu()).share();
  auto [zp, x2] = ct::launch(scale1, std::move(part).partition({1024}), x).sync();
  const auto got = std::move(zp).unpartition().unslice().to_host();
  std::vector<float> want = hz;
  for (std::size_t i = 0; i < hx.size(); ++i) want[30001 + i] = hx[i] * 3.0f;
  CHECK_EQUAL(got, want, "a kernel wrote the slice and nothing else");
}

GPU_TEST(runtime_dlpack_round_trip_of_device_memory) {
  auto s = ct::Stream::create(gpu());
  const auto h = random_floats(4096, seed(45));
  auto t = ct::from_host<float>(h, {64, 64}, gpu());
  const void* addr = t.core(ct::unchecked)->data();
  auto* m = ct::to_dlpack(std::move(t), s);
  CHECK(m->dl_tensor.device.device_type == ct::dlpack::kDLCUDA) << m->dl_tensor.device.device_type;
  CHECK(m->dl_tensor.data == addr) << "the export copied";
  auto back = ct::from_dlpack_shared<float>(m, s);
  CHECK(back.core(ct::unchecked)->data() == addr) << "the import copied";
  auto [z, bt, b2] = ct::launch(add2, ct::zeros<float>({64, 64}, gpu()).partition({16, 16}), back.permute({1, 0}), back).sync_on(s);
  const auto got = std::move(z).unpartition().to_host();
  std::vector<float> want(h.size());
  for (std::size_t i = 0; i < 64; ++i)
    for (std::size_t j = 0; j < 64; ++j) want[i * 64 + j] = h[j * 64 + i] + h[i * 64 + j];
  CHECK_EQUAL(got, want, "x^T + x through a DLPack round trip");
}
