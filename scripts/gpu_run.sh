#!/usr/bin/env bash
# The GPU test run, one command on a GPU machine (cmake, ninja, g++, CUDA driver + toolkit):
#   1. GoogleTest: the system's when installed; else built from sources (no network needed):
#      $CTILE_GTEST_SRC, or build-deps/googletest (carried to the GPU machine, see --stage-deps),
#      or /usr/src/googletest. Installed into build/gpu-deps/gtest.
#   2. configure Release with every suite (-DCTILE_GPU_TESTS=ON) into build/gpu and build the GPU
#      suites (test_gpu, test_cuda_codegen_gpu), the examples and the benchmarks; CPU_SUITES=1
#      builds and runs the CPU suites too (CI runs those on every commit; they are skipped by
#      default to keep the GPU run short)
#   3. ctest: the examples on the GPU and on the CPU, the GPU suites (label gpu: tests/gpu and
#      test_cuda_codegen_gpu). The suites refuse to run with CTILE_RACE_CHECK set, with a non-CUDA
#      backend or without a GPU, and every test checks that kernels ran on the GPU.
#   4. the tests/gpu suite under compute-sanitizer --tool memcheck (with --leak-check full and
#      --track-stream-ordered-races all where the sanitizer has them: a leak or a stream-ordered
#      race fails the run), then --tool racecheck. One known exception: the tool does not order a
#      graph's second root after the launching stream (docs/cuda_runtime.md, "Graphs and
#      compute-sanitizer"), so runtime_graph_inputs_change_between_replays runs under memcheck
#      without the stream-ordered tracking, in a step of its own
# Logs and a summary (gpu_summary.txt) go to ${OUT:-results}/ (more than the 8 files a device call
# brings back: there, run scripts/gpu_all.sh, SKIP_BENCH=1 for the tests alone, which packs them).
# Exits non-zero if any step failed,
# including when GoogleTest is missing (test_cuda_codegen_gpu would not run): GPU_ONLY=1 accepts
# that and builds only tests/gpu and the examples.
# Environment: OUT, CTILE_GPU_SEED and CTILE_TEST_SEED (reproduce a run), SANITIZE=0 (skip step 4),
# CPU_SUITES=1, GPU_ONLY=1, JOBS, CTILE_GTEST_SRC, CTILE_GTEST_FROM_SOURCE=1 (build GoogleTest from
# its sources even where the system has it: how this path is tested on a machine without a GPU),
# CTILE_COMMIT.
#
#   scripts/gpu_run.sh --stage-deps   (on a machine with /usr/src/googletest, before sending the tree)
# copies GoogleTest's sources into build-deps/googletest (ignored by git: build*/); a device call
# that carries build-deps brings them along.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

gtest_src_candidates=("${CTILE_GTEST_SRC:-}" "$root/build-deps/googletest" /usr/src/googletest)
if [[ "${1:-}" == --stage-deps ]]; then
  src="${CTILE_GTEST_SRC:-/usr/src/googletest}"
  [[ -f "$src/CMakeLists.txt" ]] || { echo "gpu_run: no GoogleTest sources at $src" >&2; exit 1; }
  rm -rf "$root/build-deps/googletest"
  mkdir -p "$root/build-deps"
  cp -r "$src" "$root/build-deps/googletest"
  echo "gpu_run: GoogleTest sources staged in build-deps/googletest ($(du -sh "$root/build-deps" | cut -f1)); carry build-deps"
  exit 0
fi

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
  note "$(printf '%-40s exit %3d  %5ds  %s' "$name" "$rc" "$((SECONDS - t0))" "$(basename "$log")")"
  [[ $rc -ne 0 ]] && failed=1
  return $rc
}

for tool in cmake ninja g++; do
  command -v "$tool" >/dev/null || { echo "gpu_run: $tool is missing" >&2; exit 2; }
done
export CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
export PATH="$PATH:$CUDA_HOME/bin"
jobs="${JOBS:-$(nproc)}"

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

# 1. GoogleTest.
have_system_gtest() {
  [[ -f /usr/include/gtest/gtest.h || -f /usr/local/include/gtest/gtest.h ]] || return 1
  compgen -G "/usr/lib/*/cmake/GTest/GTestConfig.cmake" >/dev/null || compgen -G "/usr/lib/cmake/GTest/GTestConfig.cmake" >/dev/null ||
    compgen -G "/usr/local/lib*/cmake/GTest/GTestConfig.cmake" >/dev/null
}
gtest_args=()
gpu_only=OFF
if [[ "${GPU_ONLY:-0}" == 1 ]]; then
  gpu_only=ON
  note "GoogleTest: not used (GPU_ONLY=1): tests/gpu and the examples only, test_cuda_codegen_gpu NOT run"
