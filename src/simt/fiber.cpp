#include "fiber.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "ctile/core/error.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define CTILE_SIMT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CTILE_SIMT_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define CTILE_SIMT_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CTILE_SIMT_TSAN 1
#endif
#endif

#ifdef CTILE_SIMT_ASAN
extern "C" {
void __sanitizer_start_switch_fiber(void** fake_stack_save, const void* bottom, std::size_t size);
void __sanitizer_finish_switch_fiber(void* fake_stack_save, const void** bottom_old, std::size_t* size_old);
void __asan_unpoison_memory_region(void const volatile* addr, std::size_t size);
}
#endif
#ifdef CTILE_SIMT_TSAN
extern "C" {
void* __tsan_get_current_fiber();
void* __tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void* fiber);
void __tsan_switch_to_fiber(void* fiber, unsigned flags);
}
#endif

#if defined(__x86_64__) && defined(__linux__)
#define CTILE_SIMT_ASM_SWITCH 1
// ctile_simt_switch(void** save_sp, void* new_sp): pushes the callee-saved registers and the
// floating-point control words on the current stack, stores the stack pointer in *save_sp, loads
// new_sp and pops the same from there. A new fiber's stack is laid out so that the final `ret`
// enters ctile_simt_trampoline with r12 = arg and r13 = entry.
asm(R"(
  .text
  .globl ctile_simt_switch
  .hidden ctile_simt_switch
  .type ctile_simt_switch,@function
  .p2align 4
ctile_simt_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size ctile_simt_switch, .-ctile_simt_switch

  .globl ctile_simt_trampoline
  .hidden ctile_simt_trampoline
  .type ctile_simt_trampoline,@function
  .p2align 4
ctile_simt_trampoline:
  movq %r12, %rdi
  callq *%r13
  ud2
  .size ctile_simt_trampoline, .-ctile_simt_trampoline
)");
extern "C" void ctile_simt_switch(void** save_sp, void* new_sp);
extern "C" void ctile_simt_trampoline();
#endif

