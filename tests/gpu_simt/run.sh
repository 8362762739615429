#!/usr/bin/env bash
# The SIMT GPU suite in one call, for a GPU machine: a Release build of the GPU-only test set
# (no GoogleTest needed) into build/gpu-simt, then
#   1. the SIMT examples on the GPU (ctest example.simt_*),
#   2. tests/gpu_simt: every SIMT kernel on the CPU and the GPU, compared,
#   3. the same suite under compute-sanitizer memcheck and racecheck (when installed),
# with logs and a summary in ${OUT:-results}/gpu_simt_summary_<stage>.txt. Exit status: 0 when all passed.
# STAGE=suite runs 1 and 2, STAGE=sanitize only 3 (reusing the build), STAGE=all (the default) all.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
out="${OUT:-$root/results}"
mkdir -p "$out"
build="${CTILE_GPU_SIMT_BUILD:-build/gpu-simt}"
stage="${STAGE:-all}"
summary="$out/gpu_simt_summary${stage:+_$stage}.txt"
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }

note "== SIMT GPU suite, commit ${CTILE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}, $(date -u +%FT%TZ)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/   GPU: /' | tee -a "$summary"
if ! cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCTILE_GPU_ONLY_TESTS=ON -DCTILE_BUILD_BENCH=OFF \
     -DCTILE_BUILD_TOOL=OFF >"$out/gpu_simt_configure.log" 2>&1 ||
   ! cmake --build "$build" -j "$(nproc)" --target test_gpu_simt simt_vector_add simt_sum simt_histogram simt_stencil \
     simt_transpose >"$out/gpu_simt_build.log" 2>&1; then
  note "BUILD FAILED (see gpu_simt_build.log)"; tail -30 "$out/gpu_simt_build.log"; exit 1
fi
status=0
if [[ $stage != sanitize ]]; then
  ctest --test-dir "$build" -R "^example\.simt_" --output-on-failure >"$out/gpu_simt_examples.txt" 2>&1 || status=1
  note "examples on the GPU: $(grep -E 'tests passed|tests failed' "$out/gpu_simt_examples.txt" | tail -1)"
  CTILE_BACKEND= "$build/tests/gpu_simt/test_gpu_simt" >"$out/gpu_simt_suite.txt" 2>&1; rc=$?
  [[ $rc -eq 0 ]] || status=1
  note "tests/gpu_simt (exit $rc): $(tail -1 "$out/gpu_simt_suite.txt")"
  grep -E "^(FAIL|  FAILED)" "$out/gpu_simt_suite.txt" | head -20 | tee -a "$summary"
fi
cs="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
if [[ $stage == suite ]]; then
  :
elif [[ -x "$cs" ]]; then
  for tool in memcheck racecheck; do
    extra=(); [[ $tool == memcheck ]] && extra=(--leak-check full)
    CTILE_BACKEND= "$cs" --tool "$tool" "${extra[@]}" --error-exitcode 86 --print-limit 50 \
      "$build/tests/gpu_simt/test_gpu_simt" >"$out/gpu_simt_$tool.txt" 2>&1; rc=$?
    [[ $rc -eq 0 ]] || status=1
    note "compute-sanitizer $tool (exit $rc): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/gpu_simt_$tool.txt" | tail -1)"
  done
else
  note "compute-sanitizer not found: the sanitizer runs are skipped"
fi
note "== overall: $([[ $status -eq 0 ]] && echo PASS || echo FAIL)"
exit "$status"
