#!/usr/bin/env bash
# The GPU test run, one command on a GPU machine (cmake, ninja, g++, CUDA driver + toolkit; no
# GoogleTest needed):
#   1. configure Release with the GPU suite into build/gpu (-DCTILE_GPU_TESTS=ON; when GoogleTest is
#      missing, -DCTILE_GPU_ONLY_TESTS=ON builds only the GPU suite and the examples), build with all cores
#   2. ctest, every label that was built: the CPU suites with CTILE_BACKEND=cpu (they test CPU-stream
#      semantics), the examples on the GPU and again on the CPU, the GPU suite (label gpu)
#   3. the GPU suite under compute-sanitizer --tool memcheck, then --tool racecheck
# Logs and a summary (gpu_summary.txt) go to ${OUT:-results}/. Exits non-zero if any step failed.
# Environment: OUT, CTILE_GPU_SEED (reproduce a run), SANITIZE=0 (skip step 3), GPU_ONLY=1 (skip the
# CPU suites even when GoogleTest is installed), JOBS.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
out="${OUT:-$root/results}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
build="$root/build/gpu"
summary="$out/gpu_summary.txt"
: >"$summary"
failed=0
note() { echo "$*" | tee -a "$summary"; }
step() {  # step <name> <log> <command...>: runs, records the exit status
  local name="$1" log="$2"
  shift 2
  local t0=$SECONDS
  "$@" >"$log" 2>&1
  local rc=$?
  note "$(printf '%-34s exit %3d  %5ds  %s' "$name" "$rc" "$((SECONDS - t0))" "$(basename "$log")")"
  [[ $rc -ne 0 ]] && failed=1
  return $rc
}

for tool in cmake ninja g++; do
  command -v "$tool" >/dev/null || { echo "gpu_run: $tool is missing" >&2; exit 2; }
done
export CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
export PATH="$PATH:$CUDA_HOME/bin"

# CTILE_COMMIT names the commit of a tree sent without its own .git (git would read an outer checkout).
if [[ -n "${CTILE_COMMIT:-}" ]]; then
  commit="$CTILE_COMMIT"
elif [[ -e "$root/.git" ]]; then
  commit="$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$root" diff --quiet 2>/dev/null || echo ' (dirty)')"
else
  commit="unknown (no .git here; set CTILE_COMMIT)"
fi
note "ctile GPU run  $(date -u +%FT%TZ)  commit $commit"
nvidia-smi >"$out/nvidia-smi.txt" 2>&1 && note "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -1)"
note "host: $(nproc) cores, $(g++ --version | head -1), $(cmake --version | head -1)"

# GoogleTest (headers and CMake package) decides between the full build and the GPU-only one;
# GPU_ONLY=1 forces the GPU-only build.
have_gtest() {
  [[ -f /usr/include/gtest/gtest.h || -f /usr/local/include/gtest/gtest.h ]] || return 1
  compgen -G "/usr/lib/*/cmake/GTest/GTestConfig.cmake" >/dev/null || compgen -G "/usr/lib/cmake/GTest/GTestConfig.cmake" >/dev/null ||
    compgen -G "/usr/local/lib*/cmake/GTest/GTestConfig.cmake" >/dev/null
}
gpu_only=ON
[[ "${GPU_ONLY:-0}" != 1 ]] && have_gtest && gpu_only=OFF
note "GoogleTest: $([[ $gpu_only == OFF ]] && echo 'found: full test build' || echo 'not used: GPU suite and examples only')"

tests_flag=ON
[[ $gpu_only == ON ]] && tests_flag=OFF
step "configure (Release)" "$out/configure.log" \
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCTILE_GPU_TESTS=ON \
  -DCTILE_GPU_ONLY_TESTS="$gpu_only" -DCTILE_BUILD_TESTS="$tests_flag" -DCTILE_BUILD_EXAMPLES=ON ||
  { tail -n 30 "$out/configure.log"; exit 1; }
step "build" "$out/build.log" cmake --build "$build" -j "${JOBS:-$(nproc)}" || { tail -n 40 "$out/build.log"; exit 1; }

# Compiled kernels go to a fresh cache inside the build tree (the disk cache is exercised too).
export CTILE_CACHE_DIR="$build/kernel-cache"
rm -rf "$CTILE_CACHE_DIR"
unset CTILE_BACKEND CTILE_RACE_CHECK

# Is the GPU usable? Without it every GPU step would quietly run on (or skip to) the CPU.
probe="$("$build/tests/gpu/test_gpu" --probe 2>&1)"
probe_rc=$?
if [[ $probe_rc -eq 0 ]]; then
  note "device: $probe"
