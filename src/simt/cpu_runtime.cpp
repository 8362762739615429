// The CPU backend of SIMT kernels (cpu_runtime.hpp): the block scheduler over fibers, barriers,
// warp collectives, the hooks of ctile/simt/host_runtime.h, and the race checker's plumbing.
#include "cpu_runtime.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <sstream>

#include "../backend/cpu/thread_pool.hpp"
#include "ctile/core/error.hpp"
#include "fiber.hpp"
#include "race_checker.hpp"

namespace ctile::simt::detail {

thread_local ThreadState* tls_thread = nullptr;

void not_in_kernel(const char* what) {
  throw UserError(std::string(what) + " was called outside a SIMT kernel (it is only meaningful in a kernel's body, "
                                      "while the kernel runs)");
}

}  // namespace ctile::simt::detail

namespace ctile::simt::cpu {

using detail::AccessKind;
using detail::Coord;
using detail::Space;
using detail::ThreadState;
using detail::WarpOp;

namespace {

std::string coord_str(const Coord& c) {
  std::ostringstream os;
  os << "(" << c.x << "," << c.y << "," << c.z << ")";
  return os.str();
}

std::string site_str(const char* file, unsigned line) {
  if (!file || !*file) return "?";
  return std::string(file) + ":" + std::to_string(line);
}

const char* op_name(WarpOp op) {
  switch (op) {
    case WarpOp::Shfl:
      return "warp::shfl";
    case WarpOp::ShflUp:
      return "warp::shfl_up";
    case WarpOp::ShflDown:
      return "warp::shfl_down";
    case WarpOp::ShflXor:
      return "warp::shfl_xor";
    case WarpOp::Any:
      return "warp::any";
    case WarpOp::All:
      return "warp::all";
    case WarpOp::Ballot:
      return "warp::ballot";
    case WarpOp::Sync:
      return "warp::sync";
  }
  return "a warp collective";
}

Coord unflatten(std::uint64_t i, const Dims& d) {
  Coord c;
  c.x = static_cast<std::uint32_t>(i % static_cast<std::uint64_t>(d.x));
  c.y = static_cast<std::uint32_t>((i / static_cast<std::uint64_t>(d.x)) % static_cast<std::uint64_t>(d.y));
  c.z = static_cast<std::uint32_t>(i / static_cast<std::uint64_t>(d.x * d.y));
  return c;
}

}  // namespace

std::vector<ArgRange> arg_ranges(const detail::KernelInfo& k, const std::byte* pack) {
  std::vector<ArgRange> out;
  for (std::size_t i = 0; i < k.params.size(); ++i) {
    const detail::ParamInfo& p = k.params[i];
    if (p.kind == detail::ParamKind::Value) continue;
    const std::byte* d = pack + k.desc_offsets[i];
    const std::byte* data = nullptr;
    std::int64_t v[3] = {0, 0, 0};
    std::memcpy(&data, d, sizeof(data));
    std::memcpy(v, d + sizeof(void*), sizeof(std::int64_t) * (p.rank == 2 ? 3 : 1));
    const std::int64_t es = dtype_size(p.dtype);
    std::int64_t count = p.rank == 2 ? (v[0] == 0 ? 0 : (v[0] - 1) * v[2] + v[1]) : v[0];
    ArgRange r;
    r.lo = data;
    r.hi = data + count * es;
    r.element_bytes = es;
    r.name = "argument " + std::to_string(i) + " (" + p.name + ")";
    out.push_back(std::move(r));
  }
  return out;
}

namespace {

// One block at a time, its threads as fibers on this host thread.
class BlockRun {
 public:
  BlockRun(const detail::KernelInfo& k, const std::byte* pack, const LaunchDims& dims, RaceChecker* global)
      : k_(k), pack_(pack), dims_(dims), global_(global) {
    n_ = static_cast<std::uint32_t>(dims.block.x * dims.block.y * dims.block.z);
    threads_.resize(n_);  // never resized again: contexts must not move
    warps_.resize((n_ + 31) / 32);
    stacks_ = StackPool::global().take(n_);
    if (dims.dynamic_shared > 0) {
      smem_raw_ = std::make_unique<unsigned char[]>(static_cast<std::size_t>(dims.dynamic_shared) + 64);
      auto p = reinterpret_cast<std::uintptr_t>(smem_raw_.get());
      smem_ = reinterpret_cast<unsigned char*>((p + 63) & ~static_cast<std::uintptr_t>(63));
    }
    if (global_)
      shared_ = std::make_unique<RaceChecker>(
          [this](const void* a) {
            const auto off = static_cast<const unsigned char*>(a) - smem_;
            return "byte " + std::to_string(off) + " of the dynamic shared memory of block " + coord_str(block_);
          },
          [this](const Accessor& a) { return thread_name(a); });
  }

