// Graphs, typed stream commands, stream ordering of allocations and the device teardown on the fake
// GPUs (fake_cuda.cpp: asynchronous streams, graphs as lists of nodes; kernels do not run, copies
// and host callbacks do). Run as cuda_runtime.graphs_on_fake_gpu with two fake GPUs.
#include <dlfcn.h>

#include <atomic>
#include <bit>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include <ctile/ctile.hpp>

#include "../../../src/backend/cuda/nvrtc.hpp"
#include "../../../src/platform/cuda/device.hpp"
#include "../../../src/platform/cuda/kernel.hpp"
#include "../../../src/platform/cuda/stream.hpp"
#include "../runtime/test_helpers.hpp"

namespace ct = ctile;
namespace cu = ctile::platform::cuda;
using ct::test::expect_user_error;
using namespace std::chrono_literals;

namespace {

const ct::Device kGpu0{ct::DeviceKind::Cuda, 0};
const ct::Device kGpu1{ct::DeviceKind::Cuda, 1};

struct Fake {
  void* h = nullptr;
  template <class F>
  F sym(const char* name) {
    if (!h) h = ::dlopen(std::getenv("CTILE_LIBCUDA"), RTLD_NOW | RTLD_NOLOAD);
    void* p = h ? ::dlsym(h, name) : nullptr;
    if (!p) throw std::runtime_error(std::string("fake driver hook missing: ") + name);
    return reinterpret_cast<F>(p);
  }
  int violations() { return sym<int (*)()>("fake_cuda_violations")(); }
  int launches() { return sym<int (*)()>("fake_cuda_launches")(); }
  int graph_launches() { return sym<int (*)()>("fake_cuda_graph_launches")(); }
  int node_updates() { return sym<int (*)()>("fake_cuda_node_updates")(); }
  int programmatic_edges() { return sym<int (*)()>("fake_cuda_programmatic_edges")(); }
  int host_calls() { return sym<int (*)()>("fake_cuda_host_calls")(); }
  int stream_waits() { return sym<int (*)()>("fake_cuda_stream_waits")(); }
  long param_bytes_of(cu::CUfunction f) { return sym<long (*)(cu::CUfunction)>("fake_cuda_function_param_bytes")(f); }
  void count_calls(bool on) { sym<void (*)(int)>("fake_cuda_count_calls")(on ? 1 : 0); }
  int calls(const char* name) { return sym<int (*)(const char*)>("fake_cuda_thread_calls")(name); }
  std::string call_list() {
    char buf[2048];
    (void)sym<int (*)(char*, int)>("fake_cuda_thread_call_list")(buf, sizeof buf);
    return buf;
  }
  void fail(const char* fn, int code, int count) { sym<void (*)(const char*, int, int)>("fake_cuda_fail")(fn, code, count); }
  void count_all_calls(bool on) { sym<void (*)(int)>("fake_cuda_count_all_calls")(on ? 1 : 0); }
  int all_calls(const char* name) { return sym<int (*)(const char*)>("fake_cuda_all_calls")(name); }
  std::string all_call_list() {
    char buf[2048];
    (void)sym<int (*)(int, char*, int)>("fake_cuda_call_list")(1, buf, sizeof buf);
    return buf;
  }
  long pinned() { return sym<long (*)()>("fake_cuda_pinned_live")(); }
  long live() { return sym<long (*)()>("fake_cuda_live_allocations")(); }
  long live_graphs() { return sym<long (*)()>("fake_cuda_live_graphs")(); }
  void param_bytes(int n) { sym<void (*)(int)>("fake_cuda_set_param_bytes")(n); }
  void delay(int us) { sym<void (*)(int)>("fake_cuda_set_delay_us")(us); }
  std::vector<unsigned char> last_update() {
    std::vector<unsigned char> v(4096);
    const int n = sym<int (*)(void*, int)>("fake_cuda_last_update")(v.data(), static_cast<int>(v.size()));
    v.resize(static_cast<std::size_t>(std::max(n, 0)));
    return v;
  }
  void enqueue(cu::CUstream s, void (*fn)(void*), void* arg) {
    sym<void (*)(cu::CUstream, void (*)(void*), void*)>("fake_cuda_enqueue")(s, fn, arg);
  }
  // The value of `what` once it has not changed for 50 ms (at most 3 s): the frees of earlier tests
  // that completion threads still run have landed.
  long settled(long (Fake::*what)()) {
    long v = (this->*what)();
    for (int i = 0, same = 0; i < 3000 && same < 50; ++i) {
      std::this_thread::sleep_for(1ms);
      const long w = (this->*what)();
      same = w == v ? same + 1 : 0;
      v = w;
    }
    return v;
  }
  bool becomes(long (Fake::*what)(), long n) {
    for (int i = 0; i < 3000; ++i) {
      if ((this->*what)() == n) return true;
      std::this_thread::sleep_for(1ms);
    }
    return (this->*what)() == n;
  }
};
Fake fake;

bool have_nvrtc() { return ctile::backend::cuda::nvrtc() != nullptr; }

// A minimal cubin for the fake driver: an ELF header, a section-name table and the section
// .nv.info.<name> holding EIATTR_CBANK_PARAM_SIZE (format 0x03, attribute 0x19) = param_bytes.
std::vector<unsigned char> tiny_cubin(const std::string& name, std::uint16_t param_bytes) {
  const std::string names = std::string("\0.shstrtab\0.nv.info.", 20) + name + '\0';
  const unsigned char info[4] = {0x03, 0x19, static_cast<unsigned char>(param_bytes & 0xff), static_cast<unsigned char>(param_bytes >> 8)};
  const std::size_t names_at = 64, info_at = names_at + names.size(), sh_at = (info_at + sizeof info + 7) / 8 * 8;
  std::vector<unsigned char> b(sh_at + 3 * 64, 0);
  auto put = [&](std::size_t at, std::uint64_t v, std::size_t n) { std::memcpy(b.data() + at, &v, n); };
  b[0] = 0x7f, b[1] = 'E', b[2] = 'L', b[3] = 'F', b[4] = 2, b[5] = 1, b[6] = 1;
  put(0x28, sh_at, 8);   // e_shoff
  put(0x3a, 64, 2);      // e_shentsize
  put(0x3c, 3, 2);       // e_shnum
  put(0x3e, 1, 2);       // e_shstrndx
  std::memcpy(b.data() + names_at, names.data(), names.size());
  std::memcpy(b.data() + info_at, info, sizeof info);
  auto section = [&](int i, std::uint32_t name_off, std::uint64_t off, std::uint64_t size) {
    put(sh_at + 64 * static_cast<std::size_t>(i), name_off, 4);
    put(sh_at + 64 * static_cast<std::size_t>(i) + 0x18, off, 8);
    put(sh_at + 64 * static_cast<std::size_t>(i) + 0x20, size, 8);
  };
  section(1, 1, names_at, names.size());
  section(2, 11, info_at, sizeof info);
  return b;
}

void axpy(ct::Mut<float, 1> y, ct::Scalar<float> a, ct::Ref<float, 1> x) { y.store(a * ct::load_like(x, y) + y.load()); }
void acc(ct::Mut<float, 1> z, ct::Ref<float, 1> x) { z.store(z.load() + ct::load_like(x, z)); }
void add2(ct::Mut<float, 1> z, ct::Ref<float, 1> x, ct::Ref<float, 1> y) { z.store(ct::load_like(x, z) + ct::load_like(y, z)); }

using P = ct::Partition<float>;
using S = ct::Shared<float>;

class FakeGraphs : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(ct::cuda_available()) << ct::cuda_unavailable_reason();
    fake.delay(50);
  }
  void TearDown() override {
    ct::default_stream(kGpu0).synchronize();
    EXPECT_EQ(fake.violations(), 0) << "the fake driver saw misuse (see stderr)";
  }
};

