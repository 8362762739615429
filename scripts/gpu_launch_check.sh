#!/usr/bin/env bash
# Issue 9 on a GPU machine in one call: the launch-overhead benchmark against its targets (and torch's
# CUDA-graph replay of the same kernels as a peer, when torch is installed), the GPU
# suite's runtime tests (graphs against eager launches, bound kernels, the many-thread stress run),
# the graph example, and compute-sanitizer memcheck with leak checking and stream-ordered race
# tracking over those tests (gating). Release build in build/gpu-launch (no GoogleTest needed).
# Results under ${OUT:-results}/, three files (a run's results must come back whole): launch_check_summary.txt
# (printed last: every step, the benchmark's summary lines, the sanitizer's reports with their
# tests), launch.jsonl (one record per measurement) and logs.tar.gz (every log, the sanitizer's
# among them). Exit status 0 when every step passed; a target the benchmark reports as NOT met is
# listed in the summary but does not fail the run (it is a measurement).
# Environment: OUT, JOBS, SANITIZE=0 (skip the sanitizer), CTILE_COMMIT, BUILD_DIR.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
out="${OUT:-$root/results}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
build="${BUILD_DIR:-$root/build/gpu-launch}"
summary="$out/launch_check_summary.txt"
: >"$summary"
logs="$build/launch-logs"  # bundled into $out/logs.tar.gz at the end
rm -rf "$logs"
mkdir -p "$logs"
failed=0
note() { echo "$*" >>"$summary"; }
step() {  # step <name> <log> <command...>
  local name="$1" log="$2"
  shift 2
  local t0=$SECONDS
  "$@" >"$log" 2>&1
  local rc=$?
  note "$(printf '%-44s exit %3d  %5ds  %s' "$name" "$rc" "$((SECONDS - t0))" "$(basename "$log")")"
  [[ $rc -ne 0 ]] && failed=1
  return $rc
}
finish() {
  tar -C "$logs" -czf "$out/logs.tar.gz" . 2>/dev/null || note "could not bundle the logs"
  note "$([[ $failed == 0 ]] && echo 'ALL STEPS PASSED' || echo 'SOME STEPS FAILED (see the logs)')  -> $out (logs in logs.tar.gz)"
  cat "$summary"
  exit "$failed"
}

export CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
export PATH="$PATH:$CUDA_HOME/bin"
commit="${CTILE_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)}"
note "ctile launch check  $(date -u +%FT%TZ)  commit $commit"
note "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
note "host: $(nproc) cores"

step "configure (Release, GPU suite only)" "$logs/configure.log" \
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCTILE_BUILD_TESTS=OFF -DCTILE_GPU_ONLY_TESTS=ON \
  -DCTILE_GPU_TESTS=ON -DCTILE_BUILD_EXAMPLES=ON -DCTILE_BUILD_BENCH=ON || finish
step "build" "$logs/build.log" cmake --build "$build" -j "${JOBS:-$(nproc)}" --target test_gpu ctile_launch_overhead graph_step ||
  finish

unset CTILE_BACKEND CTILE_RACE_CHECK
export CTILE_CACHE_DIR="$build/kernel-cache"
rm -rf "$CTILE_CACHE_DIR"
gpu_test="$build/tests/gpu/test_gpu"
if ! probe="$("$gpu_test" --probe 2>&1)"; then
  note "NO USABLE GPU: $probe"
  failed=1
  finish
fi
note "device: $probe"

# 1. The runtime part of the GPU suite (runtime_graph_*, runtime_bound_*, runtime_stress_* among them).
step "test_gpu runtime_ (graphs, bind, stress)" "$logs/gpu_runtime.log" "$gpu_test" runtime_
grep -E '^\[ (PASS|FAIL) \]|GPU tests passed|launches from' "$logs/gpu_runtime.log" | sed 's/^/    /' >>"$summary"
step "example graph_step on the GPU" "$logs/graph_step.log" "$build/examples/graph_step"
sed 's/^/    /' "$logs/graph_step.log" >>"$summary"

# 2. The benchmark (its summary lines start with '#').
rm -f "$out/launch.jsonl"
step "ctile_launch_overhead" "$logs/launch_overhead.log" "$build/bench/ctile_launch_overhead" --out "$out/launch.jsonl"
grep '^#' "$logs/launch_overhead.log" | sed 's/^/    /' >>"$summary"
# The same launch loops with the completion thread polling cuEventQuery instead of waiting in
# cuEventSynchronize (CTILE_COMPLETER_WAIT=poll): which of the two costs the launching thread less.
CTILE_COMPLETER_WAIT=poll step "ctile_launch_overhead, completer polling" "$logs/launch_overhead_poll.log" \
  "$build/bench/ctile_launch_overhead" --only enqueue,sync,bound