  ~BlockRun() { StackPool::global().give_back(std::move(stacks_)); }
  BlockRun(const BlockRun&) = delete;
  BlockRun& operator=(const BlockRun&) = delete;

  void run_block(std::uint64_t b) {
    block_linear_ = b;
    block_ = unflatten(b, dims_.grid);
    done_ = at_barrier_ = 0;
    block_epoch_ = 0;
    error_ = nullptr;
    ready_.clear();
    for (auto& w : warps_) w = Warp{};
    if (smem_) std::memset(smem_, 0xCD, static_cast<std::size_t>(dims_.dynamic_shared));  // uninitialised
    if (shared_) shared_->clear();
    for (std::uint32_t i = 0; i < n_; ++i) {
      Thread& t = threads_[i];
      t.run = this;
      t.status = Status::Runnable;
      ThreadState& s = t.st;
      s.thread = unflatten(i, dims_.block);
      s.block = block_;
      s.block_dim = Coord{static_cast<std::uint32_t>(dims_.block.x), static_cast<std::uint32_t>(dims_.block.y),
                          static_cast<std::uint32_t>(dims_.block.z)};
      s.grid_dim = Coord{static_cast<std::uint32_t>(dims_.grid.x), static_cast<std::uint32_t>(dims_.grid.y),
                         static_cast<std::uint32_t>(dims_.grid.z)};
      s.in_block = i;
      s.block_linear = b;
      s.dyn_smem = smem_;
      s.dyn_smem_bytes = static_cast<std::uint64_t>(dims_.dynamic_shared);
      s.race_check = global_ != nullptr;
      s.run = reinterpret_cast<detail::BlockRun*>(this);
      prepare(t.ctx, *stacks_[i], &BlockRun::entry, &t);
      ready_.push_back(i);
    }
    struct Cleanup {
      BlockRun& r;
      ~Cleanup() {
        for (auto& t : r.threads_) destroy(t.ctx);
        detail::tls_thread = nullptr;
      }
    } cleanup{*this};
    for (;;) {
      while (!ready_.empty()) {
        const std::uint32_t i = ready_.front();
        ready_.pop_front();
        Thread& t = threads_[i];
        detail::tls_thread = &t.st;
        switch_to(sched_, t.ctx);
        detail::tls_thread = nullptr;
        if (error_) std::rethrow_exception(error_);
      }
      if (done_ == n_) return;
      diagnose();
    }
  }

  void barrier(ThreadState& s, const std::source_location& loc, const void* site) {
    Thread& t = threads_[s.in_block];
    t.status = Status::Barrier;
    t.file = loc.file_name();
    t.line = loc.line();
    t.site = site;
    if (++at_barrier_ == n_) {
      for (std::uint32_t i = 0; i < n_; ++i)
        if (threads_[i].site != t.site)
          throw UserError("barrier divergence in " + where() + ": " + thread_name(i) + " waits at sync_threads() (" +
                          site_str(threads_[i].file, threads_[i].line) + ") and " + thread_name(s.in_block) +
                          " at another one (" + site_str(t.file, t.line) +
                          "); every thread of a block must reach the same barrier");
      ++block_epoch_;
      at_barrier_ = 0;
      for (std::uint32_t i = 0; i < n_; ++i) {
        threads_[i].status = Status::Runnable;
        if (i != s.in_block) ready_.push_back(i);
      }
      return;  // the last to arrive goes on without a switch
    }
    switch_to(t.ctx, sched_);
  }

