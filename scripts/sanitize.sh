#!/usr/bin/env bash
# Builds the library and the run-time suites with sanitizers and runs them:
#   scripts/sanitize.sh asan   AddressSanitizer + UndefinedBehaviorSanitizer (build/asan)
#   scripts/sanitize.sh tsan   ThreadSanitizer (build/tsan)
#   scripts/sanitize.sh all    both (what .ci/run does)
# Each runs the CTest labels runtime, cache, correctness, error and fake_gpu (the CUDA runtime's
# streams, completion threads and graphs on the fake driver), the multi-thread stress test
# (Stress.* and LaunchStress.*, label runtime; CTILE_STRESS_SECONDS, default 2) included. Only the
# test executables of those labels are built (test_runtime, test_runtime_launch, test_runtime_stress, test_tune, test_compile_only, test_disk_cache, test_correctness,
# test_errors, test_interop, test_dlpack_abi, test_cuda_runtime and test_cuda_graph with the fake driver), with neither examples nor benchmarks, and at -O0 (ASan+UBSan) / -O1 (TSan): UBSan
# at -O2 costs several times the compile time, and CI has 2 cores. A sanitizer report fails the
# test it happens in (halt_on_error, abort_on_error, -fno-sanitize-recover); the
# sanitizer.canary.* tests prove it with one deliberate bug per sanitizer. A test that skips
# outside tests/skips_allowed.txt fails the run (scripts/check_skips.sh), as in scripts/test.sh.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
kind="${1:?usage: scripts/sanitize.sh asan|tsan|all}"
if [[ "$kind" == all ]]; then
  "$0" asan
  exec "$0" tsan
fi

labels='^(runtime|cache|correctness|error|fake_gpu)$'
targets=(test_runtime test_runtime_launch test_runtime_stress test_tune test_compile_only test_disk_cache test_correctness test_errors test_interop sanitizer_canary test_cuda_runtime test_cuda_graph ctile_fake_cuda)
# The DLPack ABI test exists where the system header does (scripts/setup.sh installs libdlpack-dev).
[[ -f /usr/include/dlpack/dlpack.h ]] && targets+=(test_dlpack_abi)
config=(-DCTILE_BUILD_TESTS=ON -DCTILE_BUILD_EXAMPLES=OFF -DCTILE_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=Debug)
case "$kind" in
  asan)
    export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
    config+=(-DCMAKE_CXX_FLAGS_DEBUG="-g -O0")
    ;;
  tsan)
    # The suppressions (each with its reason) cover libstdc++'s uninstrumented atomics only.
    export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$root/scripts/tsan_suppressions.txt"
    config+=(-DCMAKE_CXX_FLAGS_DEBUG="-g -O1")
    ;;
  *) echo "unknown sanitizer preset: $kind (asan, tsan or all)" >&2; exit 2 ;;
esac
if command -v ccache >/dev/null 2>&1 && [[ "${CCACHE_DISABLE:-}" != 1 ]]; then
  config+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

scripts/setup.sh >/dev/null
echo "== sanitize $kind: configure and build ${targets[*]} (build/$kind)"
cmake --preset "$kind" "${config[@]}" >/dev/null
cmake --build --preset "$kind" -j "$(nproc)" --target "${targets[@]}"

# ThreadSanitizer's shadow memory needs the usual address-space layout; kernels with high mmap
# randomisation (vm.mmap_rnd_bits > 28) break it, so run without ASLR where setarch can.
run=()
if [[ "$kind" == tsan ]] && setarch "$(uname -m)" -R true 2>/dev/null; then
  run=(setarch "$(uname -m)" -R)
fi

echo "== sanitize $kind: ctest -L '$labels'"
log="build/$kind/ctest-sanitize.log"
status=0
"${run[@]}" ctest --test-dir "build/$kind" -L "$labels" --output-on-failure -j2 2>&1 | tee "$log" || status=$?
scripts/check_skips.sh "$log" || status=1
exit "$status"
