#!/usr/bin/env bash
# Builds the library, examples and run-time test suites with sanitizers and runs them:
#   scripts/sanitize.sh asan   AddressSanitizer + UndefinedBehaviorSanitizer (build/asan)
#   scripts/sanitize.sh tsan   ThreadSanitizer (build/tsan)
# The compile-fail, lint and package suites do not run code and are left to scripts/test.sh.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
kind="${1:?usage: scripts/sanitize.sh asan|tsan}"
case "$kind" in
  asan) export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" ;;
  tsan) export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1" ;;
  *) echo "unknown sanitizer preset: $kind (asan or tsan)" >&2; exit 2 ;;
esac

scripts/setup.sh
cmake --preset "$kind" >/dev/null
cmake --build --preset "$kind" -j "$(nproc)"
ctest --preset "$kind" -j2
