# The platform layer (src/platform): what holds tensors and runs work on a device, independent of
# how kernels are compiled. platform.hpp is the interface the runtime uses; cpu/ is the host (memory,
# worker-thread streams, in-order graphs), cuda/ a GPU (driver loader, devices, streams and events,
# device memory and copies, kernels loaded from a compiler's artifact, CUDA graphs, the stream
# timer). No CUDA header or library is needed to build these: libcuda.so.1 is loaded at run time
# (docs/cuda_runtime.md). Nothing here includes src/runtime.
list(APPEND CTILE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/spin.cpp
  ${CMAKE_CURRENT_LIST_DIR}/kernel.cpp
  ${CMAKE_CURRENT_LIST_DIR}/platform.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cpu/cpu_platform.cpp)
include(${CMAKE_CURRENT_LIST_DIR}/cuda/sources.cmake)
