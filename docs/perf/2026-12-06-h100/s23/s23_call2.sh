#!/usr/bin/env bash
# Session 23, call 2 (warm machine after call 1 = s22_call3.sh): TMA + producer with one
# accumulator against the same with acc-split, in one run, twice in turns, at the decode shapes.
source bench/gemm/common.sh
t0=$SECONDS
build_gemm_bench "$out/build.log" || exit 1
export CTILE_CACHE_DIR="$build/kernel-cache"
b="$build/bench/ctile_gemm_bench"
shapes=128x2560x4096,128x6144x2560,16x2560x4096,128x4096x12288
for round in 1 2; do
  for v in tma split_tma; do
    e="CTILE_TMA=1"; [[ $v == split_tma ]] && e="CTILE_ACC_SPLIT=1 CTILE_TMA=1"
    timeout 80 env $e "$b" --rows skinny --only $shapes --config 64x64x64,64x128x64 --reps 30 --out "$out/${v}_$round.jsonl" > "$out/${v}_$round.log" 2>&1
    echo "$v round $round done at $((SECONDS-t0))s"
  done
done
python3 - "$out" <<'PY'
import json, os, sys, glob
out = sys.argv[1]
rows = {}
for p in sorted(glob.glob(os.path.join(out, "*_[12].jsonl"))):
    v = os.path.basename(p)[:-6]
    for r in map(json.loads, open(p)):
        if r.get("ok") and "/s" not in r["config"]: rows.setdefault(("x".join(map(str, r["shape"])), r["config"]), {})[v] = r["ms"] * 1e3
for k, d in sorted(rows.items()):
    print(k[0], k[1], " ".join(f"{v}={d[v]:.1f}" for v in sorted(d)))
PY
tar -czf "$out/bench.tar.gz" -C "$out" $(cd "$out" && ls *.log *.jsonl) 2>/dev/null; rm -f "$out"/*.log "$out"/*.jsonl
echo "all done at $((SECONDS-t0))s"
