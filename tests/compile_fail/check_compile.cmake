# Compiles one compile-fail case and checks the outcome. Run by CTest through `cmake -P`:
#
#   cmake -DCOMPILER=<c++> -DCOMPILER_ID=gcc|clang -DSOURCE=<case.cpp> -DINCLUDE_DIR=<repo>/include
#         -DMODE=ok|fail [-DCOMPAT_DIR=<dir>] [-DPCH=<file>] [-DEXTRA_FLAGS=<flag;flag...>] -P check_compile.cmake
#
# MODE=ok    compiles SOURCE as it is; it must compile. This proves the case is an otherwise valid
#            program, so that its failure in MODE=fail comes from the misuse alone.
# MODE=fail  compiles SOURCE with -DCTILE_MISUSE and at most one error (-fmax-errors=1 /
#            -ferror-limit=1). The compiler must reject it, and its first error must
#              1. point inside the misuse block: the lines between `#ifdef CTILE_MISUSE` and its
#                 `#endif` (or `#else`). An error inside a header counts where the case's code
#                 instantiated it: GCC's `<SOURCE>:<line>:<col>:   required from here`, or the last of
#                 clang's `<SOURCE>:<line>:<col>: note: ... requested here` notes;
#              2. have a message (the text after `error: ` on the error's own line, never its notes
#                 or later lines) matching every expect line that applies to COMPILER_ID:
#                 `// expect: <regex>` (both compilers), `// expect-gcc: <regex>`,
#                 `// expect-clang: <regex>`. CMake regular expressions; write `.` for a quote
#                 character. The message is one line, so `.*` cannot reach into other diagnostics;
#              3. if the case has `// expect-note: <regex>` lines (or `-gcc` / `-clang` ones), have
#                 for each of them a note of its own (`file:line:col: note: <text>`, after the error
#                 and before any other error) whose text matches: clang's terse messages ("too few
#                 arguments to function call") name the function only in a note.
# A case has exactly one misuse block. On a mismatch the command and the compiler's output are
# printed. COMPAT_DIR goes first on the system include path (tools/lint/compat: <source_location> for
# clang 14 with GCC 12's libstdc++). PCH is ctile.hpp precompiled (GCC: the header whose .gch sits
# beside it, used with -include; clang: the .pch, used with -include-pch); it is used only while it
# is newer than every header under INCLUDE_DIR, so a stale one never decides a case.
cmake_minimum_required(VERSION 3.25)

foreach(var COMPILER COMPILER_ID SOURCE INCLUDE_DIR MODE)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "check_compile.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT MODE MATCHES "^(ok|fail)$")
  message(FATAL_ERROR "check_compile.cmake: MODE must be ok or fail, not '${MODE}'")
endif()
if(NOT COMPILER_ID MATCHES "^(gcc|clang)$")
  message(FATAL_ERROR "check_compile.cmake: COMPILER_ID must be gcc or clang, not '${COMPILER_ID}'")
endif()
if(NOT EXISTS "${COMPILER}")
  message(FATAL_ERROR "check_compile.cmake: the ${COMPILER_ID} compiler '${COMPILER}' does not exist: install it "
                      "(scripts/setup.sh does) and re-run cmake")
endif()

# ---- the case file: its expect lines and its one misuse block ---------------------------------
file(STRINGS "${SOURCE}" expect_lines REGEX "^// expect(-${COMPILER_ID})?: ")
file(STRINGS "${SOURCE}" note_lines REGEX "^// expect-note(-${COMPILER_ID})?: ")
set(note_regexes "")
foreach(line IN LISTS note_lines)
  string(REGEX REPLACE "^// expect-note(-${COMPILER_ID})?: *" "" regex "${line}")
  string(STRIP "${regex}" regex)
  list(APPEND note_regexes "${regex}")
endforeach()
set(notes_matched "")  # the note regexes some note of the first error matched
if(NOT expect_lines)
  message(FATAL_ERROR "${SOURCE}: no `// expect: <regex>` or `// expect-${COMPILER_ID}: <regex>` line")
endif()