else
  note "NO USABLE GPU: $probe"
  failed=1
fi

labels="$(ctest --test-dir "$build" --print-labels 2>/dev/null | sed -n 's/^  *//p' | tr '\n' ' ')"
note "ctest labels: $labels"
ct=(ctest --test-dir "$build" --output-on-failure -j 1 --timeout 1800)
if [[ $gpu_only == OFF ]]; then
  exclude='gpu|examples'
  if ! command -v clang-tidy >/dev/null && ! compgen -c clang-tidy- >/dev/null; then
    exclude+='|lint'  # the lint suite needs clang-tidy
    note "clang-tidy not found: label lint skipped"
  fi
  step "ctest CPU suites (CTILE_BACKEND=cpu)" "$out/ctest_cpu_suites.log" \
    env CTILE_BACKEND=cpu "${ct[@]}" -j "$(nproc)" -LE "^($exclude)\$"
fi
step "ctest examples on the GPU" "$out/ctest_examples_gpu.log" "${ct[@]}" -L '^examples$'
step "ctest examples on the CPU" "$out/ctest_examples_cpu.log" env CTILE_BACKEND=cpu "${ct[@]}" -L '^examples$'
step "ctest GPU suite (label gpu)" "$out/ctest_gpu.log" "${ct[@]}" -V -L '^gpu$'
sed 's/^[0-9]*: //' "$out/ctest_gpu.log" | grep -E '^\[ (PASS|FAIL) \]|GPU tests passed|^FAILED:|^SKIPPED|^seed' >"$out/gpu_suite_results.txt"
note "  $(grep -c '\[ PASS \]' "$out/gpu_suite_results.txt") GPU tests passed, $(grep -c '\[ FAIL \]' "$out/gpu_suite_results.txt") failed"

if [[ "${SANITIZE:-1}" != 0 ]]; then
  san="$(command -v compute-sanitizer || true)"
  if [[ -z "$san" ]]; then
    note "compute-sanitizer: not found (looked in PATH and $CUDA_HOME/bin): skipped"
    failed=1
  else
    # Shorter slow kernels: the sanitizer runs every kernel many times slower.
    export CTILE_GPU_SLOW_ITERS=2000
    help="$("$san" --help 2>&1)"
    has() { grep -q -- "$1" <<<"$help"; }
    # memcheck and racecheck gate the run. The stream-ordered-race tracking of memcheck runs as a
    # third, informational step: with it (and leak checking) an earlier run stopped with 701
    # reports before the first test, while plain memcheck of the same binary was clean; its
    # reports are listed below for triage but do not fail the run.
    mem=(--tool memcheck --error-exitcode 97 --print-limit 200)
    race=(--tool racecheck --error-exitcode 97 --print-limit 200)
    has --racecheck-report && race+=(--racecheck-report all)
    memx=(--tool memcheck --print-limit 50)
    has --leak-check && memx+=(--leak-check full)
    has --track-stream-ordered-races && memx+=(--track-stream-ordered-races all)
    note "compute-sanitizer: $("$san" --version 2>&1 | tail -n 1)"
    step "compute-sanitizer memcheck" "$out/sanitizer_memcheck.log" "$san" "${mem[@]}" "$build/tests/gpu/test_gpu"
    step "compute-sanitizer racecheck" "$out/sanitizer_racecheck.log" "$san" "${race[@]}" "$build/tests/gpu/test_gpu"
    timeout "${EXTRA_MEMCHECK_TIMEOUT:-120}" "$san" "${memx[@]}" "$build/tests/gpu/test_gpu" \
      >"$out/sanitizer_memcheck_extra.log" 2>&1
    note "compute-sanitizer memcheck --leak-check --track-stream-ordered-races (informational): exit $?"
    grep -m 40 -E '^=========' "$out/sanitizer_memcheck_extra.log" | grep -v -E '^=========\s*$' | head -n 40 | sed 's/^/    /' |
      tee -a "$summary"
    for t in memcheck racecheck; do
      note "  $t: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY' "$out/sanitizer_$t.log" | tr '\n' ' ')"
      # The first reports and the test each one happened in, for triage.
      awk '/^\[ RUN  \]/ { test = $4 } /^========= [A-Z]/ && !/SUMMARY|COMPUTE-SANITIZER/ && n < 12 { print "    " test ": " $0; n++ }' \
        "$out/sanitizer_$t.log" | tee -a "$summary"
    done
  fi
fi

note "$([[ $failed == 0 ]] && echo 'ALL STEPS PASSED' || echo 'SOME STEPS FAILED (see the logs)')  -> $out"
exit "$failed"