  std::uint64_t warp(ThreadState& s, WarpOp op, std::uint64_t value, std::uint32_t arg, std::uint32_t width,
                     const std::source_location& loc, const void* site) {
    if (n_ % 32 != 0)
      throw UserError(std::string(op_name(op)) + " in " + where() + " (" + site_str(loc.file_name(), loc.line()) +
                      "): warp collectives need whole warps, but the block has " + std::to_string(n_) +
                      " threads (not a multiple of 32)");
    if (width == 0 || width > 32 || (width & (width - 1)) != 0)
      throw UserError(std::string(op_name(op)) + " in " + where() + " (" + site_str(loc.file_name(), loc.line()) +
                      "): the width " + std::to_string(width) + " must be a power of two from 1 to 32");
    Thread& t = threads_[s.in_block];
    t.status = Status::Warp;
    t.op = op;
    t.value = value;
    t.arg = arg;
    t.width = width;
    t.file = loc.file_name();
    t.line = loc.line();
    t.site = site;
    Warp& w = warps_[s.in_block / 32];
    if (++w.arrived == 32) {
      resolve(s.in_block / 32);
      return t.result;
    }
    switch_to(t.ctx, sched_);
    return t.result;
  }

  void record(ThreadState& s, Space space, const void* addr, AccessKind kind) {
    Accessor a;
    a.thread = s.in_block;
    a.block = block_linear_;
    a.block_epoch = block_epoch_;
    a.warp_epoch = warps_[s.in_block / 32].epoch;
    a.kind = kind;
    RaceChecker* c = space == Space::Shared ? shared_.get() : global_;
    if (c) c->access(addr, a, k_.describe());
  }

  std::string thread_name(const Accessor& a) const {
    return "thread " + coord_str(unflatten(a.thread, dims_.block)) + " of block " + coord_str(unflatten(a.block, dims_.grid));
  }

 private:
  enum class Status { Runnable, Barrier, Warp, Done };
  struct Thread {
    ThreadState st;
    Context ctx;
    BlockRun* run = nullptr;
    Status status = Status::Runnable;
    const char* file = "";
    unsigned line = 0;
    const void* site = nullptr;  // the call (a return address): which barrier or collective
    WarpOp op = WarpOp::Sync;
    std::uint64_t value = 0, result = 0;
    std::uint32_t arg = 0, width = 32;
  };
  struct Warp {
    std::uint32_t arrived = 0;
    std::uint64_t epoch = 0;
  };

  static void entry(void* p) {
    Thread& t = *static_cast<Thread*>(p);
    BlockRun& r = *t.run;
    on_fiber_start(t.ctx, r.sched_);
    try {
      r.k_.thread_entry(r.pack_);
    } catch (...) {
      if (!r.error_) r.error_ = std::current_exception();
    }
    t.status = Status::Done;
    ++r.done_;
    switch_to(t.ctx, r.sched_, true);
    std::terminate();  // never resumed
  }

  std::string where() const { return k_.describe() + ", block " + coord_str(block_); }
  std::string thread_name(std::uint32_t i) const { return "thread " + coord_str(threads_[i].st.thread); }

