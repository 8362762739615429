// A pool of small fixed-size blocks for the objects every launch makes and drops (event states,
// future states): blocks come back to a free list of the thread that frees them, and move between
// threads in batches through a shared list, so a launch in steady state takes nothing from the
// heap and no lock. (An implementation detail of the runtime, in namespace detail.)
#pragma once

#include <cstddef>
#include <memory>
#include <utility>

namespace ctile::detail {

// `bytes` rounded up to a size class (64 .. 1024 bytes, 64-byte aligned); larger requests go to
// operator new. pool_free must get the same `bytes`.
[[nodiscard]] void* pool_allocate(std::size_t bytes);
void pool_free(void* p, std::size_t bytes) noexcept;

template <class T>
struct PoolAllocator {
  using value_type = T;
  PoolAllocator() = default;
  template <class U>
  PoolAllocator(const PoolAllocator<U>&) noexcept {}  // NOLINT(google-explicit-constructor): allocator rebinding
  [[nodiscard]] T* allocate(std::size_t n) { return static_cast<T*>(pool_allocate(n * sizeof(T))); }
  void deallocate(T* p, std::size_t n) noexcept { pool_free(p, n * sizeof(T)); }
  template <class U>
  friend bool operator==(const PoolAllocator&, const PoolAllocator<U>&) noexcept {
    return true;
  }
};

// std::make_shared through the pool.
template <class T, class... A>
[[nodiscard]] std::shared_ptr<T> make_pooled(A&&... a) {
  return std::allocate_shared<T>(PoolAllocator<T>(), std::forward<A>(a)...);
}

}  // namespace ctile::detail
