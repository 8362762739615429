list(APPEND CTILE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/cpu_backend.cpp
  ${CMAKE_CURRENT_LIST_DIR}/interp.cpp
  ${CMAKE_CURRENT_LIST_DIR}/ops_elementwise.cpp
  ${CMAKE_CURRENT_LIST_DIR}/ops_memory.cpp
  ${CMAKE_CURRENT_LIST_DIR}/ops_random.cpp
  ${CMAKE_CURRENT_LIST_DIR}/ops_reduce.cpp
  ${CMAKE_CURRENT_LIST_DIR}/ops_shape.cpp
  ${CMAKE_CURRENT_LIST_DIR}/race_checker.cpp
  ${CMAKE_CURRENT_LIST_DIR}/thread_pool.cpp)
# The random numbers share their code with the device library (device/philox.h) and must round
# every float operation as the GPU does: no multiply-add contraction.
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/ops_random.cpp PROPERTIES COMPILE_OPTIONS "-ffp-contract=off")
