// Fibers for the CPU backend of SIMT kernels: each GPU thread of a block runs on its own stack, and
// switches back to the block's scheduler when it waits (a barrier, a warp collective). Fibers
// never move between host threads. Private to src/simt.
//
// On x86-64 a switch saves the callee-saved registers and swaps stack pointers (a few
// nanoseconds; ucontext's swapcontext makes a system call per switch, ~0.5 us). Elsewhere, or with
// CTILE_SIMT_FIBERS=ucontext, ucontext is used. AddressSanitizer and ThreadSanitizer are told about
// every switch.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include <ucontext.h>

namespace ctile::simt::cpu {

// A stack with a guard page below it (an overflow faults instead of corrupting memory).
class Stack {
 public:
  explicit Stack(std::size_t bytes);
  ~Stack();
  Stack(const Stack&) = delete;
  Stack& operator=(const Stack&) = delete;
  [[nodiscard]] void* bottom() const { return usable_; }  // lowest usable byte
  [[nodiscard]] std::size_t size() const { return size_; }

 private:
  void* map_ = nullptr;
  std::size_t map_bytes_ = 0;
  void* usable_ = nullptr;
  std::size_t size_ = 0;
};

// An execution context: a fiber, or the host thread's own stack (the scheduler's).
struct Context {
  void* sp = nullptr;             // saved stack pointer (assembly switch)
  ucontext_t uc{};                // (ucontext switch)
  const void* stack_bottom = nullptr;  // for the sanitizers
  std::size_t stack_size = 0;
  void* asan_fake = nullptr;
  void* tsan_fiber = nullptr;
  bool tsan_owned = false;
};

// True when fibers use ucontext (CTILE_SIMT_FIBERS=ucontext, or no assembly switch here).
bool using_ucontext();

// Makes `c` start entry(arg) on `stack` at its first switch_to. entry must never return: it
// ends by switching away with `exiting` set.
void prepare(Context& c, Stack& stack, void (*entry)(void*), void* arg);
// Switches from `from` (saving it) to `to`. `exiting`: `from` never runs again.
void switch_to(Context& from, Context& to, bool exiting = false);
// Called first thing in a new fiber (the sanitizers learn where it came from).
void on_fiber_start(Context& self, Context& from);
// Releases what the sanitizers hold for a fiber context.
void destroy(Context& c);

// Stacks of the configured size (CTILE_SIMT_STACK_KB, default 256), shared by every host thread
// that runs blocks: a block takes one per thread and gives them back when the launch is done, so
// the stacks alive are bounded by the blocks running at once (each stack is two memory mappings,
// and a process may have only so many).
class StackPool {
 public:
  static StackPool& global();
  std::vector<std::unique_ptr<Stack>> take(std::size_t n);
  void give_back(std::vector<std::unique_ptr<Stack>> stacks);

 private:
  std::mutex mu_;
  std::vector<std::unique_ptr<Stack>> free_;
};

}  // namespace ctile::simt::cpu
