// A fake libcuda.so.1 for testing ctile's CUDA runtime layer on machines without a GPU
// (CTILE_LIBCUDA=<this library>). It exports the driver entry points ctile resolves, with the real
// names, and emulates a GPU asynchronously: device memory is host memory, every stream has a worker
// thread that executes its operations later than they are enqueued (FAKE_CUDA_DELAY_US per
// operation), events and cross-stream waits behave like the driver's. Misuse that a real GPU would
// punish later (an operation on memory that was freed, a free of memory still in use, a launch on an
// invalid stream) is counted as a violation (fake_cuda_violations()) and reported on stderr; under
// AddressSanitizer a late access to freed memory is also caught directly.
//
// Environment: FAKE_CUDA_DEVICES (default 1), FAKE_CUDA_CC (default 90), FAKE_CUDA_POOLS (default
// 1), FAKE_CUDA_INIT_ERROR (cuInit's result, default 0), FAKE_CUDA_DELAY_US (default 100).
// Kernels do not run: cuLaunchKernel checks its arguments and counts the launch. Graphs
// (cuGraphCreate ... cuGraphLaunch) are lists of kernel, memcpy and host nodes; a launch runs the
// nodes in order on the stream's worker (memcpy nodes copy, host nodes call their function, kernel
// nodes count as launches). A kernel's parameter size comes from its cubin (cubin_param_bytes); a
// test that inspects the parameters of kernel nodes says how many bytes to keep
// (fake_cuda_set_param_bytes).
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "../../../src/platform/cuda/driver.hpp"

using ctile::platform::cuda::CUcontext;
using ctile::platform::cuda::CUdevice;
using ctile::platform::cuda::CUdeviceptr;
using ctile::platform::cuda::CUevent;
using ctile::platform::cuda::CUfunction;
using ctile::platform::cuda::CUgraph;
using ctile::platform::cuda::CUgraphExec;
using ctile::platform::cuda::CUgraphNode;
using ctile::platform::cuda::GraphEdgeData;
using ctile::platform::cuda::HostNodeParams;
using ctile::platform::cuda::KernelNodeParams;
using ctile::platform::cuda::Memcpy3D;
using ctile::platform::cuda::CUhostFn;
using ctile::platform::cuda::CUmemoryPool;
using ctile::platform::cuda::CUmodule;
using ctile::platform::cuda::CUresult;
using ctile::platform::cuda::CUstream;

namespace {

constexpr CUresult kSuccess = 0, kInvalidValue = 1, kNotInitialized = 3, kNoDevice = 100, kInvalidDevice = 101,
                   kInvalidImage = 200, kInvalidContext = 201, kInvalidHandle = 400, kNotFound = 500, kNotReady = 600;

int env_int(const char* name, int def) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : def;
}

std::atomic<int> g_violations{0};
std::atomic<int> g_launches{0};
std::atomic<int> g_graph_launches{0};
std::atomic<int> g_node_updates{0};
std::atomic<int> g_programmatic_edges{0};  // programmatic edges added to graphs (cuGraphAddDependencies_v2)
std::atomic<int> g_host_calls{0};
std::atomic<int> g_param_bytes{0};
std::atomic<int> g_waits{0};
std::mutex g_last_update_mu;
std::vector<unsigned char> g_last_update;  // the kept bytes of the last kernel node update
std::atomic<int> g_delay_us{-1};
std::atomic<bool> g_initialised{false};
std::atomic<int> g_sticky{0};

