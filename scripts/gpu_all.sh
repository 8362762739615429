#!/usr/bin/env bash
# Everything on a GPU machine in one call, in about 9 minutes on an H200 (16 cores):
#   1. scripts/gpu_run.sh: GoogleTest (system or sources), build, the examples, the GPU suites
#      (tests/gpu and test_cuda_codegen_gpu), compute-sanitizer memcheck and racecheck
#   2. the benchmarks: ctile_bench (fresh kernel cache: cold JIT per kernel, results checked, per-call
#      device time), ctile_bench --jit-only (disk-cache hits), the launch overhead, the peers
#      (bench/peers.py: torch, torch.compile, autotuned Triton; cut off at the time budget, the rest
#      marked skipped), the report (bench/report.py)
#   3. a short summary, printed last
# Seven files go to ${OUT:-results} (a device call brings back at most 8): summary.txt,
# gpu_summary.txt and gpu_suite_results.txt (the GPU suites), report.md, results.json (every record),
# plot.png, and logs.tar.gz (every log and record: tests/ from gpu_run.sh, bench/, report/). Exit
# status: 0 when every step passed.
# Environment: OUT, BUDGET_S (seconds for the whole call, default 540), BENCH_QUICK=1 (small
# benchmark sizes), SKIP_TESTS=1 / SKIP_BENCH=1, CTILE_COMMIT, and gpu_run.sh's (SANITIZE, JOBS, ...).
#
# Before a device call from a machine with /usr/src/googletest: scripts/gpu_run.sh --stage-deps, and
# carry build-deps (the GPU machine has no network and no GoogleTest).
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
t_start=$(date +%s)
budget="${BUDGET_S:-540}"
dest="${OUT:-$root/results}"
mkdir -p "$dest"
dest="$(cd "$dest" && pwd)"
out="$root/build/gpu-all"  # the work folder: logs and records, packed into $dest at the end
rm -rf "$out"
mkdir -p "$out/tests" "$out/bench" "$out/report"
summary="$out/summary.txt"
: >"$summary"
failed=0
note() { echo "$*" >>"$summary"; }
elapsed() { echo $(($(date +%s) - t_start)); }
stage() {  # stage <name> <log> <command...>
  local name="$1" log="$2"
  shift 2
  local t0=$SECONDS
  "$@" >"$log" 2>&1
  local rc=$?
  note "$(printf '%-34s exit %3d  %4ds  (at %4ds)' "$name" "$rc" "$((SECONDS - t0))" "$(elapsed)")"
  [[ $rc -ne 0 ]] && failed=1
  return $rc
}

commit="${CTILE_COMMIT:-}"
[[ -z "$commit" && -e "$root/.git" ]] && commit="$(git -C "$root" rev-parse --short HEAD 2>/dev/null)"
export CTILE_COMMIT="${commit:-unknown (no .git here; set CTILE_COMMIT)}"
note "date: $(date -u +%FT%TZ)  commit: $CTILE_COMMIT"
note "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
note "budget: ${budget}s"

# 1. Build and the GPU suites.
if [[ "${SKIP_TESTS:-0}" != 1 ]]; then
  stage "gpu_run.sh (build, GPU suites)" "$out/tests/gpu_run.log" env OUT="$out/tests" scripts/gpu_run.sh
else
  # The build only (the benchmarks need it).
  stage "build (SKIP_TESTS=1)" "$out/tests/gpu_run.log" bash -c \
    'cmake -S . -B build/gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCTILE_BUILD_TESTS=OFF -DCTILE_BUILD_EXAMPLES=OFF &&
     cmake --build build/gpu -j "$(nproc)" --target ctile_bench ctile_launch_overhead'
fi
bench_dir=build/gpu/bench

# 2. Benchmarks.
if [[ "${SKIP_BENCH:-0}" != 1 ]]; then
  b="$out/bench"
  quick=()
  [[ "${BENCH_QUICK:-0}" == 1 ]] && quick=(--quick)
  export CTILE_CACHE_DIR="$b/kernel-cache"
  rm -rf "$CTILE_CACHE_DIR"
  unset CTILE_BACKEND CTILE_RACE_CHECK
  rm -f "$b"/*.jsonl
  stage "ctile_bench (cold JIT, timing)" "$b/ctile_bench.log" "$bench_dir/ctile_bench" "${quick[@]}" --out "$b/ctile.jsonl"
  stage "ctile_bench --jit-only (disk hits)" "$b/ctile_jit_warm.log" "$bench_dir/ctile_bench" --jit-only --out "$b/jit_warm.jsonl"
  stage "ctile_launch_overhead" "$b/launch_overhead.log" "$bench_dir/ctile_launch_overhead" --out "$b/launch.jsonl"
  # The peers get what is left of the budget, less a minute for the report and the summary.
  deadline=$((t_start + budget - 60))
  note "peers: deadline in $((deadline - $(date +%s)))s"
  stage "peers.py (torch, compile, Triton)" "$b/peers.log" env PYTHONUNBUFFERED=1 TRITON_CACHE_DIR="$b/triton-cache" \
    python3 bench/peers.py "${quick[@]}" --out "$b/peers.jsonl" --ctile-results "$b/ctile.jsonl" --deadline "$deadline"
  stage "report.py" "$b/report.log" python3 bench/report.py --ctile "$b/ctile.jsonl" --peers "$b/peers.jsonl" \
    --jit-warm "$b/jit_warm.jsonl" --launch "$b/launch.jsonl" --out "$out/report" \
    --meta "date $(date -u +%F), commit $CTILE_COMMIT, $(head -n 2 "$summary" | tail -n 1)"
  rm -rf "$CTILE_CACHE_DIR" "$b/triton-cache"
fi

# 3. The summary, last.
{
  echo
  echo "== GPU suites"
  grep -E '^(device|NO USABLE|GoogleTest)|tests/gpu:|cuda_codegen_gpu|label gpu:|memcheck:|racecheck:|ctest examples|STEPS' \
    "$out/tests/gpu_summary.txt" 2>/dev/null | sed 's/^/  /'
  if [[ -f "$out/report/report_summary.txt" ]]; then
    echo "== Benchmarks (report.md)"
    sed 's/^/  /' "$out/report/report_summary.txt"
  fi
  echo "total: $(elapsed)s of ${budget}s; $([[ $failed == 0 ]] && echo 'ALL STEPS PASSED' || echo 'SOME STEPS FAILED (logs under the output folder)')"
} >>"$summary"
for f in summary.txt tests/gpu_summary.txt tests/gpu_suite_results.txt report/report.md report/results.json report/plot.png; do
  [[ -f "$out/$f" ]] && cp "$out/$f" "$dest/"
done
tar -czf "$dest/logs.tar.gz" -C "$out" --exclude=kernel-cache --exclude=triton-cache . 2>/dev/null
cat "$summary"
exit "$failed"
