#!/usr/bin/env bash
# Session 22, call 1: the decode-shape products (issue 8) with 64 x 64 tiles, TMA copies and deep
# rings under the producer warpgroup (the compiler's new choice, and option ring_slots), beside cuBLAS.
source bench/gemm/common.sh
t0=$SECONDS
# Issue 9: compute-sanitizer on a raw-CUDA graph of the same shape as the test it flags.
d=docs/perf/2026-12-06-h100/s22
nvcc -arch=sm_90 -o /tmp/probe $d/graph_fork_probe.cu > "$out/probe_build.log" 2>&1
for m in explicit capture; do
  timeout 60 compute-sanitizer --tool memcheck --track-stream-ordered-races all /tmp/probe $m > "$out/probe_$m.txt" 2>&1
  echo "probe $m: rc $? $(grep -c 'Use-after-free' "$out/probe_$m.txt") use-after-free; $(grep 'ERROR SUMMARY' "$out/probe_$m.txt")"
done
build_gemm_bench "$out/build.log" || exit 1
echo "built at $((SECONDS-t0))s"
export CTILE_CACHE_DIR="$build/kernel-cache"; rm -rf "$CTILE_CACHE_DIR"
b="$build/bench/ctile_gemm_bench"
shapes=128x2560x4096,128x6144x2560,128x4096x12288,16x2560x4096,16x6144x2560
timeout 150 python3 bench/gemm/peers.py --kernels skinny --impls torch --only $shapes --reps 30 --out "$out/skinny_peers.jsonl" > "$out/skinny_peers.log" 2>&1
echo "peers done at $((SECONDS-t0))s"
run_variant() {  # name, configurations (each also selects its split-K rows), env...
  local name=$1 cfgs=$2; shift 2
  timeout 120 env "$@" "$b" --rows skinny --only $shapes --config $cfgs --reps 30 --out "$out/skinny_$name.jsonl" > "$out/skinny_$name.log" 2>&1
  echo "$name done at $((SECONDS-t0))s"
}
# default: the compiler's choice (TMA for 64-row GEMM products, rings filled); r2: rings as
# smem-alloc sized them (4 slots); r8: 8 slots; cpasync: no TMA (the 64-row configs' old default).
run_variant default 64x64x64,64x128x64,128x128x64,16x64x64 CTILE_X=0
run_variant r2 64x64x64,64x128x64,128x128x64 CTILE_RING_SLOTS=2
run_variant r8 64x64x64 CTILE_RING_SLOTS=8
run_variant cpasync 64x64x64,64x128x64 CTILE_TMA=-1
# The large shapes' 128 x 128 x 64 rows (their rings grow from 4 to 6 slots by default).
for v in default r2; do
  e=CTILE_X=0; [[ $v == r2 ]] && e=CTILE_RING_SLOTS=2
  timeout 60 env $e "$b" --rows shapes --only 4096x4096x4096,8192x8192x512,2048x2048x2048 --config 128x128x64,64x128x32 --reps 30 --out "$out/big_$v.jsonl" > "$out/big_$v.log" 2>&1
  echo "big $v done at $((SECONDS-t0))s"
done
python3 - "$out" <<'PY'
import json, glob, os, sys
out = sys.argv[1]
peer = {}
for l in open(os.path.join(out, "skinny_peers.jsonl")):
    r = json.loads(l)
    if r.get("ok"): peer[tuple(r["shape"])] = r["ms"]
rows = {}
for f in sorted(glob.glob(os.path.join(out, "skinny_*.jsonl"))):
    v = os.path.basename(f)[7:-6]
    if v == "peers": continue
    for l in open(f):
        r = json.loads(l)
        rows.setdefault((tuple(r["shape"]), r["config"]), {})[v] = (r.get("ms"), r.get("ok"), r.get("error", "")[:80])
for (s, c), d in sorted(rows.items()):
    p = peer.get(s)
    cells = []
    for v in ["default", "r2", "r8", "cpasync"]:
        if v not in d: cells.append(f"{v}=-"); continue
        ms, ok, err = d[v]
        cells.append(f"{v}={ms*1e3:.1f}us {p/ms:.3f}x" if ms and ok and p else f"{v}=FAIL {err}")
    print("x".join(map(str, s)), c, f"cublas={p*1e3:.1f}us" if p else "", " ".join(cells))
for v in ["default", "r2"]:
    for l in open(os.path.join(out, f"big_{v}.jsonl")):
        r = json.loads(l)
        print("big", v, r["shape"], r["config"], r.get("tflops"), r.get("ok"))
PY
tar -czf "$out/logs.tar.gz" -C "$out" $(cd "$out" && ls *.log) 2>/dev/null; rm -f "$out"/*.log