void violation(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void violation(const char* fmt, ...) {
  ++g_violations;
  std::va_list ap;
  va_start(ap, fmt);
  std::fprintf(stderr, "fake_cuda: VIOLATION: ");
  std::vfprintf(stderr, fmt, ap);
  std::fprintf(stderr, "\n");
  va_end(ap);
}

int delay_us() {
  int d = g_delay_us.load();
  if (d < 0) {
    d = env_int("FAKE_CUDA_DELAY_US", 100);
    g_delay_us = d;
  }
  return d;
}

// ---- failure injection ----
struct Failures {
  std::mutex mu;
  std::map<std::string, std::pair<CUresult, int>> next;  // name -> (code, remaining count)
};
Failures& failures() {
  static auto* f = new Failures();
  return *f;
}
// fake_cuda_count_calls(1): the entry points this thread calls, by name, until counting stops.
thread_local bool t_count_calls = false;
thread_local std::map<std::string, int> t_calls;

// fake_cuda_count_all_calls(1): the entry points every thread calls (ctile's completion threads too).
std::atomic<bool> g_count_all{false};
std::mutex g_all_mu;
std::map<std::string, int> g_all_calls;

CUresult injected(const char* name) {
  if (t_count_calls) ++t_calls[name];
  if (g_count_all.load(std::memory_order_relaxed)) {
    std::lock_guard lk(g_all_mu);
    ++g_all_calls[name];
  }
  if (const int s = g_sticky.load()) return s;
  Failures& f = failures();
  std::lock_guard lk(f.mu);
  auto it = f.next.find(name);
  if (it == f.next.end() || it->second.second <= 0) return kSuccess;
  --it->second.second;
  return it->second.first;
}
#define FAKE_ENTRY(name)                            \
  if (!g_initialised.load()) return kNotInitialized; \
  if (const CUresult inj = injected(name)) return inj;

// ---- completion tokens (one per event record) ----
struct Token {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::chrono::steady_clock::time_point at;  // when the stream reached it
  void set() {
    {
      std::lock_guard lk(mu);
      done = true;
      at = std::chrono::steady_clock::now();
    }
    cv.notify_all();
  }
  void wait() {
    std::unique_lock lk(mu);
    cv.wait(lk, [&] { return done; });
  }
  bool is_done() {
    std::lock_guard lk(mu);
    return done;
  }
};

// ---- memory ----
struct Memory {
  std::mutex mu;
  std::map<std::uintptr_t, std::size_t> live;  // device allocations: base -> size
  std::set<void*> pinned;
  long allocs = 0, frees = 0;
};
Memory& memory() {
  static auto* m = new Memory();
  return *m;
}
bool in_live(CUdeviceptr p, std::size_t n) {
  Memory& m = memory();
  std::lock_guard lk(m.mu);
  auto it = m.live.upper_bound(static_cast<std::uintptr_t>(p));
  if (it == m.live.begin()) return false;
  --it;
  return p >= it->first && p + n <= it->first + it->second;
}
bool is_pinned(const void* p) {
  Memory& m = memory();
  std::lock_guard lk(m.mu);
  return m.pinned.count(const_cast<void*>(p)) != 0;
}
void check_range(const char* what, CUdeviceptr p, std::size_t n) {
  if (n == 0) return;
  if (!in_live(p, n)) violation("%s touches device memory [0x%llx, +%zu) that is not (or no longer) allocated", what, p, n);
}
CUdeviceptr device_alloc(std::size_t n) {
  void* p = std::malloc(n);
  std::memset(p, 0xcd, n);  // garbage, so that a missing zero fill shows
  Memory& m = memory();
  std::lock_guard lk(m.mu);
  m.live[reinterpret_cast<std::uintptr_t>(p)] = n;
  ++m.allocs;
  return reinterpret_cast<CUdeviceptr>(p);
}
void device_free(const char* what, CUdeviceptr p) {
  Memory& m = memory();
  {
    std::lock_guard lk(m.mu);
    auto it = m.live.find(static_cast<std::uintptr_t>(p));
    if (it == m.live.end()) {
      violation("%s of 0x%llx, which is not an allocation (double free?)", what, p);
      return;
    }
    m.live.erase(it);
    ++m.frees;
  }
  std::free(reinterpret_cast<void*>(p));
}

// ---- stream order (FAKE_CUDA_STREAM_ORDER=1) ----
// What compute-sanitizer's --track-stream-ordered-races checks, for the operations whose memory the
// fake knows (copies and fills, also as graph nodes, and the tensors of kernels and kernel nodes: every
// pointer in a parameter block whose size the cubin gives, cubin_param_bytes): a stream-
// ordered allocation (cuMemAllocAsync) is used on another stream only once that stream is ordered
// after the allocation through cuStreamWaitEvent, and freed (cuMemFreeAsync) only on a stream
// ordered after every earlier use. A host wait (cuStreamSynchronize, cuEventSynchronize) orders
// nothing here, as for the driver. Vector clocks over streams, advanced when a call is made (the
// order the driver defines).
using Clock = std::map<std::uint64_t, std::uint64_t>;  // stream id -> operations of it seen
struct Order {
  std::mutex mu;
  std::uint64_t next_stream = 1;
  std::map<const void*, std::uint64_t> stream_ids;  // live CUstream -> id (ids are never reused)
  std::map<std::uint64_t, Clock> streams;
  std::map<const void*, Clock> events;  // the clock of an event's last record
  struct Alloc {
    std::size_t bytes = 0;
    std::uint64_t stream = 0, pos = 0;
    Clock uses;  // stream -> position of its last use
  };
  std::map<std::uintptr_t, Alloc> allocs;  // stream-ordered allocations by base
};
bool order_checked() {
  static const bool on = env_int("FAKE_CUDA_STREAM_ORDER", 0) != 0;
  return on;
}
Order& order() {
  static auto* o = new Order();
  return *o;
}
std::uint64_t order_stream(Order& o, const void* s) {  // o.mu held
  auto [it, fresh] = o.stream_ids.try_emplace(s, 0);
  if (fresh) it->second = o.next_stream++;
  return it->second;
}
std::uint64_t order_tick(Order& o, std::uint64_t sid) { return ++o.streams[sid][sid]; }  // o.mu held
void order_stream_gone(const void* s) {
  if (!order_checked()) return;
  Order& o = order();
  std::lock_guard lk(o.mu);
  o.stream_ids.erase(s);
}
void order_alloc(const void* s, CUdeviceptr p, std::size_t bytes) {
  if (!order_checked()) return;
  Order& o = order();
  std::lock_guard lk(o.mu);
  const std::uint64_t sid = order_stream(o, s);
  o.allocs[static_cast<std::uintptr_t>(p)] = Order::Alloc{bytes, sid, order_tick(o, sid), {}};
}
void order_use(const char* what, const void* s, CUdeviceptr p, std::size_t n) {
  if (!order_checked() || n == 0) return;
  Order& o = order();
  std::lock_guard lk(o.mu);
  auto it = o.allocs.upper_bound(static_cast<std::uintptr_t>(p));
  if (it == o.allocs.begin()) return;
  --it;
  Order::Alloc& a = it->second;
  if (p >= it->first + a.bytes) return;  // not a stream-ordered allocation
  const std::uint64_t sid = order_stream(o, s);
  Clock& c = o.streams[sid];
  if (sid != a.stream && c[a.stream] < a.pos)
    violation("stream-ordered race: %s uses the allocation at 0x%llx on a stream that is not ordered after its "
              "cuMemAllocAsync (use before alloc: a host wait does not order it)",
              what, static_cast<unsigned long long>(it->first));
  a.uses[sid] = order_tick(o, sid);
}
// A kernel's parameter block: every 8-byte word that points into a stream-ordered allocation counts
// as a use of it (a kernel's memory is otherwise unknown here).
void order_use_params(const char* what, const void* s, const unsigned char* params, std::size_t n) {
  if (!order_checked()) return;
  for (std::size_t off = 0; off + 8 <= n; off += 8) {
    CUdeviceptr v = 0;
    std::memcpy(&v, params + off, 8);
    if (v) order_use(what, s, v, 1);
  }
}

void order_free(const void* s, CUdeviceptr p) {
  if (!order_checked()) return;
  Order& o = order();
  std::lock_guard lk(o.mu);
  auto it = o.allocs.find(static_cast<std::uintptr_t>(p));
  if (it == o.allocs.end()) return;
  const std::uint64_t sid = order_stream(o, s);
  const Clock& c = o.streams[sid];
  for (const auto& [u, pos] : it->second.uses) {
    if (u == sid) continue;
    auto k = c.find(u);
    if (k == c.end() || k->second < pos)
      violation("stream-ordered race: cuMemFreeAsync of 0x%llx on a stream that is not ordered after its use on "
                "another stream (use after free: a host wait does not order it)",
                static_cast<unsigned long long>(p));
  }
  o.allocs.erase(it);
}
void order_record(const void* e, const void* s) {
  if (!order_checked()) return;
  Order& o = order();
  std::lock_guard lk(o.mu);
  const std::uint64_t sid = order_stream(o, s);
  order_tick(o, sid);
  o.events[e] = o.streams[sid];
}
void order_wait(const void* s, const void* e) {
  if (!order_checked()) return;
  Order& o = order();
  std::lock_guard lk(o.mu);
  auto it = o.events.find(e);
  if (it == o.events.end()) return;  // never recorded: no ordering
  Clock& c = o.streams[order_stream(o, s)];
  for (const auto& [k, v] : it->second) c[k] = std::max(c[k], v);
}

// FAKE_CUDA_REPORT_AT_EXIT=1: what is still allocated when the library goes away (after the
// program's exit handlers, ctile's device teardown among them).
__attribute__((destructor)) void report_at_exit() {
  if (env_int("FAKE_CUDA_REPORT_AT_EXIT", 0) == 0) return;
  std::size_t pinned = 0;
  {
    std::lock_guard lk(memory().mu);
    pinned = memory().pinned.size();
  }
  std::fprintf(stderr, "fake_cuda: at exit: %zu pinned host buffers, %d violations\n", pinned, g_violations.load());
}

// The size of kernel `name`'s parameters in a cubin: EIATTR_CBANK_PARAM_SIZE (attribute 0x19, a
// 16-bit value) in its section .nv.info.<name>; 0 when the image does not say.
std::size_t cubin_param_bytes(const std::string& image, const std::string& name) {
  auto rd = [&](std::size_t off, std::size_t n) {
    std::uint64_t v = 0;
    if (off + n <= image.size()) std::memcpy(&v, image.data() + off, n);
    return v;
  };
  const std::uint64_t shoff = rd(0x28, 8), shentsize = rd(0x3a, 2), shnum = rd(0x3c, 2), shstrndx = rd(0x3e, 2);
  if (shentsize < 64 || shstrndx >= shnum) return 0;
  auto sec = [&](std::uint64_t i, std::uint64_t field, std::size_t n) { return rd(shoff + i * shentsize + field, n); };
  const std::uint64_t strtab = sec(shstrndx, 0x18, 8);
  const std::string want = ".nv.info." + name;
  for (std::uint64_t i = 0; i < shnum; ++i) {
    const std::uint64_t at = strtab + sec(i, 0, 4);
    if (at + want.size() + 1 > image.size() || image.compare(at, want.size() + 1, want.c_str(), want.size() + 1) != 0) continue;
    const std::uint64_t off = sec(i, 0x18, 8), size = sec(i, 0x20, 8);
    for (std::uint64_t p = off; p + 4 <= off + size && p + 4 <= image.size();) {
      const auto format = static_cast<unsigned char>(image[p]), attr = static_cast<unsigned char>(image[p + 1]);
      if (format == 0x03 && attr == 0x19) return static_cast<std::size_t>(rd(p + 2, 2));
      p += format == 0x04 ? 4 + rd(p + 2, 2) : 4;  // 0x04: a sized value follows; else 2 bytes inline
    }
  }
  return 0;
}

}  // namespace

