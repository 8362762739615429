// DLPack on the CPU (kDLCPU): round trips without a copy, ownership as the producer says (the
// deleter runs once, after the last handle and the last launch), read-only tensors only as Shared
// handles, producer streams ordering ctile's work, foreign memory with a keep-alive owner, and
// every bad input a UserError that names it (nothing taken then).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>
#include <vector>

#include "ctile/ctile.hpp"
#include "../runtime/test_helpers.hpp"

namespace ct = ctile;
namespace dl = ctile::dlpack;
using ct::test::expect_user_error;

namespace {

unsigned seed() {
  static const unsigned s = std::random_device{}();
  return s;
}

std::vector<float> random_floats(std::size_t n, unsigned s) {
  std::mt19937 g(s);
  std::uniform_real_distribution<float> d(-8.0f, 8.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(g);
  return v;
}

void add1(ct::Mut<float, 2> z, ct::Ref<float, 2> x) { z.store(ct::load_like(x, z) + 1.0f); }
void twice_in_place(ct::Mut<float, 1> z) { z.store(z.load() * 2.0f); }

// A producer's managed tensor over a host vector, with a deleter that counts its calls.
struct Producer {
  std::vector<float> data;
  std::vector<std::int64_t> shape, strides;
  std::atomic<int> deleted{0};
  dl::DLManagedTensorVersioned m{};
  dl::DLManagedTensor legacy{};

  Producer(std::vector<float> v, std::vector<std::int64_t> sh, std::vector<std::int64_t> st = {})
      : data(std::move(v)), shape(std::move(sh)), strides(std::move(st)) {
    dl::DLTensor t{};
    t.data = data.data();
    t.device = {dl::kDLCPU, 0};
    t.ndim = static_cast<std::int32_t>(shape.size());
    t.dtype = {dl::kDLFloat, 32, 1};
    t.shape = shape.data();
    t.strides = strides.empty() ? nullptr : strides.data();
    m.version = {1, 0};
    m.manager_ctx = this;
    m.deleter = [](dl::DLManagedTensorVersioned* self) { ++static_cast<Producer*>(self->manager_ctx)->deleted; };
    m.dl_tensor = t;
    legacy.dl_tensor = t;
    legacy.manager_ctx = this;
    legacy.deleter = [](dl::DLManagedTensor* self) { ++static_cast<Producer*>(self->manager_ctx)->deleted; };
  }
};

TEST(DLPack, RoundTripWithoutACopy) {
  SCOPED_TRACE(testing::Message() << "seed " << seed());
  const auto h = random_floats(6 * 5, seed());
  auto t = ct::from_host<float>(h, {6, 5}, ct::cpu());
  const void* addr = t.data(ct::unchecked);
  std::weak_ptr<ct::detail::Storage> storage = t.core(ct::unchecked)->storage;
  dl::DLManagedTensorVersioned* m = ct::to_dlpack(std::move(t));
  EXPECT_FALSE(t.valid());  // NOLINT(bugprone-use-after-move): handed over
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->version.major, 1u);
  EXPECT_EQ(m->flags, 0u);
  EXPECT_EQ(m->dl_tensor.data, addr);
  EXPECT_EQ(m->dl_tensor.device.device_type, dl::kDLCPU);
  EXPECT_EQ(m->dl_tensor.ndim, 2);
  EXPECT_EQ(m->dl_tensor.dtype.code, dl::kDLFloat);
  EXPECT_EQ(m->dl_tensor.dtype.bits, 32);
  EXPECT_EQ(m->dl_tensor.dtype.lanes, 1);
  EXPECT_EQ(m->dl_tensor.shape[0], 6);
  EXPECT_EQ(m->dl_tensor.shape[1], 5);
  EXPECT_EQ(m->dl_tensor.strides[0], 5);
  EXPECT_EQ(m->dl_tensor.strides[1], 1);
  auto back = ct::from_dlpack<float>(m);  // ctile owns m again
  EXPECT_EQ(back.data(ct::unchecked), addr);
  EXPECT_EQ(back.to_host(), h);
  // A launch on it, then the memory goes only with the last handle.
  auto x = ct::from_host<float>(h, {6, 5}, ct::cpu()).share();
  auto [z, x2] = ct::launch(add1, std::move(back).partition({4, 4}), x).sync();
  auto zt = std::move(z).unpartition();
  const auto got = zt.to_host();
  for (std::size_t i = 0; i < h.size(); ++i) ASSERT_EQ(got[i], h[i] + 1.0f) << i;
  EXPECT_FALSE(storage.expired());  // the import holds the export, which holds the original storage
  { auto last = std::move(zt); }
  EXPECT_TRUE(storage.expired());   // the last handle took the deleter, and the memory, with it
}

TEST(DLPack, ImportTakesOwnershipAndRunsTheDeleterOnceAfterTheLastUse) {
  SCOPED_TRACE(testing::Message() << "seed " << seed());
  const auto h = random_floats(40, seed() + 1);
  Producer p(h, {40});
  {
    auto t = ct::from_dlpack<float>(&p.m);
    auto s = ct::Stream::create(ct::cpu());
    std::atomic<bool> go{false};
    ct::Event gate = s.host([&] {
      while (!go.load()) std::this_thread::yield();
    });
    auto f = ct::launch(twice_in_place, std::move(t).partition({16})).async_on(s);
    { auto dropped = std::move(f); }  // the future goes; the work in flight still holds the memory
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(p.deleted.load(), 0) << "the deleter ran while a launch still used the memory";
    go = true;
    s.synchronize();
    for (int i = 0; i < 2000 && p.deleted.load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    (void)gate;
  }
  EXPECT_EQ(p.deleted.load(), 1);
  for (std::size_t i = 0; i < h.size(); ++i) ASSERT_EQ(p.data[i], h[i] * 2.0f) << i;  // written in place: no copy
}

TEST(DLPack, UnversionedAndStridedImports) {
  // A transposed producer tensor (strides [1, 3]) is read through its strides.
  Producer p({0, 1, 2, 3, 4, 5}, {3, 2}, {1, 3});
  {
    auto s = ct::from_dlpack_shared<float>(&p.legacy);
    EXPECT_EQ(s.strides(), (ct::Shape{1, 3}));
    EXPECT_EQ(s.to_host(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  }
  EXPECT_EQ(p.deleted.load(), 1);
  // A null deleter: the producer keeps the memory itself; ctile only borrows it.
  Producer q({7, 8}, {2});
  q.m.deleter = nullptr;
  { auto t = ct::from_dlpack<float>(&q.m); EXPECT_EQ(t.to_host(), (std::vector<float>{7, 8})); }
  EXPECT_EQ(q.deleted.load(), 0);
  // Rank 0, and a byte offset into the buffer.
  Producer r({1, 2, 3, 4}, {});
  r.m.dl_tensor.byte_offset = 8;
  { auto t = ct::from_dlpack<float>(&r.m); EXPECT_EQ(t.to_host(), (std::vector<float>{3})); }
}

TEST(DLPack, ReadOnlyTensorsBecomeSharedHandlesOnly) {
  Producer p({1, 2, 3}, {3});
  p.m.flags = dl::kFlagReadOnly;
  expect_user_error([&] { (void)ct::from_dlpack<float>(&p.m); },
                    {"from_dlpack<f32>", "read-only", "DLPACK_FLAG_BITMASK_READ_ONLY", "from_dlpack_shared"});
  EXPECT_EQ(p.deleted.load(), 0);  // nothing was taken
  {
    auto s = ct::from_dlpack_shared<float>(&p.m);
    EXPECT_EQ(s.to_host(), (std::vector<float>{1, 2, 3}));
  }
  EXPECT_EQ(p.deleted.load(), 1);
}

TEST(DLPack, BadInputsAreUserErrorsAndTakeNothing) {
  Producer p({1, 2, 3, 4, 5, 6}, {2, 3});
  const auto reject = [&](auto&& mutate, std::initializer_list<std::string_view> parts) {
    Producer q(p.data, p.shape, p.strides);
    mutate(q.m);
    expect_user_error([&] { (void)ct::from_dlpack<float>(&q.m); }, parts);
    EXPECT_EQ(q.deleted.load(), 0) << "a rejected tensor was taken";
  };
  reject([](auto& m) { m.dl_tensor.dtype = {dl::kDLInt, 32, 1}; }, {"from_dlpack<f32>", "holds int32, not f32"});
  reject([](auto& m) { m.dl_tensor.dtype = {dl::kDLFloat, 32, 4}; }, {"float32 x4 lanes"});
  reject([](auto& m) { m.dl_tensor.ndim = 7; }, {"rank 7", "rank 0 to 6"});
  reject([](auto& m) { m.dl_tensor.device = {8 /* kDLMetal */, 0}; }, {"device type 8 is not supported"});
  reject([](auto& m) { m.version = {2, 0}; }, {"DLPack version 2.0 is not supported"});
  reject([](auto& m) { m.dl_tensor.byte_offset = 2; }, {"byte_offset 2 is not a multiple of the element size 4"});
  reject([](auto& m) { m.dl_tensor.data = nullptr; }, {"from_dlpack<f32>", "null pointer"});
  reject([](auto& m) { m.dl_tensor.shape[0] = -1; }, {"from_dlpack<f32>", "negative extent"});
  static std::int64_t neg[2] = {-3, 1};
  reject([](auto& m) { m.dl_tensor.strides = neg; }, {"from_dlpack<f32>", "negative stride"});
  static std::int64_t huge[2] = {std::int64_t{1} << 62, 1};
  reject([](auto& m) { m.dl_tensor.strides = huge; }, {"from_dlpack<f32>", "spans more than int64"});
  reject([](auto& m) { m.dl_tensor.data = reinterpret_cast<char*>(m.dl_tensor.data) + 1; }, {"not aligned"});
  expect_user_error([] { (void)ct::from_dlpack<float>(static_cast<dl::DLManagedTensorVersioned*>(nullptr)); },
                    {"null DLManagedTensorVersioned"});
  // The export side: a moved-from tensor, and an lvalue does not compile (to_dlpack(Tensor&) is deleted).
  auto t = ct::zeros<float>({2});
  auto t2 = std::move(t);
  expect_user_error([&] { (void)ct::to_dlpack(std::move(t)); }, {"moved-from Tensor<f32>"});  // NOLINT(bugprone-use-after-move)
}

TEST(DLPack, SharedExportIsReadOnlyAndCountsAsAHolder) {
  auto s = ct::arange<float>(6).reshape({2, 3}).share();
  auto v = s.permute({1, 0});
  dl::DLManagedTensorVersioned* m = ct::to_dlpack(v);
  EXPECT_EQ(m->flags & dl::kFlagReadOnly, dl::kFlagReadOnly);
  EXPECT_EQ(m->dl_tensor.strides[0], 1);
  EXPECT_EQ(m->dl_tensor.strides[1], 3);
  v = ct::Shared<float>();
  EXPECT_EQ(s.holders(), 2);  // the consumer's tensor
  expect_user_error([&] { (void)std::move(s).unshare(); }, {"1 other holder"});
  // A consumer that tries to take it back as a mutable tensor is refused; as a Shared it works.
  expect_user_error([&] { (void)ct::from_dlpack<float>(m); }, {"read-only"});
  {
    auto back = ct::from_dlpack_shared<float>(m);
    EXPECT_EQ(back.to_host(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  }
  EXPECT_EQ(s.holders(), 1);
  auto t = std::move(s).unshare();  // the deleter ran: s is the last holder again
  EXPECT_EQ(t.numel(), 6);
}

TEST(DLPack, ElementTypesMapToDLPackCodes) {
  EXPECT_EQ(dl::dtype_of(ct::DType::bf16).code, dl::kDLBfloat);
  EXPECT_EQ(dl::dtype_of(ct::DType::f16).code, dl::kDLFloat);
  EXPECT_EQ(dl::dtype_of(ct::DType::f16).bits, 16);
  EXPECT_EQ(dl::dtype_of(ct::DType::b1).code, dl::kDLBool);
  EXPECT_EQ(dl::dtype_of(ct::DType::b1).bits, 8);
  EXPECT_EQ(dl::dtype_of(ct::DType::u16).code, dl::kDLUInt);
  EXPECT_EQ(dl::dtype_of(ct::DType::i64).bits, 64);
  auto b = ct::from_host<ct::bf16>(std::vector<ct::bf16>{ct::bf16(1.5f), ct::bf16(-2.0f)}, {2}, ct::cpu());
  auto* m = ct::to_dlpack_unversioned(std::move(b));
  EXPECT_EQ(m->dl_tensor.dtype.code, dl::kDLBfloat);
  expect_user_error([&] { (void)ct::from_dlpack<ct::f16>(m); }, {"from_dlpack<f16>", "holds bfloat16, not f16"});
  auto back = ct::from_dlpack<ct::bf16>(m);
  EXPECT_EQ(back.to_host()[1], ct::bf16(-2.0f));
}

// The OCP FP8 types travel as DLPack 1.1's kDLFloat8_e4m3fn and kDLFloat8_e5m2 (torch.float8_e4m3fn,
// torch.float8_e5m2), one byte each; an 8-bit tensor of the other kind (or a u8) is refused by name.
TEST(DLPack, Fp8TypesMapToDLPackCodes) {
  EXPECT_EQ(dl::dtype_of(ct::DType::f8e4m3).code, 10);
  EXPECT_EQ(dl::dtype_of(ct::DType::f8e5m2).code, 12);
  EXPECT_EQ(dl::dtype_of(ct::DType::f8e4m3).bits, 8);
  EXPECT_EQ(dl::dtype_of(ct::DType::f8e5m2).bits, 8);
  auto e = ct::from_host<ct::f8e4m3>(std::vector<ct::f8e4m3>{ct::f8e4m3(1.5f), ct::f8e4m3(-448.0f)}, {2}, ct::cpu());
  auto* m = ct::to_dlpack_unversioned(std::move(e));
  EXPECT_EQ(m->dl_tensor.dtype.code, dl::kDLFloat8_e4m3fn);
  expect_user_error([&] { (void)ct::from_dlpack<ct::f8e5m2>(m); }, {"from_dlpack<f8e5m2>", "holds float8_e4m3fn, not f8e5m2"});
  expect_user_error([&] { (void)ct::from_dlpack<std::uint8_t>(m); }, {"holds float8_e4m3fn, not u8"});
  auto back = ct::from_dlpack<ct::f8e4m3>(m);
  EXPECT_EQ(back.to_host()[1].bits, 0xfe);  // -448: S.1111.110
  auto f = ct::from_host<ct::f8e5m2>(std::vector<ct::f8e5m2>{ct::f8e5m2(-3.0f)}, {1}, ct::cpu());
  auto* m2 = ct::to_dlpack_unversioned(std::move(f));
  EXPECT_EQ(m2->dl_tensor.dtype.code, dl::kDLFloat8_e5m2);
  expect_user_error([&] { (void)ct::from_dlpack<ct::f8e4m3>(m2); }, {"holds float8_e5m2, not f8e4m3"});
  EXPECT_EQ(ct::from_dlpack<ct::f8e5m2>(m2).to_host()[0].bits, 0xc2);  // -3: 1.10000.10
}

// A producer stream orders ctile's first use: the producer's pending work (a host task still
// running on its stream) finishes before ctile reads the memory, whichever stream ctile uses.
TEST(DLPack, ProducerStreamOrdersCtilesWork) {
  Producer p({1, 1, 1, 1}, {4});
  auto producer = ct::Stream::create(ct::cpu());
  std::atomic<bool> go{false};
  (void)producer.host([&] {
    while (!go.load()) std::this_thread::yield();
    for (float& v : p.data) v = 5.0f;  // the producer's last write, still pending at the hand-over
  });
  auto t = ct::from_dlpack<float>(&p.m, producer);
  auto other = ct::Stream::create(ct::cpu());
  auto f = ct::launch(twice_in_place, std::move(t).partition({4})).async_on(other);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(f.ready()) << "ctile's launch ran before the producer's pending write";
  go = true;
  auto [z] = std::move(f).get();
  EXPECT_EQ(std::move(z).unpartition().to_host(), (std::vector<float>{10, 10, 10, 10}));
}

// Self-test: the same scenario without the producer stream is not ordered (the check above can fail).
TEST(DLPack, SelfTestWithoutTheProducerStreamNothingWaits) {
  Producer p({1, 1, 1, 1}, {4});
  auto producer = ct::Stream::create(ct::cpu());
  std::atomic<bool> go{false};
  (void)producer.host([&] {
    while (!go.load()) std::this_thread::yield();
  });
  auto t = ct::from_dlpack<float>(&p.m);
  auto other = ct::Stream::create(ct::cpu());
  auto f = ct::launch(twice_in_place, std::move(t).partition({4})).async_on(other);
  f.wait();
  EXPECT_TRUE(f.ready());
  go = true;
  producer.synchronize();
}

// Foreign memory with its owner: the owner is released only after the last handle and the last
// launch that uses the memory.
TEST(ForeignMemory, OwnerLivesUntilTheLastUse) {
  SCOPED_TRACE(testing::Message() << "seed " << seed());
  auto buf = std::make_shared<std::vector<float>>(random_floats(32, seed() + 2));
  const auto h = *buf;
  std::weak_ptr<std::vector<float>> watch = buf;
  float* ptr = buf->data();
  auto t = ct::Tensor<float>::borrow(ct::unchecked, std::move(buf), ptr, {32});
  auto s = ct::Stream::create(ct::cpu());
  std::atomic<bool> go{false};
  (void)s.host([&] {
    while (!go.load()) std::this_thread::yield();
  });
  auto f = ct::launch(twice_in_place, std::move(t).partition({8})).async_on(s);
  { auto dropped = std::move(f); }
  EXPECT_FALSE(watch.expired()) << "the owner went while a launch still used its memory";
  go = true;
  s.synchronize();
  for (int i = 0; i < 2000 && !watch.expired(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(watch.expired());
  expect_user_error([&] { (void)ct::Tensor<float>::borrow(ct::unchecked, nullptr, ptr, {32}); },
                    {"borrow with an owner", "owner is null"});
  (void)h;
}

// The concepts that accept another declaration of the DLPack ABI reject a struct of another layout.
struct WrongManaged {
  dl::DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(WrongManaged*);
  int extra;
};
static_assert(dl::ManagedLike<dl::DLManagedTensor>);
static_assert(!dl::ManagedLike<WrongManaged>);
static_assert(!dl::ManagedLike<dl::DLManagedTensorVersioned>);
static_assert(dl::VersionedLike<dl::DLManagedTensorVersioned>);
static_assert(!dl::VersionedLike<dl::DLManagedTensor>);

}  // namespace
