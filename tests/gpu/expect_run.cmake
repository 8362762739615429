# Runs PROG [ARG | ARGS] and checks its exit status (EXIT: zero or nonzero) and that its output matches
# the regex EXPECT. The self-tests of the GPU suites use it: a refusal must fail the run *and* say
# why, so a crash or an unrelated failure does not pass for a refusal.
#   cmake -DPROG=<program> [-DARG=<argument> | -DARGS=a|b|c] -DEXIT=nonzero -DEXPECT=<regex> -P expect_run.cmake
if(DEFINED ARGS AND NOT ARGS STREQUAL "")
  string(REPLACE "|" ";" args "${ARGS}")
  execute_process(COMMAND "${PROG}" ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
elseif(DEFINED ARG AND NOT ARG STREQUAL "")
  execute_process(COMMAND "${PROG}" "${ARG}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
else()
  execute_process(COMMAND "${PROG}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
endif()
set(all "${out}${err}")
if(EXIT STREQUAL "zero" AND NOT rc EQUAL 0)
  message(FATAL_ERROR "expected exit status 0, got ${rc}:\n${all}")
elseif(EXIT STREQUAL "nonzero" AND (rc EQUAL 0 OR rc EQUAL 77))
  message(FATAL_ERROR "expected a failing exit status (not 0, not 77 = skipped), got ${rc}:\n${all}")
endif()
# EXPECT, and EXPECT2 .. EXPECT5 when given: every one must match.
foreach(e EXPECT EXPECT2 EXPECT3 EXPECT4 EXPECT5)
  if(DEFINED ${e} AND NOT all MATCHES "${${e}}")
    message(FATAL_ERROR "the output does not match '${${e}}':\n${all}")
  endif()
endforeach()
message(STATUS "exit ${rc}, output matches '${EXPECT}'")