TEST_F(FakeGraphs, CopyGraphsMoveRealDataAndFollowCopyIn) {
  // Three copy nodes: b <- a, then c <- b on the capture's stream; e <- d on a forked stream; the
  // two lanes joined. The fake runs copies, so the data is real. d is held only by the graph: it is
  // the input that copy_in changes between replays.
  const std::int64_t n = 5000;
  std::vector<float> ha(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) ha[static_cast<std::size_t>(i)] = static_cast<float>(i % 97) - 40.0f;
  auto a = ct::from_host<float>(std::span<const float>(ha), {n}, kGpu0).share();
  auto b = ct::zeros<float>({n}, kGpu0);
  auto c = ct::zeros<float>({n}, kGpu0);
  auto d = ct::zeros<float>({n}, kGpu0).share();
  auto e = ct::zeros<float>({n}, kGpu0);
  const long graphs_before = fake.live_graphs();
  auto g = ct::capture(kGpu0, [&](ct::Capture& cap) {
    auto chain = ct::copy(std::move(b), std::move(a)).async_on(cap.stream()).then([&](auto&& t) {
      return ct::copy(std::move(c), std::move(std::get<0>(t)).share());
    });
    return ct::join(std::move(chain), ct::copy(std::move(e), std::move(d)).async_on(cap.fork()));
  });
  EXPECT_EQ(g.nodes(), 3u);
  EXPECT_EQ(g.kernel_nodes(), 0u);
  EXPECT_EQ(fake.live_graphs(), graphs_before + 2);  // the CUDA graph and its executable
  // Nothing copied yet.
  EXPECT_EQ((g.read<0, 0>()), std::vector<float>(static_cast<std::size_t>(n), 0.0f));
  auto s = ct::Stream::create(kGpu0);
  const int before = fake.graph_launches();
  g = std::move(g).replay(s).get();
  EXPECT_EQ(fake.graph_launches(), before + 1);
  EXPECT_EQ((g.read<0, 0>()), ha);
  EXPECT_EQ((g.read<1, 0>()), std::vector<float>(static_cast<std::size_t>(n), 0.0f));
  // A new input through the captured buffer (a host-to-device copy ordered after the previous
  // replay's reads, and before the next replay), three times without waiting in between: a
  // follow-up that returns the graph replays it.
  const int launches = fake.graph_launches();
  auto f = std::move(g).replay(s);
  for (int round = 1; round <= 3; ++round) {
    f = std::move(f).then([&, round](auto&& gg) {
      std::vector<float> in(static_cast<std::size_t>(n), static_cast<float>(round));
      gg.template copy_in<1, 1>(std::span<const float>(in));
      return std::move(gg);
    });
  }
  g = std::move(f).get();
  EXPECT_EQ(fake.graph_launches(), launches + 4);
  EXPECT_EQ((g.read<1, 0>()), std::vector<float>(static_cast<std::size_t>(n), 3.0f));
  EXPECT_EQ((g.read<1, 1>()), std::vector<float>(static_cast<std::size_t>(n), 3.0f));
  EXPECT_EQ((g.read<0, 0>()), ha);  // the other lane is unchanged
  {
    auto [chain, lane] = std::move(g).unwrap();
    EXPECT_EQ(std::get<0>(lane).to_host()[0], 3.0f);
  }
  EXPECT_TRUE(fake.becomes(&Fake::live_graphs, graphs_before));
}

