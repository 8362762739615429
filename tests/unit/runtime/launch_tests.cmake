# The runtime's launch path, typed stream commands, graphs and bound kernels on the CPU backend
# (label unit), and the stress tests of many host threads (label stress: time-bounded, meant for
# ThreadSanitizer too; CTILE_STRESS_SECONDS scales them).
ctile_add_gtest(test_runtime_launch LABEL unit SOURCES
  test_graph.cpp
  test_stream_commands.cpp
  test_bind.cpp
  test_launch_path.cpp)
ctile_add_gtest(test_runtime_stress LABEL stress SOURCES test_launch_stress.cpp)