elif have_system_gtest && [[ "${CTILE_GTEST_FROM_SOURCE:-0}" != 1 ]]; then
  note "GoogleTest: the system's"
else
  gsrc=""
  for c in "${gtest_src_candidates[@]}"; do
    [[ -n "$c" && -f "$c/CMakeLists.txt" ]] && { gsrc="$c"; break; }
  done
  if [[ -z "$gsrc" ]]; then
    note "GoogleTest: NOT FOUND (no system package, no sources in ${gtest_src_candidates[*]}): test_cuda_codegen_gpu cannot run"
    note "  stage the sources with scripts/gpu_run.sh --stage-deps and carry build-deps"
    failed=1
    gpu_only=ON
  else
    gprefix="$root/build/gpu-deps/gtest"
    if [[ ! -f "$gprefix/lib/cmake/GTest/GTestConfig.cmake" ]]; then
      step "GoogleTest from $gsrc" "$out/gtest_build.log" bash -c "
        cmake -S '$gsrc' -B '$root/build/gpu-deps/gtest-build' -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_GMOCK=OFF \
          -DINSTALL_GTEST=ON -DCMAKE_INSTALL_PREFIX='$gprefix' -DCMAKE_INSTALL_LIBDIR=lib -DCMAKE_POLICY_VERSION_MINIMUM=3.5 &&
        cmake --build '$root/build/gpu-deps/gtest-build' -j '$jobs' && cmake --install '$root/build/gpu-deps/gtest-build'" ||
        { tail -n 30 "$out/gtest_build.log"; gpu_only=ON; }
    else
      note "GoogleTest: built earlier in $gprefix"
    fi
    [[ $gpu_only == OFF ]] && gtest_args=(-DCMAKE_PREFIX_PATH="$gprefix" -DGTest_DIR="$gprefix/lib/cmake/GTest")
  fi
fi

# 2. Configure and build.
tests_flag=ON
[[ $gpu_only == ON ]] && tests_flag=OFF
step "configure (Release)" "$out/configure.log" \
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCTILE_GPU_TESTS=ON -DCTILE_GPU_ONLY_TESTS="$gpu_only" \
  -DCTILE_BUILD_TESTS="$tests_flag" -DCTILE_BUILD_EXAMPLES=ON -DCTILE_BUILD_BENCH=ON "${gtest_args[@]}" ||
  { tail -n 30 "$out/configure.log"; exit 1; }
# The example list may span lines: everything from "set(CTILE_EXAMPLES" to the first ")".
examples="$(awk '/^set\(CTILE_EXAMPLES /{f=1; sub(/^set\(CTILE_EXAMPLES /, "")} f{p=index($0, ")"); if (p) {print substr($0, 1, p-1); exit} print}' \
  examples/CMakeLists.txt | tr -s ' \n' '  ')"
[[ -n "${examples// /}" ]] || { echo "gpu_run: no examples found in examples/CMakeLists.txt" >&2; exit 2; }
targets=(test_gpu test_gpu_simt ctile_bench ctile_launch_overhead $examples)
[[ $gpu_only == OFF ]] && targets+=(test_cuda_codegen_gpu)
if [[ "${CPU_SUITES:-0}" == 1 && $gpu_only == OFF ]]; then
  step "build (everything)" "$out/build.log" cmake --build "$build" -j "$jobs" || { tail -n 40 "$out/build.log"; exit 1; }
else
  step "build (GPU suites, examples, benchmarks)" "$out/build.log" cmake --build "$build" -j "$jobs" --target "${targets[@]}" ||
    { tail -n 40 "$out/build.log"; exit 1; }
fi

# Compiled kernels go to a fresh cache inside the build tree (the disk cache is exercised too).
export CTILE_CACHE_DIR="$build/kernel-cache"
rm -rf "$CTILE_CACHE_DIR"
unset CTILE_BACKEND CTILE_RACE_CHECK

# Is the GPU usable? Without it the GPU suites fail (they never skip); say so first.
probe="$("$build/tests/gpu/test_gpu" --probe 2>&1)"
if [[ $? -eq 0 ]]; then
  note "device: $probe"
else
  note "NO USABLE GPU: $probe"
  failed=1
fi

