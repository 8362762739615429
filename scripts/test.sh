#!/usr/bin/env bash
# Configures a Debug build with the test suites (build/debug), builds it and runs every suite
# under CTest: unit, correctness, error, compile_fail (GCC and clang), lint, examples, package.
# Then lists the tests that skipped and fails if one is not allowed (tests/skips_allowed.txt,
# scripts/check_skips.sh). Exits non-zero if a test failed or skipped without leave.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

scripts/setup.sh

config=(-DCMAKE_BUILD_TYPE=Debug -DCTILE_BUILD_TESTS=ON -DCTILE_BUILD_EXAMPLES=ON)
if command -v ccache >/dev/null 2>&1 && [[ "${CCACHE_DISABLE:-}" != 1 ]]; then
  config+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)  # a no-op cost when the cache is cold (CI)
fi
cmake -S . -B build/debug -G Ninja "${config[@]}"
cmake --build build/debug -j "$(nproc)"

status=0
ctest --test-dir build/debug --output-on-failure -j2 2>&1 | tee build/debug/ctest.log || status=$?
scripts/check_skips.sh build/debug/ctest.log || status=1
exit "${status}"
