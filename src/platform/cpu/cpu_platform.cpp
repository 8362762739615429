// The CPU platform: host memory, streams with a worker thread each, and graphs that run their nodes
// in order on the worker (src/platform/platform.hpp).
#include "cpu_platform.hpp"

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <new>
#include <thread>
#include <utility>
#include <vector>

#include "../spin.hpp"
#include "ctile/core/error.hpp"

#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#define CTILE_HAVE_MMAP 1
#endif

namespace ctile::platform::cpu {
namespace {

constexpr std::size_t kAlign = 64;
constexpr std::int64_t kMmapThreshold = std::int64_t{1} << 20;

// ---- graphs -----------------------------------------------------------------------------------

using HostFn = std::shared_ptr<const std::function<void()>>;

class CpuGraphExec final : public GraphExec {
 public:
  explicit CpuGraphExec(std::vector<HostFn> nodes) : nodes_(std::move(nodes)) {}
  void set_kernel_params(NodeId, const std::byte*, bool) override {
    throw InternalError("cpu graph: kernel nodes do not exist on the CPU platform");
  }
  void set_host(NodeId node, std::function<void()> fn) override {
    CTILE_CHECK(node < nodes_.size(), "cpu graph: node ", node, " of ", nodes_.size());
    std::lock_guard lk(mu_);
    nodes_[node] = std::make_shared<const std::function<void()>>(std::move(fn));
  }
  std::size_t nodes() const override { return nodes_.size(); }
  // The node functions as they are now: a run submitted now uses these even if set_host replaces
  // some before the worker gets to it.
  std::vector<HostFn> snapshot() const {
    std::lock_guard lk(mu_);
    return nodes_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<HostFn> nodes_;
};

class CpuGraphBuilder final : public GraphBuilder {
 public:
  NodeId add_kernel(const NativeKernel&, std::int64_t, const LaunchShape&, const std::byte*, std::span<const NodeId>) override {
    throw InternalError("cpu graph: the CPU platform has no native kernels (CPU kernels are host nodes)");
  }
  NodeId add_copy(std::byte* dst, const std::byte* src, std::int64_t bytes, std::span<const NodeId> deps) override {
    return add_host([dst, src, bytes] { std::memmove(dst, src, static_cast<std::size_t>(bytes)); }, deps);
  }
  // Nodes run in the order they were added, which respects every dependency (deps are earlier nodes).
  NodeId add_host(std::function<void()> fn, std::span<const NodeId> deps) override {
    for (NodeId d : deps) CTILE_CHECK(d < nodes_.size(), "cpu graph: dependency on a later node");
    nodes_.push_back(std::make_shared<const std::function<void()>>(std::move(fn)));
    return nodes_.size() - 1;
  }
  NodeId add_empty(std::span<const NodeId> deps) override {
    return add_host([] {}, deps);
  }
  std::unique_ptr<GraphExec> instantiate() override { return std::make_unique<CpuGraphExec>(std::move(nodes_)); }

 private:
  std::vector<HostFn> nodes_;
};

// ---- streams ----------------------------------------------------------------------------------

struct Item {
  detail::Command cmd;
  std::vector<HostFn> graph;  // Kind::Graph: the nodes as they were when submitted
  detail::SmallVec<Event, 4> wait_for;
  Event done;
};

// State shared by a CPU stream and its worker thread; the worker keeps it alive on its own, so a
// stream whose last handle is dropped by one of its own commands can let the worker finish alone.
struct CpuQueue {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Item> items;
  bool closing = false;
  bool idle = false;  // the worker sleeps on `cv`: a submit must wake it (otherwise it will look anyway)
  // Copies of items.size() and `closing` for polling without the lock (written under it).
  std::atomic<std::size_t> queued{0};
  std::atomic<bool> closing_hint{false};
};

void run_command(Item& it) {
  detail::Command& c = it.cmd;
  switch (c.kind) {
    case detail::Command::Kind::Host:
    case detail::Command::Kind::Inline:  // a host stream runs enqueue()d tasks like host callbacks
      c.fn();
      break;
    case detail::Command::Kind::Copy:
      if (c.bytes > 0) std::memmove(c.dst, c.src, static_cast<std::size_t>(c.bytes));
      break;
    case detail::Command::Kind::Graph:
      // A failing node stops the run; the run's event carries its error.
      for (const HostFn& f : it.graph) (*f)();
      break;
    case detail::Command::Kind::Marker:
      break;
    case detail::Command::Kind::Kernel:
      throw InternalError("cpu stream: a native kernel command (CPU kernels run as host commands)");
  }
}

void run_worker(const std::shared_ptr<CpuQueue>& q) {
  bool after_item = false;
  for (;;) {
    // After an item, poll for the next one for a short while before sleeping (spin.hpp): a submit
    // to a sleeping worker costs the submitting thread a futex wake.
    if (after_item)
      (void)detail::spin_until([&] {
        return q->queued.load(std::memory_order_acquire) != 0 || q->closing_hint.load(std::memory_order_acquire);
      });
    Item it;
    {
      std::unique_lock lk(q->mu);
      q->idle = true;
      q->cv.wait(lk, [&] { return q->closing || !q->items.empty(); });
      q->idle = false;
      if (q->items.empty()) return;  // closing and drained
      it = std::move(q->items.front());
      q->items.pop_front();
      q->queued.store(q->items.size(), std::memory_order_release);
    }
    after_item = true;
    std::exception_ptr err;
    for (const Event& e : it.wait_for) {  // wait for all, even after a failure: order is kept
      e.wait();
      if (!err) err = e.error();
    }
    it.wait_for.clear();
    if (!err) {
      try {
        run_command(it);
      } catch (...) {
        err = std::current_exception();
      }
    }
    // What the command kept alive dies before the event says "done": use counts are exact then.
    it.cmd.fn.reset();
    it.cmd.keep.clear();
    it.graph.clear();
    Event done = std::move(it.done);
    done.complete(err);
  }
}

class CpuStream final : public StreamImpl {
 public:
  explicit CpuStream(Device d) : device_(d), order_(new_stream_order()), q_(std::make_shared<CpuQueue>()) {
    worker_ = std::thread([q = q_] { run_worker(q); });
    worker_id_ = worker_.get_id();
  }
  ~CpuStream() override {
    {
      std::lock_guard lk(q_->mu);
      q_->closing = true;
      q_->closing_hint.store(true, std::memory_order_release);
    }
    q_->cv.notify_all();
    if (std::this_thread::get_id() == worker_id_)
      worker_.detach();  // the last handle died inside one of our own commands: the worker drains and exits alone
    else
      worker_.join();
  }
  CpuStream(const CpuStream&) = delete;
  CpuStream& operator=(const CpuStream&) = delete;