namespace ctile::simt::cpu {

namespace {

std::size_t page_size() {
  static const std::size_t p = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return p;
}

std::size_t stack_bytes() {
  static const std::size_t b = [] {
    std::size_t kb = 256;
    if (const char* v = std::getenv("CTILE_SIMT_STACK_KB"); v && *v) {
      char* end = nullptr;
      const unsigned long n = std::strtoul(v, &end, 10);
      if (!end || *end || n < 16 || n > (1u << 20))
        throw UserError(std::string("CTILE_SIMT_STACK_KB=") + v + ": expected a number of KiB between 16 and 1048576");
      kb = n;
    }
#ifdef CTILE_SIMT_ASAN
    kb *= 4;  // instrumented frames are larger
#endif
    return kb * 1024;
  }();
  return b;
}

// ucontext entry points take int arguments: the pointers travel in two halves.
struct UcArgs {
  void (*entry)(void*);
  void* arg;
};
void uc_entry(unsigned lo, unsigned hi) {
  const auto p = (static_cast<std::uintptr_t>(hi) << 32) | lo;
  const UcArgs a = *reinterpret_cast<UcArgs*>(p);
  a.entry(a.arg);
}

}  // namespace

Stack::Stack(std::size_t bytes) {
  const std::size_t ps = page_size();
  size_ = (bytes + ps - 1) / ps * ps;
  map_bytes_ = size_ + ps;
  map_ = ::mmap(nullptr, map_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (map_ == MAP_FAILED) {
    map_ = nullptr;
    throw UserError("the CPU backend cannot map a " + std::to_string(map_bytes_) +
                    "-byte stack for a SIMT thread (out of memory; lower CTILE_SIMT_STACK_KB?)");
  }
  ::mprotect(map_, ps, PROT_NONE);  // the guard page
  usable_ = static_cast<char*>(map_) + ps;
}

Stack::~Stack() {
  if (map_) ::munmap(map_, map_bytes_);
}

bool using_ucontext() {
#ifdef CTILE_SIMT_ASM_SWITCH
  static const bool uc = [] {
    const char* v = std::getenv("CTILE_SIMT_FIBERS");
    return v && std::strcmp(v, "ucontext") == 0;
  }();
  return uc;
#else
  return true;
#endif
}

void prepare(Context& c, Stack& stack, void (*entry)(void*), void* arg) {
  c.stack_bottom = stack.bottom();
  c.stack_size = stack.size();
  c.asan_fake = nullptr;
#ifdef CTILE_SIMT_ASAN
  // A reused stack still carries the shadow of the frames of the fiber that ran on it last.
  __asan_unpoison_memory_region(stack.bottom(), stack.size());
#endif
#ifdef CTILE_SIMT_TSAN
  c.tsan_fiber = __tsan_create_fiber(0);
  c.tsan_owned = true;
#endif
#ifdef CTILE_SIMT_ASM_SWITCH
  if (!using_ucontext()) {
    auto top = reinterpret_cast<std::uintptr_t>(stack.bottom()) + stack.size();
    top &= ~static_cast<std::uintptr_t>(15);
    auto* f = reinterpret_cast<std::uint64_t*>(top - 8 * 8);
    std::uint32_t mxcsr = 0;
    std::uint16_t fpcw = 0;
    asm volatile("stmxcsr %0" : "=m"(mxcsr));
    asm volatile("fnstcw %0" : "=m"(fpcw));
    f[0] = mxcsr | (static_cast<std::uint64_t>(fpcw) << 32);
    f[1] = 0;                                             // r15
    f[2] = 0;                                             // r14
    f[3] = reinterpret_cast<std::uint64_t>(entry);        // r13
    f[4] = reinterpret_cast<std::uint64_t>(arg);          // r12
    f[5] = 0;                                             // rbx
    f[6] = 0;                                             // rbp
    f[7] = reinterpret_cast<std::uint64_t>(&ctile_simt_trampoline);  // ret
    c.sp = f;
    return;
  }
#endif
  // ucontext: the UcArgs live at the top of the fiber's own stack.
  auto top = reinterpret_cast<std::uintptr_t>(stack.bottom()) + stack.size() - sizeof(UcArgs);
  top &= ~static_cast<std::uintptr_t>(15);
  auto* a = reinterpret_cast<UcArgs*>(top);
  a->entry = entry;
  a->arg = arg;
  if (::getcontext(&c.uc) != 0) throw InternalError("getcontext failed");
  c.uc.uc_stack.ss_sp = stack.bottom();
  c.uc.uc_stack.ss_size = top - reinterpret_cast<std::uintptr_t>(stack.bottom());
  c.uc.uc_link = nullptr;
  const auto p = reinterpret_cast<std::uintptr_t>(a);
  ::makecontext(&c.uc, reinterpret_cast<void (*)()>(&uc_entry), 2, static_cast<unsigned>(p & 0xffffffffu),
                static_cast<unsigned>(p >> 32));
}

void switch_to(Context& from, Context& to, bool exiting) {
#ifdef CTILE_SIMT_TSAN
  if (!from.tsan_fiber) from.tsan_fiber = __tsan_get_current_fiber();
  __tsan_switch_to_fiber(to.tsan_fiber, 0);
#endif
#ifdef CTILE_SIMT_ASAN
  __sanitizer_start_switch_fiber(exiting ? nullptr : &from.asan_fake, to.stack_bottom, to.stack_size);
#else
  (void)exiting;
#endif
#ifdef CTILE_SIMT_ASM_SWITCH
  if (!using_ucontext())
    ctile_simt_switch(&from.sp, to.sp);
  else
#endif
    ::swapcontext(&from.uc, &to.uc);
#ifdef CTILE_SIMT_ASAN
  __sanitizer_finish_switch_fiber(from.asan_fake, nullptr, nullptr);
#endif
}

void on_fiber_start(Context& self, Context& from) {
  (void)self;
  (void)from;
#ifdef CTILE_SIMT_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &from.stack_bottom, &from.stack_size);
#endif
}

void destroy(Context& c) {
#ifdef CTILE_SIMT_TSAN
  if (c.tsan_owned && c.tsan_fiber) __tsan_destroy_fiber(c.tsan_fiber);
#endif
  c.tsan_fiber = nullptr;
  c.tsan_owned = false;
}

StackPool& StackPool::global() {
  static auto* pool = new StackPool();  // never destroyed: blocks may run during static destruction
  return *pool;
}

std::vector<std::unique_ptr<Stack>> StackPool::take(std::size_t n) {
  std::vector<std::unique_ptr<Stack>> out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    while (out.size() < n && !free_.empty()) {
      out.push_back(std::move(free_.back()));
      free_.pop_back();
    }
  }
  while (out.size() < n) out.push_back(std::make_unique<Stack>(stack_bytes()));
  return out;
}

void StackPool::give_back(std::vector<std::unique_ptr<Stack>> stacks) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& s : stacks) free_.push_back(std::move(s));
}

}  // namespace ctile::simt::cpu
