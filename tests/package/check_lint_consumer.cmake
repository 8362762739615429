# Installs the built ctile into a scratch prefix and builds the lint consumer (lint_consumer/)
# against it twice: as it is, where the build must succeed, must have run clang-tidy on main.cpp
# and the program must work; and with -DCTILE_MISUSE=ON, where clang-tidy's bugprone-use-after-move
# must fail the build at the line marked `// expect: bugprone-use-after-move`. Arguments: BUILD_DIR,
# SOURCE_DIR, WORK_DIR, GENERATOR.
file(REMOVE_RECURSE "${WORK_DIR}")
execute_process(COMMAND ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${WORK_DIR}/prefix" RESULT_VARIABLE rc
                OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "install failed (${rc})")
endif()
foreach(f lib/cmake/ctile/ctileLint.cmake lib/cmake/ctile/lint/compat/source_location)
  if(NOT EXISTS "${WORK_DIR}/prefix/${f}")
    message(FATAL_ERROR "the package does not install ${f}")
  endif()
endforeach()

# The line the misuse is on.
file(STRINGS "${SOURCE_DIR}/main.cpp" lines)
set(n 0)
set(expected "")
foreach(line IN LISTS lines)
  math(EXPR n "${n} + 1")
  if(line MATCHES "// expect: bugprone-use-after-move")
    set(expected ${n})
  endif()
endforeach()
if(NOT expected)
  message(FATAL_ERROR "${SOURCE_DIR}/main.cpp has no line marked `// expect: bugprone-use-after-move`")
endif()

function(build_consumer dir misuse out_rc out_log)
  execute_process(COMMAND ${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${WORK_DIR}/${dir}" -G "${GENERATOR}"
                          "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix" "-DCTILE_MISUSE=${misuse}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE log ERROR_VARIABLE log)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "configuring the lint consumer (CTILE_MISUSE=${misuse}) failed (${rc}):\n${log}")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} --build "${WORK_DIR}/${dir}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE log ERROR_VARIABLE log)
  set(${out_rc} "${rc}" PARENT_SCOPE)
  set(${out_log} "${log}" PARENT_SCOPE)
endfunction()

# 1. Clean: builds, ran clang-tidy, works.
build_consumer(clean OFF rc log)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the clean lint consumer does not build (${rc}): ctile's headers fail the lint or clang-tidy "
                      "cannot parse them:\n${log}")
endif()
if(GENERATOR MATCHES "Ninja")
  execute_process(COMMAND ${CMAKE_COMMAND} --build "${WORK_DIR}/clean" -- -t commands lint_consumer
                  OUTPUT_VARIABLE cmds RESULT_VARIABLE rc)
  if(NOT cmds MATCHES "--tidy=[^\n]*bugprone-use-after-move")
    message(FATAL_ERROR "the lint consumer's build does not run clang-tidy's use-after-move check:\n${cmds}")
  endif()
endif()
execute_process(COMMAND "${WORK_DIR}/clean/lint_consumer" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the lint consumer computed a wrong result (${rc})")
endif()

# 2. With the misuse: the build fails, at the marked line, for the use after move.
build_consumer(misuse ON rc log)
if(rc EQUAL 0)
  message(FATAL_ERROR "the lint consumer with a use after move builds: ctile_enable_lint() does not reject it:\n${log}")
endif()
if(NOT log MATCHES "main\\.cpp:${expected}:[0-9]+: error: [^\n]*\\[bugprone-use-after-move")
  message(FATAL_ERROR "the misuse build failed, but not with bugprone-use-after-move at main.cpp:${expected}:\n${log}")
endif()
message(STATUS "ctile_enable_lint(): a clean consumer builds; a use after move at main.cpp:${expected} fails its build")
