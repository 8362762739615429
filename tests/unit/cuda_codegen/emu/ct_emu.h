// Host emulation of the CUDA built-ins used by generated kernels and the device library (tests
// only). A generated kernel compiled with a host compiler after this prelude runs one emulated CUDA
// block as `threads` std::threads: __syncthreads is a barrier, warp shuffles exchange through a
// per-warp buffer between two warp barriers, dynamic shared memory is one buffer per block, atomics
// are GCC __atomic builtins. The device library takes its portable (non-PTX) paths here.
#pragma once

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <barrier>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <memory>
#include <thread>
#include <vector>

#define CTILE_DEVICE_EMULATION 1
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __grid_constant__
#define __align__(n) alignas(n)

namespace ct_emu {

struct Dim3 {
  unsigned x = 0, y = 0, z = 0;
};

// A named barrier as the hardware counts it: a phase completes when `expected` threads have
// arrived (bar.sync waits for that, bar.arrive does not), and the count starts again.
struct NamedBarrier {
  explicit NamedBarrier(int n) : expected(n) {}
  std::mutex mu;
  std::condition_variable cv;
  int expected, arrived = 0;
  unsigned long long phase = 0;
  // Arrives; returns the phase to wait for (done once `phase` has moved past it).
  unsigned long long arrive() {
    std::lock_guard<std::mutex> g(mu);
    const unsigned long long p = phase;
    if (++arrived == expected) {
      arrived = 0;
      ++phase;
      cv.notify_all();
    }
    return p;
  }
  void wait(unsigned long long p) {
    std::unique_lock<std::mutex> g(mu);
    cv.wait(g, [&] { return phase != p; });
  }
};

struct Team {
  int threads;
  std::barrier<> block;
  std::vector<std::unique_ptr<std::barrier<>>> warps;
  // Named barriers (bar.sync id, n): one per id and participant count, made on first use.
  std::mutex named_mu;
  std::map<std::pair<int, int>, std::unique_ptr<NamedBarrier>> named;
  std::vector<unsigned long long> xchg;
  std::vector<float> wg_frag;  // warpgroup_gather's exchange (threads x 128 floats), made on first use
  std::vector<unsigned char> smem_buf;
  unsigned char* smem;
  Team(int n, size_t smem_bytes) : threads(n), block(n), xchg(static_cast<size_t>(n)), smem_buf(smem_bytes + 32) {
    for (int w = 0; w < n / 32; ++w) warps.push_back(std::make_unique<std::barrier<>>(32));
    smem = smem_buf.data() + ((16 - reinterpret_cast<uintptr_t>(smem_buf.data()) % 16) % 16);
    memset(smem_buf.data(), 0xcd, smem_buf.size());  // garbage, like the hardware
  }
};

inline thread_local Dim3 t_thread, t_block, t_grid;
inline thread_local Team* t_team = nullptr;

inline unsigned char* dynamic_smem() { return t_team->smem; }

// bar.sync id, n: the n threads that reach barrier `id` (all of one tile block's warps).
inline NamedBarrier& named_barrier_of(int id, int n) {
  Team& tm = *t_team;
  std::lock_guard<std::mutex> g(tm.named_mu);
  // Tile blocks of one CTA use different ids: key by id and count.
  auto& slot = tm.named[{id, n}];
  if (!slot) slot = std::make_unique<NamedBarrier>(n);
  return *slot;
}
inline void named_barrier(int id, int n) {
  NamedBarrier& b = named_barrier_of(id, n);
  b.wait(b.arrive());
}
// bar.arrive id, n: counts towards the barrier's n arrivals without waiting.
inline void named_barrier_arrive(int id, int n) { (void)named_barrier_of(id, n).arrive(); }
// At the end of an emulated CTA: a named barrier with arrivals of an unfinished phase is a
// mismatch of the generated code (more bar.arrive than bar.sync partners); the hardware would
// drop them with the CTA, the emulator, which reuses its barriers for the next CTA, says so.
inline void check_named_barriers_idle() {
  Team& tm = *t_team;
  std::lock_guard<std::mutex> g(tm.named_mu);
  for (auto& [key, b] : tm.named) {
    std::lock_guard<std::mutex> gb(b->mu);
    if (b->arrived != 0) {
      fprintf(stderr, "ct_emu: named barrier %d (%d threads) ends the CTA with %d of its arrivals pending\n", key.first, key.second,
              b->arrived);
      fflush(stderr);
      abort();
    }
  }
}
inline void warp_barrier();

// wgmma with A in registers (device/wgmma.h mma_wg_issue_rs): the 128 threads of the calling
// thread's warpgroup publish their n values and each reads all of them (thread q's at all + q n).
inline void warpgroup_gather(const float* mine, int n, float* all) {
  Team& tm = *t_team;
  const int t = static_cast<int>(t_thread.x), g = t / 128;
  constexpr int kMax = 128;
  if (n > kMax) abort();
  {
    std::lock_guard<std::mutex> lk(tm.named_mu);
    if (tm.wg_frag.empty()) tm.wg_frag.resize(static_cast<size_t>(tm.threads) * kMax);
  }
  float* buf = tm.wg_frag.data();
  memcpy(buf + static_cast<size_t>(t) * kMax, mine, static_cast<size_t>(n) * sizeof(float));
  named_barrier(1000 + g, 128);  // ids above the hardware's 16: the emulator's own
  for (int q = 0; q < 128; ++q)
    memcpy(all + q * n, buf + static_cast<size_t>(g * 128 + q) * kMax, static_cast<size_t>(n) * sizeof(float));
  named_barrier(1000 + g, 128);
}

// A misaligned access faults on the GPU: make it fail here too.
inline void check_aligned(const void* p, int n, int line) {
  if (reinterpret_cast<uintptr_t>(p) % static_cast<uintptr_t>(n) != 0) {
    fprintf(stderr, "ct_emu: misaligned %d-byte access at %p (device library line %d)\n", n, p, line);
    fflush(stderr);
    abort();
  }
}

// Runs `grid_x` emulated CUDA blocks one after another, each with `threads` threads.
inline void launch(int threads, long long grid_x, size_t smem_bytes, const std::function<void()>& kernel) {
  Team team(threads, smem_bytes);
  std::vector<std::thread> th;
  for (int t = 0; t < threads; ++t)
    th.emplace_back([&, t] {
      t_team = &team;
      t_thread.x = static_cast<unsigned>(t);
      t_grid.x = static_cast<unsigned>(grid_x);
      for (long long b = 0; b < grid_x; ++b) {
        t_block.x = static_cast<unsigned>(b);
        kernel();
        team.block.arrive_and_wait();
        if (t == 0) check_named_barriers_idle();
        team.block.arrive_and_wait();
      }
    });
  for (auto& x : th) x.join();
}

template <class T>
T shuffle(T v, int src_lane) {
  Team& tm = *t_team;
  const int t = static_cast<int>(t_thread.x), w = t / 32;
  unsigned long long bits = 0;
  static_assert(sizeof(T) <= 8);
  memcpy(&bits, &v, sizeof(T));
  tm.xchg[static_cast<size_t>(t)] = bits;
  tm.warps[static_cast<size_t>(w)]->arrive_and_wait();
  const unsigned long long o = tm.xchg[static_cast<size_t>(w * 32 + src_lane)];
  tm.warps[static_cast<size_t>(w)]->arrive_and_wait();
  T r;
  memcpy(&r, &o, sizeof(T));
  return r;
}

inline void warp_barrier() {
  Team& tm = *t_team;
  tm.warps[static_cast<size_t>(t_thread.x / 32)]->arrive_and_wait();
}

template <class T, class F>
T cas_loop(T* p, F f) {
  T cur = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (!__atomic_compare_exchange_n(p, &cur, f(cur), false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  return cur;
}

template <class T, class U>
T float_rmw(T* p, T v, T (*f)(T, T)) {
  U* q = reinterpret_cast<U*>(p);
  U cur = __atomic_load_n(q, __ATOMIC_RELAXED);
  for (;;) {
    T c;
    memcpy(&c, &cur, sizeof(T));
    const T n = f(c, v);
    U nb;
    memcpy(&nb, &n, sizeof(T));
    if (__atomic_compare_exchange_n(q, &cur, nb, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return c;
  }
}

// cp.async: each thread's copies are held back and land only when a cp.async.wait_group lets
// them (every group but the newest n), the latest the hardware may deliver them, so a wait that
// allows too many pending groups reads stale shared memory here (device/async.h).
struct AsyncCopy {
  void* dst;
  unsigned char bytes[16];
  int n;
};
inline thread_local std::vector<AsyncCopy> t_async_open;
inline thread_local std::vector<std::vector<AsyncCopy>> t_async_groups;
inline void cp_async(void* dst, const void* src, int n) {
  AsyncCopy c{dst, {}, n};
  memcpy(c.bytes, src, static_cast<size_t>(n));
  t_async_open.push_back(c);
}
inline void cp_async_commit() {
  t_async_groups.push_back(std::move(t_async_open));
  t_async_open.clear();
}
inline void cp_async_wait(int pending) {
  while (static_cast<int>(t_async_groups.size()) > pending) {
    for (const AsyncCopy& c : t_async_groups.front()) memcpy(c.dst, c.bytes, static_cast<size_t>(c.n));
    t_async_groups.erase(t_async_groups.begin());
  }
}

// wgmma.mma_async: each product runs only when a wait lets its group finish, reading shared memory
// then (as the hardware may read it any time before), so an operand slot overwritten too early, or
// an accumulator read before its wait, gives a wrong result.
inline thread_local std::vector<std::function<void()>> t_wgmma_open;
inline thread_local std::vector<std::vector<std::function<void()>>> t_wgmma_groups;
inline void wgmma_defer(std::function<void()> f) { t_wgmma_open.push_back(std::move(f)); }
inline void wgmma_commit() {
  t_wgmma_groups.push_back(std::move(t_wgmma_open));
  t_wgmma_open.clear();
}
inline void wgmma_wait(int pending) {
  // Every thread but the first of each warpgroup lags a little here, so the first thread (which
  // issues the TMA copies) runs ahead as far as the kernel lets it: a copy into a slot that a
  // lagging thread's product still reads lands on shared memory before that product runs.
  if (t_thread.x % 128 != 0 && !t_wgmma_groups.empty()) std::this_thread::sleep_for(std::chrono::microseconds(20));
  while (static_cast<int>(t_wgmma_groups.size()) > pending) {
    for (auto& f : t_wgmma_groups.front()) f();
    t_wgmma_groups.erase(t_wgmma_groups.begin());
  }
}

// TMA and mbarriers (device/tma.h). A barrier's state lives in a table keyed by its address: the
// arrivals still expected, the bytes announced and those copied, and the copies themselves, which
// land only when a waiter finds the phase complete (the latest the hardware may deliver them).
// Issuing a copy scribbles over its destination at once (the earliest the hardware may write), so
// a slot overwritten while a product still reads it gives a wrong result. The tensor maps are the
// emulator's own encoding (EmuTensorMap, written by tests/unit/cuda_codegen/emulator.cpp).
struct EmuTensorMap {
  const unsigned char* data;
  long long cols, rows, row_bytes;
  int box_cols, box_rows, swizzle, elem_bytes;
  int rank;                  // 2 to 5: the leading axes (extent 1 in a box) after rows and columns
  long long lead[3], lead_bytes[3];  // their extents and strides, innermost first
};
static_assert(sizeof(EmuTensorMap) <= 128);
struct MBarrier {
  unsigned count = 1, arrivals = 1, phase = 0;
  long long tx = 0, copied = 0;
  std::vector<std::pair<unsigned char*, std::vector<unsigned char>>> copies;
};
inline std::mutex g_mbar_mu;
inline std::map<const void*, MBarrier> g_mbars;
inline void mbar_init(void* bar, unsigned count) {
  std::lock_guard<std::mutex> g(g_mbar_mu);
  MBarrier b;
  b.count = b.arrivals = count;
  g_mbars[bar] = b;
}
inline MBarrier& mbar_at(const void* bar) {
  auto it = g_mbars.find(bar);
  if (it == g_mbars.end()) {
    fprintf(stderr, "ct_emu: mbarrier %p used before mbarrier.init\n", bar);
    abort();
  }
  return it->second;
}
inline void mbar_arrive_expect_tx(void* bar, unsigned bytes) {
  std::lock_guard<std::mutex> g(g_mbar_mu);
  MBarrier& b = mbar_at(bar);
  if (b.arrivals == 0) {
    fprintf(stderr, "ct_emu: mbarrier %p: more arrivals than its count in one phase\n", bar);
    abort();
  }
  --b.arrivals;
  b.tx += bytes;
}
inline void mbar_arrive(void* bar) { mbar_arrive_expect_tx(bar, 0); }
inline bool mbar_try_wait(void* bar, unsigned parity) {
  {
    std::lock_guard<std::mutex> g(g_mbar_mu);
    MBarrier& b = mbar_at(bar);
    if (b.arrivals == 0 && b.copied == b.tx) {  // the phase completes: its copies land
      for (auto& c : b.copies) memcpy(c.first, c.second.data(), c.second.size());
      b.copies.clear();
      b.phase ^= 1u;
      b.arrivals = b.count;
      b.tx = b.copied = 0;
    }
    if ((b.phase & 1u) != (parity & 1u)) return true;
  }
  std::this_thread::yield();
  return false;
}
// A box at (column c0, row c1, leading coordinates lc[0 .. rank - 3], innermost first).
inline void tma_load_nd(void* dst, const void* map_p, int c0, int c1, const int* lc, void* bar) {
  const EmuTensorMap& m = *static_cast<const EmuTensorMap*>(map_p);
  const unsigned char* base = m.data;
  bool lead_in = true;
  for (int i = 0; i + 2 < m.rank; ++i) {
    lead_in = lead_in && lc[i] >= 0 && lc[i] < m.lead[i];
    if (lead_in) base += lc[i] * m.lead_bytes[i];
  }
  const long long row_bytes = static_cast<long long>(m.box_cols) * m.elem_bytes;
  const uintptr_t off = static_cast<uintptr_t>(static_cast<unsigned char*>(dst) - dynamic_smem());
  if (off % static_cast<uintptr_t>(8 * m.swizzle) != 0 || row_bytes != m.swizzle) {
    fprintf(stderr, "ct_emu: TMA box into shared offset %zu: not aligned to %d bytes or rows of %lld bytes for a %d-byte swizzle\n",
            static_cast<size_t>(off), 8 * m.swizzle, row_bytes, m.swizzle);
    abort();
  }
  std::vector<unsigned char> box(static_cast<size_t>(row_bytes * m.box_rows), 0);
  const unsigned mask = static_cast<unsigned>(m.swizzle / 16 - 1);
  for (int r = 0; r < m.box_rows; ++r)
    for (int c = 0; c < m.box_cols; ++c) {
      const long long gr = static_cast<long long>(c1) + r, gc = static_cast<long long>(c0) + c;
      const unsigned o = static_cast<unsigned>(r * row_bytes + c * m.elem_bytes);
      const unsigned so = o ^ (((o >> 7) & mask) << 4);
      if (lead_in && gr >= 0 && gr < m.rows && gc >= 0 && gc < m.cols)
        memcpy(box.data() + so, base + gr * m.row_bytes + gc * m.elem_bytes, static_cast<size_t>(m.elem_bytes));
    }
  memset(dst, 0xcd, box.size());  // the hardware may write any time from now
  std::lock_guard<std::mutex> g(g_mbar_mu);
  MBarrier& b = mbar_at(bar);
  b.copied += static_cast<long long>(box.size());
  b.copies.emplace_back(static_cast<unsigned char*>(dst), std::move(box));
}
inline void tma_load_2d(void* dst, const void* map_p, int c0, int c1, void* bar) { tma_load_nd(dst, map_p, c0, c1, nullptr, bar); }

}  // namespace ct_emu

#define threadIdx (::ct_emu::t_thread)
#define blockIdx (::ct_emu::t_block)
#define gridDim (::ct_emu::t_grid)

inline void __syncthreads() { ct_emu::t_team->block.arrive_and_wait(); }
inline void __trap() {
  fflush(stdout);
  abort();
}

inline float __uint_as_float(unsigned u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
inline unsigned __float_as_uint(float f) {
  unsigned u;
  memcpy(&u, &f, 4);
  return u;
}
inline double __longlong_as_double(long long u) {
  double f;
  memcpy(&f, &u, 8);
  return f;
}
inline long long __double_as_longlong(double f) {
  long long u;
  memcpy(&u, &f, 8);
  return u;
}
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x)); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned>(x)); }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }

template <class T>
T __shfl_xor_sync(unsigned, T v, int m) {
  return ct_emu::shuffle(v, static_cast<int>(ct_emu::t_thread.x % 32) ^ m);
}
template <class T>
T __shfl_sync(unsigned, T v, int src) {
  return ct_emu::shuffle(v, src);
}

inline int atomicAdd(int* p, int v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
inline unsigned atomicAdd(unsigned* p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
inline unsigned long long atomicAdd(unsigned long long* p, unsigned long long v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
inline float atomicAdd(float* p, float v) {
  return ct_emu::float_rmw<float, unsigned>(p, v, [](float a, float b) { return a + b; });
}
inline double atomicAdd(double* p, double v) {
  return ct_emu::float_rmw<double, unsigned long long>(p, v, [](double a, double b) { return a + b; });
}
#define CT_EMU_MINMAX(T)                                                                          \
  inline T atomicMax(T* p, T v) { return ct_emu::cas_loop(p, [v](T c) { return v > c ? v : c; }); } \
  inline T atomicMin(T* p, T v) { return ct_emu::cas_loop(p, [v](T c) { return v < c ? v : c; }); }
CT_EMU_MINMAX(int)
CT_EMU_MINMAX(unsigned)
CT_EMU_MINMAX(long long)
CT_EMU_MINMAX(unsigned long long)
#undef CT_EMU_MINMAX
inline int atomicExch(int* p, int v) { return __atomic_exchange_n(p, v, __ATOMIC_RELAXED); }
inline unsigned atomicExch(unsigned* p, unsigned v) { return __atomic_exchange_n(p, v, __ATOMIC_RELAXED); }
inline unsigned long long atomicExch(unsigned long long* p, unsigned long long v) {
  return __atomic_exchange_n(p, v, __ATOMIC_RELAXED);
}
inline float atomicExch(float* p, float v) {
  return __uint_as_float(__atomic_exchange_n(reinterpret_cast<unsigned*>(p), __float_as_uint(v), __ATOMIC_RELAXED));
}
template <class T>
T ct_emu_cas(T* p, T expected, T desired) {
  __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  return expected;
}
inline int atomicCAS(int* p, int e, int d) { return ct_emu_cas(p, e, d); }
inline unsigned atomicCAS(unsigned* p, unsigned e, unsigned d) { return ct_emu_cas(p, e, d); }
inline unsigned long long atomicCAS(unsigned long long* p, unsigned long long e, unsigned long long d) {
  return ct_emu_cas(p, e, d);
}