  void resolve(std::uint32_t w) {
    Thread* lanes[32];
    for (std::uint32_t l = 0; l < 32; ++l) lanes[l] = &threads_[w * 32 + l];
    const Thread& l0 = *lanes[0];
    for (std::uint32_t l = 1; l < 32; ++l) {
      const Thread& t = *lanes[l];
      if (t.op != l0.op || t.site != l0.site || t.width != l0.width)
        throw UserError("warp divergence in " + where() + ": lane 0 of warp " + std::to_string(w) + " is at " +
                        op_name(l0.op) + " (" + site_str(l0.file, l0.line) + ") and lane " + std::to_string(l) +
                        " at " + op_name(t.op) + " (" + site_str(t.file, t.line) +
                        (t.width != l0.width ? ", another width" : "") +
                        "); every lane of a warp must take part in the same collective");
    }
    std::uint64_t any = 0, all = 1, ballot = 0;
    for (std::uint32_t l = 0; l < 32; ++l) {
      const bool p = lanes[l]->value != 0;
      any |= p;
      all &= p;
      ballot |= static_cast<std::uint64_t>(p) << l;
    }
    for (std::uint32_t l = 0; l < 32; ++l) {
      Thread& t = *lanes[l];
      const std::uint32_t width = t.width, seg = l / width * width, pos = l % width;
      std::uint32_t src = l;
      switch (t.op) {
        case WarpOp::Shfl:
          src = seg + t.arg % width;
          break;
        case WarpOp::ShflUp:
          src = pos >= t.arg ? l - t.arg : l;
          break;
        case WarpOp::ShflDown:
          src = pos + static_cast<std::uint64_t>(t.arg) < width ? l + t.arg : l;
          break;
        case WarpOp::ShflXor: {
          const std::uint32_t x = l ^ t.arg;
          src = (x < 32 && x / width <= l / width) ? x : l;
          break;
        }
        default:
          break;
      }
      switch (t.op) {
        case WarpOp::Any:
          t.result = any;
          break;
        case WarpOp::All:
          t.result = all;
          break;
        case WarpOp::Ballot:
          t.result = ballot;
          break;
        case WarpOp::Sync:
          t.result = 0;
          break;
        default:
          t.result = lanes[src]->value;
          break;
      }
    }
    Warp& wp = warps_[w];
    wp.arrived = 0;
    if (l0.op == WarpOp::Sync) ++wp.epoch;
    const ThreadState* self = detail::tls_thread;
    for (std::uint32_t l = 0; l < 32; ++l) {
      lanes[l]->status = Status::Runnable;
      if (&lanes[l]->st != self) ready_.push_back(w * 32 + l);
    }
  }

  [[noreturn]] void diagnose() {
    // Nothing can run and not every thread has finished: someone waits for a thread that never comes.
    auto state = [&](std::uint32_t i) -> std::string {
      const Thread& t = threads_[i];
      switch (t.status) {
        case Status::Done:
          return "returned without reaching it";
        case Status::Barrier:
          return "waits at sync_threads() (" + site_str(t.file, t.line) + ")";
        case Status::Warp:
          return "waits at " + std::string(op_name(t.op)) + " (" + site_str(t.file, t.line) + ")";
        default:
          return "is still running";
      }
    };
    if (at_barrier_ > 0) {
      std::uint32_t waiting = n_, missing = n_;
      for (std::uint32_t i = 0; i < n_; ++i) {
        if (threads_[i].status == Status::Barrier && waiting == n_) waiting = i;
        if (threads_[i].status != Status::Barrier && missing == n_) missing = i;
      }
      throw UserError("barrier divergence in " + where() + ": " + std::to_string(at_barrier_) + " of " +
                      std::to_string(n_) + " threads wait at sync_threads() (" +
                      site_str(threads_[waiting].file, threads_[waiting].line) + ") but " + thread_name(missing) + " " +
                      state(missing) + "; every thread of a block must reach the same barrier (a GPU would hang or "
                      "misbehave)");
    }
    for (std::uint32_t w = 0; w < warps_.size(); ++w) {
      if (warps_[w].arrived == 0) continue;
      std::uint32_t waiting = 0, missing = 0;
      for (std::uint32_t l = 0; l < 32; ++l) {
        const std::uint32_t i = w * 32 + l;
        if (threads_[i].status == Status::Warp) waiting = i;
        else missing = i;
      }
      throw UserError("warp divergence in " + where() + ": " + std::to_string(warps_[w].arrived) + " lanes of warp " +
                      std::to_string(w) + " wait at " + op_name(threads_[waiting].op) + " (" +
                      site_str(threads_[waiting].file, threads_[waiting].line) + ") but lane " +
                      std::to_string(missing % 32) + " (" + thread_name(missing) + ") " + state(missing) +
                      "; every lane of a warp must take part (a GPU would hang or misbehave)");
    }
    throw InternalError("SIMT CPU backend: no thread can run, yet none waits");
  }