  Device device() const override { return device_; }
  std::uint64_t order() const override { return order_; }

  Event submit(detail::Command&& cmd, std::span<Event> wait_for) override {
    Event done = Event::create_ordered(order_);
    Item it;
    if (cmd.kind == detail::Command::Kind::Graph) {
      auto* g = dynamic_cast<CpuGraphExec*>(cmd.graph);
      CTILE_CHECK(g != nullptr, "cpu stream: a graph of another platform");
      it.graph = g->snapshot();
    }
    it.cmd = std::move(cmd);
    for (Event& e : wait_for) it.wait_for.push_back(std::move(e));
    it.done = done;
    bool wake = false;
    {
      std::lock_guard lk(q_->mu);
      q_->items.push_back(std::move(it));
      q_->queued.store(q_->items.size(), std::memory_order_release);
      wake = q_->idle;
    }
    if (wake) q_->cv.notify_one();  // a busy worker finds the item without a futex call
    return done;
  }

  void synchronize() override {
    if (std::this_thread::get_id() == worker_id_)
      throw UserError("Stream::synchronize called from a command running on the same stream (it would wait for itself)");
    detail::Command marker;
    submit(std::move(marker), {}).wait();
  }

 private:
  Device device_;
  std::uint64_t order_;
  std::shared_ptr<CpuQueue> q_;
  std::thread worker_;
  std::thread::id worker_id_;
};

// ---- the platform -----------------------------------------------------------------------------

class CpuPlatform final : public DevicePlatform {
 public:
  Device device() const override { return Device{DeviceKind::Cpu, 0}; }
  std::string describe() const override { return "cpu:0 (host, interpreter)"; }
  bool host_accessible() const override { return true; }

  Allocation allocate(std::int64_t bytes, bool zeroed) override {
    Allocation a;
    a.ready = Event::ready();
#ifdef CTILE_HAVE_MMAP
    if (bytes >= kMmapThreshold) {  // fresh pages come zero-filled, and only touched pages cost memory
      void* p = ::mmap(nullptr, static_cast<std::size_t>(bytes), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) throw OutOfMemoryError(detail::cat("out of memory: cannot allocate ", bytes, " bytes for a tensor on cpu:0"));
      a.ptr = static_cast<std::byte*>(p);
      a.mapped = true;
      return a;
    }
#endif
    const auto n = static_cast<std::size_t>(bytes == 0 ? kAlign : bytes);
    void* p = ::operator new(n, std::align_val_t{kAlign}, std::nothrow);
    if (!p) throw OutOfMemoryError(detail::cat("out of memory: cannot allocate ", bytes, " bytes for a tensor on cpu:0"));
    if (zeroed) std::memset(p, 0, n);
    a.ptr = static_cast<std::byte*>(p);
    return a;
  }

  void release(const Allocation& a, std::int64_t bytes, std::span<const Event>) noexcept override {
    if (!a.ptr) return;
#ifdef CTILE_HAVE_MMAP
    if (a.mapped) {
      ::munmap(a.ptr, static_cast<std::size_t>(bytes));
      return;
    }
#endif
    (void)bytes;
    ::operator delete(a.ptr, std::align_val_t{kAlign});
  }

  void copy_to_host(std::byte* dst, const std::byte* src, std::int64_t bytes) override {
    if (bytes > 0) std::memcpy(dst, src, static_cast<std::size_t>(bytes));
  }

  Event copy_from_host(std::byte* dst, const std::byte* src, std::int64_t bytes, std::span<Event> deps) override {
    wait_all(deps);
    if (bytes > 0) std::memcpy(dst, src, static_cast<std::size_t>(bytes));
    return Event::ready();
  }

  Event copy_from_device(std::byte* dst, DevicePlatform& from, const std::byte* src, std::int64_t bytes,
                         std::span<Event> deps, detail::KeepAlive) override {
    CTILE_CHECK(from.host_accessible(), "cpu platform: copy from a device the host cannot read");
    wait_all(deps);
    if (bytes > 0) std::memmove(dst, src, static_cast<std::size_t>(bytes));
    return Event::ready();
  }

  std::uint64_t copy_order() const override { return 0; }

  std::shared_ptr<StreamImpl> create_stream() override { return std::make_shared<CpuStream>(device()); }
  std::unique_ptr<GraphBuilder> graph_builder() override { return std::make_unique<CpuGraphBuilder>(); }

 private:
  static void wait_all(std::span<Event> deps) {
    for (Event& e : deps) {
      e.wait();
      if (auto err = e.error()) std::rethrow_exception(err);
    }
  }
};

}  // namespace

DevicePlatform& platform() {
  static CpuPlatform* p = new CpuPlatform();  // never destroyed: storages may outlive static destruction
  return *p;
}

}  // namespace ctile::platform::cpu