grep -E '^# (cached|pre-bound|launch|  those)' "$logs/launch_overhead_poll.log" | sed 's/^/    completer polling: /' >>"$summary"
# The same loops with one completion wait per launch (CTILE_COMPLETER_BATCH=1: as before the
# completion threads waited once per batch): what batching saves the launching thread.
CTILE_COMPLETER_BATCH=1 step "ctile_launch_overhead, one wait per launch" "$logs/launch_overhead_unbatched.log" \
  "$build/bench/ctile_launch_overhead" --only enqueue,sync,bound
grep -E '^# (cached|pre-bound|launch)' "$logs/launch_overhead_unbatched.log" | sed 's/^/    one wait per launch: /' >>"$summary"
# ctile's own host cost on this machine's CPU: the same loops over the null driver (bench/null_cuda.cpp:
# no GPU, no host cost of its own). Set against the real run it splits ctile - raw into ctile's code
# and what the real driver adds to it (its locks, the completion thread's driver calls, caches).
CTILE_LIBCUDA="$build/bench/libnull_cuda.so" NULL_CUDA_KERNEL_US=2 \
  step "ctile_launch_overhead on the null driver" "$logs/launch_overhead_null.log" \
  "$build/bench/ctile_launch_overhead" --only enqueue,sync,bound
grep -E '^# (cached|pre-bound|launch|  those)' "$logs/launch_overhead_null.log" | sed 's/^/    null driver: /' >>"$summary"
# The peer: torch's CUDA-graph replay of the same small kernels (informational; skipped without torch).
timeout 300 python3 bench/torch_graph_peer.py --out "$out/launch.jsonl" >"$logs/torch_graph_peer.log" 2>&1
note "torch_graph_peer.py (peer, informational): exit $?"
grep -E '^# torch|skipped|WRONG' "$logs/torch_graph_peer.log" | sed 's/^/    /' >>"$summary"

# 3. compute-sanitizer over the same tests: memcheck with leak checking and stream-ordered race
#    tracking gates this run (issue 9: the staging buffers freed at teardown, allocations ordered
#    before their first use by stream events).
if [[ "${SANITIZE:-1}" != 0 ]]; then
  san="$(command -v compute-sanitizer || true)"
  if [[ -z "$san" ]]; then
    note "compute-sanitizer not found (PATH, $CUDA_HOME/bin)"
    failed=1
  else
    export CTILE_GPU_SLOW_ITERS=2000
    step "memcheck --leak-check full --track-stream-ordered-races all" "$logs/sanitizer_memcheck_full.log" \
      timeout 900 "$san" --tool memcheck --leak-check full --track-stream-ordered-races all --error-exitcode 97 \
      --print-limit 100 "$gpu_test" runtime_
    note "    $(grep -E 'ERROR SUMMARY|LEAK SUMMARY' "$logs/sanitizer_memcheck_full.log" | tr '\n' ' ')"
    # Each report with the test it happened in (the harness prints '[ RUN  ] name' first), then the
    # whole first report (its host backtrace names the call: a launch, a graph, a copy or a free), so
    # that the summary alone tells where to look even when the log does not come back.
    awk '/^\[ RUN  \]/ { test = $4 } /^========= [A-Z]/ && !/SUMMARY|COMPUTE-SANITIZER/ && n < 20 { print "    " test ": " $0; n++ }' \
      "$logs/sanitizer_memcheck_full.log" >>"$summary"
    awk '/^========= [A-Z]/ && !/SUMMARY|COMPUTE-SANITIZER/ { if (seen++) exit } seen { print "    | " $0 }' \
      "$logs/sanitizer_memcheck_full.log" | head -n 60 >>"$summary"
    gzip -kf "$logs/sanitizer_memcheck_full.log"  # the full log, smaller, in case the plain one is too big to come back
    # The experiment (informational): graphs with several first or last nodes joined by empty nodes
    # (CTILE_GRAPH_JOIN_NODES=1). If the sanitizer's use-after-free reports go away with it, they
    # come from how the tool follows a graph's branches, and join nodes become the default.
    CTILE_GRAPH_JOIN_NODES=1 timeout 300 "$san" --tool memcheck --leak-check full --track-stream-ordered-races all \
      --error-exitcode 97 --print-limit 100 "$gpu_test" runtime_graph_ >"$logs/sanitizer_memcheck_join_nodes.log" 2>&1
    note "memcheck of runtime_graph_ with CTILE_GRAPH_JOIN_NODES=1 (experiment, informational): exit $?"
    note "    $(grep -E 'ERROR SUMMARY|LEAK SUMMARY' "$logs/sanitizer_memcheck_join_nodes.log" | tr '\n' ' ')"
  fi
fi
finish
