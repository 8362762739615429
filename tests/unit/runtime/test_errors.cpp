// RuntimeErrors: every misuse the host runtime rejects at run time, each with a UserError that
// names the problem (never an InternalError), and failed consuming calls lose nothing.
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "ctile/runtime/creation.hpp"
#include "ctile/runtime/future.hpp"
#include "ctile/runtime/partition.hpp"
#include "ctile/runtime/shared.hpp"
#include "ctile/runtime/unchecked_tensor.hpp"
#include "test_helpers.hpp"

namespace ct = ctile;
using ct::test::expect_user_error;

namespace {

TEST(RuntimeErrors, UseOfMovedFromTensor) {
  auto t = ct::zeros<float>({4});
  auto p = std::move(t).partition({2});
  const auto msg = {std::string_view("use of a moved-from Tensor<f32>"),
                    std::string_view("moved into a launch, a partition or a shared handle")};
  // NOLINTBEGIN(bugprone-use-after-move): the point of the test
  expect_user_error([&] { (void)t.shape(); }, msg);
  expect_user_error([&] { (void)t.numel(); }, msg);
  expect_user_error([&] { (void)t.to_host(); }, msg);
  expect_user_error([&] { (void)t.core(ct::unchecked); }, msg);
  expect_user_error([&] { (void)t.data(ct::unchecked); }, msg);
  expect_user_error([&] { (void)std::move(t).partition({2}); }, msg);
  expect_user_error([&] { (void)std::move(t).share(); }, msg);
  expect_user_error([&] { (void)std::move(t).reshape({4}); }, msg);
  expect_user_error([&] { (void)std::move(t).slice(0, 0, 1); }, msg);
  expect_user_error([&] { (void)ct::unchecked_mut(ct::unchecked, std::move(t)); }, msg);
  auto h = ct::zeros<ct::f16>({1});
  auto h2 = std::move(h);
  expect_user_error([&] { (void)h.dtype(); }, {"moved-from Tensor<f16>"});
  // NOLINTEND(bugprone-use-after-move)
  EXPECT_FALSE(t.valid());  // NOLINT(bugprone-use-after-move)
}

TEST(RuntimeErrors, UseOfMovedFromPartition) {
  auto p = ct::zeros<double>({4}).partition({2});
  auto t = std::move(p).unpartition();
  // NOLINTBEGIN(bugprone-use-after-move)
  expect_user_error([&] { (void)p.grid(); }, {"use of a moved-from Partition<f64>"});
  expect_user_error([&] { (void)p.tile_shape(); }, {"moved-from Partition<f64>"});
  expect_user_error([&] { (void)std::move(p).unpartition(); }, {"moved-from Partition<f64>"});
  // NOLINTEND(bugprone-use-after-move)
}

TEST(RuntimeErrors, UseOfMovedFromOrEmptyShared) {
  auto s = ct::zeros<std::int32_t>({4}).share();
  auto s2 = std::move(s);
  // NOLINTBEGIN(bugprone-use-after-move)
  expect_user_error([&] { (void)s.shape(); }, {"use of a moved-from Shared<i32>"});
  expect_user_error([&] { (void)s.holders(); }, {"moved-from Shared<i32>"});
  expect_user_error([&] { (void)s.slice(0, 0, 1); }, {"moved-from Shared<i32>"});
  expect_user_error([&] { (void)std::move(s).unshare(); }, {"moved-from Shared<i32>"});
  // NOLINTEND(bugprone-use-after-move)
  ct::Shared<float> empty;
  expect_user_error([&] { (void)empty.to_host(); }, {"Shared<f32>", "default-constructed"});
}

TEST(RuntimeErrors, UseOfMovedFromUncheckedTensorAndFuture) {
  auto u = ct::unchecked_mut(ct::unchecked, ct::zeros<float>({2}));
  auto t = std::move(u).into_tensor();
  // NOLINTBEGIN(bugprone-use-after-move)
  expect_user_error([&] { (void)u.core(ct::unchecked); }, {"use of a moved-from UncheckedTensor<f32>"});
  auto st = std::make_shared<ct::FutureState<int>>();
  st->payload = 1;
  ct::Future<int> f(st);
  (void)std::move(f).get();
  expect_user_error([&] { (void)f.ready(); }, {"moved-from Future"});
  expect_user_error([&] { (void)std::move(f).get(); }, {"moved-from Future"});
  // NOLINTEND(bugprone-use-after-move)
  expect_user_error([&] { (void)ct::Future<int>(std::make_shared<ct::FutureState<int>>()); }, {"without its payload"});
}

TEST(RuntimeErrors, UnshareWithAnotherHolder) {
  auto s = ct::zeros<float>({8}).share();
  auto other = s;
  expect_user_error([&] { (void)std::move(s).unshare(); }, {"unshare", "1 other holder", "[8]"});
  EXPECT_TRUE(s.valid());  // NOLINT(bugprone-use-after-move): the handle is intact
  auto third = s.slice(0, 0, 4);
  expect_user_error([&] { (void)std::move(s).unshare(); }, {"2 other holders"});
  EXPECT_EQ(s.holders(), 3);  // NOLINT(bugprone-use-after-move)
}

TEST(RuntimeErrors, UnshareWhileALaunchReads) {
  auto s = ct::zeros<float>({8}).share();
  auto reader = ct::Event::create();
  s.core(ct::unchecked)->storage->record_read(reader);  // an in-flight launch reading s
  expect_user_error([&] { (void)std::move(s).unshare(); }, {"unshare", "still reads"});
  EXPECT_TRUE(s.valid());  // NOLINT(bugprone-use-after-move)
  reader.complete();
  auto t = std::move(s).unshare();
  EXPECT_EQ(t.numel(), 8);
}

TEST(RuntimeErrors, BadTileShapes) {
  auto t = ct::zeros<float>({8, 8});
  expect_user_error([&] { (void)std::move(t).partition({3, 4}); }, {"tile extent 3", "not a power of two", "[8, 8]", "[3, 4]"});
  expect_user_error([&] { (void)std::move(t).partition({4}); }, {"tile rank 1 differs from the tensor rank 2"});
  expect_user_error([&] { (void)std::move(t).partition({4, 0}); }, {"tile extent 0", "not a power of two"});
  expect_user_error([&] { (void)std::move(t).partition({-4, 4}); }, {"tile extent -4"});
  // Each failed call lost nothing.
  ASSERT_TRUE(t.valid());  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(t.shape(), (ct::Shape{8, 8}));
  auto p = std::move(t).partition({8, 2});
  EXPECT_EQ(p.grid(), (ct::Shape{1, 4}));
  expect_user_error([&] { (void)ct::Partition<float>::from_core(ct::unchecked, p.core(ct::unchecked), {5, 1}); },
                    {"tile extent 5 at axis 0 is not a power of two"});
}

TEST(RuntimeErrors, ReshapeMismatch) {
  auto t = ct::zeros<float>({2, 3});
  expect_user_error([&] { (void)std::move(t).reshape({4, 2}); }, {"reshape", "[2, 3]", "[4, 2]", "element counts differ"});
  expect_user_error([&] { (void)std::move(t).reshape({-6}); }, {"negative extent"});
  EXPECT_TRUE(t.valid());  // NOLINT(bugprone-use-after-move)
  auto cols = std::move(t).slice(1, 0, 2);
  expect_user_error([&] { (void)std::move(cols).reshape({4}); }, {"reshape of a non-contiguous view", "[2, 2]", "strides [3, 1]", "needs a copy"});
  EXPECT_TRUE(cols.valid());  // NOLINT(bugprone-use-after-move)
}

TEST(RuntimeErrors, SliceOutOfRange) {
  auto t = ct::zeros<float>({4, 5});
  expect_user_error([&] { (void)std::move(t).slice(1, 2, 6); }, {"slice", "[2, 6)", "extent 5", "out of range"});
  expect_user_error([&] { (void)std::move(t).slice(0, 3, 2); }, {"slice: range [3, 2) is out of range for axis 0"});
  expect_user_error([&] { (void)std::move(t).slice(0, -1, 2); }, {"slice: range [-1, 2) is out of range for axis 0"});
  expect_user_error([&] { (void)std::move(t).slice(2, 0, 1); }, {"axis 2", "rank 2"});
  EXPECT_EQ(t.shape(), (ct::Shape{4, 5}));  // NOLINT(bugprone-use-after-move)
  auto sh = std::move(t).share();
  expect_user_error([&] { (void)sh.slice(0, 0, 9); }, {"range [0, 9) is out of range for axis 0 of extent 4"});
}

TEST(RuntimeErrors, ShapeOverflow) {
  const std::int64_t big = std::int64_t{1} << 40;
  expect_user_error([&] { (void)ct::zeros<float>({big, big}); }, {"zeros<f32>", "overflows int64", "[1099511627776, 1099511627776]"});
  expect_user_error([&] { (void)ct::zeros<double>({std::int64_t{1} << 61}); }, {"byte size", "overflows"});
  expect_user_error([&] { (void)ct::zeros<float>({1, 1, 1, 1, 1, 1, 1}); }, {"rank 7", "maximum rank is 6"});
  std::vector<float> buf(4);
  expect_user_error([&] { (void)ct::Tensor<float>::borrow(ct::unchecked, buf.data(), {big, big}); },
                    {"Tensor<f32>::borrow", "the element count of shape", "overflows int64"});
}

TEST(RuntimeErrors, NegativeExtents) {
  expect_user_error([&] { (void)ct::zeros<float>({3, -2}); }, {"negative extent", "-2 at axis 1", "[3, -2]"});
  expect_user_error([&] { (void)ct::ones<std::int8_t>({-1}); }, {"ones<i8>", "negative extent"});
  expect_user_error([&] { (void)ct::arange<float>(-3); }, {"arange<f32>", "negative length"});
  expect_user_error([&] { (void)ct::linspace<float>(0, 1, -3); }, {"negative length"});
}

TEST(RuntimeErrors, FromHostSizeMismatch) {
  std::vector<float> v(5);
  expect_user_error([&] { (void)ct::from_host<float>(v, {2, 3}); }, {"from_host<f32>", "5 values", "[2, 3]", "6 elements"});
}

TEST(RuntimeErrors, BadBorrow) {
  std::vector<float> buf(8);
  expect_user_error([&] { (void)ct::Tensor<float>::borrow(ct::unchecked, nullptr, {4}); }, {"borrow", "null pointer"});
  expect_user_error([&] { (void)ct::Tensor<float>::borrow(ct::unchecked, buf.data(), {2, 2}, {1}); }, {"strides [1]", "rank"});
  expect_user_error([&] { (void)ct::Tensor<float>::borrow(ct::unchecked, buf.data(), {2}, {-1}); }, {"negative stride"});
}

TEST(RuntimeErrors, BadCreationArguments) {
  expect_user_error([&] { (void)ct::arange<std::int8_t>(300); }, {"arange<i8>", "299", "does not fit in i8"});
  expect_user_error([&] { (void)ct::arange<std::uint8_t>(0, -3, -1); }, {"does not fit in u8"});
  expect_user_error([&] { (void)ct::arange<float>(0, 1, 0); }, {"step non-zero"});
  expect_user_error([&] { (void)ct::rand<float>({2}, 1, 1.0, 1.0); }, {"rand<f32>", "[1, 1)"});
  expect_user_error([&] { (void)ct::rand<std::uint8_t>({2}, 1, -5, 5); }, {"rand<u8>", "does not fit in u8"});
  expect_user_error([&] { (void)ct::rand<std::int32_t>({2}, 1, 0.2, 0.7); }, {"rand<i32>", "no integer in [0.2, 0.7)"});
  expect_user_error([&] { (void)ct::randn<float>({2}, 1, 0, -1); }, {"randn<f32>", "stddev"});
}

TEST(RuntimeErrors, EventsAndStreams) {
  auto e = ct::Event::create();
  e.complete();
  expect_user_error([&] { e.complete(); }, {"complete", "twice"});
  expect_user_error([&] { ct::Event::ready().complete(); }, {"already done"});
  ct::Stream none;
  expect_user_error([&] { (void)none.enqueue([] {}); }, {"empty Stream"});
  if (!ct::cuda_available())
    expect_user_error([&] { (void)ct::Stream::create(ct::Device{ct::DeviceKind::Cuda, 0}); }, {"cuda:0", "cannot be used"});
  expect_user_error([&] { (void)ct::Stream::create(ct::Device{ct::DeviceKind::Cuda, 64}); }, {"cuda:64"});
  auto s = ct::Stream::create();
  auto inner = s.enqueue([s]() mutable { s.synchronize(); });  // would wait for itself
  inner.wait();
  ASSERT_NE(inner.error(), nullptr);
  expect_user_error([&] { std::rethrow_exception(inner.error()); }, {"synchronize", "same stream"});
}

TEST(RuntimeErrors, BadBackendEnvironment) {
  const char* old = std::getenv("CTILE_BACKEND");
  const std::string saved = old ? old : "";
  ::setenv("CTILE_BACKEND", "tpu", 1);
  expect_user_error([&] { (void)ct::default_device(); }, {"CTILE_BACKEND=tpu", "accepted"});
  ::setenv("CTILE_BACKEND", "cpu", 1);
  EXPECT_EQ(ct::default_device(), ct::cpu());
  if (old)
    ::setenv("CTILE_BACKEND", saved.c_str(), 1);
  else
    ::unsetenv("CTILE_BACKEND");
}

TEST(RuntimeErrors, FailedWritePoisonsTheStorage) {
  auto t = ct::zeros<float>({2});
  auto w = ct::Event::create();
  t.core(ct::unchecked)->storage->record_write(w);
  w.complete(std::make_exception_ptr(ct::UserError("the kernel failed")));
  expect_user_error([&] { (void)t.to_host(); }, {"the kernel failed"});
  EXPECT_EQ(t.core(ct::unchecked)->storage->deps_for_read().size(), 1u);  // later work fails with it too
  t.core(ct::unchecked)->storage->record_write(ct::Event::ready());    // overwritten: readable again
  EXPECT_EQ(t.to_host().size(), 2u);
}

}  // namespace
