// The CUDA runtime layer without a GPU. Each CTest entry runs one group of these tests in its own
// process with its own environment (the driver is probed once per process):
//   NoDriver*  CTILE_LIBCUDA points nowhere: the CPU fallback, the notice, CTILE_BACKEND=cuda errors
//   NoDevice, OldGpu, InitError: the fake driver (fake_cuda.cpp) says there is no usable GPU
//   FakeGpu    the fake driver emulates two GPUs asynchronously: memory, copies, creation, streams,
//              events, cross-stream ordering, frees after the GPU is done, errors, launches
//   ErrorFormat needs no driver at all.
#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <thread>

#include <gtest/gtest.h>

#include <ctile/ctile.hpp>

#include "../../../src/platform/cuda/stream.hpp"
#include "../../../src/platform/cuda/driver.hpp"
#include "../../../src/backend/cuda/nvrtc.hpp"

namespace ct = ctile;
namespace cu = ctile::platform::cuda;
namespace cg = ctile::backend::cuda;

namespace {

template <class F>
std::string user_error_of(F&& f) {
  try {
    f();
  } catch (const ct::InternalError& e) {
    return std::string("INTERNAL ERROR: ") + e.what();
  } catch (const ct::UserError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("OTHER EXCEPTION: ") + e.what();
  }
  return "NO EXCEPTION";
}

#define EXPECT_CONTAINS(hay, needle) EXPECT_NE(std::string(hay).find(needle), std::string::npos) << (hay)

class EnvGuard {
 public:
  EnvGuard(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~EnvGuard() {
    if (had_)
      ::setenv(name_, old_.c_str(), 1);
    else
      ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

const ct::Device kGpu0{ct::DeviceKind::Cuda, 0};
const ct::Device kGpu1{ct::DeviceKind::Cuda, 1};

// ---- the fake driver's test hooks ----
struct Fake {
  void* h = nullptr;
  template <class F>
  F sym(const char* name) {
    if (!h) {
      const char* path = std::getenv("CTILE_LIBCUDA");
      h = ::dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    }
    void* p = h ? ::dlsym(h, name) : nullptr;
    if (!p) throw std::runtime_error(std::string("fake driver hook missing: ") + name);
    return reinterpret_cast<F>(p);
  }
  int violations() { return sym<int (*)()>("fake_cuda_violations")(); }
  int launches() { return sym<int (*)()>("fake_cuda_launches")(); }
  long live() { return sym<long (*)()>("fake_cuda_live_allocations")(); }
  void fail(const char* fn, int code, int count) { sym<void (*)(const char*, int, int)>("fake_cuda_fail")(fn, code, count); }
  void sticky(int code) { sym<void (*)(int)>("fake_cuda_set_sticky")(code); }
  void delay(int us) { sym<void (*)(int)>("fake_cuda_set_delay_us")(us); }
  void enqueue(cu::CUstream s, void (*fn)(void*), void* arg) {
    sym<void (*)(cu::CUstream, void (*)(void*), void*)>("fake_cuda_enqueue")(s, fn, arg);
  }
  bool is_device(const void* p, std::size_t n) { return sym<int (*)(const void*, std::size_t)>("fake_cuda_is_device_memory")(p, n) != 0; }
  // Device allocations are freed asynchronously: wait (bounded) until `n` remain.
  bool live_becomes(long n) {
    for (int i = 0; i < 2000; ++i) {
      if (live() == n) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return live() == n;
  }
};
Fake fake;

}  // namespace

// ---- no driver at all ----

TEST(ErrorFormat, NamesTheErrorTheCallAndWhatCtileWasDoing) {
  const std::string m = cu::format_error(2, "cuMemAllocAsync", "allocating 4096 bytes for a tensor on cuda:0");
  EXPECT_EQ(m, "CUDA error: CUDA_ERROR_OUT_OF_MEMORY (out of memory) in cuMemAllocAsync while allocating 4096 bytes "
               "for a tensor on cuda:0");
  EXPECT_CONTAINS(cu::format_error(700, "cuEventSynchronize", ""), "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access");
  EXPECT_CONTAINS(cu::format_error(12345, "cuFoo", "x"), "CUDA error 12345");
  try {
    cu::throw_cuda_error(719, "cuLaunchKernel", "launching kernel 'k'");
    FAIL() << "no exception";
  } catch (const ct::UserError&) {
    FAIL() << "a CUDA failure is not a user error";
  } catch (const cu::CudaError& e) {
    EXPECT_EQ(e.code(), 719);
    EXPECT_EQ(e.error_name(), "CUDA_ERROR_LAUNCH_FAILED");
    EXPECT_EQ(e.call(), "cuLaunchKernel");
    EXPECT_EQ(e.doing(), "launching kernel 'k'");
    const ct::Error& base = e;  // a ctile::Error
    EXPECT_CONTAINS(base.what(), "unspecified launch failure");
  }
}

TEST(NoDriverNotice, SaysOnceWhyTheCpuIsUsed) {
  EnvGuard b("CTILE_BACKEND", nullptr);
  EnvGuard q("CTILE_QUIET", nullptr);
  testing::internal::CaptureStderr();
  EXPECT_EQ(ct::default_device(), ct::cpu());
  EXPECT_EQ(ct::default_device(), ct::cpu());
  auto z = ct::zeros<float>({4});
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_CONTAINS(err, "ctile: no usable GPU");
  EXPECT_CONTAINS(err, "cannot be loaded");
  EXPECT_EQ(err.find("no usable GPU"), err.rfind("no usable GPU")) << "said more than once: " << err;
  // One short line: the dlopen details and the hint stay in cuda_unavailable_reason().
  EXPECT_EQ(err.find('\n'), err.size() - 1) << err;
  EXPECT_LE(err.size(), 150u) << err;  // with the 27-character library path of this test
  EXPECT_EQ(err.find("shared object"), std::string::npos) << err;
}

TEST(NoDriverQuiet, CtileQuietSilencesTheNotice) {
  EnvGuard b("CTILE_BACKEND", nullptr);
  EnvGuard q("CTILE_QUIET", "1");
  testing::internal::CaptureStderr();
  EXPECT_EQ(ct::default_device(), ct::cpu());
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

TEST(NoDriver, FallsBackToTheCpuAndSaysWhy) {
  EXPECT_FALSE(ct::cuda_available());
  EXPECT_EQ(ct::cuda_device_count(), 0);
  EXPECT_CONTAINS(ct::cuda_unavailable_reason(), "/nonexistent/libcuda.so.1");
  EXPECT_CONTAINS(ct::cuda_unavailable_reason(), "cannot be loaded");
  {
    EnvGuard b("CTILE_BACKEND", nullptr);
    EXPECT_EQ(ct::default_device(), ct::cpu());
  }
  {
    EnvGuard b("CTILE_BACKEND", "cpu");
    EXPECT_EQ(ct::default_device(), ct::cpu());
  }
  EXPECT_EQ(ct::backend_name(ct::cpu()), "cpu");
  EXPECT_EQ(ct::backend_name(kGpu0), "cuda");
  EXPECT_CONTAINS(ct::describe(ct::cpu()), "cpu:0");
}

TEST(NoDriver, ForcingCudaIsAUserErrorThatSaysWhy) {
  EnvGuard b("CTILE_BACKEND", "cuda");
  const std::string m = user_error_of([] { (void)ct::default_device(); });
  EXPECT_CONTAINS(m, "CTILE_BACKEND=cuda");
  EXPECT_CONTAINS(m, "cannot be loaded");
}

TEST(NoDriver, CudaDevicesAreUserErrors) {
  EXPECT_CONTAINS(user_error_of([] { (void)ct::Stream::create(kGpu0); }), "cuda:0 cannot be used");
  EXPECT_CONTAINS(user_error_of([] { (void)ct::zeros<float>({4}, kGpu0); }), "cannot be used");
  EXPECT_CONTAINS(user_error_of([] { (void)ct::describe(kGpu0); }), "cannot be used");
  auto x = ct::ones<float>({4}, ct::cpu());
  EXPECT_CONTAINS(user_error_of([&] { (void)std::move(x).to(kGpu0); }), "cannot be used");
}

// ---- a driver without a usable GPU ----

TEST(NoDevice, NoDeviceFallsBack) {
  EXPECT_FALSE(ct::cuda_available());
  EXPECT_CONTAINS(ct::cuda_unavailable_reason(), "no CUDA device");
  EnvGuard b("CTILE_BACKEND", nullptr);
  EXPECT_EQ(ct::default_device(), ct::cpu());
}

TEST(OldGpu, BelowSm80FallsBack) {
  EXPECT_FALSE(ct::cuda_available());
  EXPECT_CONTAINS(ct::cuda_unavailable_reason(), "compute capability 7.5");
  EXPECT_CONTAINS(ct::cuda_unavailable_reason(), "sm_80");
}

TEST(InitError, AFailingCuInitFallsBack) {
  EXPECT_FALSE(ct::cuda_available());
  EXPECT_CONTAINS(ct::cuda_unavailable_reason(), "cuInit: CUDA_ERROR_UNKNOWN");
}

// ---- the fake GPU ----

class FakeGpu : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(ct::cuda_available()) << ct::cuda_unavailable_reason();
    // Nothing stays allocated between tests; the last frees of the previous test may still be queued.
    ASSERT_TRUE(fake.live_becomes(0)) << fake.live() << " device allocations left over";
  }
  void TearDown() override {
    ct::default_stream(kGpu0).synchronize();
    EXPECT_EQ(fake.violations(), 0) << "the fake driver saw misuse (see stderr)";
  }
  // Every allocation made by the test is freed again (asynchronously, after the GPU is done).
  void expect_no_leaks() { EXPECT_TRUE(fake.live_becomes(baseline_)) << fake.live() << " vs " << baseline_; }
  long baseline_ = 0;
};

TEST_F(FakeGpu, SelectedByDefaultAndDescribed) {
  EnvGuard b("CTILE_BACKEND", nullptr);
  EXPECT_EQ(ct::default_device(), kGpu0);
  EXPECT_EQ(ct::cuda_device_count(), 2);
  {
    EnvGuard c("CTILE_BACKEND", "cuda");
    EXPECT_EQ(ct::default_device(), kGpu0);
  }
  {
    EnvGuard c("CTILE_BACKEND", "cpu");
    EXPECT_EQ(ct::default_device(), ct::cpu());
  }
  const std::string d = ct::describe(kGpu0);
  EXPECT_CONTAINS(d, "cuda:0 (Fake GPU 0, sm_90, 132 SMs");
  EXPECT_CONTAINS(d, "driver 13.0");
  EXPECT_CONTAINS(user_error_of([] { (void)ct::Stream::create(ct::Device{ct::DeviceKind::Cuda, 2}); }),
                  "cuda:2 does not exist");
}

TEST_F(FakeGpu, ZerosAreZeroFilledOnTheDevice) {
  {
    auto z = ct::zeros<float>({1000}, kGpu0);
    EXPECT_EQ(z.device(), kGpu0);
    EXPECT_TRUE(fake.is_device(z.data(ct::unchecked), 4000));
    EXPECT_EQ(z.to_host(), std::vector<float>(1000, 0.0f));
    auto e = ct::zeros<std::int8_t>({0}, kGpu0);  // empty tensors work too
    EXPECT_TRUE(e.to_host().empty());
  }
  expect_no_leaks();
}

template <class T>
void expect_same_creation() {
  auto same = [](ct::Tensor<T> a, ct::Tensor<T> b) {
    EXPECT_EQ(a.device(), ct::cpu());
    EXPECT_EQ(b.device(), kGpu0);
    const auto ha = a.to_host(), hb = b.to_host();
    ASSERT_EQ(ha.size(), hb.size());
    EXPECT_EQ(0, std::memcmp(ha.data(), hb.data(), ha.size() * sizeof(T))) << ct::dtype_name(ct::dtype_of<T>);
  };
  same(ct::rand<T>({1001}, 7, ct::cpu()), ct::rand<T>({1001}, 7, kGpu0));
  same(ct::ones<T>({3, 5}, ct::cpu()), ct::ones<T>({3, 5}, kGpu0));
  same(ct::arange<T>(100, ct::cpu()), ct::arange<T>(100, kGpu0));
  same(ct::arange<T>(1, 90, 3, ct::cpu()), ct::arange<T>(1, 90, 3, kGpu0));
  same(ct::linspace<T>(0, 50, 11, ct::cpu()), ct::linspace<T>(0, 50, 11, kGpu0));
  same(ct::full<T>({7}, T(3), ct::cpu()), ct::full<T>({7}, T(3), kGpu0));
  if constexpr (ct::detail::is_float_elem<T>) same(ct::randn<T>({999}, 9, 0.0, 1.0, ct::cpu()), ct::randn<T>({999}, 9, 0.0, 1.0, kGpu0));
  std::vector<T> v(10);
  for (int i = 0; i < 10; ++i) v[std::size_t(i)] = T(i);
  same(ct::from_host<T>(std::span<const T>(v), {2, 5}, ct::cpu()), ct::from_host<T>(std::span<const T>(v), {2, 5}, kGpu0));
}

TEST_F(FakeGpu, CreationMakesTheSameValuesAsOnTheCpu) {
  expect_same_creation<float>();
  expect_same_creation<double>();
  expect_same_creation<ct::f16>();
  expect_same_creation<ct::bf16>();
  expect_same_creation<std::int8_t>();
  expect_same_creation<std::int32_t>();
  expect_same_creation<std::uint64_t>();
  {
    bool bits[6] = {true, false, true, true, false, true};
    auto a = ct::from_host<bool>(std::span<const bool>(bits), {6}, kGpu0);
    EXPECT_EQ(a.to_host(), std::vector<bool>(bits, bits + 6));
    EXPECT_EQ(ct::rand<bool>({64}, 3, kGpu0).to_host(), ct::rand<bool>({64}, 3, ct::cpu()).to_host());
  }
  expect_no_leaks();
}

TEST_F(FakeGpu, CopiesBetweenDevicesKeepEveryElement) {
  {
    const std::int64_t n = (3 << 20) + 17;  // 12 MiB of floats: staged through pinned buffers in chunks
    auto x = ct::randn<float>({n}, 11, 0.0, 1.0, ct::cpu());
    const auto hx = x.to_host();
    auto g0 = std::move(x).to(kGpu0);
    EXPECT_EQ(g0.device(), kGpu0);
    auto g1 = std::move(g0).to(kGpu1);  // peer copy, asynchronous
    EXPECT_EQ(g1.device(), kGpu1);
    auto back = std::move(g1).to(ct::cpu());
    EXPECT_EQ(back.device(), ct::cpu());
    EXPECT_EQ(back.to_host(), hx);
    // to() onto the same device hands the tensor back without copying.
    auto same = std::move(back).to(ct::cpu());
    EXPECT_EQ(same.to_host(), hx);
  }
  {
    // Non-contiguous views: a column slice of a matrix, from and to the GPU.
    auto m = ct::arange<std::int32_t>(60, ct::cpu()).reshape({6, 10});
    auto col = std::move(m).slice(1, 3, 7);  // 6 x 4, strides {10, 1}, offset 3
    std::vector<std::int32_t> want;
    for (int i = 0; i < 6; ++i)
      for (int j = 3; j < 7; ++j) want.push_back(i * 10 + j);
    EXPECT_EQ(col.to_host(), want);
    auto gcol = std::move(col).to(kGpu0);
    EXPECT_EQ(gcol.to_host(), want);
    auto gm = ct::arange<std::int32_t>(60, kGpu0).reshape({6, 10}).slice(1, 3, 7);  // a view of GPU memory
    EXPECT_EQ(gm.to_host(), want);
    auto gshared = std::move(gm).share();
    EXPECT_EQ(gshared.to(ct::cpu()).to_host(), want);
    EXPECT_EQ(gshared.to(kGpu1).to_host(), want);  // non-contiguous GPU -> GPU goes through the host
    auto rowsl = gshared.slice(0, 2, 4);           // rows 2..3 of the view: still strided
    EXPECT_EQ(rowsl.to_host(), std::vector<std::int32_t>(want.begin() + 8, want.begin() + 16));
  }
  {
    // Shared::to copies and leaves the handle valid; GPU -> GPU on one device too.
    auto s = ct::arange<double>(1000, kGpu0).share();
    auto c0 = s.to(kGpu0);
    auto c1 = s.to(kGpu1);
    EXPECT_TRUE(s.valid());
    EXPECT_EQ(c0.to_host(), s.to_host());
    EXPECT_EQ(c1.to_host(), s.to_host());
  }
  expect_no_leaks();
}

namespace {

// A stand-in for a kernel: runs on the fake GPU's stream worker after everything before it.
struct FakeKernel {
  std::atomic<int>* counter;
  std::vector<int>* log;
  int id;
  static void run(void* p) {
    auto* k = static_cast<FakeKernel*>(p);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    k->log->push_back(k->id);
    k->counter->fetch_add(1);
    delete k;
  }
};

// Enqueues a fake kernel on the current CUDA stream (from inside a stream task).
void fake_kernel(std::atomic<int>& counter, std::vector<int>& log, int id) {
  const cu::CurrentStream* cur = cu::current_stream();
  ASSERT_NE(cur, nullptr);
  fake.enqueue(cur->stream, &FakeKernel::run, new FakeKernel{&counter, &log, id});
}

}  // namespace

TEST_F(FakeGpu, TasksRunOnTheCallerAndEventsCompleteAfterTheGpu) {
  auto s = ct::Stream::create(kGpu0);
  EXPECT_EQ(s.device(), kGpu0);
  std::atomic<int> ran{0};
  std::vector<int> log;
  const auto caller = std::this_thread::get_id();
  std::thread::id task_thread;
  // The captured guard is released only after the GPU part of the task finished.
  std::atomic<int> released_after{-1};
  auto guard = std::shared_ptr<int>(new int(0), [&](int* p) {
    released_after = ran.load();
    delete p;
  });
  ct::Event e = s.enqueue([&, g = guard] {
    task_thread = std::this_thread::get_id();
    fake_kernel(ran, log, 1);
  });
  guard.reset();
  EXPECT_EQ(task_thread, caller);
  EXPECT_EQ(cu::current_stream(), nullptr);  // only set while the task runs
  EXPECT_FALSE(e.done());                    // the fake GPU takes its time
  EXPECT_NE(e.native(), nullptr);
  e.wait();
  EXPECT_EQ(ran.load(), 1);
  EXPECT_EQ(released_after.load(), 1);
  EXPECT_EQ(e.error(), nullptr);
}

// Work on a CUDA stream completes without any host thread waiting (what it kept alive is released
// then), and a wait for the last of many launches completes every one; also with the completion
// thread paced (cuda_runtime.fake_gpu_paced: it asks the driver at its own pace instead of waiting
// inside it, docs/cuda_runtime.md "Pacing").
TEST_F(FakeGpu, WorkCompletesWithoutAWaiterAndAWaitEndsTheCompletersPace) {
  auto s = ct::Stream::create(kGpu0);
  std::atomic<int> ran{0};
  std::vector<int> log;
  std::atomic<bool> released{false};
  auto guard = std::shared_ptr<int>(new int(0), [&](int* p) {
    released = true;
    delete p;
  });
  ct::Event first = s.enqueue([&, g = guard] { fake_kernel(ran, log, 1); });
  guard.reset();
  // Polled, never waited for: done within a few paces of the GPU finishing (here at most 2 s).
  for (int i = 0; i < 2000 && !first.done(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(first.done());
  EXPECT_TRUE(released.load());
  EXPECT_EQ(ran.load(), 1);
  // Many launches in flight, then one wait for the last: every earlier event is done with it.
  std::vector<ct::Event> events;
  for (int i = 0; i < 100; ++i) events.push_back(s.enqueue([&] { fake_kernel(ran, log, 2); }));
  events.back().wait();
  for (const ct::Event& e : events) EXPECT_TRUE(e.done());
  EXPECT_EQ(ran.load(), 101);
}

TEST_F(FakeGpu, StreamsAreOrderedByEventsOnTheDevice) {
  auto a = ct::Stream::create(kGpu0);
  auto b = ct::Stream::create(kGpu0);
  std::atomic<int> ran{0};
  std::vector<int> log;
  std::mutex mu;
  ct::Event ea = a.enqueue([&] {
    fake_kernel(ran, log, 1);
    fake_kernel(ran, log, 2);
  });
  // b waits for a on the device (cuStreamWaitEvent), not on the host: enqueue returns at once.
  const auto t0 = std::chrono::steady_clock::now();
  ct::Event eb = b.enqueue([&] { fake_kernel(ran, log, 3); }, {ea});
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(8));
  eb.wait();
  EXPECT_TRUE(ea.done());
  EXPECT_EQ(log, (std::vector<int>{1, 2, 3}));
  // A different device's event orders work too.
  auto c = ct::Stream::create(kGpu1);
  ct::Event e1 = c.enqueue([&] { fake_kernel(ran, log, 4); });
  ct::Event e2 = a.enqueue([&] { fake_kernel(ran, log, 5); }, {e1});
  e2.wait();
  EXPECT_EQ(log.back(), 5);
  EXPECT_EQ(log[log.size() - 2], 4);
}

TEST_F(FakeGpu, HostEventsAreWaitedForOnTheHost) {
  auto cpu_stream = ct::Stream::create(ct::cpu());
  auto g = ct::Stream::create(kGpu0);
  std::atomic<bool> cpu_done{false};
  ct::Event ec = cpu_stream.enqueue([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    cpu_done = true;
  });
  bool seen = false;
  ct::Event eg = g.enqueue([&] { seen = cpu_done.load(); }, {ec});
  EXPECT_TRUE(seen);
  eg.wait();
  // And the other way round: a CPU stream waits for a CUDA stream's event.
  std::atomic<int> ran{0};
  std::vector<int> log;
  ct::Event eg2 = g.enqueue([&] { fake_kernel(ran, log, 1); });
  int seen_ran = -1;
  cpu_stream.enqueue([&] { seen_ran = ran.load(); }, {eg2}).wait();
  EXPECT_EQ(seen_ran, 1);
}

TEST_F(FakeGpu, ErrorsGoIntoEventsAndSkipDependents) {
  auto s = ct::Stream::create(kGpu0);
  ct::Event bad = s.enqueue([] { throw ct::UserError("task failed"); });
  bool ran = false;
  ct::Event next = s.enqueue([&] { ran = true; }, {bad});
  next.wait();
  EXPECT_FALSE(ran);
  ASSERT_NE(next.error(), nullptr);
  EXPECT_CONTAINS(user_error_of([&] { std::rethrow_exception(next.error()); }), "task failed");
  // The stream itself is fine afterwards.
  ct::Event ok = s.enqueue([&] { ran = true; });
  ok.wait();
  EXPECT_TRUE(ran);
  EXPECT_EQ(ok.error(), nullptr);
}

TEST_F(FakeGpu, SynchronizeCompletesEveryEarlierEvent) {
  auto s = ct::Stream::create(kGpu0);
  std::atomic<int> ran{0};
  std::vector<int> log;
  std::vector<ct::Event> evs;
  for (int i = 0; i < 10; ++i) evs.push_back(s.enqueue([&, i] { fake_kernel(ran, log, i); }));
  s.synchronize();
  for (auto& e : evs) EXPECT_TRUE(e.done());
  EXPECT_EQ(ran.load(), 10);
  // From inside a task of the same stream it would wait for itself.
  ct::Event inner = s.enqueue([s]() mutable { s.synchronize(); });
  inner.wait();
  EXPECT_CONTAINS(user_error_of([&] { std::rethrow_exception(inner.error()); }), "same stream");
  ct::Event reenter = s.enqueue([s]() mutable { (void)s.enqueue([] {}); });
  reenter.wait();
  EXPECT_CONTAINS(user_error_of([&] { std::rethrow_exception(reenter.error()); }), "same stream");
}

TEST_F(FakeGpu, TheLastStreamHandleMayGoAwayInACompletionCallback) {
  std::atomic<bool> called{false};
  {
    auto s = ct::Stream::create(kGpu0);
    std::atomic<int> ran{0};
    std::vector<int> log;
    ct::Event e = s.enqueue([&] { fake_kernel(ran, log, 1); });
    e.on_complete([keep = s, &called](std::exception_ptr) mutable {
      keep = ct::Stream();  // may drop the last handle, on the completion thread
      called = true;
    });
    s = ct::Stream();
    e.wait();
  }
  for (int i = 0; i < 1000 && !called; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(called.load());
}

TEST_F(FakeGpu, MemoryIsFreedOnlyAfterTheGpuIsDoneWithIt) {
  fake.delay(2000);  // a slow GPU: frees that came too early would show as violations
  std::atomic<int> ran{0};
  std::vector<int> log;
  {
    auto s = ct::Stream::create(kGpu0);
    auto t = ct::zeros<float>({256}, kGpu0).share();
    ct::Event e = s.enqueue([&, core = t.core(ct::unchecked)] { fake_kernel(ran, log, 1); });
    t.core(ct::unchecked)->storage->record_read(e);
    t = ct::Shared<float>();  // the task still holds the storage
    EXPECT_EQ(fake.live(), baseline_ + 1);
  }  // ~Stream waits for the task's events
  EXPECT_EQ(ran.load(), 1);
  fake.delay(100);
  expect_no_leaks();
}

TEST_F(FakeGpu, OutOfMemoryIsAUserErrorAndFailuresDoNotLeak) {
  fake.fail("cuMemAllocAsync", 2, 2);  // CUDA_ERROR_OUT_OF_MEMORY, also after the retry
  fake.fail("cuMemAlloc_v2", 2, 2);    // (without memory pools)
  EXPECT_CONTAINS(user_error_of([] { (void)ct::zeros<float>({1 << 20}, kGpu0); }), "out of memory");
  fake.fail("cuMemsetD8Async", 1, 1);  // CUDA_ERROR_INVALID_VALUE
  try {
    (void)ct::zeros<float>({16}, kGpu0);
    ADD_FAILURE() << "no exception";
  } catch (const cu::CudaError& e) {
    EXPECT_EQ(e.call(), "cuMemsetD8Async");
    EXPECT_CONTAINS(e.what(), "CUDA_ERROR_INVALID_VALUE");
    EXPECT_CONTAINS(e.what(), "zero-filling");
  }
  expect_no_leaks();
}

TEST_F(FakeGpu, AFaultOnTheGpuReachesTheEventsAndTheHost) {
  auto s = ct::Stream::create(kGpu0);
  auto t = ct::zeros<float>({16}, kGpu0);
  EXPECT_EQ(t.to_host().size(), 16u);
  fake.sticky(700);  // CUDA_ERROR_ILLEGAL_ADDRESS from now on, as after a faulting kernel
  ct::Event e = s.enqueue([] {});
  e.wait();
  fake.sticky(0);
  ASSERT_NE(e.error(), nullptr);
  try {
    std::rethrow_exception(e.error());
  } catch (const cu::CudaError& err) {
    EXPECT_EQ(err.error_name(), "CUDA_ERROR_ILLEGAL_ADDRESS");
  }
}

namespace {
void vadd(ct::Mut<float, 1> z, ct::Ref<float, 1> x, ct::Ref<float, 1> y) {
  z.store(ct::load_like(x, z) + ct::load_like(y, z));
}
void read_only(ct::Ref<float, 1> x) {
  auto v = x.tiles({128}).load({ct::block_id(0)}, 0.0f);
  (void)v;
}
}  // namespace

TEST_F(FakeGpu, LaunchesCompileThroughNvrtcAndEnqueueOnTheStream) {
  if (!cg::nvrtc()) GTEST_SKIP() << "NVRTC is not available here: " << cg::nvrtc_unavailable_reason();
  const int before = fake.launches();
  {
    auto x = ct::rand<float>({1000}, 1, kGpu0).share();
    auto y = ct::rand<float>({1000}, 2, kGpu0).share();
    auto z = ct::zeros<float>({1000}, kGpu0).partition({256});
    auto [z2, x2, y2] = ct::launch(vadd, std::move(z), x, y).sync();  // the default stream of cuda:0
    EXPECT_EQ(fake.launches(), before + 1);
    auto f = ct::launch(vadd, std::move(z2), x2, y2).async_on(ct::Stream::create(kGpu0));
    auto [z3, x3, y3] = std::move(f).get();
    EXPECT_EQ(fake.launches(), before + 2);
    // A race-checked launch runs on the CPU interpreter over copies of the arguments (the fake GPU
    // runs no kernels, so only this one computes real values).
    auto [z4, x4, y4] = ct::launch(vadd, std::move(z3), x3, y3).race_check().sync();
    EXPECT_EQ(fake.launches(), before + 2);
    const auto hz = std::move(z4).unpartition().to_host();
    const auto hx = x4.to_host(), hy = y4.to_host();
    for (std::size_t i = 0; i < hz.size(); ++i) ASSERT_EQ(hz[i], hx[i] + hy[i]) << i;
    // Arguments on another GPU than the stream.
    auto w = ct::zeros<float>({1000}, kGpu1).partition({256});
    EXPECT_CONTAINS(user_error_of([&] { (void)ct::launch(vadd, std::move(w), x4, y4).sync_on(ct::default_stream(kGpu0)); }),
                    "cuda:1");
  }
  {
    // More than 2^31 - 1 tile blocks is refused before anything is enqueued.
    float dummy = 0;
    auto big = ct::Tensor<float>::borrow(ct::unchecked, &dummy, {std::int64_t{1} << 40}, {0}, kGpu0).share();
    EXPECT_CONTAINS(user_error_of([&] { (void)ct::launch(read_only, big).grid({std::int64_t{1} << 31}).sync(); }),
                    "2^31 - 1");
  }
  expect_no_leaks();
}

TEST_F(FakeGpu, ManyThreadsCreateCopyAndFree) {
  std::vector<std::thread> ts;
  std::atomic<int> bad{0};
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([t, &bad] {
      auto s = ct::Stream::create(kGpu0);
      for (int i = 0; i < 20; ++i) {
        auto a = ct::arange<std::int64_t>(1000 + i, kGpu0);
        auto b = std::move(a).to(t % 2 ? kGpu1 : kGpu0).share();
        auto c = b.to(kGpu0);
        std::atomic<int> ran{0};
        std::vector<int> log;
        ct::Event e = s.enqueue([&, keep = c.core(ct::unchecked)] { fake_kernel(ran, log, i); }, c.core(ct::unchecked)->storage->deps_for_read());
        const auto h = c.to_host();
        for (std::size_t k = 0; k < h.size(); ++k)
          if (h[k] != std::int64_t(k)) ++bad;
        e.wait();
      }
    });
  for (auto& th : ts) th.join();
  EXPECT_EQ(bad.load(), 0);
  expect_no_leaks();
}

// ---- interop: a foreign CUstream (Stream::wrap_cuda) and DLPack tensors of device memory ----

namespace {

// A CUstream made by "someone else" (a framework) in the primary context of cuda:0.
cu::CUstream foreign_stream() {
  int dev = 0;
  cu::CUcontext ctx = nullptr;
  cu::CUstream s = nullptr;
  EXPECT_EQ(fake.sym<int (*)(int*, int)>("cuDeviceGet")(&dev, 0), 0);
  EXPECT_EQ(fake.sym<int (*)(cu::CUcontext*, int)>("cuDevicePrimaryCtxRetain")(&ctx, dev), 0);
  EXPECT_EQ(fake.sym<int (*)(cu::CUcontext)>("cuCtxPushCurrent_v2")(ctx), 0);
  EXPECT_EQ(fake.sym<int (*)(cu::CUstream*, unsigned)>("cuStreamCreate")(&s, 1u), 0);
  EXPECT_EQ(fake.sym<int (*)(cu::CUcontext*)>("cuCtxPopCurrent_v2")(&ctx), 0);
  return s;
}
int fake_stream_call(const char* fn, cu::CUstream s) { return fake.sym<int (*)(cu::CUstream)>(fn)(s); }

struct SlowWrite {
  std::atomic<int>* flag;
  static void run(void* p) {
    auto* w = static_cast<SlowWrite*>(p);
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    w->flag->store(1);
    delete w;
  }
};

}  // namespace

TEST_F(FakeGpu, AForeignStreamOrdersCtilesWorkAndIsNeverDestroyed) {
  cu::CUstream raw = foreign_stream();
  std::atomic<int> producer_done{0};
  std::weak_ptr<int> watch;
  {
    auto owner = std::make_shared<int>(7);
    watch = owner;
    auto s = ct::Stream::wrap_cuda(ct::unchecked, 0, raw, owner);
    owner.reset();
    EXPECT_EQ(s.device(), kGpu0);
    // The owner's work on its stream (a slow "kernel"), then ctile's: ctile's runs after it.
    fake.enqueue(raw, &SlowWrite::run, new SlowWrite{&producer_done});
    std::atomic<int> seen{-1};
    ct::Event e = s.host([&] { seen = producer_done.load(); });
    // ctile work on the stream: a copy through it, checked element by element.
    auto src = ct::arange<float>(1000, kGpu0).share();
    auto [dst, src2] = ct::copy(ct::zeros<float>({1000}, kGpu0), src).sync_on(s);
    EXPECT_EQ(dst.to_host(), src2.to_host());
    e.wait();
    EXPECT_EQ(seen.load(), 1) << "ctile's task ran before the work already on the foreign stream";
    EXPECT_FALSE(watch.expired());
  }
  for (int i = 0; i < 2000 && !watch.expired(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(watch.expired()) << "the keep-alive outlived the last handle";
  // ctile did not destroy the stream: it is still valid for its owner (the fake counts misuse).
  EXPECT_EQ(fake_stream_call("cuStreamSynchronize", raw), 0);
  EXPECT_EQ(fake_stream_call("cuStreamDestroy_v2", raw), 0);
  expect_no_leaks();
}

TEST_F(FakeGpu, ADLPackTensorOfDeviceMemoryRoundTrips) {
  cu::CUstream raw = foreign_stream();
  {
    auto s = ct::Stream::wrap_cuda(ct::unchecked, 0, raw);
    auto t = ct::arange<float>(256, kGpu0);
    const void* addr = t.core(ct::unchecked)->data();
    ctile::dlpack::DLManagedTensorVersioned* m = ct::to_dlpack(std::move(t), s);  // the consumer's stream waits
    EXPECT_EQ(m->dl_tensor.device.device_type, ctile::dlpack::kDLCUDA);
    EXPECT_EQ(m->dl_tensor.device.device_id, 0);
    EXPECT_EQ(m->dl_tensor.data, addr);
    EXPECT_TRUE(fake.is_device(m->dl_tensor.data, 256 * sizeof(float)));
    auto back = ct::from_dlpack_shared<float>(m, s);  // the producer's stream orders ctile's reads
    EXPECT_EQ(back.core(ct::unchecked)->data(), addr);
    const auto h = back.to_host();
    for (int i = 0; i < 256; ++i) ASSERT_EQ(h[static_cast<std::size_t>(i)], static_cast<float>(i));
    // A consumer stream of another device: refused, and the tensor stays with the caller.
    auto z = ct::zeros<float>({4}, kGpu0);
    const auto cpu_stream = ct::Stream::create(ct::cpu());
    EXPECT_CONTAINS(user_error_of([&] { (void)ct::to_dlpack(std::move(z), cpu_stream); }),
                    "to_dlpack<f32>: the consumer stream runs on cpu:0 but the tensor lives on cuda:0");
    EXPECT_TRUE(z.valid());  // NOLINT(bugprone-use-after-move): a failed hand-over takes nothing
  }
  EXPECT_EQ(fake_stream_call("cuStreamSynchronize", raw), 0);
  EXPECT_EQ(fake_stream_call("cuStreamDestroy_v2", raw), 0);
  expect_no_leaks();
}

TEST_F(FakeGpu, WrappingAStreamOfANonexistentDeviceIsAUserError) {
  EXPECT_CONTAINS(user_error_of([] { (void)ct::Stream::wrap_cuda(ct::unchecked, 5, nullptr); }), "cuda:5 does not exist");
}
