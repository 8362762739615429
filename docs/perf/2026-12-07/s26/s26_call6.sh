#!/usr/bin/env bash
# Session 26, call 6: the fused epilogue (C = silu(A @ B + bias)) with the producer copying the
# next tile block's operands during this one's epilogue (epilogue_overlap 1: the rings move above
# the epilogue's scratch, a ring slot fewer) against the default (rings over the scratch, the
# producer waits for each tile block's end), in turns, beside the plain product and torch.addmm +
# F.silu / torch.matmul in the same call.
t0=$SECONDS
source bench/gemm/common.sh
build_gemm_bench "$out/build.log" || exit 1
echo "built at $((SECONDS-t0))s"
export CTILE_CACHE_DIR="$build/kernel-cache"
b="$build/bench/ctile_gemm_bench"
rm -f "$out"/*.jsonl "$out"/*.log
shapes=4096x4096x4096,8192x8192x8192
for v in def:CTILE_X=0 ov1:CTILE_EPILOGUE_OVERLAP=1 def2:CTILE_X=0 ov1b:CTILE_EPILOGUE_OVERLAP=1; do
  timeout 60 env ${v#*:} "$b" --rows epilogue,shapes --only $shapes --config 128x256x64 --out "$out/${v%%:*}.jsonl" > "$out/${v%%:*}.log" 2>&1
  echo "${v%%:*} at $((SECONDS-t0))s"
done
timeout 120 python3 bench/gemm/peers.py --kernels matmul,matmul_bias_silu --impls torch --only $shapes --out "$out/peers.jsonl" > "$out/peers.log" 2>&1
echo "peers at $((SECONDS-t0))s"
python3 - "$out" <<'PY'
import json, sys, collections, os
o = sys.argv[1]
rows = collections.defaultdict(dict)
for v in ('def', 'ov1', 'def2', 'ov1b', 'peers'):
    f = f'{o}/{v}.jsonl'
    if not os.path.exists(f): continue
    for r in map(json.loads, open(f)):
        key = (r.get('kernel'), r.get('dtype'), tuple(r.get('shape', [])))
        name = v if v != 'peers' else r.get('impl')
        if r.get('config', '').endswith('unchecked') or r.get('impl') == 'ctile_unchecked': name += '_unchecked'
        rows[key][name] = round(r.get('tflops', 0), 1) if r.get('ok', True) else 'FAIL'
for k, d in sorted(rows.items()): print(k, d)
PY
tar -czf "$out/records6.tar.gz" -C "$out" $(cd "$out" && ls *.jsonl *.log 2>/dev/null) 2>/dev/null; rm -f "$out"/*.log "$out"/*.jsonl
echo "all done at $((SECONDS-t0))s"
