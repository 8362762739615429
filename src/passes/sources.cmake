list(APPEND CTILE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/pass_manager.cpp
  ${CMAKE_CURRENT_LIST_DIR}/batch_mma.cpp
  ${CMAKE_CURRENT_LIST_DIR}/bounds.cpp
  ${CMAKE_CURRENT_LIST_DIR}/schedule.cpp
  ${CMAKE_CURRENT_LIST_DIR}/remat.cpp
  ${CMAKE_CURRENT_LIST_DIR}/occupancy.cpp
  ${CMAKE_CURRENT_LIST_DIR}/smem_alloc.cpp
  ${CMAKE_CURRENT_LIST_DIR}/canonicalize.cpp
  ${CMAKE_CURRENT_LIST_DIR}/constant_fold.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cse.cpp
  ${CMAKE_CURRENT_LIST_DIR}/dead_code.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fuse_elementwise.cpp
  ${CMAKE_CURRENT_LIST_DIR}/layout_assignment.cpp
  ${CMAKE_CURRENT_LIST_DIR}/loop_prefetch.cpp
  ${CMAKE_CURRENT_LIST_DIR}/narrow_index.cpp
  ${CMAKE_CURRENT_LIST_DIR}/precision.cpp
  ${CMAKE_CURRENT_LIST_DIR}/warp_specialize.cpp)
