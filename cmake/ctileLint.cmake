# ctile_enable_lint(<target> [REQUIRED] [CLANG_TIDY <path>] [CHECKS <check>...])
#
# Runs clang-tidy's bugprone-use-after-move on every C++ source of <target> while it is built, as
# an error: using a ctile::Tensor, Partition, Shared handle or Future after moving it (into a
# launch, share(), partition(), ...) fails the build at that line. ctile's ownership model moves
# handles everywhere, and this is the check that sees a use after the move, as Rust's borrow
# checker would.
#
#   find_package(ctile REQUIRED)
#   add_executable(app main.cpp)
#   target_link_libraries(app PRIVATE ctile::ctile)
#   ctile_enable_lint(app)
#
# clang-tidy is looked for as clang-tidy, then clang-tidy-19 ... clang-tidy-14. Without it the
# function warns and leaves the target alone, or fails with REQUIRED. CHECKS adds more clang-tidy
# checks (warnings, not errors). The build of the target runs clang-tidy before each compile (the
# CXX_CLANG_TIDY property), so it is slower; enable it in a CI or lint configuration if that matters.
#
# clang 14 (Debian 12's) cannot parse GCC 12's <source_location>, which every ctile header uses;
# the shim in lint/compat/ (installed next to this file) is put first on clang-tidy's system include
# path and supplies it. With a newer clang it forwards to the real header.

# Where the shim is: next to this file when installed; tools/lint/compat in the source tree.
if(EXISTS "${CMAKE_CURRENT_LIST_DIR}/lint/compat/source_location")
  set_property(GLOBAL PROPERTY CTILE_LINT_COMPAT_DIR "${CMAKE_CURRENT_LIST_DIR}/lint/compat")
elseif(EXISTS "${CMAKE_CURRENT_LIST_DIR}/../tools/lint/compat/source_location")
  get_filename_component(_ctile_compat "${CMAKE_CURRENT_LIST_DIR}/../tools/lint/compat" ABSOLUTE)
  set_property(GLOBAL PROPERTY CTILE_LINT_COMPAT_DIR "${_ctile_compat}")
  unset(_ctile_compat)
endif()

function(ctile_enable_lint target)
  cmake_parse_arguments(PARSE_ARGV 1 A "REQUIRED" "CLANG_TIDY" "CHECKS")
  if(A_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "ctile_enable_lint(${target}): unknown arguments ${A_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "ctile_enable_lint(${target}): there is no target named ${target}")
  endif()
  set(tidy "${A_CLANG_TIDY}")
  if(NOT tidy)
    find_program(CTILE_CLANG_TIDY NAMES clang-tidy clang-tidy-19 clang-tidy-18 clang-tidy-17 clang-tidy-16
                                        clang-tidy-15 clang-tidy-14
                 DOC "clang-tidy for ctile_enable_lint()")
    set(tidy "${CTILE_CLANG_TIDY}")
  endif()
  if(NOT tidy)
    if(A_REQUIRED)
      message(FATAL_ERROR "ctile_enable_lint(${target}): clang-tidy is not installed (apt-get install clang-tidy), "
                          "so the use-after-move check cannot run")
    endif()
    message(WARNING "ctile_enable_lint(${target}): clang-tidy not found; ${target} is built without the "
                    "use-after-move check (install clang-tidy, or pass REQUIRED to make this an error)")
    return()
  endif()
  get_property(compat GLOBAL PROPERTY CTILE_LINT_COMPAT_DIR)
  if(NOT compat)
    message(FATAL_ERROR "ctile_enable_lint(${target}): the <source_location> shim of ctile's lint is missing "
                        "(expected lint/compat/ next to ${CMAKE_CURRENT_FUNCTION_LIST_FILE})")
  endif()
  set(checks "-*,bugprone-use-after-move")
  foreach(c IN LISTS A_CHECKS)
    string(APPEND checks ",${c}")
  endforeach()
  # --extra-arg-before: the shim must come before the compiler's own include paths; the warning
  # flags keep clang quiet about GCC-only options in the target's compile command.
  set_property(TARGET ${target} PROPERTY CXX_CLANG_TIDY
               "${tidy}" "--checks=${checks}" "--warnings-as-errors=bugprone-use-after-move"
               "--extra-arg-before=-isystem${compat}" "--extra-arg=-Wno-unknown-warning-option"
               "--extra-arg=-Wno-unused-command-line-argument")
endfunction()