TEST_F(FakeGraphs, KernelNodesLaunchPerReplayAndTakeNewParameters) {
  if (!have_nvrtc()) GTEST_SKIP() << "NVRTC is not available here";
  const std::int64_t n = 1024;
  auto x = ct::ones<float>({n}, kGpu0).share();
  auto y = ct::zeros<float>({n}, kGpu0).partition({256});
  // axpy(y, a, x): two tensor slots (104 bytes each after the 48-byte grid), then the scalar at 256.
  fake.param_bytes(264);
  auto g = ct::capture(kGpu0, [&](ct::Capture& cap) {
    auto f = ct::launch(axpy, std::move(y), 1.0f, x).async_on(cap.stream());
    for (int i = 0; i < 9; ++i)
      f = std::move(f).then([](std::tuple<P, float, S>&& t) { return ct::launch(axpy, std::move(std::get<0>(t)), 1.0f, std::get<2>(t)); });
    return f;
  });
  EXPECT_EQ(g.kernel_nodes(), 10u);
  auto s = ct::Stream::create(kGpu0);
  const int before = fake.launches();
  const std::uint64_t counted = cu::kernel_launches(0);
  for (int r = 0; r < 3; ++r) g = std::move(g).replay(s).get();
  EXPECT_EQ(fake.launches(), before + 30);  // ten kernel nodes per replay, no eager launches
  EXPECT_EQ(cu::kernel_launches(0), counted + 30);  // the platform's count agrees with the driver's
  // An eager launch counts one; another device's count does not move.
  const std::uint64_t other = cu::kernel_launches(1);
  auto [y1, a1, x1] = ct::launch(axpy, ct::zeros<float>({n}, kGpu0).partition({256}), 1.0f, x).sync_on(s);
  EXPECT_EQ(cu::kernel_launches(0), counted + 31);
  EXPECT_EQ(fake.launches(), before + 31);
  EXPECT_EQ(cu::kernel_launches(1), other);
  EXPECT_EQ(cu::kernel_launches(-1), 0u);
  EXPECT_EQ(cu::kernel_launches(64), 0u);
  // A new scalar: the node's parameter block is updated in place (its scalar slot).
  const int updates = fake.node_updates();
  g.set_scalar(4, 1, 2.5f);
  EXPECT_EQ(fake.node_updates(), updates + 1);
  const auto p = fake.last_update();
  ASSERT_EQ(p.size(), 264u);
  std::uint32_t bits = 0;
  std::memcpy(&bits, p.data() + 256, 4);
  EXPECT_EQ(bits, std::bit_cast<std::uint32_t>(2.5f));
  // A new output: every node that wrote the old one gets the new device address (tensor slot 0).
  auto fresh = ct::zeros<float>({n}, kGpu0).partition({256});
  const void* addr = fresh.core(ct::unchecked)->data();
  P old = g.swap<0>(std::move(fresh));
  EXPECT_EQ(fake.node_updates(), updates + 11);
  const auto q = fake.last_update();
  void* written = nullptr;
  std::memcpy(&written, q.data() + 48, sizeof written);
  EXPECT_EQ(written, addr);
  g = std::move(g).replay(s).get();
  EXPECT_EQ(fake.launches(), before + 41);
  EXPECT_EQ(cu::kernel_launches(0), counted + 41);
  EXPECT_TRUE(old.valid());
  fake.param_bytes(0);
}

// ctile's kernels on sm_90 (the fake device) wait for the grid they depend on themselves
// (griddepcontrol.wait), so a kernel node after a kernel node hangs on a programmatic edge: the
// driver may launch it while the kernel before it runs (the fake checks the edge's kind).
TEST_F(FakeGraphs, TileKernelNodesFollowKernelNodesByProgrammaticEdges) {
  if (!have_nvrtc()) GTEST_SKIP() << "NVRTC is not available here";
  if (const char* v = std::getenv("CTILE_PDL"); v && std::string(v) == "0") GTEST_SKIP() << "CTILE_PDL=0: full edges only";
  const std::int64_t n = 1024;
  auto x = ct::ones<float>({n}, kGpu0).share();
  auto y = ct::zeros<float>({n}, kGpu0).partition({256});
  const int before = fake.programmatic_edges();
  auto g = ct::capture(kGpu0, [&](ct::Capture& cap) {
    auto f = ct::launch(axpy, std::move(y), 1.0f, x).async_on(cap.stream());
    for (int i = 0; i < 4; ++i)
      f = std::move(f).then([](std::tuple<P, float, S>&& t) { return ct::launch(axpy, std::move(std::get<0>(t)), 1.0f, std::get<2>(t)); });
    return f;
  });
  EXPECT_EQ(g.kernel_nodes(), 5u);
  EXPECT_EQ(fake.programmatic_edges(), before + 4);  // one into each kernel node after the first
  auto s = ct::Stream::create(kGpu0);
  const int launches = fake.launches();
  g = std::move(g).replay(s).get();
  EXPECT_EQ(fake.launches(), launches + 5);
  EXPECT_EQ(fake.violations(), 0);
}

