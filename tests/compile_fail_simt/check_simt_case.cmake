# Compiles one SIMT compile-fail case (run by CTest through `cmake -P`). The same conventions as
# tests/compile_fail/check_compile.cmake, in a script of this suite's own:
#
#   cmake -DCOMPILER=<c++> -DSOURCE=<case.cpp> -DINCLUDE_DIR=<repo>/include -DMODE=ok|fail -P check_simt_case.cmake
#
# MODE=ok    the case as it is (its twin: the valid program) must compile;
# MODE=fail  with -DCTILE_MISUSE it must fail with a diagnostic matching the `// expect: <regex>`
#            line (a CMake regular expression; `.` stands for a quote character).
# -fsyntax-only: headers only, no library. On a mismatch the compiler's output is printed.
cmake_minimum_required(VERSION 3.25)
foreach(var COMPILER SOURCE INCLUDE_DIR MODE)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "check_simt_case.cmake: -D${var}=... is required")
  endif()
endforeach()
file(STRINGS "${SOURCE}" expect REGEX "^// expect: ")
file(STRINGS "${SOURCE}" guard REGEX "^#if(n?def CTILE_MISUSE)")
if(NOT expect OR NOT guard)
  message(FATAL_ERROR "${SOURCE}: needs a `// expect: <regex>` line and an #ifdef/#ifndef CTILE_MISUSE")
endif()
set(cmd "${COMPILER}" -std=c++20 -fsyntax-only "-I${INCLUDE_DIR}" "${SOURCE}")
if(MODE STREQUAL "fail")
  list(APPEND cmd -DCTILE_MISUSE)
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" -E env LC_ALL=C ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
string(JOIN " " cmd_line ${cmd})
if(MODE STREQUAL "ok")
  if(NOT rc EQUAL 0)
    message(NOTICE "$ ${cmd_line}\n${out}")
    message(FATAL_ERROR "${SOURCE} does not compile without CTILE_MISUSE: the case proves nothing until it does")
  endif()
  return()
endif()
if(rc EQUAL 0)
  message(NOTICE "$ ${cmd_line}\n${out}")
  message(FATAL_ERROR "${SOURCE} COMPILES with CTILE_MISUSE: the misuse is not rejected (a hole in the API)")
endif()
string(REGEX REPLACE "^// expect: *" "" regex "${expect}")
string(STRIP "${regex}" regex)
if(NOT out MATCHES "${regex}")
  message(NOTICE "$ ${cmd_line}\n${out}")
  message(FATAL_ERROR "${SOURCE} is rejected, but no diagnostic matches `${regex}`")
endif()
message(STATUS "rejected as expected (${regex}): ${SOURCE}")