// ---- driver objects ----
struct CUctx_st {
  int device = 0;
};

struct CUstream_st {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::function<void()>> q;
  bool destroyed = false;
  bool running = false;
  std::thread worker;

  CUstream_st() {
    worker = std::thread([this] { loop(); });
  }
  void push(std::function<void()> op) {
    {
      std::lock_guard lk(mu);
      q.push_back(std::move(op));
    }
    cv.notify_all();
  }
  void loop() {
    for (;;) {
      std::function<void()> op;
      {
        std::unique_lock lk(mu);
        cv.wait(lk, [&] { return destroyed || !q.empty(); });
        if (q.empty()) break;
        op = std::move(q.front());
        q.pop_front();
      }
      if (const int d = delay_us()) std::this_thread::sleep_for(std::chrono::microseconds(d));
      op();
    }
    delete this;  // destroyed and drained
  }
  // Called by cuStreamDestroy: the worker finishes the queue and deletes the stream.
  void destroy() {
    worker.detach();  // first: the worker deletes the stream once it sees `destroyed`
    std::lock_guard lk(mu);
    destroyed = true;
    cv.notify_all();
  }
};

struct CUevent_st {
  std::mutex mu;
  std::shared_ptr<Token> last;  // null: never recorded
};

struct CUmod_st {
  std::string image;
};

struct CUfunc_st {
  CUmod_st* module = nullptr;
  std::string name;
  int max_dynamic_smem = 48 * 1024;
  std::size_t param_bytes = 0;  // the size of the kernel's parameters, from the cubin (0: unknown)
};

struct CUmemPoolHandle_st {
  int device = 0;
};

namespace {
struct FakeNode {
  enum Kind { Kernel, Memcpy, Host, Empty } kind = Empty;
  std::vector<std::size_t> deps;
  CUfunction fn = nullptr;
  unsigned grid = 0, block = 0, smem = 0;
  std::vector<unsigned char> params;  // the first fake_cuda_set_param_bytes bytes of the block
  std::vector<unsigned char> order_params;  // the whole block (stream-order check, when its size is known)
  CUdeviceptr dst = 0, src = 0;
  std::size_t bytes = 0;
  ctile::platform::cuda::CUhostFn host = nullptr;
  void* user = nullptr;
};
}  // namespace

struct CUgraphNode_st {
  CUgraph graph = nullptr;
  std::size_t index = 0;
};
struct CUgraph_st {
  std::vector<FakeNode> nodes;
  std::vector<std::unique_ptr<CUgraphNode_st>> handles;
};
struct CUgraphExec_st {
  CUgraph graph = nullptr;
  std::vector<FakeNode> nodes;
};

namespace {

CUctx_st g_ctx[8];
CUmemPoolHandle_st g_pool[8];
// The current-context stack of each thread. Not thread_local: the map outlives every thread (and
// static destruction), and ThreadSanitizer does not understand TLS blocks of dlopen'ed libraries
// being recycled between threads.
struct CtxStack {
  std::vector<CUcontext> v;
  bool empty() const { return v.empty(); }
  CUcontext back() const { return v.back(); }
  bool push_back(CUcontext c) {
    if (v.size() >= 64) return false;
    v.push_back(c);
    return true;
  }
  void pop_back() { v.pop_back(); }
};
struct CtxStacks {
  std::mutex mu;
  std::map<std::thread::id, CtxStack> by_thread;
};
CtxStacks& ctx_stacks() {
  static auto* s = new CtxStacks();
  return *s;
}
// Runs f(stack of this thread) under the lock.
template <class F>
auto with_ctx_stack(F&& f) {
  CtxStacks& s = ctx_stacks();
  std::lock_guard lk(s.mu);
  return f(s.by_thread[std::this_thread::get_id()]);
}

struct Streams {
  std::mutex mu;
  std::set<CUstream> live;
  std::set<CUevent> events;
  std::set<CUmodule> modules;
  std::set<CUgraph> graphs;
  std::set<CUgraphExec> execs;
};
Streams& objects() {
  static auto* s = new Streams();
  return *s;
}
// FAKE_CUDA_STREAM_ORDER=1 also checks what compute-sanitizer's memcheck reports as a use after
// free: device memory freed while a CUDA graph or executable graph that is still alive has a kernel
// node whose parameters point into it (a later launch of that graph would use freed memory). Its
// nodes' parameter blocks are searched for 8-byte words in [p, p + bytes).
void graph_refs_check(const char* what, CUdeviceptr p) {
  if (!order_checked() || !p) return;
  std::size_t bytes = 0;
  {
    std::lock_guard lk(memory().mu);
    auto it = memory().live.find(static_cast<std::uintptr_t>(p));
    if (it == memory().live.end()) return;
    bytes = it->second;
  }
  auto uses = [&](const std::vector<FakeNode>& nodes) {
    for (const FakeNode& n : nodes) {
      if (n.kind != FakeNode::Kernel) continue;
      const std::vector<unsigned char>& b = n.order_params.empty() ? n.params : n.order_params;
      for (std::size_t off = 0; off + 8 <= b.size(); off += 8) {
        CUdeviceptr v = 0;
        std::memcpy(&v, b.data() + off, 8);
        if (v >= p && v < p + bytes) return true;
      }
    }
    return false;
  };
  std::lock_guard lk(objects().mu);
  for (CUgraphExec e : objects().execs)
    if (uses(e->nodes))
      return violation("use after free: %s of 0x%llx while an executable CUDA graph that is still alive has a kernel node "
                       "that uses it", what, static_cast<unsigned long long>(p));
  for (CUgraph g : objects().graphs)
    if (uses(g->nodes))
      return violation("use after free: %s of 0x%llx while a CUDA graph that is still alive has a kernel node that "
                       "uses it (its parameters as added or last set)", what, static_cast<unsigned long long>(p));
}

bool valid_stream(CUstream s) {
  std::lock_guard lk(objects().mu);
  return objects().live.count(s) != 0;
}
bool valid_event(CUevent e) {
  std::lock_guard lk(objects().mu);
  return objects().events.count(e) != 0;
}
int devices() { return env_int("FAKE_CUDA_DEVICES", 1); }
bool need_ctx(const char* what) {
  if (with_ctx_stack([](CtxStack& st) { return st.empty(); })) {
    violation("%s called without a current context", what);
    return false;
  }
  return true;
}

// The completion of a synchronous call: enqueue a marker and wait for it.
void drain(CUstream s) {
  auto t = std::make_shared<Token>();
  s->push([t] { t->set(); });
  t->wait();
}

// The launch shape (grid x, y, z, block x, y, z, dynamic shared memory) of the latest
// cuLaunchKernel or kernel node added to a graph (fake_cuda_last_kernel_shape).
std::mutex g_shape_mu;
std::array<unsigned, 7> g_last_shape{};
void note_shape(const std::array<unsigned, 7>& s) {
  std::lock_guard lk(g_shape_mu);
  g_last_shape = s;
}

}  // namespace

