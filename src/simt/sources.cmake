# SIMT kernels (src/simt): the CPU backend (fibers, barriers, warp collectives, race checker),
# prepare/launch, the GPU path (NVRTC + nvJitLink), compile_only, raw CUDA kernels. The portable
# headers (include/ctile/simt/*.h) are embedded for NVRTC at build time, in this order.
set(CTILE_SIMT_DEVICE_HEADERS
  ctile/simt/config.h
  ctile/simt/index.h
  ctile/simt/maybe.h
  ctile/simt/span.h
  ctile/simt/elem_ref.h
  ctile/simt/disjoint.h
  ctile/simt/atomic.h
  ctile/simt/sync.h
  ctile/simt/warp.h
  ctile/simt/shared.h
  ctile/simt/entry.h)
set(_simt_embed_out ${CMAKE_CURRENT_BINARY_DIR}/ctile_simt_headers.cpp)
set(_simt_embed_deps)
foreach(h IN LISTS CTILE_SIMT_DEVICE_HEADERS)
  list(APPEND _simt_embed_deps ${PROJECT_SOURCE_DIR}/include/${h})
endforeach()
string(JOIN "|" _simt_embed_list ${CTILE_SIMT_DEVICE_HEADERS})
add_custom_command(
  OUTPUT ${_simt_embed_out}
  COMMAND ${CMAKE_COMMAND} -DROOT=${PROJECT_SOURCE_DIR}/include -DHEADERS=${_simt_embed_list}
          -DOUT=${_simt_embed_out} -P ${CMAKE_CURRENT_LIST_DIR}/embed_simt_headers.cmake
  DEPENDS ${_simt_embed_deps} ${CMAKE_CURRENT_LIST_DIR}/embed_simt_headers.cmake
  COMMENT "Embedding the ctile SIMT headers"
  VERBATIM)

list(APPEND CTILE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/fiber.cpp
  ${CMAKE_CURRENT_LIST_DIR}/race_checker.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cpu_runtime.cpp
  ${CMAKE_CURRENT_LIST_DIR}/kernel_info.cpp
  ${CMAKE_CURRENT_LIST_DIR}/launch.cpp
  ${CMAKE_CURRENT_LIST_DIR}/nvjitlink.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gpu.cpp
  ${CMAKE_CURRENT_LIST_DIR}/compile.cpp
  ${CMAKE_CURRENT_LIST_DIR}/raw.cpp
  ${_simt_embed_out})
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/gpu.cpp PROPERTIES
  COMPILE_DEFINITIONS "CTILE_VERSION_STRING=\"${PROJECT_VERSION}\"")