TEST_F(FakeGraphs, AWarmLaunchMakesNoDriverQueries) {
  // On the launching thread a cached or bound launch calls the driver for the launch and for nothing
  // else: no context or attribute queries, and no event (the completion thread records one per batch
  // of launches: lazy completion events).
  if (!have_nvrtc()) GTEST_SKIP() << "NVRTC is not available here";
  const std::int64_t n = 1024;
  auto x = ct::ones<float>({n}, kGpu0).share();
  auto y = ct::zeros<float>({n}, kGpu0).partition({256});
  auto s = ct::Stream::create(kGpu0);
  auto k = ct::bind_on(s, axpy, ct::spec::partition<float>({n}, {256}), 0.0f, ct::spec::shared<float>({n}));
  constexpr int steps = 200;
  auto run = [&](bool bound) {
    auto f = ct::launch(axpy, std::move(y), 1.0f, x).async_on(s);
    for (int i = 1; i < steps; ++i)
      f = std::move(f).then([&](std::tuple<P, float, S>&& t) -> ct::Future<std::tuple<P, float, S>> {
        if (bound) return k(s, std::move(std::get<0>(t)), 1.0f, std::get<2>(t));
        return ct::launch(axpy, std::move(std::get<0>(t)), 1.0f, std::get<2>(t)).async_on(s);
      });
    std::tie(y, std::ignore, x) = std::move(f).get();
  };
  run(false);
  run(true);  // warm: compiled, the records cached, the event cache filled
  for (bool bound : {false, true}) {
    fake.count_calls(true);
    run(bound);
    fake.count_calls(false);
    const std::string what = bound ? "bound" : "cached";
    EXPECT_EQ(fake.calls("cuLaunchKernel"), steps) << what << ": " << fake.call_list();
    EXPECT_EQ(fake.calls(nullptr), steps) << what << ": other driver calls: " << fake.call_list();
  }
  // The counter sees a query where one is made (its self-test): a device attribute.
  fake.count_calls(true);
  (void)ct::describe(kGpu1);
  fake.count_calls(false);
  EXPECT_GT(fake.calls(nullptr), 0) << "the fake's call counter saw nothing";
}

// The limits a library kernel sizes itself by come from the driver (the fake's sm_90 and 227 KB).
TEST_F(FakeGraphs, DeviceLimitsComeFromTheDriver) {
  const ct::DeviceLimits l = ct::device_limits(kGpu0);
  EXPECT_EQ(l.sm, 90);
  EXPECT_EQ(l.max_smem_per_block, 227 * 1024);
  EXPECT_EQ(ct::device_limits(ct::cpu()).sm, 0);
}

// The driver calls of every thread (the launching thread and ctile's completion threads) per
// operation in a steady state, pinned so that the count cannot grow unnoticed (docs/cuda_runtime.md,
// "Driver calls per operation"): a chained cached or bound launch costs its cuLaunchKernel, and its
// completion thread (paced or not) records and waits once per batch of launches (here the GPU is
// slow, so the launches queue up and batches fill); a launch or a replay that the host waits for
// costs the launch, the record and one wait.
TEST_F(FakeGraphs, DriverCallsPerOperation) {
  if (!have_nvrtc()) GTEST_SKIP() << "NVRTC is not available here";
  const std::int64_t n = 1024;
  auto x = ct::ones<float>({n}, kGpu0).share();
  auto y = ct::zeros<float>({n}, kGpu0).partition({256});
  auto s = ct::Stream::create(kGpu0);
  auto k = ct::bind_on(s, axpy, ct::spec::partition<float>({n}, {256}), 0.0f, ct::spec::shared<float>({n}));
  constexpr int steps = 100;
  auto chain = [&](bool bound) {
    auto f = ct::launch(axpy, std::move(y), 1.0f, x).async_on(s);
    for (int i = 1; i < steps; ++i)
      f = std::move(f).then([&](std::tuple<P, float, S>&& t) -> ct::Future<std::tuple<P, float, S>> {
        if (bound) return k(s, std::move(std::get<0>(t)), 1.0f, std::get<2>(t));
        return ct::launch(axpy, std::move(std::get<0>(t)), 1.0f, std::get<2>(t)).async_on(s);
      });
    std::tie(y, std::ignore, x) = std::move(f).get();
  };
  auto synced = [&] {
    for (int i = 0; i < steps; ++i) std::tie(y, std::ignore, x) = ct::launch(axpy, std::move(y), 1.0f, x).sync_on(s);
  };
  auto gy = ct::zeros<float>({n}, kGpu0).partition({256});
  auto g = ct::capture(kGpu0, [&](ct::Capture& cap) { return ct::launch(axpy, std::move(gy), 1.0f, x).async_on(cap.stream()); });
  auto replays = [&] {
    for (int i = 0; i < steps; ++i) g = std::move(g).replay(s).get();
  };
  struct Case {
    const char* what;
    std::function<void()> run;
    const char* launch;  // the entry point of the operation
    bool waited;         // the host waits for each operation
  };
  const Case cases[] = {{"cached launch", [&] { chain(false); }, "cuLaunchKernel", false},
                        {"bound launch", [&] { chain(true); }, "cuLaunchKernel", false},
                        {"launch + sync", synced, "cuLaunchKernel", true},
                        {"graph replay + sync", replays, "cuGraphLaunch", true}};
  for (const Case& c : cases) {
    fake.delay(50);
    c.run();  // warm: compiled, records cached, event pools filled
    c.run();
    fake.delay(c.waited ? 50 : 1000);  // chains: a slow GPU, so that the launches run ahead of it
    fake.count_all_calls(true);
    c.run();
    fake.count_all_calls(false);
    const int all = fake.all_calls(nullptr), created = fake.all_calls("cuEventCreate");
    const int waits = fake.all_calls("cuEventSynchronize"), queries = fake.all_calls("cuEventQuery");
    const std::string calls = fake.all_call_list();
    std::printf("%-20s %.2f driver calls per operation (%s)\n", c.what, all / double(steps), calls.c_str());
    const int records = fake.all_calls("cuEventRecord");
    EXPECT_EQ(fake.all_calls(c.launch), steps) << c.what << ": " << calls;
    if (c.waited) {
      EXPECT_EQ(waits, steps) << c.what << ": " << calls;
      EXPECT_EQ(records, steps) << c.what << ": " << calls;
    } else {
      EXPECT_LE(waits, steps / 8) << c.what << ": the completion thread waits once per batch: " << calls;
      // A record for a wait or a look of the completion thread at most, never one per launch.
      EXPECT_GE(records, 1) << c.what << ": " << calls;
      EXPECT_LE(records, waits + queries) << c.what << ": records are made per batch: " << calls;
    }
    // The event pool grows to the launches in flight at once, which depends on timing (a slow host,
    // under a sanitizer or a loaded CI machine, lets more of them pile up): fewer than one per two
    // launches means no launch creates its own event.
    EXPECT_LT(created, steps / 2) << c.what << ": " << calls;
    // Paced (cuda_runtime.graphs_on_fake_gpu_paced), the completion thread asks which events are
    // done at its own pace between waits (a look every CTILE_COMPLETER_PACE_US, slower while
    // nothing finishes), not once a launch; unpaced it never asks.
    EXPECT_LE(queries, steps) << c.what << ": " << calls;
    EXPECT_EQ(all, steps + records + waits + created + queries) << c.what << ": other driver calls: " << calls;
  }
  fake.delay(50);
}