extern "C" {

// Test hooks (found with dlsym by the tests).
int fake_cuda_violations() { return g_violations.load(); }
int fake_cuda_launches() { return g_launches.load(); }
void fake_cuda_last_kernel_shape(unsigned* out) {
  std::lock_guard lk(g_shape_mu);
  std::copy(g_last_shape.begin(), g_last_shape.end(), out);
}
int fake_cuda_graph_launches() { return g_graph_launches.load(); }
int fake_cuda_node_updates() { return g_node_updates.load(); }
int fake_cuda_programmatic_edges() { return g_programmatic_edges.load(); }
int fake_cuda_host_calls() { return g_host_calls.load(); }
int fake_cuda_stream_waits() { return g_waits.load(); }
// Starts (on != 0, from zero) or stops counting the calling thread's driver calls.
void fake_cuda_count_calls(int on) {
  if (on) t_calls.clear();
  t_count_calls = on != 0;
}
// The calling thread's counted calls of `name` (nullptr: of every entry point).
int fake_cuda_thread_calls(const char* name) {
  if (name) {
    auto it = t_calls.find(name);
    return it == t_calls.end() ? 0 : it->second;
  }
  int n = 0;
  for (const auto& [k, v] : t_calls) n += v;
  return n;
}
// Starts (on != 0, from zero) or stops counting the driver calls of every thread.
void fake_cuda_count_all_calls(int on) {
  std::lock_guard lk(g_all_mu);
  if (on) g_all_calls.clear();
  g_count_all.store(on != 0);
}
// Every thread's counted calls of `name` (nullptr: of every entry point).
int fake_cuda_all_calls(const char* name) {
  std::lock_guard lk(g_all_mu);
  if (name) {
    auto it = g_all_calls.find(name);
    return it == g_all_calls.end() ? 0 : it->second;
  }
  int n = 0;
  for (const auto& [k, v] : g_all_calls) n += v;
  return n;
}
// "name=count name=count ..." of the counted calls (all threads: all != 0; else this thread's), into
// `out` (at most n bytes with the NUL).
int fake_cuda_call_list(int all, char* out, int n) {
  std::string s;
  std::unique_lock lk(g_all_mu, std::defer_lock);
  if (all) lk.lock();
  for (const auto& [k, v] : all ? g_all_calls : t_calls) s += (s.empty() ? "" : " ") + k + "=" + std::to_string(v);
  if (n > 0) {
    const std::size_t k = std::min<std::size_t>(s.size(), static_cast<std::size_t>(n - 1));
    std::memcpy(out, s.data(), k);
    out[k] = '\0';
  }
  return static_cast<int>(s.size());
}
int fake_cuda_thread_call_list(char* out, int n) { return fake_cuda_call_list(0, out, n); }
// Copies up to `n` kept bytes of the last cuGraphExecKernelNodeSetParams; returns how many were kept.
int fake_cuda_last_update(void* out, int n) {
  std::lock_guard lk(g_last_update_mu);
  const int k = std::min<int>(n, static_cast<int>(g_last_update.size()));
  std::memcpy(out, g_last_update.data(), static_cast<std::size_t>(k));
  return static_cast<int>(g_last_update.size());
}
long fake_cuda_pinned_live() {
  std::lock_guard lk(memory().mu);
  return static_cast<long>(memory().pinned.size());
}
long fake_cuda_live_graphs() {
  std::lock_guard lk(objects().mu);
  return static_cast<long>(objects().graphs.size() + objects().execs.size());
}
// The parameter size of a kernel as the fake read it from the cubin (0: unknown).
long fake_cuda_function_param_bytes(CUfunction fn) { return fn ? static_cast<long>(fn->param_bytes) : -1; }
// Kernel nodes keep the first `n` bytes of their parameter block (0: none).
void fake_cuda_set_param_bytes(int n) { g_param_bytes = n; }
// Copies up to `n` kept parameter bytes of kernel node `node` (its index among all nodes) of an
// executable graph; returns how many were kept, -1 for an unknown graph or node.
int fake_cuda_exec_node_params(CUgraphExec exec, int node, void* out, int n) {
  {
    std::lock_guard lk(objects().mu);
    if (!objects().execs.count(exec)) return -1;
  }
  if (node < 0 || static_cast<std::size_t>(node) >= exec->nodes.size()) return -1;
  const auto& p = exec->nodes[static_cast<std::size_t>(node)].params;
  const int k = std::min<int>(n, static_cast<int>(p.size()));
  std::memcpy(out, p.data(), static_cast<std::size_t>(k));
  return static_cast<int>(p.size());
}
long fake_cuda_live_allocations() {
  std::lock_guard lk(memory().mu);
  return static_cast<long>(memory().live.size());
}
long fake_cuda_total_allocations() {
  std::lock_guard lk(memory().mu);
  return memory().allocs;
}
void fake_cuda_set_delay_us(int us) { g_delay_us = us; }
void fake_cuda_fail(const char* name, int code, int count) {
  std::lock_guard lk(failures().mu);
  failures().next[name] = {code, count};
}
void fake_cuda_set_sticky(int code) { g_sticky = code; }
// Runs fn(arg) on the stream's worker, in order with its other work (a stand-in for a kernel).
void fake_cuda_enqueue(CUstream s, void (*fn)(void*), void* arg) {
  if (!valid_stream(s)) {
    violation("fake_cuda_enqueue on an invalid stream");
    return;
  }
  s->push([fn, arg] { fn(arg); });
}
// True when [p, p + n) is inside a live device allocation.
int fake_cuda_is_device_memory(const void* p, std::size_t n) {
  return in_live(reinterpret_cast<CUdeviceptr>(p), n) ? 1 : 0;
}

CUresult cuInit(unsigned int flags) {
  if (flags != 0) return kInvalidValue;
  if (const int e = env_int("FAKE_CUDA_INIT_ERROR", 0)) return e;
  if (devices() <= 0) return kNoDevice;
  g_initialised = true;
  return kSuccess;
}

CUresult cuDriverGetVersion(int* version) {
  if (!version) return kInvalidValue;
  *version = 13000;
  return kSuccess;
}

CUresult cuGetErrorName(CUresult error, const char** str) {
  if (!str) return kInvalidValue;
  switch (error) {
    case 0: *str = "CUDA_SUCCESS"; return kSuccess;
    case 1: *str = "CUDA_ERROR_INVALID_VALUE"; return kSuccess;
    case 2: *str = "CUDA_ERROR_OUT_OF_MEMORY"; return kSuccess;
    case 3: *str = "CUDA_ERROR_NOT_INITIALIZED"; return kSuccess;
    case 100: *str = "CUDA_ERROR_NO_DEVICE"; return kSuccess;
    case 700: *str = "CUDA_ERROR_ILLEGAL_ADDRESS"; return kSuccess;
    case 719: *str = "CUDA_ERROR_LAUNCH_FAILED"; return kSuccess;
    case 999: *str = "CUDA_ERROR_UNKNOWN"; return kSuccess;
    default: *str = nullptr; return kInvalidValue;
  }
}

CUresult cuGetErrorString(CUresult error, const char** str) {
  if (!str) return kInvalidValue;
  switch (error) {
    case 0: *str = "no error"; return kSuccess;
    case 1: *str = "invalid argument"; return kSuccess;
    case 2: *str = "out of memory"; return kSuccess;
    case 3: *str = "initialization error"; return kSuccess;
    case 100: *str = "no CUDA-capable device is detected"; return kSuccess;
    case 700: *str = "an illegal memory access was encountered"; return kSuccess;
    case 719: *str = "unspecified launch failure"; return kSuccess;
    case 999: *str = "unknown error"; return kSuccess;
    default: *str = nullptr; return kInvalidValue;
  }
}

CUresult cuDeviceGetCount(int* count) {
  FAKE_ENTRY("cuDeviceGetCount");
  if (!count) return kInvalidValue;
  *count = devices();
  return kSuccess;
}

CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  FAKE_ENTRY("cuDeviceGet");
  if (!device) return kInvalidValue;
  if (ordinal < 0 || ordinal >= devices()) return kInvalidDevice;
  *device = ordinal;
  return kSuccess;
}

