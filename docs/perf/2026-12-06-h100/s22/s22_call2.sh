#!/usr/bin/env bash
# Session 22, call 2: why the 64 x 64 decode-shape product streams at ~460 ns a K step whatever
# its copies (ncu of ctile's kernel with TMA and with cp.async beside cuBLAS's, 128x2560x4096), the
# same rows without programmatic edges and on one CTA a tile block; the graph probe's variants.
source bench/gemm/common.sh
t0=$SECONDS
d=docs/perf/2026-12-06-h100/s22
nvcc -arch=sm_90 -o /tmp/probe $d/graph_fork_probe.cu > "$out/probe_build.log" 2>&1
for m in explicit empty-root serial capture; do
  timeout 60 compute-sanitizer --tool memcheck --track-stream-ordered-races all /tmp/probe $m > "$out/probe_$m.txt" 2>&1
  echo "probe $m: rc $? $(grep -c 'Invalid\|Use-after-free' "$out/probe_$m.txt") reports; $(grep 'ERROR SUMMARY' "$out/probe_$m.txt" | head -1)"
done
build_gemm_bench "$out/build.log" || exit 1
echo "built at $((SECONDS-t0))s"
export CTILE_CACHE_DIR="$build/kernel-cache"; rm -rf "$CTILE_CACHE_DIR"
b="$build/bench/ctile_gemm_bench"
sec="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section LaunchStats --section Occupancy"
for v in tma cpasync; do
  e=CTILE_X=0; [[ $v == cpasync ]] && e=CTILE_TMA=-1
  timeout 120 env $e ncu $sec -k regex:bench__matmul --launch-skip 3 --launch-count 1 "$b" --rows skinny --only 128x2560x4096 --config 64x64x64 --reps 3 > "$out/ncu_$v.txt" 2>&1
  echo "ncu $v done at $((SECONDS-t0))s"
done
cat > /tmp/tm.py <<'PY'
import torch, sys
m, n, k = map(int, sys.argv[1].split("x"))
a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16); w = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
for _ in range(5): c = a @ w
torch.cuda.synchronize()
PY
timeout 90 ncu $sec --launch-skip 3 --launch-count 1 python3 /tmp/tm.py 128x2560x4096 > "$out/ncu_cublas.txt" 2>&1
echo "ncu cublas done at $((SECONDS-t0))s"
for v in default pdl0 stages1 cpasync cpasync_pdl0; do
  case $v in default) e=CTILE_X=0;; pdl0) e=CTILE_PDL=0;; stages1) e=CTILE_STAGES=1;; cpasync) e=CTILE_TMA=-1;; cpasync_pdl0) e="CTILE_TMA=-1 CTILE_PDL=0";; esac
  timeout 90 env $e "$b" --rows skinny --only 128x2560x4096,128x6144x2560 --config 64x64x64 --reps 30 --out "$out/t_$v.jsonl" > "$out/t_$v.log" 2>&1
  echo "$v: $(python3 -c "import json,sys; print(' '.join(f\"{r['shape'][1]}:{r['config']}:{r['ms']*1e3:.1f}us\" for r in map(json.loads, open(sys.argv[1])) if r.get('ok')))" "$out/t_$v.jsonl")"
done
for v in tma cpasync cublas; do
  echo "== $v"; grep -E "^\s+(Duration|DRAM Throughput|Memory Throughput|L2 Cache Throughput|Compute \(SM\) Throughput|Registers Per Thread|Grid Size|Block Size|Dynamic Shared Memory Per Block|Achieved Occupancy|Warp Cycles Per Issued Instruction|Issued Warp Per Scheduler|No Eligible|One or More Eligible)" "$out/ncu_$v.txt" | head -20
done
tar -czf "$out/results.tar.gz" -C "$out" $(cd "$out" && ls *.log *.jsonl *.txt) 2>/dev/null; rm -f "$out"/*.log "$out"/*.jsonl "$out"/probe_*.txt