# 3. CTest.
ct=(ctest --test-dir "$build" --output-on-failure --timeout 1800)
if [[ "${CPU_SUITES:-0}" == 1 && $gpu_only == OFF ]]; then
  exclude='gpu|examples'
  if ! command -v clang-tidy >/dev/null && ! compgen -c clang-tidy- >/dev/null; then
    exclude+='|lint'  # the lint suite needs clang-tidy
    note "clang-tidy not found: label lint skipped"
  fi
  step "ctest CPU suites (CTILE_BACKEND=cpu)" "$out/ctest_cpu_suites.log" \
    env CTILE_BACKEND=cpu "${ct[@]}" -j "$jobs" -LE "^($exclude)\$"
fi
step "ctest examples on the GPU" "$out/ctest_examples_gpu.log" "${ct[@]}" -L '^examples$'
step "ctest examples on the CPU" "$out/ctest_examples_cpu.log" env CTILE_BACKEND=cpu "${ct[@]}" -L '^examples$'
# The GPU suites in parallel processes (test_cuda_codegen_gpu is one process per kernel).
step "ctest GPU suites (label gpu)" "$out/ctest_gpu.log" "${ct[@]}" -V -j "$jobs" -L '^gpu$'
{
  sed 's/^[0-9]*: //' "$out/ctest_gpu.log" | grep -E '^\[ (PASS|FAIL) \]|GPU tests passed|^FAILED:|^REFUSED|^seed|^\[  FAILED  \]'
  grep -E 'tests passed, .* failed out of' "$out/ctest_gpu.log"
} >"$out/gpu_suite_results.txt"
note "  tests/gpu: $(grep -c '\[ PASS \]' "$out/gpu_suite_results.txt") passed, $(grep -c '\[ FAIL \]' "$out/gpu_suite_results.txt") failed"
note "  cuda_codegen_gpu (one CTest test each): $(grep -c 'Test *#[0-9]*: cuda_codegen_gpu\..* Passed' "$out/ctest_gpu.log") passed," \
  "$(grep -cE 'Test *#[0-9]*: cuda_codegen_gpu\..*(Failed|Exception|Timeout|Not Run)' "$out/ctest_gpu.log") failed"
note "  label gpu: $(grep -E 'tests passed, .* failed out of' "$out/ctest_gpu.log" | tail -n 1)"
# A skipped GPU test proves nothing (CTest counts it as passed): it fails the run.
skipped="$(grep -c '\*\*\*Skipped' "$out/ctest_gpu.log")"
if [[ "$skipped" -gt 0 ]]; then
  note "  $skipped GPU test(s) SKIPPED: a GPU test must run, not skip"
  failed=1
fi

# 4. compute-sanitizer over tests/gpu.
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
    mem=(--tool memcheck --error-exitcode 97 --print-limit 200)
    # Gating (issue 9): leaks (the staging buffers are freed at teardown) and stream-ordered races
    # (every use of a stream-ordered allocation is ordered after it, and its free after every use, by
    # stream events, never by a host wait).
    has --leak-check && mem+=(--leak-check full)
    mem_known=("${mem[@]}")  # the known exception below: leaks and memory errors, not stream order
    has --track-stream-ordered-races && mem+=(--track-stream-ordered-races all)
    race=(--tool racecheck --error-exitcode 97 --print-limit 200)
    has --racecheck-report && race+=(--racecheck-report all)
    note "compute-sanitizer: $("$san" --version 2>&1 | tail -n 1)"
    # The known exception (step 4 above): that test with leaks and memory errors checked, stream
    # order not; every other test with both.
    known=runtime_graph_inputs_change_between_replays
    step "compute-sanitizer memcheck" "$out/sanitizer_memcheck.log" "$san" "${mem[@]}" "$build/tests/gpu/test_gpu" "-$known"
    step "compute-sanitizer memcheck ($known)" "$out/sanitizer_memcheck_known.log" "$san" "${mem_known[@]}" \
      "$build/tests/gpu/test_gpu" "$known"
    step "compute-sanitizer racecheck" "$out/sanitizer_racecheck.log" "$san" "${race[@]}" "$build/tests/gpu/test_gpu"
    for t in memcheck memcheck_known racecheck; do
      note "  $t: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY' "$out/sanitizer_$t.log" | tr '\n' ' ')"
      note "  $t: $(grep -E 'GPU tests passed' "$out/sanitizer_$t.log" | tail -n 1)"
      # The first reports and the test each one happened in, for triage.
      awk '/^\[ RUN  \]/ { test = $4 } /^========= [A-Z]/ && !/SUMMARY|COMPUTE-SANITIZER/ && n < 12 { print "    " test ": " $0; n++ }' \
        "$out/sanitizer_$t.log" | tee -a "$summary"
    done
  fi
fi

note "$([[ $failed == 0 ]] && echo 'ALL STEPS PASSED' || echo 'SOME STEPS FAILED (see the logs)')  -> $out"
exit "$failed"