CUresult cuDeviceGetAttribute(int* value, int attrib, CUdevice dev) {
  FAKE_ENTRY("cuDeviceGetAttribute");
  if (!value) return kInvalidValue;
  if (dev < 0 || dev >= devices()) return kInvalidDevice;
  const int cc = env_int("FAKE_CUDA_CC", 90);
  switch (attrib) {
    case 1: *value = 1024; break;         // max threads per block
    case 5: *value = 2147483647; break;   // max grid x
    case 8: *value = 48 * 1024; break;    // shared memory per block
    case 16: *value = 132; break;         // SMs
    case 75: *value = cc / 10; break;
    case 76: *value = cc % 10; break;
    case 97: *value = 227 * 1024; break;  // opt-in shared memory
    case 115: *value = env_int("FAKE_CUDA_POOLS", 1); break;
    default: return kInvalidValue;
  }
  return kSuccess;
}

CUresult cuDeviceGetName(char* name, int len, CUdevice dev) {
  FAKE_ENTRY("cuDeviceGetName");
  if (!name || len <= 0) return kInvalidValue;
  if (dev < 0 || dev >= devices()) return kInvalidDevice;
  std::snprintf(name, static_cast<std::size_t>(len), "Fake GPU %d", dev);
  return kSuccess;
}

CUresult cuDeviceTotalMem_v2(std::size_t* bytes, CUdevice dev) {
  FAKE_ENTRY("cuDeviceTotalMem_v2");
  if (!bytes) return kInvalidValue;
  if (dev < 0 || dev >= devices()) return kInvalidDevice;
  *bytes = std::size_t{80} << 30;
  return kSuccess;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice dev) {
  FAKE_ENTRY("cuDevicePrimaryCtxRetain");
  if (!ctx) return kInvalidValue;
  if (dev < 0 || dev >= devices() || dev >= 8) return kInvalidDevice;
  g_ctx[dev].device = dev;
  *ctx = &g_ctx[dev];
  return kSuccess;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) {
  FAKE_ENTRY("cuDevicePrimaryCtxRelease_v2");
  if (dev < 0 || dev >= devices()) return kInvalidDevice;
  return kSuccess;
}

CUresult cuCtxGetCurrent(CUcontext* ctx) {
  FAKE_ENTRY("cuCtxGetCurrent");
  if (!ctx) return kInvalidValue;
  *ctx = with_ctx_stack([](CtxStack& st) { return st.empty() ? nullptr : st.back(); });
  return kSuccess;
}

CUresult cuCtxPushCurrent_v2(CUcontext ctx) {
  FAKE_ENTRY("cuCtxPushCurrent_v2");
  if (!ctx) return kInvalidContext;
  if (!with_ctx_stack([&](CtxStack& st) { return st.push_back(ctx); })) {
    violation("cuCtxPushCurrent: context stack overflow (pushes without pops)");
    return kInvalidValue;
  }
  return kSuccess;
}

CUresult cuCtxSetCurrent(CUcontext ctx) {
  FAKE_ENTRY("cuCtxSetCurrent");
  with_ctx_stack([&](CtxStack& st) {
    if (st.empty()) {
      if (ctx) st.push_back(ctx);
    } else if (ctx) {
      st.v.back() = ctx;
    } else {
      st.pop_back();
    }
  });
  return kSuccess;
}

CUresult cuCtxPopCurrent_v2(CUcontext* ctx) {
  FAKE_ENTRY("cuCtxPopCurrent_v2");
  return with_ctx_stack([&](CtxStack& st) {
    if (st.empty()) return kInvalidContext;
    if (ctx) *ctx = st.back();
    st.pop_back();
    return kSuccess;
  });
}

CUresult cuStreamCreate(CUstream* stream, unsigned int flags) {
  FAKE_ENTRY("cuStreamCreate");
  if (!stream) return kInvalidValue;
  if (!need_ctx("cuStreamCreate")) return kInvalidContext;
  if (flags != 1) violation("cuStreamCreate with flags %u (ctile streams must be non-blocking)", flags);
  auto* s = new CUstream_st();
  {
    std::lock_guard lk(objects().mu);
    objects().live.insert(s);
  }
  *stream = s;
  return kSuccess;
}

CUresult cuStreamDestroy_v2(CUstream stream) {
  FAKE_ENTRY("cuStreamDestroy_v2");
  {
    std::lock_guard lk(objects().mu);
    if (!objects().live.erase(stream)) {
      violation("cuStreamDestroy of an invalid stream");
      return kInvalidHandle;
    }
  }
  order_stream_gone(stream);
  stream->destroy();
  return kSuccess;
}

CUresult cuStreamSynchronize(CUstream stream) {
  FAKE_ENTRY("cuStreamSynchronize");
  if (!valid_stream(stream)) {
    violation("cuStreamSynchronize of an invalid stream");
    return kInvalidHandle;
  }
  drain(stream);
  return g_sticky.load();
}

CUresult cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int flags) {
  FAKE_ENTRY("cuStreamWaitEvent");
  if (flags != 0) return kInvalidValue;
  if (!valid_stream(stream) || !valid_event(event)) {
    violation("cuStreamWaitEvent with an invalid stream or event");
    return kInvalidHandle;
  }
  std::shared_ptr<Token> t;
  {
    std::lock_guard lk(event->mu);
    t = event->last;
  }
  ++g_waits;
  order_wait(stream, event);
  if (t) stream->push([t] { t->wait(); });
  return kSuccess;
}

CUresult cuEventCreate(CUevent* event, unsigned int flags) {
  FAKE_ENTRY("cuEventCreate");
  if (!event) return kInvalidValue;
  if (!need_ctx("cuEventCreate")) return kInvalidContext;
  (void)flags;
  auto* e = new CUevent_st();
  {
    std::lock_guard lk(objects().mu);
    objects().events.insert(e);
  }
  *event = e;
  return kSuccess;
}

CUresult cuEventRecord(CUevent event, CUstream stream) {
  FAKE_ENTRY("cuEventRecord");
  if (!valid_event(event) || !valid_stream(stream)) {
    violation("cuEventRecord with an invalid event or stream");
    return kInvalidHandle;
  }
  auto t = std::make_shared<Token>();
  {
    std::lock_guard lk(event->mu);
    event->last = t;
  }
  order_record(event, stream);
  stream->push([t] { t->set(); });
  return kSuccess;
}

CUresult cuEventQuery(CUevent event) {
  FAKE_ENTRY("cuEventQuery");
  if (!valid_event(event)) return kInvalidHandle;
  std::lock_guard lk(event->mu);
  return !event->last || event->last->is_done() ? kSuccess : kNotReady;
}

CUresult cuEventSynchronize(CUevent event) {
  FAKE_ENTRY("cuEventSynchronize");
  if (!valid_event(event)) {
    violation("cuEventSynchronize of an invalid event");
    return kInvalidHandle;
  }
  std::shared_ptr<Token> t;
  {
    std::lock_guard lk(event->mu);
    t = event->last;
  }
  if (t) t->wait();
  return g_sticky.load();
}

CUresult cuEventElapsedTime(float* ms, CUevent start, CUevent end) {
  FAKE_ENTRY("cuEventElapsedTime");
  if (!ms || !valid_event(start) || !valid_event(end)) return kInvalidHandle;
  std::shared_ptr<Token> a, b;
  {
    std::lock_guard lk(start->mu);
    a = start->last;
  }
  {
    std::lock_guard lk(end->mu);
    b = end->last;
  }
  if (!a || !b) return kInvalidHandle;
  a->wait();
  b->wait();
  std::lock_guard la(a->mu);
  std::lock_guard lb(b->mu);
  *ms = std::chrono::duration<float, std::milli>(b->at - a->at).count();
  return kSuccess;
}

CUresult cuEventDestroy_v2(CUevent event) {
  FAKE_ENTRY("cuEventDestroy_v2");
  {
    std::lock_guard lk(objects().mu);
    if (!objects().events.erase(event)) {
      violation("cuEventDestroy of an invalid event");
      return kInvalidHandle;
    }
  }
  delete event;  // pending waits hold their tokens, not the event
  return kSuccess;
}

