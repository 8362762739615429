#!/usr/bin/env bash
# The runtime's stress tests (tests/unit/runtime/test_stress.cpp: many host threads launching into
# own and shared streams, single-flight compiles, bound kernels and graph replays per thread) under
# ThreadSanitizer, on the CPU backend. Builds only the library and that test (build/tsan-stress,
# RelWithDebInfo, ccache when installed) and fails on any report. Run by scripts/test.sh (CI);
# CTILE_STRESS_SECONDS (default 2) bounds each test; TSAN_STRESS=0 skips it.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
[[ "${TSAN_STRESS:-1}" == 0 ]] && { echo "tsan_stress: skipped (TSAN_STRESS=0)"; exit 0; }

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B build/tsan-stress -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCTILE_SANITIZE=thread \
  -DCTILE_BUILD_TESTS=ON -DCTILE_BUILD_EXAMPLES=OFF -DCTILE_BUILD_BENCH=OFF "${launcher[@]}" >/dev/null
cmake --build build/tsan-stress -j "${JOBS:-$(nproc)}" --target test_runtime_stress

export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:exitcode=66"
CTILE_BACKEND=cpu CTILE_STRESS_SECONDS="${CTILE_STRESS_SECONDS:-2}" timeout 600 \
  build/tsan-stress/tests/unit/runtime/test_runtime_stress
echo "tsan_stress: no ThreadSanitizer reports"
