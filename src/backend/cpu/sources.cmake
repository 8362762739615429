list(APPEND CTILE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/cpu_backend.cpp
  ${CMAKE_CURRENT_LIST_DIR}/interp.cpp
  ${CMAKE_CURRENT_LIST_DIR}/ops_elementwise.cpp
  ${CMAKE_CURRENT_LIST_DIR}/ops_memory.cpp
  ${CMAKE_CURRENT_LIST_DIR}/ops_reduce.cpp
  ${CMAKE_CURRENT_LIST_DIR}/ops_shape.cpp
  ${CMAKE_CURRENT_LIST_DIR}/race_checker.cpp
  ${CMAKE_CURRENT_LIST_DIR}/thread_pool.cpp)