CUresult cuMemAlloc_v2(CUdeviceptr* ptr, std::size_t bytes) {
  FAKE_ENTRY("cuMemAlloc_v2");
  if (!ptr || bytes == 0) return kInvalidValue;
  if (!need_ctx("cuMemAlloc")) return kInvalidContext;
  *ptr = device_alloc(bytes);
  return kSuccess;
}

CUresult cuMemFree_v2(CUdeviceptr ptr) {
  FAKE_ENTRY("cuMemFree_v2");
  graph_refs_check("cuMemFree", ptr);
  device_free("cuMemFree", ptr);
  return kSuccess;
}

CUresult cuMemAllocAsync(CUdeviceptr* ptr, std::size_t bytes, CUstream stream) {
  FAKE_ENTRY("cuMemAllocAsync");
  if (!ptr || bytes == 0) return kInvalidValue;
  if (!valid_stream(stream)) {
    violation("cuMemAllocAsync on an invalid stream");
    return kInvalidHandle;
  }
  *ptr = device_alloc(bytes);
  order_alloc(stream, *ptr, bytes);
  return kSuccess;
}

CUresult cuMemFreeAsync(CUdeviceptr ptr, CUstream stream) {
  FAKE_ENTRY("cuMemFreeAsync");
  if (!valid_stream(stream)) {
    violation("cuMemFreeAsync on an invalid stream");
    return kInvalidHandle;
  }
  if (!in_live(ptr, 1)) violation("cuMemFreeAsync of 0x%llx, which is not an allocation", ptr);
  graph_refs_check("cuMemFreeAsync", ptr);
  order_free(stream, ptr);
  stream->push([ptr] { device_free("cuMemFreeAsync", ptr); });
  return kSuccess;
}

CUresult cuDeviceGetDefaultMemPool(CUmemoryPool* pool, CUdevice dev) {
  FAKE_ENTRY("cuDeviceGetDefaultMemPool");
  if (!pool) return kInvalidValue;
  if (dev < 0 || dev >= devices() || dev >= 8) return kInvalidDevice;
  *pool = &g_pool[dev];
  return kSuccess;
}

CUresult cuMemPoolSetAttribute(CUmemoryPool pool, int attr, void* value) {
  FAKE_ENTRY("cuMemPoolSetAttribute");
  if (!pool || !value) return kInvalidValue;
  (void)attr;
  return kSuccess;
}

CUresult cuMemHostAlloc(void** ptr, std::size_t bytes, unsigned int flags) {
  FAKE_ENTRY("cuMemHostAlloc");
  if (!ptr || bytes == 0) return kInvalidValue;
  (void)flags;
  void* p = std::malloc(bytes);
  {
    std::lock_guard lk(memory().mu);
    memory().pinned.insert(p);
  }
  *ptr = p;
  return kSuccess;
}

CUresult cuMemFreeHost(void* ptr) {
  FAKE_ENTRY("cuMemFreeHost");
  {
    std::lock_guard lk(memory().mu);
    if (!memory().pinned.erase(ptr)) return kInvalidValue;
  }
  std::free(ptr);
  return kSuccess;
}

CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, std::size_t count, CUstream stream) {
  FAKE_ENTRY("cuMemsetD8Async");
  if (!valid_stream(stream)) return kInvalidHandle;
  check_range("cuMemsetD8Async (enqueue)", dst, count);
  order_use("cuMemsetD8Async", stream, dst, count);
  stream->push([=] {
    check_range("cuMemsetD8Async", dst, count);
    std::memset(reinterpret_cast<void*>(dst), value, count);
  });
  return kSuccess;
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, std::size_t bytes, CUstream stream) {
  FAKE_ENTRY("cuMemcpyHtoDAsync_v2");
  if (!valid_stream(stream)) return kInvalidHandle;
  check_range("cuMemcpyHtoDAsync (enqueue)", dst, bytes);
  order_use("cuMemcpyHtoDAsync", stream, dst, bytes);
  if (is_pinned(src)) {  // DMA from pinned memory: read when it runs
    stream->push([=] {
      check_range("cuMemcpyHtoDAsync", dst, bytes);
      std::memcpy(reinterpret_cast<void*>(dst), src, bytes);
    });
  } else {  // pageable: staged before the call returns
    auto staged = std::make_shared<std::vector<unsigned char>>(static_cast<const unsigned char*>(src),
                                                              static_cast<const unsigned char*>(src) + bytes);
    stream->push([=] {
      check_range("cuMemcpyHtoDAsync", dst, bytes);
      std::memcpy(reinterpret_cast<void*>(dst), staged->data(), bytes);
    });
  }
  return kSuccess;
}

CUresult cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, std::size_t bytes, CUstream stream) {
  FAKE_ENTRY("cuMemcpyDtoHAsync_v2");
  if (!valid_stream(stream)) return kInvalidHandle;
  check_range("cuMemcpyDtoHAsync (enqueue)", src, bytes);
  order_use("cuMemcpyDtoHAsync", stream, src, bytes);
  stream->push([=] {
    check_range("cuMemcpyDtoHAsync", src, bytes);
    std::memcpy(dst, reinterpret_cast<const void*>(src), bytes);
  });
  if (!is_pinned(dst)) drain(stream);  // to pageable memory: returns once the copy is done
  return kSuccess;
}

CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, std::size_t bytes, CUstream stream) {
  FAKE_ENTRY("cuMemcpyDtoDAsync_v2");
  if (!valid_stream(stream)) return kInvalidHandle;
  check_range("cuMemcpyDtoDAsync (enqueue, destination)", dst, bytes);
  check_range("cuMemcpyDtoDAsync (enqueue, source)", src, bytes);
  order_use("cuMemcpyDtoDAsync (destination)", stream, dst, bytes);
  order_use("cuMemcpyDtoDAsync (source)", stream, src, bytes);
  stream->push([=] {
    check_range("cuMemcpyDtoDAsync (destination)", dst, bytes);
    check_range("cuMemcpyDtoDAsync (source)", src, bytes);
    std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), bytes);
  });
  return kSuccess;
}

CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx, std::size_t bytes,
                           CUstream stream) {
  FAKE_ENTRY("cuMemcpyPeerAsync");
  if (!dst_ctx || !src_ctx) return kInvalidContext;
  return cuMemcpyDtoDAsync_v2(dst, src, bytes, stream);
}

