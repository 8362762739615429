# The CUDA runtime layer and backend (backend/cuda): driver loader, devices, streams and events,
# device memory and copies, the CudaBackend. No CUDA header or library is needed to build these:
# libcuda.so.1 is loaded at run time (docs/cuda_runtime.md).
list(APPEND CTILE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/driver.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cuda_device.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cuda_stream.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cuda_memory.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cuda_backend.cpp
  ${CMAKE_CURRENT_LIST_DIR}/timer.cpp)
# Part of the disk cache key of compiled kernels.
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/cuda_backend.cpp PROPERTIES
  COMPILE_DEFINITIONS "CTILE_VERSION_STRING=\"${PROJECT_VERSION}\"")
