# Compiles one compile-fail case and checks the outcome. Run by CTest through `cmake -P`:
#
#   cmake -DCOMPILER=<c++> -DSOURCE=<case.cpp> -DINCLUDE_DIR=<repo>/include -DMODE=ok|fail
#         [-DEXTRA_FLAGS=<flag;flag...>] -P check_compile.cmake
#
# MODE=ok    compiles SOURCE as it is; it must compile. This proves the case is an otherwise valid
#            program, so that its failure in MODE=fail comes from the misuse alone.
# MODE=fail  compiles SOURCE with -DCTILE_MISUSE; the compiler must reject it with a diagnostic
#            matching every `// expect: <regex>` line of SOURCE (CMake regular expressions; write
#            `.` for a quote character, as GCC and Clang quote differently).
# On a mismatch the compiler's output is printed.
cmake_minimum_required(VERSION 3.25)

foreach(var COMPILER SOURCE INCLUDE_DIR MODE)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "check_compile.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT MODE MATCHES "^(ok|fail)$")
  message(FATAL_ERROR "check_compile.cmake: MODE must be ok or fail, not '${MODE}'")
endif()

file(STRINGS "${SOURCE}" expect_lines REGEX "^// expect: ")
if(NOT expect_lines)
  message(FATAL_ERROR "${SOURCE}: no `// expect: <regex>` line")
endif()
file(STRINGS "${SOURCE}" misuse_guard REGEX "^#if(def CTILE_MISUSE| defined\\(CTILE_MISUSE\\))")
if(NOT misuse_guard)
  message(FATAL_ERROR "${SOURCE}: the misuse must sit inside #ifdef CTILE_MISUSE")
endif()

set(cmd "${COMPILER}" -std=c++20 -fsyntax-only ${EXTRA_FLAGS} "-I${INCLUDE_DIR}" "${SOURCE}")
if(MODE STREQUAL "fail")
  list(APPEND cmd -DCTILE_MISUSE)
endif()
# LC_ALL=C: plain ASCII diagnostics, whatever the caller's locale.
execute_process(COMMAND "${CMAKE_COMMAND}" -E env LC_ALL=C ${cmd}
                RESULT_VARIABLE rc
                OUTPUT_VARIABLE out
                ERROR_VARIABLE out)
string(JOIN " " cmd_line ${cmd})

# Prints the command and the compiler's output verbatim, then fails with `why`.
function(fail_with why)
  message(NOTICE "$ ${cmd_line}\n${out}")
  message(FATAL_ERROR "${why}")
endfunction()

if(MODE STREQUAL "ok")
  if(NOT rc EQUAL 0)
    fail_with("${SOURCE} does not compile without CTILE_MISUSE; the case proves nothing until it does")
  endif()
  message(STATUS "compiles without CTILE_MISUSE: ${SOURCE}")
  return()
endif()

if(rc EQUAL 0)
  fail_with("${SOURCE} COMPILES with CTILE_MISUSE: the misuse is not rejected (a hole in the API)")
endif()
foreach(line IN LISTS expect_lines)
  string(REGEX REPLACE "^// expect: *" "" regex "${line}")
  string(STRIP "${regex}" regex)
  if(NOT out MATCHES "${regex}")
    fail_with("${SOURCE} is rejected, but no diagnostic matches the expected regex `${regex}`")
  endif()
  message(STATUS "rejected as expected (${regex}): ${SOURCE}")
endforeach()
