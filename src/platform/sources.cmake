# The platform layer (src/platform): what runs work on a device, independent of how kernels are
# compiled. The CPU platform (host memory, worker-thread streams) and the CUDA platform (driver
# loader, devices, streams and events, device memory and copies, the stream timer). No CUDA header
# or library is needed to build these: libcuda.so.1 is loaded at run time (docs/cuda_runtime.md).
# Nothing here includes src/runtime.
list(APPEND CTILE_SOURCES ${CMAKE_CURRENT_LIST_DIR}/spin.cpp)
include(${CMAKE_CURRENT_LIST_DIR}/cuda/sources.cmake)
