# The compile-fail harness's self-test: runs check_compile.cmake on a deliberately broken case and
# requires it to FAIL for the expected reason. Run by CTest through `cmake -P`:
#
#   cmake -DCOMPILER=<c++> -DCOMPILER_ID=gcc|clang -DSOURCE=<selftest/case.cpp> -DINCLUDE_DIR=<repo>/include
#         -DCOMPAT_DIR=<dir> [-DPCH=<file>] -DCHECK_SCRIPT=<check_compile.cmake> -P check_harness.cmake
#
# SOURCE is a copy of a real case, broken so that a weak harness would still accept it (the misuse
# replaced by an unrelated error, an unrelated error first, the error outside the misuse block, no
# misuse left). Its `// harness-rejects: <text>` line (or `// harness-rejects-gcc:` /
# `// harness-rejects-clang:`) is a fragment of the reason check_compile.cmake must give.
# The copy must still compile without CTILE_MISUSE (MODE=ok passes), so the rejection comes from
# what the broken misuse block does.
cmake_minimum_required(VERSION 3.25)

foreach(var COMPILER COMPILER_ID SOURCE INCLUDE_DIR COMPAT_DIR CHECK_SCRIPT)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "check_harness.cmake: -D${var}=... is required")
  endif()
endforeach()

file(STRINGS "${SOURCE}" reasons REGEX "^// harness-rejects(-${COMPILER_ID})?: ")
if(NOT reasons)
  message(FATAL_ERROR "${SOURCE}: no `// harness-rejects: <text>` line")
endif()

set(args -DCOMPILER=${COMPILER} -DCOMPILER_ID=${COMPILER_ID} -DSOURCE=${SOURCE} -DINCLUDE_DIR=${INCLUDE_DIR}
         -DCOMPAT_DIR=${COMPAT_DIR} -DPCH=${PCH})
execute_process(COMMAND "${CMAKE_COMMAND}" ${args} -DMODE=ok -P "${CHECK_SCRIPT}"
                RESULT_VARIABLE ok_rc OUTPUT_VARIABLE ok_out ERROR_VARIABLE ok_out)
if(NOT ok_rc EQUAL 0)
  message(NOTICE "${ok_out}")
  message(FATAL_ERROR "${SOURCE}: the broken copy must compile without CTILE_MISUSE, and does not")
endif()

execute_process(COMMAND "${CMAKE_COMMAND}" ${args} -DMODE=fail -P "${CHECK_SCRIPT}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(rc EQUAL 0)
  message(NOTICE "${out}")
  message(FATAL_ERROR "the harness ACCEPTS the broken case ${SOURCE}: it cannot tell this misuse from the real one")
endif()
# CMake wraps and indents the text of message(FATAL_ERROR): compare with whitespace runs folded.
string(REGEX REPLACE "[ \t\r\n]+" " " flat "${out}")
foreach(line IN LISTS reasons)
  string(REGEX REPLACE "^// harness-rejects(-${COMPILER_ID})?: *" "" want "${line}")
  string(STRIP "${want}" want)
  string(FIND "${flat}" "${want}" at)
  if(at EQUAL -1)
    message(NOTICE "${out}")
    message(FATAL_ERROR "the harness rejects ${SOURCE}, but not for the expected reason \"${want}\"")
  endif()
endforeach()
message(STATUS "the harness rejects ${SOURCE} (${COMPILER_ID}) as it must: ${want}")
