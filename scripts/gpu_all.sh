#!/usr/bin/env bash
# One command for a GPU machine: build (Release, GPU tests on), run the GPU test suite (also under
# compute-sanitizer memcheck and racecheck, via scripts/gpu_run.sh), then the benchmark suite with
# its peers (torch, torch.compile, Triton) and write the report under ${OUT:-results}:
#   report.md, results.json, plot.png, summary.txt, logs.tar.gz
# Needs cmake, ninja, g++, the CUDA driver and NVRTC; python3 with torch/triton for the peers.
# STAGE=tests | bench splits the run in two (e.g. two calls on a machine with a per-call time limit).
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
out="${OUT:-$root/results}"
mkdir -p "$out"
logs="$(mktemp -d)"
summary="$out/summary.txt"
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }

commit="${CTILE_COMMIT:-}"
[[ -z "$commit" && -e "$root/.git" ]] && commit="$(git -C "$root" rev-parse --short HEAD 2>/dev/null)"
note "date: $(date -u +%FT%TZ)  commit: ${commit:-unknown (no .git here; set CTILE_COMMIT)}"
note "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"

# STAGE=tests runs steps 1-2 only, STAGE=bench step 3 only (over the build of an earlier
# STAGE=tests run on the same machine, or a fresh one); the default runs everything.
stage="${STAGE:-all}"

# 1. Build and GPU tests (+ compute-sanitizer).
if [[ "$stage" == bench ]]; then
  note "stage bench: GPU tests skipped"
elif [[ -x scripts/gpu_run.sh ]]; then
  OUT="$logs" scripts/gpu_run.sh >"$logs/gpu_run.log" 2>&1
  note "gpu_run.sh exit: $?"
  tail -n 30 "$logs/gpu_run.log" | tee -a "$summary"
else
  cmake -S . -B build/gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCTILE_BUILD_TESTS=OFF >"$logs/configure.log" 2>&1
  cmake --build build/gpu -j "$(nproc)" >"$logs/build.log" 2>&1
  note "build exit: $?"
fi
bench_bin="$(ls build/gpu/bench/ctile_bench 2>/dev/null || true)"
if [[ -z "$bench_bin" ]]; then
  cmake -S . -B build/bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DCTILE_BUILD_TESTS=OFF >"$logs/bench_configure.log" 2>&1
  cmake --build build/bench -j "$(nproc)" --target ctile_bench >"$logs/bench_build.log" 2>&1
  bench_bin=build/bench/bench/ctile_bench
fi

# 2. Examples on the GPU.
[[ "$stage" == bench ]] || for ex in $(sed -n 's/^set(CTILE_EXAMPLES \(.*\))$/\1/p' examples/CMakeLists.txt); do
  bin="$(ls build/gpu/examples/$ex build/bench/examples/$ex 2>/dev/null | head -1)"
  [[ -n "$bin" ]] && { "$bin" >"$logs/example_$ex.log" 2>&1; note "example $ex: exit $? $(tail -n 1 "$logs/example_$ex.log")"; }
done

if [[ "$stage" == tests ]]; then
  tar -czf "$out/logs.tar.gz" -C "$logs" . 2>/dev/null
  exit 0
fi

# 3. Benchmarks: cold JIT (empty cache), then a warm start from the disk cache, then the peers.
export CTILE_CACHE_DIR="$logs/kcache"
rm -rf "$CTILE_CACHE_DIR"
quick=()
[[ "${BENCH_QUICK:-0}" == 1 ]] && quick=(--quick)
"$bench_bin" "${quick[@]}" --out "$logs/ctile.jsonl" >"$logs/ctile_bench.log" 2>&1
note "ctile_bench exit: $?"
"$bench_bin" --jit-only --out "$logs/jit_warm.jsonl" >"$logs/ctile_jit_warm.log" 2>&1
note "ctile_bench --jit-only (warm) exit: $?"
launch_bin="$(dirname "$bench_bin")/ctile_launch_overhead"
[[ -x "$launch_bin" ]] || cmake --build "$(dirname "$(dirname "$bench_bin")")" -j "$(nproc)" --target ctile_launch_overhead \
  >"$logs/launch_build.log" 2>&1
"$launch_bin" --out "$logs/launch.jsonl" >"$logs/launch_overhead.log" 2>&1
note "ctile_launch_overhead exit: $?"
grep '^#' "$logs/launch_overhead.log" | tee -a "$summary"
PYTHONUNBUFFERED=1 python3 bench/peers.py "${quick[@]}" --out "$logs/peers.jsonl" >"$logs/peers.log" 2>&1
note "peers exit: $?"
python3 bench/report.py --ctile "$logs/ctile.jsonl" --peers "$logs/peers.jsonl" --jit-warm "$logs/jit_warm.jsonl" --launch "$logs/launch.jsonl" \
  --out "$out" --meta "$(head -n 2 "$summary" | tr '\n' ' ')" >"$logs/report.log" 2>&1
note "report exit: $?"
tail -n 40 "$out/report.md" 2>/dev/null
tar -czf "$out/logs.tar.gz" -C "$logs" . 2>/dev/null
