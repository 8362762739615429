# The CudaBackend (backend/cuda/cuda_backend.cpp): compiles IR through the code generator and NVRTC
# (sources.cmake) and loads and launches the result through the CUDA platform (src/platform/cuda).
list(APPEND CTILE_SOURCES ${CMAKE_CURRENT_LIST_DIR}/cuda_backend.cpp ${CMAKE_CURRENT_LIST_DIR}/param_layout.cpp)
# Part of the disk cache key of compiled kernels.
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/cuda_backend.cpp PROPERTIES
  COMPILE_DEFINITIONS "CTILE_VERSION_STRING=\"${PROJECT_VERSION}\"")