// A launch the host waits for at once (sync, sync_on, a bound launch's sync_on) is waited for and
// completed by the calling thread when nothing earlier is pending on its stream: the thread waits for
// the launch's event itself (no hand-over to the completion thread and back), the event stays native
// (a free on another stream is ordered after it on the device: stream_order runs this test), and
// what the launch kept alive is released before its results come back. With earlier work pending
// the completion thread completes it, in stream order; an error found by the wait reaches the result.
TEST_F(FakeGraphs, ASyncedLaunchIsFinishedOnTheCallingThread) {
  if (!have_nvrtc()) GTEST_SKIP() << "NVRTC is not available here";
  const std::int64_t n = 1024;
  auto x = ct::ones<float>({n}, kGpu0).share();
  auto y = ct::zeros<float>({n}, kGpu0).partition({256});
  auto s = ct::Stream::create(kGpu0);
  auto k = ct::bind_on(s, axpy, ct::spec::partition<float>({n}, {256}), 0.0f, ct::spec::shared<float>({n}));
  constexpr int steps = 20;
  std::tie(y, std::ignore, x) = ct::launch(axpy, std::move(y), 1.0f, x).sync_on(s);  // warm
  for (int how = 0; how < 2; ++how) {
    fake.count_calls(true);
    for (int i = 0; i < steps; ++i) {
      if (how == 0) std::tie(y, std::ignore, x) = ct::launch(axpy, std::move(y), 1.0f, x).sync_on(s);
      else std::tie(y, std::ignore, x) = k.launch(std::move(y), 1.0f, x).sync_on(s);
      EXPECT_EQ(x.core(ct::unchecked).use_count(), 1) << "the launch's hold on its input outlived its sync";
    }
    fake.count_calls(false);
    const char* what = how == 0 ? "launch + sync_on" : "bound launch + sync_on";
    EXPECT_EQ(fake.calls("cuLaunchKernel"), steps) << what << ": " << fake.call_list();
    EXPECT_EQ(fake.calls("cuEventRecord"), steps) << what << ": " << fake.call_list();
    EXPECT_EQ(fake.calls("cuEventSynchronize"), steps) << what << ": the calling thread waits: " << fake.call_list();
  }

  // Earlier work pending on the stream: the completion thread completes the synced launch after it.
  fake.delay(20000);
  auto z = ct::zeros<float>({n}, kGpu0).partition({256});
  auto pending = ct::launch(axpy, std::move(z), 1.0f, x).async_on(s);
  fake.count_calls(true);
  std::tie(y, std::ignore, x) = ct::launch(axpy, std::move(y), 1.0f, x).sync_on(s);
  fake.count_calls(false);
  EXPECT_EQ(fake.calls("cuEventSynchronize"), 0) << "with earlier work pending: " << fake.call_list();
  EXPECT_TRUE(pending.ready()) << "a launch completed before the one submitted ahead of it";
  (void)std::move(pending).get();
  fake.delay(50);

  // A failure the wait finds is the launch's error. (The completion threads wait too: let the one
  // of the memory stream finish the free of z first, so that the injected failure is this wait's.)
  std::this_thread::sleep_for(200ms);
  fake.fail("cuEventSynchronize", 700, 1);  // CUDA_ERROR_ILLEGAL_ADDRESS
  bool threw = false;
  fake.count_calls(true);
  try {
    (void)ct::launch(axpy, std::move(y), 1.0f, x).sync_on(s);
  } catch (const std::exception& e) {
    threw = true;
    EXPECT_NE(std::string(e.what()).find("cuEventSynchronize"), std::string::npos) << e.what();
  }
  fake.count_calls(false);
  EXPECT_TRUE(threw) << "the failed wait was not reported: " << fake.call_list();
}

