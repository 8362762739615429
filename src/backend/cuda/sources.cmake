# The CUDA code generator and NVRTC loader (backend/cuda). The device library headers
# (include/ctile/device) are embedded into the library at build time by embed_headers.cmake.
set(CTILE_DEVICE_HEADERS
  ctile/device/config.h
  ctile/device/arch.h
  ctile/device/types.h
  ctile/device/numeric.h
  ctile/device/philox.h
  ctile/device/layout.h
  ctile/device/memory.h
  ctile/device/atomic16.h
  ctile/device/block.h
  ctile/device/regs.h
  ctile/device/dist.h
  ctile/device/combine.h
  ctile/device/mma.h
  ctile/device/wgmma_ops.h
  ctile/device/wgmma.h
  ctile/device/async.h
  ctile/device/tma.h
  ctile/device/tile.h)
set(_ctile_embed_out ${CMAKE_CURRENT_BINARY_DIR}/ctile_device_headers.cpp)
set(_ctile_embed_deps)
foreach(h IN LISTS CTILE_DEVICE_HEADERS)
  list(APPEND _ctile_embed_deps ${PROJECT_SOURCE_DIR}/include/${h})
endforeach()
string(JOIN "|" _ctile_embed_list ${CTILE_DEVICE_HEADERS})
add_custom_command(
  OUTPUT ${_ctile_embed_out}
  COMMAND ${CMAKE_COMMAND} -DROOT=${PROJECT_SOURCE_DIR}/include -DHEADERS=${_ctile_embed_list}
          -DOUT=${_ctile_embed_out} -DCODEGEN_HPP=${CMAKE_CURRENT_LIST_DIR}/codegen.hpp
          -P ${CMAKE_CURRENT_LIST_DIR}/embed_headers.cmake
  DEPENDS ${_ctile_embed_deps} ${CMAKE_CURRENT_LIST_DIR}/embed_headers.cmake
  COMMENT "Embedding the ctile device library headers"
  VERBATIM)

list(APPEND CTILE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/codegen.cpp
  ${CMAKE_CURRENT_LIST_DIR}/nvrtc.cpp
  ${_ctile_embed_out})
