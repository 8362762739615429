# Runs clang-tidy's bugprone-use-after-move check, as an error, and checks the outcome. Run by
# CTest through `cmake -P`:
#
#   cmake -DCLANG_TIDY=<clang-tidy> -DINCLUDE_DIR=<repo>/include -DCOMPAT_DIR=<repo>/tools/lint/compat
#         -DMODE=flag  -DSOURCE=<file.cpp>                    -P check_lint.cmake
#         -DMODE=clean -DROOT=<repo> -DGLOBS=<glob,glob...>    -P check_lint.cmake
#
# MODE=flag   SOURCE uses a handle after moving it. clang-tidy must fail, its source must parse
#             (no clang-diagnostic-error), and the check must fire exactly on the lines that end
#             with `// expect: bugprone-use-after-move`.
# MODE=clean  every file matching GLOBS (relative to ROOT, expanded when the test runs) must pass
#             the check. Deliberate misuse in tests carries
#             `// NOLINTNEXTLINE(bugprone-use-after-move)`.
#
# COMPAT_DIR goes first on the system include path: it supplies <source_location> to clang-tidy 14,
# whose parser cannot use GCC 12's (see tools/lint/compat/source_location).
cmake_minimum_required(VERSION 3.25)

if(NOT CLANG_TIDY)
  message(FATAL_ERROR "clang-tidy is missing, so the lint tests cannot run: install it "
                      "(scripts/setup.sh does, or apt-get install clang-tidy) and re-run cmake")
endif()
foreach(var INCLUDE_DIR COMPAT_DIR MODE)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "check_lint.cmake: -D${var}=... is required")
  endif()
endforeach()

set(check bugprone-use-after-move)

# Runs clang-tidy on `file`; sets <prefix>_rc, <prefix>_out and <prefix>_cmd in the caller.
function(run_tidy file prefix)
  set(cmd "${CLANG_TIDY}" "--checks=-*,${check}" "--warnings-as-errors=*" "${file}" --
          -std=c++20 -isystem "${COMPAT_DIR}" "-I${INCLUDE_DIR}" -Wno-unknown-warning-option)
  execute_process(COMMAND "${CMAKE_COMMAND}" -E env LC_ALL=C ${cmd}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  string(JOIN " " cmd_line ${cmd})
  set(${prefix}_rc "${rc}" PARENT_SCOPE)
  set(${prefix}_out "${out}" PARENT_SCOPE)
  set(${prefix}_cmd "${cmd_line}" PARENT_SCOPE)
endfunction()

if(MODE STREQUAL "flag")
  if(NOT SOURCE)
    message(FATAL_ERROR "check_lint.cmake: MODE=flag needs -DSOURCE=<file.cpp>")
  endif()
  run_tidy("${SOURCE}" tidy)
  macro(fail_with why)
    message(NOTICE "$ ${tidy_cmd}\n${tidy_out}")
    message(FATAL_ERROR "${why}")
  endmacro()

  # The lines that must be flagged.
  file(STRINGS "${SOURCE}" lines)
  set(expected "")
  set(n 0)
  foreach(line IN LISTS lines)
    math(EXPR n "${n} + 1")
    if(line MATCHES "// expect: ${check}")
      list(APPEND expected ${n})
    endif()
  endforeach()
  if(NOT expected)
    message(FATAL_ERROR "${SOURCE}: no line ends with `// expect: ${check}`")
  endif()

  if(tidy_out MATCHES "\\[clang-diagnostic-error\\]")
    fail_with("${SOURCE} does not parse, so the lint test proves nothing until it does")
  endif()
  if(tidy_rc EQUAL 0)
    fail_with("clang-tidy accepts ${SOURCE}: ${check} does not catch this use after move")
  endif()
  # The lines the check flagged (diagnostics in SOURCE itself, not notes).
  set(flagged "")
  string(REGEX MATCHALL "[^\n]*: (error|warning): [^\n]*\\[${check}[^\n]*" diags "${tidy_out}")
  foreach(d IN LISTS diags)
    if(d MATCHES ":([0-9]+):[0-9]+: (error|warning): ")
      list(APPEND flagged ${CMAKE_MATCH_1})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES flagged)
  list(SORT flagged COMPARE NATURAL)
  if(NOT flagged STREQUAL expected)
    fail_with("${SOURCE}: ${check} flagged line(s) [${flagged}], expected [${expected}]")
  endif()
  message(STATUS "${check} flags line(s) ${expected} of ${SOURCE}")

elseif(MODE STREQUAL "clean")
  if(NOT ROOT OR NOT GLOBS)
    message(FATAL_ERROR "check_lint.cmake: MODE=clean needs -DROOT=<repo> and -DGLOBS=<globs>")
  endif()
  string(REPLACE "," ";" globs "${GLOBS}")
  set(files "")
  foreach(g IN LISTS globs)
    file(GLOB matched "${ROOT}/${g}")
    list(APPEND files ${matched})
  endforeach()
  list(SORT files)
  if(NOT files)
    message(FATAL_ERROR "no file matches ${GLOBS} under ${ROOT}")
  endif()
  set(bad "")
  foreach(f IN LISTS files)
    run_tidy("${f}" tidy)
    file(RELATIVE_PATH rel "${ROOT}" "${f}")
    if(NOT tidy_rc EQUAL 0 OR tidy_out MATCHES ": (error|warning): ")
      message(NOTICE "$ ${tidy_cmd}\n${tidy_out}")
      list(APPEND bad "${rel}")
    else()
      message(STATUS "clean: ${rel}")
    endif()
  endforeach()
  list(LENGTH files total)
  if(bad)
    list(LENGTH bad nbad)
    string(JOIN ", " bad_list ${bad})
    message(FATAL_ERROR "${nbad} of ${total} files fail ${check}: ${bad_list}")
  endif()
  message(STATUS "all ${total} files pass ${check}")

else()
  message(FATAL_ERROR "check_lint.cmake: MODE must be flag or clean, not '${MODE}'")
endif()