TEST_F(FakeGraphs, HostNodesAndMarkersOfCudaStreams) {
  auto s = ct::Stream::create(kGpu0);
  // A host callback on a CUDA stream runs after the GPU work before it.
  std::atomic<bool> gpu_done{false};
  struct Slow {
    std::atomic<bool>* flag;
    static void run(void* p) {
      std::this_thread::sleep_for(20ms);
      static_cast<Slow*>(p)->flag->store(true);
    }
  } slow{&gpu_done};
  (void)s.enqueue([&] { fake.enqueue(cu::current_stream()->stream, &Slow::run, &slow); });
  bool seen = false;
  auto h = s.host([&] { seen = gpu_done.load(); });
  auto m = s.record();
  h.wait();
  m.wait();
  EXPECT_TRUE(seen);
  EXPECT_EQ(h.error(), nullptr);
  // Its exception becomes the event's error.
  auto bad = s.host([] { throw ct::UserError("host callback failed on the GPU stream"); });
  bad.wait();
  ASSERT_NE(bad.error(), nullptr);
  // A host node of a graph runs once per replay.
  auto x = ct::ones<float>({64}, kGpu0).share();
  auto b = ct::zeros<float>({64}, kGpu0);
  std::atomic<int> calls{0};
  auto g = ct::capture(kGpu0, [&](ct::Capture& cap) {
    (void)cap.stream().host([&] { calls.fetch_add(1); });
    return ct::copy(std::move(b), x).async_on(cap.stream());
  });
  const int host_before = fake.host_calls();
  for (int r = 0; r < 4; ++r) g = std::move(g).replay(s).get();
  EXPECT_EQ(calls.load(), 4);
  EXPECT_GE(fake.host_calls(), host_before + 4);
}

TEST_F(FakeGraphs, ReplaysRunOnTheirDeviceOnly) {
  auto x = ct::ones<float>({64}, kGpu0).share();
  auto b = ct::zeros<float>({64}, kGpu0);
  auto g = ct::capture(kGpu0, [&](ct::Capture& cap) { return ct::copy(std::move(b), x).async_on(cap.stream()); });
  expect_user_error([&] { g = std::move(g).replay(ct::Stream::create(kGpu1)).get(); },
                    {"replay of a graph captured on cuda:0 on a stream of cuda:1"});
  expect_user_error([&] { g = std::move(g).replay(ct::Stream::create(ct::cpu())).get(); }, {"on a stream of cpu:0"});
  auto c = ct::zeros<float>({64}, kGpu1);
  expect_user_error([&] { (void)ct::capture(kGpu0, [&](ct::Capture& cap) { return ct::copy(std::move(c), x).async_on(cap.stream()); }); },
                    {"the destination lives on cuda:1", "the stream runs on cuda:0"});
  g = std::move(g).sync_on(ct::Stream::create(kGpu0));
  EXPECT_EQ(g.read<0>()[0], 1.0f);
}

TEST_F(FakeGraphs, ADroppedGraphFreesItsMemoryOnlyAfterTheReplay) {
  fake.delay(3000);  // a slow GPU: a free that came too early would show as a violation
  const long live0 = fake.settled(&Fake::live);  // (not while an earlier test's frees still land)
  {
    auto x = ct::ones<float>({1 << 16}, kGpu0).share();
    auto b = ct::zeros<float>({1 << 16}, kGpu0);
    auto g = ct::capture(kGpu0, [&](ct::Capture& cap) { return ct::copy(std::move(b), std::move(x)).async_on(cap.stream()); });
    auto s = ct::Stream::create(kGpu0);
    { auto f = std::move(g).replay(s); }  // dropped while the copy node is still queued
  }
  fake.delay(50);
  EXPECT_TRUE(fake.becomes(&Fake::live, live0)) << fake.live() << " allocations left";
}

