// SmallVec<T, N>: a vector that keeps up to N elements inline and moves to the heap only beyond
// that. The launch path collects arguments, dependencies and keep-alive references in these, so a
// launch with a handful of tensors allocates nothing for them. (An implementation detail of the runtime and platforms, in namespace detail.)
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace ctile::detail {

template <class T, std::size_t N>
class SmallVec {
 public:
  SmallVec() = default;
  SmallVec(const SmallVec& o) { append(o.begin(), o.end()); }
  SmallVec(SmallVec&& o) noexcept { take(std::move(o)); }
  SmallVec& operator=(const SmallVec& o) {
    if (this != &o) {
      clear();
      append(o.begin(), o.end());
    }
    return *this;
  }
  SmallVec& operator=(SmallVec&& o) noexcept {
    if (this != &o) {
      clear();
      release_heap();
      take(std::move(o));
    }
    return *this;
  }
  ~SmallVec() {
    clear();
    release_heap();
  }

  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] bool empty() const { return size_ == 0; }
  [[nodiscard]] T* data() { return ptr(); }
  [[nodiscard]] const T* data() const { return ptr(); }
  T* begin() { return ptr(); }
  T* end() { return ptr() + size_; }
  const T* begin() const { return ptr(); }
  const T* end() const { return ptr() + size_; }
  T& operator[](std::size_t i) { return ptr()[i]; }
  const T& operator[](std::size_t i) const { return ptr()[i]; }
  T& back() { return ptr()[size_ - 1]; }

  template <class... A>
  T& emplace_back(A&&... a) {
    if (size_ == cap_) grow(cap_ * 2);
    T* p = ::new (static_cast<void*>(ptr() + size_)) T(std::forward<A>(a)...);
    ++size_;
    return *p;
  }
  void push_back(const T& v) { emplace_back(v); }
  void push_back(T&& v) { emplace_back(std::move(v)); }
  void pop_back() { ptr()[--size_].~T(); }
  // Keeps the first n elements (n <= size()).
  void truncate(std::size_t n) {
    while (size_ > n) pop_back();
  }
  void clear() { truncate(0); }

 private:
  T* ptr() { return heap_ ? heap_ : reinterpret_cast<T*>(inline_); }
  const T* ptr() const { return heap_ ? heap_ : reinterpret_cast<const T*>(inline_); }
  template <class It>
  void append(It b, It e) {
    for (; b != e; ++b) emplace_back(*b);
  }
  void grow(std::size_t cap) {
    T* fresh = static_cast<T*>(::operator new(cap * sizeof(T), std::align_val_t{alignof(T)}));
    T* old = ptr();
    for (std::size_t i = 0; i < size_; ++i) {
      ::new (static_cast<void*>(fresh + i)) T(std::move(old[i]));
      old[i].~T();
    }
    release_heap();
    heap_ = fresh;
    cap_ = cap;
  }
  void release_heap() {
    if (heap_) ::operator delete(heap_, std::align_val_t{alignof(T)});
    heap_ = nullptr;
    cap_ = N;
  }
  void take(SmallVec&& o) {
    if (o.heap_) {  // steal the heap block
      heap_ = std::exchange(o.heap_, nullptr);
      cap_ = std::exchange(o.cap_, N);
      size_ = std::exchange(o.size_, 0);
      return;
    }
    for (std::size_t i = 0; i < o.size_; ++i) emplace_back(std::move(o.ptr()[i]));
    o.clear();
  }

  alignas(T) unsigned char inline_[sizeof(T) * N];
  T* heap_ = nullptr;
  std::size_t size_ = 0;
  std::size_t cap_ = N;
};

}  // namespace ctile::detail
