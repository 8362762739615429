// ctile device library: configuration. Compiled by NVRTC (no host or standard headers anywhere in
// include/ctile/device) and, for the host-emulation tests, by a host compiler after a prelude that
// defines the CUDA built-ins (CTILE_DEVICE_EMULATION).
#pragma once

#define CT_DEV __device__ __forceinline__

// The kernel's dynamic shared memory, 16-byte aligned.
#if defined(CTILE_DEVICE_EMULATION)
#define CT_DYNAMIC_SMEM(name) unsigned char* name = ::ct_emu::dynamic_smem()
#else
#define CT_DYNAMIC_SMEM(name) extern __shared__ __align__(16) unsigned char name[]
#endif

// Alignment of vector and element accesses: checked (abort) in the host emulation, where a
// misaligned access would not fault as it does on the GPU.
#if defined(CTILE_DEVICE_EMULATION)
#define CT_CHECK_ALIGNED(p, n) ::ct_emu::check_aligned((const void*)(p), (int)(n), __LINE__)
#else
#define CT_CHECK_ALIGNED(p, n) ((void)0)
#endif

namespace ct {

typedef signed char i8;
typedef short i16;
typedef int i32;
typedef long long i64;
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;

constexpr i64 kI64Max = 0x7fffffffffffffffLL;
constexpr i64 kI64Min = -0x7fffffffffffffffLL - 1;

// A tensor as the kernel sees it: base pointer, extents and strides in elements (unused axes: 1, 0).
struct TensorDesc {
  void* data;
  long long shape[6];
  long long stride[6];
};

}  // namespace ct

// The loop over a thread's slots of a spread tile (always unrolled: register arrays need constant indices).
#define CT_SLOTS(S) _Pragma("unroll") for (int s = 0; s < (S); ++s)