# Reads the file line by line (file(STRINGS) would drop empty lines and so shift line numbers).
file(READ "${SOURCE}" text)
set(n 0)
set(depth 0)           # #if nesting inside the misuse block
set(block_begin "")    # line of `#ifdef CTILE_MISUSE`
set(block_end "")      # line of its `#endif` / `#else`
set(blocks 0)
while(NOT text STREQUAL "")
  string(FIND "${text}" "\n" nl)
  if(nl EQUAL -1)
    set(line "${text}")
    set(text "")
  else()
    string(SUBSTRING "${text}" 0 ${nl} line)
    math(EXPR next "${nl} + 1")
    string(SUBSTRING "${text}" ${next} -1 text)
  endif()
  math(EXPR n "${n} + 1")
  if(line MATCHES "^[ \t]*#[ \t]*if(def[ \t]+CTILE_MISUSE|[ \t]+defined[ \t]*\\(?[ \t]*CTILE_MISUSE)")
    math(EXPR blocks "${blocks} + 1")
    set(block_begin ${n})
    set(block_end "")
    set(depth 0)
  elseif(NOT block_begin STREQUAL "" AND block_end STREQUAL "")
    if(line MATCHES "^[ \t]*#[ \t]*if")
      math(EXPR depth "${depth} + 1")
    elseif(line MATCHES "^[ \t]*#[ \t]*endif" AND depth GREATER 0)
      math(EXPR depth "${depth} - 1")
    elseif(line MATCHES "^[ \t]*#[ \t]*(endif|else|elif)" AND depth EQUAL 0)
      set(block_end ${n})
    endif()
  endif()
endwhile()
if(NOT blocks EQUAL 1)
  message(FATAL_ERROR "${SOURCE}: ${blocks} `#ifdef CTILE_MISUSE` blocks; a case has exactly one")
endif()
if(block_end STREQUAL "")
  message(FATAL_ERROR "${SOURCE}: the `#ifdef CTILE_MISUSE` block at line ${block_begin} has no #endif")
endif()
math(EXPR first_misuse_line "${block_begin} + 1")
math(EXPR last_misuse_line "${block_end} - 1")

# ---- compile ----------------------------------------------------------------------------------
set(cmd "${COMPILER}" -std=c++20 -fsyntax-only -w)
if(COMPAT_DIR)
  list(APPEND cmd -isystem "${COMPAT_DIR}")
endif()
if(PCH)
  if(COMPILER_ID STREQUAL "gcc")
    set(pch_file "${PCH}.gch")
  else()
    set(pch_file "${PCH}")
  endif()
  set(pch_fresh FALSE)
  if(EXISTS "${pch_file}")
    set(pch_fresh TRUE)
    file(GLOB_RECURSE headers "${INCLUDE_DIR}/*.hpp" "${INCLUDE_DIR}/*.h")
    foreach(h IN LISTS headers)
      if("${h}" IS_NEWER_THAN "${pch_file}")
        set(pch_fresh FALSE)
        message(STATUS "${pch_file} is older than ${h}: compiling without it (cmake --build rebuilds it)")
        break()
      endif()
    endforeach()
  endif()
  if(pch_fresh AND COMPILER_ID STREQUAL "gcc")
    list(APPEND cmd -include "${PCH}")
  elseif(pch_fresh)
    list(APPEND cmd -include-pch "${PCH}")
  endif()
endif()
list(APPEND cmd ${EXTRA_FLAGS} "-I${INCLUDE_DIR}" "${SOURCE}")
if(MODE STREQUAL "fail")
  if(COMPILER_ID STREQUAL "gcc")
    list(APPEND cmd -DCTILE_MISUSE -fmax-errors=1)
  else()
    list(APPEND cmd -DCTILE_MISUSE -ferror-limit=1)
  endif()
endif()
# LC_ALL=C: plain ASCII diagnostics (GCC quotes with ' instead of typographic quotes).
execute_process(COMMAND "${CMAKE_COMMAND}" -E env LC_ALL=C ${cmd}
                RESULT_VARIABLE rc
                OUTPUT_VARIABLE out
                ERROR_VARIABLE out)
string(JOIN " " cmd_line ${cmd})

# Prints the command and the compiler's output verbatim, then fails with the reason: the
# concatenation of the arguments (ARGVn keep any semicolon of a compiler message).
function(fail_with)
  message(NOTICE "$ ${cmd_line}\n${out}")
  message(FATAL_ERROR "${ARGV0}${ARGV1}${ARGV2}${ARGV3}")
endfunction()

if(MODE STREQUAL "ok")
  if(NOT rc EQUAL 0)
    fail_with("${SOURCE} does not compile without CTILE_MISUSE under ${COMPILER_ID}; the case proves nothing until it does")
  endif()
  message(STATUS "$ ${cmd_line}")
  message(STATUS "compiles without CTILE_MISUSE (${COMPILER_ID}): ${SOURCE}")
  return()
