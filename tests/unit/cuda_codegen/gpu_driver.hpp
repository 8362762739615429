// A minimal CUDA driver API client for the codegen's GPU check (dlopen of libcuda; no CUDA headers):
// load a cubin, allocate, copy, launch with the pack_params block, synchronise.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace cuda_gpu {

struct Driver;
// The driver on device 0 with its primary context current; null (and `why`) without a usable GPU.
// Loads $CTILE_LIBCUDA when set (as the library does), else libcuda.so.1.
Driver* driver(std::string* why = nullptr);
// Successful cuLaunchKernel calls so far: the tests check it grew (the GPU ran).
unsigned long long launches(Driver* d);

std::uint64_t alloc(Driver* d, std::size_t bytes);
void free_mem(Driver* d, std::uint64_t p);
void to_device(Driver* d, std::uint64_t dst, const void* src, std::size_t bytes);
void to_host(Driver* d, void* dst, std::uint64_t src, std::size_t bytes);
// Loads `cubin` and returns the function `entry` (dynamic shared memory raised to `smem` if needed).
void* load(Driver* d, const std::string& cubin, const std::string& entry, std::size_t smem);
// Launches `fn` over `blocks` x `threads` with one by-value parameter block, then synchronises.
// Returns the driver's error text, empty on success.
std::string launch(Driver* d, void* fn, long long blocks, int threads, std::size_t smem, void* params);
// Launches without waiting; synchronize() waits and returns the error text (empty on success).
std::string launch_async(Driver* d, void* fn, long long blocks, int threads, std::size_t smem, void* params);
std::string synchronize(Driver* d);
int compute_capability(Driver* d);
// cuTensorMapEncodeTiled of a map of rank 2 to 5 into the 128 bytes at `out` (the platform's
// TensorMapEncoding values); the driver's error text, empty on success.
std::string encode_tensor_map(Driver* d, void* out, int data_type, unsigned rank, void* address, const std::uint64_t* dims,
                              const std::uint64_t* strides_bytes, const unsigned* box, int swizzle);

}  // namespace cuda_gpu
