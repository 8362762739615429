// ctile SIMT kernels: what every portable header needs.
//
// Each header under include/ctile/simt/*.h is compiled twice from the same text:
//   - by the host compiler (C++20), where a kernel runs on the CPU thread by thread under the
//     emulator of src/simt (fibers, barriers, warp collectives, the race checker);
//   - by NVRTC (C++17, -default-device), where the text of a kernel captured by CTILE_SIMT_KERNEL
//     is compiled for the GPU after these headers (embedded into the library at build time).
// CTILE_SIMT_DEVICE tells the two apart. Device-only code uses CUDA built-ins; host-only code calls
// the emulator through host_runtime.h. No CUDA or standard header is needed on the device side.
#pragma once

#if defined(__CUDACC_RTC__) || defined(__CUDA_ARCH__)
#define CTILE_SIMT_DEVICE 1
#else
#define CTILE_SIMT_DEVICE 0
#endif

#if !CTILE_SIMT_DEVICE
#include <cstdint>
#include <source_location>

#include "ctile/core/unchecked.hpp"
#else
namespace ctile {
// The same tag as ctile/core/unchecked.hpp on the host: only `ctile::unchecked` makes one.
struct unchecked_t {
  explicit unchecked_t() = default;
};
inline constexpr unchecked_t unchecked{};
}  // namespace ctile
#endif

// The launch shape a kernel was compiled for. The generated CUDA source defines these from the
// launch contract and the grid (block extents, dynamic shared memory, the grid's rank), so index
// arithmetic folds to constants on the GPU; on the host they are read from the running thread.
#if CTILE_SIMT_DEVICE && !defined(CTILE_SIMT_BLOCK_X)
#error "ctile SIMT device headers need CTILE_SIMT_BLOCK_X/Y/Z (the generated source defines them)"
#endif

// Host functions take the caller's source location (for error messages of the CPU emulator:
// barrier divergence, races); on the GPU the parameter does not exist.
#if CTILE_SIMT_DEVICE
#define CTILE_SIMT_LOC_ONLY
#define CTILE_SIMT_LOC , int ctile_simt_unused_loc = 0
#define CTILE_SIMT_LOC_ARG
#define CTILE_SIMT_LOC_PASS
#else
#define CTILE_SIMT_LOC_ONLY ::std::source_location ctile_loc = ::std::source_location::current()
#define CTILE_SIMT_LOC , ::std::source_location ctile_loc = ::std::source_location::current()
#define CTILE_SIMT_LOC_ARG ctile_loc
#define CTILE_SIMT_LOC_PASS , ctile_loc
#endif

// The CPU backend tells barriers (and warp collectives) apart by their call sites: the return
// address of the emulator's entry point. Source locations cannot do it, since every line of a
// kernel body comes from one macro invocation. So the wrappers are always inlined on the host.
#if CTILE_SIMT_DEVICE
#define CTILE_SIMT_SYNC_FN inline
#else
#define CTILE_SIMT_SYNC_FN [[gnu::always_inline]] inline
#endif

namespace ctile::simt {

// Fixed-width integers with the host's spelling (LP64 Linux: int64_t is long), so that a
// DisjointSpan<i64> on the device and Tensor<std::int64_t> on the host name one type.
using i8 = signed char;
using u8 = unsigned char;
using i16 = short;
using u16 = unsigned short;
using i32 = int;
using u32 = unsigned int;
using i64 = long;
using u64 = unsigned long;

inline constexpr u32 kWarpSize = 32;

template <class T>
constexpr T min(T a, T b) {
  return b < a ? b : a;
}
template <class T>
constexpr T max(T a, T b) {
  return a < b ? b : a;
}

namespace detail {

template <class A, class B>
struct same {
  static constexpr bool value = false;
};
template <class A>
struct same<A, A> {
  static constexpr bool value = true;
};
template <bool B, class A, class C>
struct conditional {
  using type = A;
};
template <class A, class C>
struct conditional<false, A, C> {
  using type = C;
};
template <bool B, class A, class C>
using conditional_t = typename conditional<B, A, C>::type;
template <class T>
struct strip_const {
  using type = T;
};
template <class T>
struct strip_const<const T> {
  using type = T;
};

// Element types a SIMT span may hold: bool, 8- to 64-bit integers, float, double. (f16/bf16 have
// different host and device representations; SIMT kernels do not take them yet.)
template <class T>
struct is_element {
  static constexpr bool value = same<T, bool>::value || same<T, i8>::value || same<T, u8>::value ||
                                same<T, i16>::value || same<T, u16>::value || same<T, i32>::value ||
                                same<T, u32>::value || same<T, i64>::value || same<T, u64>::value ||
                                same<T, float>::value || same<T, double>::value;
};
template <class T>
struct is_integer {
  static constexpr bool value = is_element<T>::value && !same<T, bool>::value && !same<T, float>::value &&
                                !same<T, double>::value;
};
template <class T>
struct is_floating {
  static constexpr bool value = same<T, float>::value || same<T, double>::value;
};

// The bounds check of every checked access: 0 <= i < n, as two signed comparisons rather than one
// unsigned one, because that is the form the compiler can fold with a kernel's own loop conditions
// (`for (i64 i = first; i < x.size(); i += step)`) and with the non-negative indices it can prove.
inline bool in_range(i64 i, i64 n) { return i >= 0 && i < n; }

// Bit copies between same-size types (no <cstring> on the device).
template <class To, class From>
inline To bit_cast(const From& f) {
  static_assert(sizeof(To) == sizeof(From), "bit_cast between types of different sizes");
  To t;
  const unsigned char* s = reinterpret_cast<const unsigned char*>(&f);
  unsigned char* d = reinterpret_cast<unsigned char*>(&t);
  for (unsigned i = 0; i < sizeof(To); ++i) d[i] = s[i];
  return t;
}

// The safe types have private constructors; Access (befriended by each) is how ctile's own
// functions make them. Kernel code has no business here.
struct Access;

}  // namespace detail
}  // namespace ctile::simt

#if !CTILE_SIMT_DEVICE
#include "ctile/simt/host_runtime.h"
#endif
