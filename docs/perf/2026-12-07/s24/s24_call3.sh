#!/usr/bin/env bash
# Session 24, call 3: the GPU suites at the commit that changes the device library's shared
# addresses and wgmma descriptors (every tensor-core and ldmatrix path) and makes TMA with the
# producer warpgroup the compiler's choice for a GEMM's 64-row K loop; then the decode-shape rows
# with the compiler's defaults beside cuBLAS.
t0=$SECONDS
SKIP_BENCH=1 SANITIZE=0 BUDGET_S=300 bash scripts/gpu_all.sh > "$OUT/gpu_all.log" 2>&1
echo "gpu_all rc $? at $((SECONDS-t0))s"
tail -25 "$OUT/summary.txt" 2>/dev/null
# the rows only while the call's time allows (the device budget was ~580 s when this ran)
[[ $((SECONDS-t0)) -lt ${ROWS_BEFORE_S:-260} ]] || { echo "no time left for the rows"; exit 0; }
source bench/gemm/common.sh
build_gemm_bench "$out/build.log" || exit 1
export CTILE_CACHE_DIR="$build/kernel-cache"
b="$build/bench/ctile_gemm_bench"
shapes=128x2560x4096,16x2560x4096,128x6144x2560,128x4096x12288
timeout 90 "$b" --rows skinny --only $shapes --config 64x64x128,64x64x256,64x128x128,128x64x128 --reps 30 --out "$out/def.jsonl" > "$out/def.log" 2>&1
python3 -c "import json,sys; [print('default', r['shape'], r['config'], round(r['ms']*1e3,1) if r.get('ok') else r.get('error','')[:160], 'us') for r in map(json.loads, open(sys.argv[1]))]" "$out/def.jsonl"
timeout 60 python3 bench/gemm/peers.py --kernels skinny --impls torch --only $shapes --out "$out/peers.jsonl" > "$out/peers.log" 2>&1
python3 -c "import json,sys; [print('cublas', r.get('shape'), round(r['ms']*1e3,1), 'us') for r in map(json.loads, open(sys.argv[1])) if r.get('ok')]" "$out/peers.jsonl"
tar -czf "$out/skinny.tar.gz" -C "$out" def.jsonl def.log peers.jsonl peers.log 2>/dev/null; rm -f "$out"/*.log "$out"/*.jsonl
echo "all done at $((SECONDS-t0))s"
