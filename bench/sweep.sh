#!/usr/bin/env bash
# Tuning sweep on a GPU machine: builds ctile_bench (Release) and runs it under several code
# generator settings (CTILE_PREFETCH, CTILE_THREADS), then profiles the default setting with ncu
# (kernel duration, DRAM bytes, registers, occupancy). Results under ${OUT:-results/sweep}:
#   sweep.jsonl (one record per benchmark and setting, with "config"), ncu.csv, sweep.log
# Usage: bench/sweep.sh ["PF:THREADS" ...]   (default: 1:0 0:0 1:256 1:128)
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
out="${OUT:-$root/results/sweep}"
mkdir -p "$out"
log="$out/sweep.log"
: >"$log"
cmake -S . -B build/sweep -G Ninja -DCMAKE_BUILD_TYPE=Release -DCTILE_BUILD_TESTS=OFF -DCTILE_BUILD_EXAMPLES=OFF \
  >>"$log" 2>&1
cmake --build build/sweep -j "$(nproc)" --target ctile_bench >>"$log" 2>&1 || { echo "build failed"; tail -30 "$log"; exit 1; }
bin=build/sweep/bench/ctile_bench
export CTILE_CACHE_DIR="$out/kcache"
configs=("$@")
[[ ${#configs[@]} -eq 0 ]] && configs=(1:0 0:0 1:256 1:128)
: >"$out/sweep.jsonl"
for c in "${configs[@]}"; do
  pf="${c%%:*}" th="${c##*:}"
  echo "== config prefetch=$pf threads=$th" | tee -a "$log"
  CTILE_PREFETCH="$pf" CTILE_THREADS="$([[ $th == 0 ]] && echo "" || echo "$th")" \
    "$bin" ${BENCH_ARGS:---quick} --out "$out/run.jsonl" >>"$log" 2>&1
  echo "exit $?" >>"$log"
  sed "s/^{/{\"config\":\"pf=$pf,th=$th\",/" "$out/run.jsonl" >>"$out/sweep.jsonl"
  rm -f "$out/run.jsonl"
  grep -o '"kernel":"[a-z_]*","dtype":"[a-z0-9]*","shape":\[[0-9,]*\],[^}]*"tbps":[0-9.]*' "$out/sweep.jsonl" | tail -n 14 |
    sed 's/"bytes":[0-9]*,"ms":[0-9.]*,//' | tee -a "$log"
done
if command -v ncu >/dev/null && [[ "${NCU:-1}" == 1 ]]; then
  ncu --clock-control none --csv --page raw \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__registers_per_thread,launch__block_size,launch__grid_size,sm__warps_active.avg.pct_of_peak_sustained_active,launch__occupancy_limit_registers,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio \
    -k regex:ctile_ "$bin" --quick --iters 2 --trials 1 >"$out/ncu.csv" 2>>"$log"
  echo "ncu exit $?" >>"$log"
fi