endif()

if(rc EQUAL 0)
  fail_with("${SOURCE} COMPILES with CTILE_MISUSE under ${COMPILER_ID}: the misuse is not rejected (a hole in the API)")
endif()

# ---- the first error and where the case's code caused it --------------------------------------
# Diagnostics name SOURCE as it was given on the command line.
string(REGEX REPLACE "([][+.*?()^$|\\\\])" "\\\\\\1" source_re "${SOURCE}")
set(error_file "")
set(error_line "")
set(error_msg "")
set(here_line "")      # GCC: `required from here` before the error; clang: last `requested here` after it
set(rest "${out}")
while(NOT rest STREQUAL "")
  string(FIND "${rest}" "\n" nl)
  if(nl EQUAL -1)
    set(line "${rest}")
    set(rest "")
  else()
    string(SUBSTRING "${rest}" 0 ${nl} line)
    math(EXPR next "${nl} + 1")
    string(SUBSTRING "${rest}" ${next} -1 rest)
  endif()
  if(error_msg STREQUAL "")
    if(line MATCHES "^(.+):([0-9]+):([0-9]+: )?(fatal )?error: (.*)$")
      set(error_file "${CMAKE_MATCH_1}")
      set(error_line "${CMAKE_MATCH_2}")
      set(error_msg "${CMAKE_MATCH_5}")
      if(error_msg STREQUAL "")
        set(error_msg " ")  # an empty message still ends the search
      endif()
    elseif(COMPILER_ID STREQUAL "gcc" AND line MATCHES "^${source_re}:([0-9]+):[0-9]+:   required from here")
      set(here_line "${CMAKE_MATCH_1}")
    endif()
  else()
    if(line MATCHES "^(.+:[0-9]+:[0-9]+: )?(fatal )?error: ")
      break()  # the next error (only `too many errors` with -ferror-limit=1): its notes are not ours
    endif()
    if(COMPILER_ID STREQUAL "clang" AND line MATCHES "^${source_re}:([0-9]+):[0-9]+: note: .*(requested|required) here")
      set(here_line "${CMAKE_MATCH_1}")
    endif()
    if(line MATCHES "^.+:[0-9]+:[0-9]+: note: (.*)$")
      string(STRIP "${CMAKE_MATCH_1}" note)  # GCC indents some notes ("note:   in call to ...")
      foreach(regex IN LISTS note_regexes)
        if(note MATCHES "${regex}")
          list(APPEND notes_matched "${regex}")
        endif()
      endforeach()
    endif()
  endif()
endwhile()
if(error_msg STREQUAL "")
  fail_with("${SOURCE} is rejected under ${COMPILER_ID}, but no `file:line:col: error:` line was found in the output")
endif()

if(error_file STREQUAL SOURCE)
  set(at_line "${error_line}")
  set(at_what "the first error")
elseif(NOT here_line STREQUAL "")
  set(at_line "${here_line}")
  set(at_what "the first error (at ${error_file}:${error_line}) is instantiated from the case's line")
else()
  fail_with("${SOURCE}: the first error is at ${error_file}:${error_line}, and no `required from here` / "
            "`requested here` line ties it to the case's code")
endif()
if(at_line LESS first_misuse_line OR at_line GREATER last_misuse_line)
  fail_with("${SOURCE}: ${at_what} ${at_line}, outside the misuse block (lines ${first_misuse_line}-${last_misuse_line}): "
            "the case is rejected for something other than its misuse")
endif()

foreach(line IN LISTS expect_lines)
  string(REGEX REPLACE "^// expect(-${COMPILER_ID})?: *" "" regex "${line}")
  string(STRIP "${regex}" regex)
  if(NOT error_msg MATCHES "${regex}")
    fail_with("${SOURCE}: the first error (line ${at_line}, in the misuse block) does not match the expected "
              "regex `${regex}`: ${error_msg}")
  endif()
endforeach()
foreach(regex IN LISTS note_regexes)
  if(NOT regex IN_LIST notes_matched)
    fail_with("${SOURCE}: no note of the first error (line ${at_line}: ${error_msg}) matches the expected "
              "note regex `${regex}`")
  endif()
endforeach()
message(STATUS "$ ${cmd_line}")
message(STATUS "rejected as expected at line ${at_line} (${COMPILER_ID}): ${error_msg}")