TEST_F(FakeGraphs, AForkedGraphWithInputsThatChange) {
  // The shape of the GPU suite's runtime_graph_inputs_change_between_replays (whose compute-sanitizer
  // run reported stream-ordered races on two of its 32 KiB tensors): t0 = a + b and, on a forked
  // lane, t1 = c a + t1; out = t0 + t1; out += in. Between replays a new input is copied in, a scalar
  // changes and once the output is swapped; every tensor is dropped at the end. Under
  // cuda_runtime.stream_order the fake sees every kernel's tensors (whole parameter blocks, their size
  // read from the cubin), copies and frees, and any of them that stream order and events do not order
  // is a violation.
  if (!have_nvrtc()) GTEST_SKIP() << "NVRTC is not available here";
  const std::int64_t n = 8192;
  {
    auto s = ct::Stream::create(kGpu0);
    auto a = ct::ones<float>({n}, kGpu0).share(), b = ct::full<float>({n}, 2.0f, kGpu0).share();
    auto in = ct::zeros<float>({n}, kGpu0).share();
    auto t0 = ct::zeros<float>({n}, kGpu0), t1 = ct::zeros<float>({n}, kGpu0), out = ct::zeros<float>({n}, kGpu0);
    auto g = ct::capture(kGpu0, [&](ct::Capture& cap) {
      auto f0 = ct::launch(add2, std::move(t0).partition({256}), a, b).async_on(cap.stream());
      auto f1 = ct::launch(axpy, std::move(t1).partition({256}), 0.0f, a).async_on(cap.fork());
      return ct::join(std::move(f0), std::move(f1))
          .then([&](auto&& t) {
            auto s0 = std::move(std::get<0>(std::get<0>(t))).unpartition().share();
            auto s1 = std::move(std::get<0>(std::get<1>(t))).unpartition().share();
            return ct::launch(add2, std::move(out).partition({256}), s0, s1);
          })
          .then([&](std::tuple<P, S, S>&& t) { return ct::launch(acc, std::move(std::get<0>(t)), std::move(in)); });
    });
    EXPECT_EQ(g.kernel_nodes(), 4u);
    std::vector<float> host(static_cast<std::size_t>(n));
    for (int step = 0; step < 5; ++step) {
      std::fill(host.begin(), host.end(), static_cast<float>(step));
      g.copy_in<1>(std::span<const float>(host));
      g.set_scalar(1, 1, static_cast<float>(step));
      if (step == 3) {
        P old = g.swap<0>(ct::full<float>({n}, 1000.0f, kGpu0).partition({256}));
        (void)std::move(old).unpartition().to_host();
      }
      g = std::move(g).replay(s).get();
      (void)g.read<0>();
      (void)g.read<1>();
    }
    auto [o, i2] = std::move(g).unwrap();
    (void)std::move(o).unpartition().to_host();
    s.synchronize();
  }
}

TEST_F(FakeGraphs, FirstUseOnAStreamWaitsForTheAllocationOnTheDevice) {
  auto a = ct::ones<float>({256}, kGpu0).share();
  auto b = ct::zeros<float>({256}, kGpu0);
  (void)a.to_host();  // the allocation is done as far as the host knows
  auto s = ct::Stream::create(kGpu0);
  const int w0 = fake.stream_waits();
  auto [b2, a2] = ct::copy(std::move(b), a).sync_on(s);
  // Both tensors' stream-ordered allocations, waited for on s's device queue although they are done.
  EXPECT_GE(fake.stream_waits(), w0 + 2);
  const int w1 = fake.stream_waits();
  auto [b3, a3] = ct::copy(std::move(b2), a2).sync_on(s);
  EXPECT_EQ(fake.stream_waits(), w1);  // once per stream
  auto other = ct::Stream::create(kGpu0);
  auto [b4, a4] = ct::copy(std::move(b3), a3).sync_on(other);
  EXPECT_GE(fake.stream_waits(), w1 + 2);  // a new stream waits again
  EXPECT_EQ(b4.to_host()[9], 1.0f);
}