  const detail::KernelInfo& k_;
  const std::byte* pack_;
  LaunchDims dims_;
  RaceChecker* global_;
  std::unique_ptr<RaceChecker> shared_;
  std::uint32_t n_ = 0;
  std::vector<Thread> threads_;
  std::vector<Warp> warps_;
  std::vector<std::unique_ptr<Stack>> stacks_;
  std::unique_ptr<unsigned char[]> smem_raw_;
  unsigned char* smem_ = nullptr;
  Context sched_;
  std::deque<std::uint32_t> ready_;
  std::uint32_t done_ = 0, at_barrier_ = 0;
  std::uint64_t block_epoch_ = 0;
  std::uint64_t block_linear_ = 0;
  Coord block_;
  std::exception_ptr error_;
};

BlockRun& run_of(ThreadState& t) { return *reinterpret_cast<BlockRun*>(t.run); }

}  // namespace

void run(const detail::KernelInfo& k, const std::byte* pack, const LaunchDims& dims, bool race_check) {
  const auto blocks = static_cast<std::uint64_t>(dims.grid.x * dims.grid.y * dims.grid.z);
  if (blocks == 0) return;
  if (race_check) {
    // One block after another: the race checker's state is not shared between host threads.
    const std::vector<ArgRange> ranges = arg_ranges(k, pack);
    BlockRun* br_ptr = nullptr;
    RaceChecker global(
        [&](const void* a) {
          const auto* p = static_cast<const std::byte*>(a);
          for (const ArgRange& r : ranges)
            if (p >= r.lo && p < r.hi) return "element " + std::to_string((p - r.lo) / r.element_bytes) + " of " + r.name;
          return std::string("global memory");
        },
        [&](const Accessor& a) { return br_ptr->thread_name(a); });
    BlockRun br(k, pack, dims, &global);
    br_ptr = &br;
    for (std::uint64_t b = 0; b < blocks; ++b) br.run_block(b);
    return;
  }
  std::atomic<std::uint64_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::uint64_t failed_block = ~std::uint64_t{0};
  std::exception_ptr failed;
  const std::function<void()> body = [&] {
    try {
      BlockRun br(k, pack, dims, nullptr);
      for (std::uint64_t b; !stop.load(std::memory_order_relaxed) && (b = next.fetch_add(1)) < blocks;) {
        try {
          br.run_block(b);
        } catch (...) {
          std::lock_guard<std::mutex> lock(mu);
          if (b < failed_block) {
            failed_block = b;
            failed = std::current_exception();
          }
          stop = true;
        }
      }
    } catch (...) {  // setting up the block (stacks): report it like a block's error
      std::lock_guard<std::mutex> lock(mu);
      if (!failed) failed = std::current_exception();
      stop = true;
    }
  };
  // At most 16 host threads run blocks at once (each holds a stack per GPU thread of its block).
  auto& pool = backend::cpu::ThreadPool::instance();
  const std::int64_t helpers =
      std::min<std::int64_t>({pool.workers(), static_cast<std::int64_t>(blocks) - 1, std::int64_t{15}});
  pool.run(body, helpers);
  if (failed) std::rethrow_exception(failed);
}

}  // namespace ctile::simt::cpu

namespace ctile::simt::detail {

// The callers (sync_threads, the warp wrappers) are always inlined, so the return address names the
// call site in the kernel body.
void barrier(ThreadState& t, const std::source_location& loc) {
  cpu::run_of(t).barrier(t, loc, __builtin_return_address(0));
}

std::uint64_t warp_collective(ThreadState& t, WarpOp op, std::uint64_t value, std::uint32_t arg, std::uint32_t width,
                              const std::source_location& loc) {
  return cpu::run_of(t).warp(t, op, value, arg, width, loc, __builtin_return_address(0));
}

void record_access(ThreadState& t, Space space, const void* addr, std::uint32_t, AccessKind kind) {
  cpu::run_of(t).record(t, space, addr, kind);
}

void out_of_bounds(const char* what, std::int64_t index, std::int64_t size) {
  std::string where;
  if (const ThreadState* t = tls_thread)
    where = " in thread " + cpu::coord_str(t->thread) + " of block " + cpu::coord_str(t->block);
  throw UserError(std::string(what) + ": index " + std::to_string(index) + " is outside [0, " + std::to_string(size) +
                  ")" + where + " (on a GPU this unchecked access would touch memory it does not own)");
}

}  // namespace ctile::simt::detail