CUresult cuModuleLoadData(CUmodule* module, const void* image) {
  FAKE_ENTRY("cuModuleLoadData");
  if (!module || !image) return kInvalidValue;
  if (!need_ctx("cuModuleLoadData")) return kInvalidContext;
  const auto* b = static_cast<const unsigned char*>(image);
  if (!(b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F')) return kInvalidImage;  // a cubin is an ELF file
  // The ELF header gives the file size: section headers at e_shoff, e_shnum entries of e_shentsize.
  std::uint64_t shoff = 0;
  std::uint16_t shentsize = 0, shnum = 0;
  std::memcpy(&shoff, b + 0x28, 8);
  std::memcpy(&shentsize, b + 0x3a, 2);
  std::memcpy(&shnum, b + 0x3c, 2);
  auto* m = new CUmod_st();
  m->image.assign(reinterpret_cast<const char*>(b), static_cast<std::size_t>(shoff + std::uint64_t{shentsize} * shnum));
  {
    std::lock_guard lk(objects().mu);
    objects().modules.insert(m);
  }
  *module = m;
  return kSuccess;
}

CUresult cuModuleUnload(CUmodule module) {
  FAKE_ENTRY("cuModuleUnload");
  {
    std::lock_guard lk(objects().mu);
    if (!objects().modules.erase(module)) return kInvalidHandle;
  }
  delete module;  // functions of it are leaked (tests do not use them after unloading)
  return kSuccess;
}

CUresult cuModuleGetFunction(CUfunction* fn, CUmodule module, const char* name) {
  FAKE_ENTRY("cuModuleGetFunction");
  if (!fn || !module || !name) return kInvalidValue;
  if (module->image.find(std::string(name) + '\0') == std::string::npos) return kNotFound;
  auto* f = new CUfunc_st();
  f->module = module;
  f->name = name;
  f->param_bytes = cubin_param_bytes(module->image, name);
  *fn = f;
  return kSuccess;
}

CUresult cuFuncGetAttribute(int* value, int attrib, CUfunction fn) {
  FAKE_ENTRY("cuFuncGetAttribute");
  if (!value || !fn) return kInvalidValue;
  switch (attrib) {
    case 0: *value = 1024; break;  // max threads per block
    case 1: *value = 0; break;     // static shared memory
    case 4: *value = 32; break;    // registers
    case 8: *value = fn->max_dynamic_smem; break;
    default: return kInvalidValue;
  }
  return kSuccess;
}

CUresult cuFuncSetAttribute(CUfunction fn, int attrib, int value) {
  FAKE_ENTRY("cuFuncSetAttribute");
  if (!fn) return kInvalidValue;
  if (attrib != 8 || value < 0 || value > 227 * 1024) return kInvalidValue;
  fn->max_dynamic_smem = value;
  return kSuccess;
}

CUresult cuLaunchKernel(CUfunction fn, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z, unsigned int block_x,
                        unsigned int block_y, unsigned int block_z, unsigned int smem_bytes, CUstream stream,
                        void** params, void** extra) {
  FAKE_ENTRY("cuLaunchKernel");
  if (!fn) return kInvalidHandle;
  if (!need_ctx("cuLaunchKernel")) return kInvalidContext;
  if (!valid_stream(stream)) {
    violation("cuLaunchKernel on an invalid or default stream");
    return kInvalidHandle;
  }
  if (grid_x == 0 || grid_y == 0 || grid_z == 0 || grid_x > 2147483647u || grid_y > 65535 || grid_z > 65535)
    return kInvalidValue;
  if (block_x * block_y * block_z == 0 || block_x * block_y * block_z > 1024) return kInvalidValue;
  if (smem_bytes > static_cast<unsigned>(fn->max_dynamic_smem)) return kInvalidValue;
  if (!params || !params[0] || extra) {
    violation("cuLaunchKernel without a parameter buffer");
    return kInvalidValue;
  }
  // The kernel's memory, as far as its parameter block shows it (the stream-order check).
  order_use_params("cuLaunchKernel", stream, static_cast<const unsigned char*>(params[0]), fn->param_bytes);
  note_shape({grid_x, grid_y, grid_z, block_x, block_y, block_z, smem_bytes});
  ++g_launches;
  stream->push([] {});
  return kSuccess;
}

CUresult cuLaunchHostFunc(CUstream stream, ctile::platform::cuda::CUhostFn fn, void* user) {
  FAKE_ENTRY("cuLaunchHostFunc");
  if (!fn) return kInvalidValue;
  if (!valid_stream(stream)) {
    violation("cuLaunchHostFunc on an invalid stream");
    return kInvalidHandle;
  }
  stream->push([fn, user] {
    ++g_host_calls;
    fn(user);
  });
  return kSuccess;
}

namespace {
bool valid_graph(CUgraph g) {
  std::lock_guard lk(objects().mu);
  return objects().graphs.count(g) != 0;
}
CUresult add_node(CUgraphNode* out, CUgraph g, const CUgraphNode* deps, std::size_t ndeps, FakeNode n) {
  if (!out || !valid_graph(g)) return kInvalidValue;
  for (std::size_t i = 0; i < ndeps; ++i) {
    if (!deps[i] || deps[i]->graph != g) {
      violation("a graph node depends on a node of another graph");
      return kInvalidValue;
    }
    n.deps.push_back(deps[i]->index);
  }
  g->nodes.push_back(std::move(n));
  auto h = std::make_unique<CUgraphNode_st>();
  h->graph = g;
  h->index = g->nodes.size() - 1;
  *out = h.get();
  g->handles.push_back(std::move(h));
  return kSuccess;
}
bool kernel_node_ok(const KernelNodeParams* p, const char* what) {
  if (!p || !p->func || !p->kernelParams || !p->kernelParams[0] || p->extra) {
    violation("%s without a function or a parameter buffer", what);
    return false;
  }
  if (p->gridDimX == 0 || p->gridDimY == 0 || p->gridDimZ == 0 || p->gridDimY > 65535 || p->gridDimZ > 65535) return false;
  const unsigned long long threads = 1ull * p->blockDimX * p->blockDimY * p->blockDimZ;
  if (threads == 0 || threads > 1024) return false;
  if (p->sharedMemBytes > static_cast<unsigned>(p->func->max_dynamic_smem)) return false;
  return true;
}
void keep_params(FakeNode& n, const KernelNodeParams* p) {
  const auto k = static_cast<std::size_t>(g_param_bytes.load());
  const std::size_t have = p->func->param_bytes;  // never read past the block when its size is known
  const auto* b = static_cast<const unsigned char*>(p->kernelParams[0]);
  n.params.assign(b, b + (have ? std::min(k, have) : k));
  if (order_checked()) n.order_params.assign(b, b + have);
}
// New parameters for an existing kernel node (of a graph or an executable graph): same function.
bool set_node_params(FakeNode& n, const KernelNodeParams* p, const char* what) {
  if (n.kind != FakeNode::Kernel || !kernel_node_ok(p, what)) return false;
  if (p->func != n.fn) {
    violation("%s changes the node's function", what);
    return false;
  }
  n.grid = p->gridDimX;
  keep_params(n, p);
  return true;
}
}  // namespace

CUresult cuGraphCreate(CUgraph* graph, unsigned int flags) {
  FAKE_ENTRY("cuGraphCreate");
  if (!graph || flags != 0) return kInvalidValue;
  auto* g = new CUgraph_st();
  {
    std::lock_guard lk(objects().mu);
    objects().graphs.insert(g);
  }
  *graph = g;
  return kSuccess;
}

CUresult cuGraphDestroy(CUgraph graph) {
  FAKE_ENTRY("cuGraphDestroy");
  {
    std::lock_guard lk(objects().mu);
    if (!objects().graphs.erase(graph)) {
      violation("cuGraphDestroy of an invalid graph");
      return kInvalidHandle;
    }
  }
  delete graph;
  return kSuccess;
}

CUresult cuGraphAddKernelNode_v2(CUgraphNode* node, CUgraph graph, const CUgraphNode* deps, std::size_t ndeps,
                                 const KernelNodeParams* params) {
  FAKE_ENTRY("cuGraphAddKernelNode_v2");
  if (!need_ctx("cuGraphAddKernelNode")) return kInvalidContext;
  if (!kernel_node_ok(params, "cuGraphAddKernelNode")) return kInvalidValue;
  note_shape({params->gridDimX, params->gridDimY, params->gridDimZ, params->blockDimX, params->blockDimY, params->blockDimZ,
              params->sharedMemBytes});
  FakeNode n;
  n.kind = FakeNode::Kernel;
  n.fn = params->func;
  n.grid = params->gridDimX;
  n.block = params->blockDimX;
  n.smem = params->sharedMemBytes;
  keep_params(n, params);
  return add_node(node, graph, deps, ndeps, std::move(n));
}

CUresult cuGraphAddMemcpyNode(CUgraphNode* node, CUgraph graph, const CUgraphNode* deps, std::size_t ndeps,
                              const Memcpy3D* c, CUcontext ctx) {
  FAKE_ENTRY("cuGraphAddMemcpyNode");
  if (!c || !ctx) return kInvalidValue;
  if (c->srcMemoryType != 2 || c->dstMemoryType != 2 || c->Height != 1 || c->Depth != 1 || c->srcArray || c->dstArray) {
    violation("cuGraphAddMemcpyNode: only 1-D device-to-device copies are emulated");
    return kInvalidValue;
  }
  check_range("cuGraphAddMemcpyNode (source)", c->srcDevice + c->srcXInBytes, c->WidthInBytes);
  check_range("cuGraphAddMemcpyNode (destination)", c->dstDevice + c->dstXInBytes, c->WidthInBytes);
  FakeNode n;
  n.kind = FakeNode::Memcpy;
  n.src = c->srcDevice + c->srcXInBytes;
  n.dst = c->dstDevice + c->dstXInBytes;
  n.bytes = c->WidthInBytes;
  return add_node(node, graph, deps, ndeps, std::move(n));
}

CUresult cuGraphAddHostNode(CUgraphNode* node, CUgraph graph, const CUgraphNode* deps, std::size_t ndeps,
                            const HostNodeParams* p) {
  FAKE_ENTRY("cuGraphAddHostNode");
  if (!p || !p->fn) return kInvalidValue;
  FakeNode n;
  n.kind = FakeNode::Host;
  n.host = p->fn;
  n.user = p->userData;
  return add_node(node, graph, deps, ndeps, std::move(n));
}

CUresult cuGraphAddEmptyNode(CUgraphNode* node, CUgraph graph, const CUgraphNode* deps, std::size_t ndeps) {
  FAKE_ENTRY("cuGraphAddEmptyNode");
  return add_node(node, graph, deps, ndeps, FakeNode{});
}

// Edges after the nodes exist, with their kinds: a programmatic edge runs from a kernel node's
// programmatic port to a kernel node (what the driver accepts); the fake replays nodes in order, so
// an edge must point to a later node.
CUresult cuGraphAddDependencies_v2(CUgraph graph, const CUgraphNode* from, const CUgraphNode* to, const GraphEdgeData* edges,
                                   std::size_t n) {
  FAKE_ENTRY("cuGraphAddDependencies_v2");
  if (!valid_graph(graph) || (n > 0 && (!from || !to))) return kInvalidValue;
  for (std::size_t i = 0; i < n; ++i) {
    if (!from[i] || !to[i] || from[i]->graph != graph || to[i]->graph != graph || from[i]->index >= to[i]->index) {
      violation("cuGraphAddDependencies: an edge between nodes of another graph, or to an earlier node");
      return kInvalidValue;
    }
    FakeNode& dst = graph->nodes[to[i]->index];
    if (edges) {
      const GraphEdgeData& e = edges[i];
      const bool zeros = e.to_port == 0 && std::all_of(std::begin(e.reserved), std::end(e.reserved), [](unsigned char c) { return c == 0; });
      const bool plain = e.type == 0 && e.from_port == 0;
      const bool programmatic = e.type == 1 && e.from_port == 1 && graph->nodes[from[i]->index].kind == FakeNode::Kernel &&
                                dst.kind == FakeNode::Kernel;
      if (!zeros || !(plain || programmatic)) {
        violation("cuGraphAddDependencies: an edge of type %d from port %d (programmatic edges join two kernel nodes)", e.type,
                  e.from_port);
        return kInvalidValue;
      }
      if (programmatic) ++g_programmatic_edges;
    }
    dst.deps.push_back(from[i]->index);
  }
  return kSuccess;
}

CUresult cuGraphInstantiateWithFlags(CUgraphExec* exec, CUgraph graph, unsigned long long flags) {
  FAKE_ENTRY("cuGraphInstantiateWithFlags");
  if (!exec || flags != 0 || !valid_graph(graph)) return kInvalidValue;
  auto* e = new CUgraphExec_st();
  e->graph = graph;
  e->nodes = graph->nodes;
  {
    std::lock_guard lk(objects().mu);
    objects().execs.insert(e);
  }
  *exec = e;
  return kSuccess;
}

CUresult cuGraphLaunch(CUgraphExec exec, CUstream stream) {
  FAKE_ENTRY("cuGraphLaunch");
  {
    std::lock_guard lk(objects().mu);
    if (!objects().execs.count(exec)) {
      violation("cuGraphLaunch of an invalid executable graph");
      return kInvalidHandle;
    }
  }
  if (!need_ctx("cuGraphLaunch")) return kInvalidContext;
  if (!valid_stream(stream)) {
    violation("cuGraphLaunch on an invalid stream");
    return kInvalidHandle;
  }
  ++g_graph_launches;
  // The nodes in order (every dependency is an earlier node), each a separate step of the stream.
  for (const FakeNode& n : exec->nodes) {
    switch (n.kind) {
      case FakeNode::Kernel:
        ++g_launches;
        if (n.order_params.empty()) order_use_params("a graph's kernel node", stream, n.params.data(), n.params.size());
        else order_use_params("a graph's kernel node", stream, n.order_params.data(), n.order_params.size());
        stream->push([] {});
        break;
      case FakeNode::Memcpy:
        order_use("a graph's memcpy node (source)", stream, n.src, n.bytes);
        order_use("a graph's memcpy node (destination)", stream, n.dst, n.bytes);
        stream->push([n] {
          check_range("graph memcpy node (source)", n.src, n.bytes);
          check_range("graph memcpy node (destination)", n.dst, n.bytes);
          std::memmove(reinterpret_cast<void*>(n.dst), reinterpret_cast<const void*>(n.src), n.bytes);
        });
        break;
      case FakeNode::Host:
        stream->push([n] {
          ++g_host_calls;
          n.host(n.user);
        });
        break;
      case FakeNode::Empty:
        break;
    }
  }
  return kSuccess;
}

CUresult cuGraphExecDestroy(CUgraphExec exec) {
  FAKE_ENTRY("cuGraphExecDestroy");
  {
    std::lock_guard lk(objects().mu);
    if (!objects().execs.erase(exec)) {
      violation("cuGraphExecDestroy of an invalid executable graph");
      return kInvalidHandle;
    }
  }
  delete exec;  // launches already queued copied their nodes
  return kSuccess;
}

CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec exec, CUgraphNode node, const KernelNodeParams* params) {
  FAKE_ENTRY("cuGraphExecKernelNodeSetParams_v2");
  {
    std::lock_guard lk(objects().mu);
    if (!objects().execs.count(exec)) return kInvalidHandle;
  }
  if (!node || node->graph != exec->graph || node->index >= exec->nodes.size()) {
    violation("cuGraphExecKernelNodeSetParams with a node of another graph");
    return kInvalidValue;
  }
  FakeNode& n = exec->nodes[node->index];
  if (!set_node_params(n, params, "cuGraphExecKernelNodeSetParams")) return kInvalidValue;
  {
    std::lock_guard lk(g_last_update_mu);
    g_last_update = n.params;
  }
  ++g_node_updates;
  return kSuccess;
}

// The parameters of a kernel node of the graph itself (not of an executable graph made from it).
CUresult cuGraphKernelNodeSetParams_v2(CUgraphNode node, const KernelNodeParams* params) {
  FAKE_ENTRY("cuGraphKernelNodeSetParams_v2");
  std::lock_guard lk(objects().mu);
  if (!node || !objects().graphs.count(node->graph) || node->index >= node->graph->nodes.size()) {
    violation("cuGraphKernelNodeSetParams with a node of no live graph");
    return kInvalidValue;
  }
  return set_node_params(node->graph->nodes[node->index], params, "cuGraphKernelNodeSetParams") ? kSuccess : kInvalidValue;
}

}  // extern "C"