// Run alone with FAKE_CUDA_STREAM_ORDER=1 (cuda_runtime.stream_order_check): the fake's stream-order
// check, which cuda_runtime.stream_order runs over the other tests of this file, against driver calls
// that use and free a stream-ordered allocation on a stream that nothing orders (a host wait does
// not), each next to its twin ordered by an event.
TEST(StreamOrderCheck, UnorderedUsesAndFreesAreViolations) {
  ASSERT_TRUE(ct::cuda_available()) << ct::cuda_unavailable_reason();
  const cu::Driver& d = cu::drv();
  cu::DeviceContext& dc = cu::DeviceContext::get(0);
  cu::ScopedContext scope(dc.ctx());
  cu::CUstream a = nullptr, b = nullptr;
  cu::CUevent e = nullptr;
  ASSERT_EQ(d.cuStreamCreate(&a, cu::abi::CU_STREAM_NON_BLOCKING), 0);
  ASSERT_EQ(d.cuStreamCreate(&b, cu::abi::CU_STREAM_NON_BLOCKING), 0);
  ASSERT_EQ(d.cuEventCreate(&e, cu::abi::CU_EVENT_DISABLE_TIMING), 0);
  std::vector<float> host(256, 1.0f);
  auto copy_on = [&](cu::CUstream s, cu::CUdeviceptr p) { ASSERT_EQ(d.cuMemcpyHtoDAsync_v2(p, host.data(), 1024, s), 0); };
  const int v0 = fake.violations();
  // Use before alloc: allocated on a, written on b after only a host wait.
  cu::CUdeviceptr p = 0, q = 0;
  ASSERT_EQ(d.cuMemAllocAsync(&p, 1024, a), 0);
  ASSERT_EQ(d.cuStreamSynchronize(a), 0);
  copy_on(b, p);
  EXPECT_EQ(fake.violations(), v0 + 1);
  // The twin: b waits for an event recorded on a after the allocation.
  ASSERT_EQ(d.cuMemAllocAsync(&q, 1024, a), 0);
  ASSERT_EQ(d.cuEventRecord(e, a), 0);
  ASSERT_EQ(d.cuStreamWaitEvent(b, e, 0), 0);
  copy_on(b, q);
  EXPECT_EQ(fake.violations(), v0 + 1);
  // Use after free: q was used on b; freeing it on a after a host wait only.
  ASSERT_EQ(d.cuStreamSynchronize(b), 0);
  ASSERT_EQ(d.cuMemFreeAsync(q, a), 0);
  EXPECT_EQ(fake.violations(), v0 + 2);
  // The twin: a waits for b's event after the use, then frees.
  ASSERT_EQ(d.cuMemAllocAsync(&q, 1024, a), 0);
  ASSERT_EQ(d.cuEventRecord(e, a), 0);
  ASSERT_EQ(d.cuStreamWaitEvent(b, e, 0), 0);
  copy_on(b, q);
  ASSERT_EQ(d.cuEventRecord(e, b), 0);
  ASSERT_EQ(d.cuStreamWaitEvent(a, e, 0), 0);
  ASSERT_EQ(d.cuMemFreeAsync(q, a), 0);
  EXPECT_EQ(fake.violations(), v0 + 2);
  // A kernel's use: the fake reads the size of its parameter block from the cubin (a minimal ELF
  // image here: section .nv.info.kern with EIATTR_CBANK_PARAM_SIZE = 16) and takes every pointer in
  // it for a use. On b after only a host wait: a violation; after an event: none.
  const std::vector<unsigned char> cubin = tiny_cubin("kern", 16);
  cu::CUmodule mod = nullptr;
  cu::CUfunction fn = nullptr;
  ASSERT_EQ(d.cuModuleLoadData(&mod, cubin.data()), 0);
  ASSERT_EQ(d.cuModuleGetFunction(&fn, mod, "kern"), 0);
  ASSERT_EQ(fake.param_bytes_of(fn), 16);
  cu::CUdeviceptr r = 0, t = 0;
  ASSERT_EQ(d.cuMemAllocAsync(&r, 1024, a), 0);
  ASSERT_EQ(d.cuStreamSynchronize(a), 0);
  auto launch_on = [&](cu::CUstream st, cu::CUdeviceptr ptr) {
    cu::CUdeviceptr block[2] = {0, ptr};
    void* args[] = {block};
    ASSERT_EQ(d.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, st, args, nullptr), 0);
  };
  launch_on(b, r);
  EXPECT_EQ(fake.violations(), v0 + 3);
  ASSERT_EQ(d.cuMemAllocAsync(&t, 1024, a), 0);
  ASSERT_EQ(d.cuEventRecord(e, a), 0);
  ASSERT_EQ(d.cuStreamWaitEvent(b, e, 0), 0);
  launch_on(b, t);
  EXPECT_EQ(fake.violations(), v0 + 3);
  ASSERT_EQ(d.cuEventRecord(e, b), 0);
  ASSERT_EQ(d.cuStreamWaitEvent(a, e, 0), 0);
  ASSERT_EQ(d.cuMemFreeAsync(t, a), 0);
  ASSERT_EQ(d.cuMemFreeAsync(r, b), 0);
  ASSERT_EQ(d.cuStreamSynchronize(b), 0);
  (void)d.cuModuleUnload(mod);
  const int v1 = fake.violations();
  // Uses on the allocating stream itself need no event.
  copy_on(a, p);
  ASSERT_EQ(d.cuMemFreeAsync(p, a), 0);
  EXPECT_EQ(fake.violations(), v1);
  ASSERT_EQ(d.cuStreamSynchronize(a), 0);
  ASSERT_EQ(d.cuStreamSynchronize(b), 0);
  (void)d.cuEventDestroy_v2(e);
  (void)d.cuStreamDestroy_v2(a);
  (void)d.cuStreamDestroy_v2(b);
}

TEST(KernelGrid, BlocksPerLaunch) {
  // One block per tile block; several tile blocks per block (rounded up); a resident grid's cap.
  EXPECT_EQ(cu::blocks_for_grid(1000, 1, 0), 1000);
  EXPECT_EQ(cu::blocks_for_grid(1000, 4, 0), 250);
  EXPECT_EQ(cu::blocks_for_grid(1001, 4, 0), 251);
  EXPECT_EQ(cu::blocks_for_grid(3, 4, 0), 1);
  EXPECT_EQ(cu::blocks_for_grid(1000, 1, 132), 132);
  EXPECT_EQ(cu::blocks_for_grid(1000, 8, 132), 125);
  EXPECT_EQ(cu::blocks_for_grid(2000, 8, 132), 132);
}

TEST(Teardown, StagingBuffersAreFreedAtTeardown) {
  ASSERT_TRUE(ct::cuda_available()) << ct::cuda_unavailable_reason();
  // A copy of 4 MiB goes through the two pinned staging buffers.
  std::vector<float> big(1 << 20, 2.0f);
  auto t = ct::from_host<float>(std::span<const float>(big), {1 << 20}, kGpu0);
  EXPECT_EQ(t.to_host()[12345], 2.0f);
  EXPECT_EQ(fake.pinned(), 2);
  cu::DeviceContext::teardown_all();
  EXPECT_EQ(fake.pinned(), 0);
  // After the teardown copies go direct, and still work.
  EXPECT_EQ(t.to_host()[7], 2.0f);
  EXPECT_EQ(fake.pinned(), 0);
  EXPECT_EQ(fake.violations(), 0);
}

// Run alone (cuda_runtime.teardown_at_exit): the process ends with the staging buffers allocated;
// the exit handler frees them and the fake's report at unload says so.
TEST(Teardown, StagingBuffersInUseAtExit) {
  ASSERT_TRUE(ct::cuda_available()) << ct::cuda_unavailable_reason();
  std::vector<float> big(1 << 20, 3.0f);
  auto t = ct::from_host<float>(std::span<const float>(big), {1 << 20}, kGpu0);
  EXPECT_EQ(t.to_host()[99], 3.0f);
  EXPECT_EQ(fake.pinned(), 2);
}

}  // namespace
