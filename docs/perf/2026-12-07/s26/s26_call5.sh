#!/usr/bin/env bash
# Session 26, call 5: the 16-row split-K product at every decode shape of M = 16, with the sum's
# tile blocks one a CTA (blocks_per_cta 1: ncu put the sum at ~4 us on 40 CTAs of four 1 x 256
# pieces each) against the compiler's packing, cuBLAS beside.
t0=$SECONDS
source bench/gemm/common.sh
build_gemm_bench "$out/build.log" || exit 1
echo "built at $((SECONDS-t0))s"
export CTILE_CACHE_DIR="$build/kernel-cache"
b="$build/bench/ctile_gemm_bench"
rm -f "$out"/*.jsonl "$out"/*.log
shapes=16x6144x2560,16x2560x4096,16x19456x2560,16x2560x9728,16x6144x4096,16x4096x4096,16x24576x4096,16x4096x12288
for v in def:CTILE_X=0 bpc1:CTILE_BLOCKS_PER_CTA=1; do
  timeout 150 env ${v#*:} "$b" --rows skinny --only $shapes --config 16x64x64,16x64x128 --reps 10 --out "$out/${v%%:*}.jsonl" > "$out/${v%%:*}.log" 2>&1
  echo "${v%%:*} at $((SECONDS-t0))s"
done
timeout 100 python3 bench/gemm/peers.py --kernels skinny --impls torch --only $shapes --out "$out/peers.jsonl" > "$out/peers.log" 2>&1
python3 - "$out" <<'PY'
import json, sys, collections
o = sys.argv[1]
rows = collections.defaultdict(dict)
for v in ('def', 'bpc1'):
    for r in map(json.loads, open(f'{o}/{v}.jsonl')):
        rows[tuple(r['shape'])][v + ' ' + r['config']] = round(r['ms'] * 1e3, 1) if r.get('ok') else 'FAIL'
for r in map(json.loads, open(f'{o}/peers.jsonl')):
    if r.get('ok'): rows[tuple(r['shape'])]['cublas'] = round(r['ms'] * 1e3, 1)
for s, d in rows.items(): print(s, d)
PY
echo "all done at $((SECONDS-t0))s"
tar -czf "$out/records5.tar.gz" -C "$out" $(cd "$out" && ls *.jsonl *.log 2>/dev/null) 2>/dev/null; rm -f "$out"/*.log "$out"/*.jsonl
