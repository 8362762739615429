#!/usr/bin/env bash
# Session 22, call 3 (not run in session 22: its device time ran out; run as session 23 call 1, records in ../s23/call1/; first
# measurement): the decode-shape products with acc-split (CTILE_ACC_SPLIT=1: two accumulators
# alternating over the K loop), with and without TMA and the producer, against one accumulator,
# beside cuBLAS; 4096^3 with 128 x 128 tiles; then (RUN_SUITES=1) the GPU suites.
source bench/gemm/common.sh
t0=$SECONDS
build_gemm_bench "$out/build.log" || exit 1
echo "built at $((SECONDS-t0))s"
export CTILE_CACHE_DIR="$build/kernel-cache"; rm -rf "$CTILE_CACHE_DIR"
b="$build/bench/ctile_gemm_bench"
shapes=128x2560x4096,128x6144x2560,16x2560x4096
timeout 40 python3 bench/gemm/peers.py --kernels skinny --impls torch --only $shapes --reps 30 --out "$out/skinny_peers.jsonl" > "$out/skinny_peers.log" 2>&1
echo "peers done at $((SECONDS-t0))s"
# one: the default (one accumulator); split: CTILE_ACC_SPLIT=1; split_tma: the same with TMA copies
# and the producer warpgroup (CTILE_TMA=1) for the 64-row tiles.
for v in one split split_tma; do
  case $v in one) e=CTILE_X=0;; split) e=CTILE_ACC_SPLIT=1;; split_tma) e="CTILE_ACC_SPLIT=1 CTILE_TMA=1";; esac
  timeout 60 env $e "$b" --rows skinny --only $shapes --config 64x64x64,64x128x64 --reps 30 --out "$out/skinny_$v.jsonl" > "$out/skinny_$v.log" 2>&1
  echo "skinny $v done at $((SECONDS-t0))s"
done
for v in one split; do
  e=CTILE_X=0; [[ $v == split ]] && e=CTILE_ACC_SPLIT=1
  timeout 25 env $e "$b" --rows shapes --only 4096x4096x4096 --config 128x128x64 --reps 20 --out "$out/big_$v.jsonl" > "$out/big_$v.log" 2>&1
  echo "big $v done at $((SECONDS-t0))s"
done
python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
peer = {tuple(r["shape"]): r["ms"] for r in map(json.loads, open(os.path.join(out, "skinny_peers.jsonl"))) if r.get("ok")}
for f in ["skinny_one", "skinny_split", "skinny_split_tma", "big_one", "big_split"]:
    p = os.path.join(out, f + ".jsonl")
    if not os.path.exists(p): continue
    for r in map(json.loads, open(p)):
        s = tuple(r["shape"]); c = peer.get(s)
        if not r.get("ok"): print(f, s, r.get("config"), "FAIL", r.get("error", "")[:100]); continue
        print(f, "x".join(map(str, s)), r["config"], f"{r['ms']*1e3:.1f}us", f"{r['tflops']:.0f}TF", f"{c/r['ms']:.3f}x cuBLAS" if c else "")
PY
tar -czf "$out/bench.tar.gz" -C "$out" $(cd "$out" && ls *.log *.jsonl) 2>/dev/null; rm -f "$out"/*.log "$out"/*.jsonl
left=$((520 - (SECONDS - t0)))
echo "suites with ${left}s left"
if [[ "${RUN_SUITES:-0}" == 1 ]] && (( left > 150 )); then SKIP_BENCH=1 SANITIZE=0 BUDGET_S=$left scripts/gpu_all.sh > "$out/gpu_all.log" 2>&1; fi
tail -15 "$out/summary.txt" 2>/dev/null; tail -5 "$out/gpu_all.log"
echo "all done at $((SECONDS-t0))s"
