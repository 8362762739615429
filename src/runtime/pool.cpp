// The block pool of include/ctile/runtime/pool.hpp.
#include "ctile/runtime/pool.hpp"

#include <array>
#include <mutex>
#include <new>

namespace ctile::detail {
namespace {

constexpr std::size_t kClasses = 5;  // 64, 128, 256, 512, 1024 bytes
constexpr std::size_t kAlign = 64;
constexpr int kLocalMax = 128;  // blocks a thread keeps per class before it hands half back
constexpr int kBatch = 64;      // blocks moved between a thread and the shared list at once

struct Block {
  Block* next;
};

int class_of(std::size_t bytes) {
  std::size_t size = 64;
  for (int c = 0; c < static_cast<int>(kClasses); ++c, size <<= 1)
    if (bytes <= size) return c;
  return -1;
}
std::size_t class_bytes(int c) { return std::size_t{64} << c; }

// Blocks handed back by threads (never freed: blocks live until exit, reachable from here).
struct Shared {
  std::mutex mu;
  std::array<Block*, kClasses> head{};
  std::array<int, kClasses> count{};
};
Shared& shared() {
  static auto* s = new Shared();
  return *s;
}

// Set once this thread's Local is destroyed (at thread exit): blocks freed later by other
// thread-exit code go straight to the shared list.
thread_local bool t_local_gone = false;

void give_one(int c, Block* b) {
  Shared& s = shared();
  std::lock_guard lk(s.mu);
  b->next = s.head[c];
  s.head[c] = b;
  ++s.count[c];
}

struct Local {
  std::array<Block*, kClasses> head{};
  std::array<int, kClasses> count{};
  ~Local() {
    for (int c = 0; c < static_cast<int>(kClasses); ++c) give(c, count[c]);
    t_local_gone = true;
  }
  // Moves `n` blocks of class `c` to the shared list.
  void give(int c, int n) {
    if (n <= 0) return;
    Block* first = head[c];
    Block* last = first;
    for (int i = 1; i < n; ++i) last = last->next;
    head[c] = last->next;
    count[c] -= n;
    Shared& s = shared();
    std::lock_guard lk(s.mu);
    last->next = s.head[c];
    s.head[c] = first;
    s.count[c] += n;
  }
  // Takes up to kBatch blocks of class `c` from the shared list.
  void take(int c) {
    Shared& s = shared();
    std::lock_guard lk(s.mu);
    for (int i = 0; i < kBatch && s.head[c]; ++i) {
      Block* b = s.head[c];
      s.head[c] = b->next;
      --s.count[c];
      b->next = head[c];
      head[c] = b;
      ++count[c];
    }
  }
};
thread_local Local t_local;

}  // namespace

void* pool_allocate(std::size_t bytes) {
  const int c = class_of(bytes);
  if (c < 0) return ::operator new(bytes, std::align_val_t{kAlign});
  if (t_local_gone) return ::operator new(class_bytes(c), std::align_val_t{kAlign});
  Local& l = t_local;
  if (!l.head[c]) l.take(c);
  if (Block* b = l.head[c]) {
    l.head[c] = b->next;
    --l.count[c];
    return b;
  }
  return ::operator new(class_bytes(c), std::align_val_t{kAlign});
}

void pool_free(void* p, std::size_t bytes) noexcept {
  if (!p) return;
  const int c = class_of(bytes);
  if (c < 0) {
    ::operator delete(p, std::align_val_t{kAlign});
    return;
  }
  auto* b = static_cast<Block*>(p);
  if (t_local_gone) {
    try {
      give_one(c, b);
    } catch (...) {
    }
    return;
  }
  Local& l = t_local;
  b->next = l.head[c];
  l.head[c] = b;
  if (++l.count[c] > kLocalMax) {
    try {
      l.give(c, kBatch);
    } catch (...) {  // the shared list's lock failed: keep them here
    }
  }
}

}  // namespace ctile::detail
