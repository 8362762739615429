#!/usr/bin/env bash
# Tuning sweep on a GPU machine: builds ctile_bench (Release), then for each code generator setting
# (CTILE_PREFETCH, CTILE_THREADS) profiles every benchmark kernel with ncu (kernel duration with
# caches flushed, DRAM bytes, registers, occupancy) and summarises achieved bandwidth per kernel and
# setting. Results under ${OUT:-results/sweep}: ncu_<setting>.csv, summary.txt, sweep.log.
# Usage: bench/sweep.sh ["PF:THREADS" ...]   (default: 0:0 0:128 0:256 0:512 1:0; THREADS 0 = default)
# BENCH_ONLY=kernel[,kernel...] limits the benchmarks (ctile_bench --only, exact kernel names). The
# L2 flush between timed calls is a kernel too (ctile_fill): skip its rows in the summary.
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
[[ ${#configs[@]} -eq 0 ]] && configs=(0:0 0:128 0:256 0:512 1:0)
only=()
[[ -n "${BENCH_ONLY:-}" ]] && only=(--only "$BENCH_ONLY")
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__registers_per_thread,launch__block_size,launch__grid_size,sm__warps_active.avg.pct_of_peak_sustained_active,launch__occupancy_limit_registers,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__inst_executed.sum
for c in "${configs[@]}"; do
  pf="${c%%:*}" th="${c##*:}"
  echo "== prefetch=$pf threads=$th" >>"$log"
  th_env=""
  [[ "$th" != 0 ]] && th_env="$th"
  CTILE_PREFETCH="$pf" CTILE_THREADS="$th_env" ncu --clock-control none --csv --page raw --print-units base --metrics "$metrics" \
    -k regex:ctile_ "$bin" --quick --reps 1 "${only[@]}" >"$out/ncu_pf${pf}_th${th}.csv" 2>>"$log"
  echo "ncu exit $?" >>"$log"
done
python3 bench/ncu_summary.py "$out"/ncu_*.csv | tee "$out/summary.txt"
