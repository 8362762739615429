#!/usr/bin/env bash
# Session 20, last device call: the resident grid for warp-specialised kernels (3df70c4) against
# the option stages = 1 (the old grid), GEMM (ab.sh) and attention prefill (ctile side only).
set -u
export ROUNDS=1
VARIANTS="CTILE_STAGES=1 -" CONFIG=128x256x64 SHAPES="8192x8192x512 4000x4000x4000" \
  timeout 150 bench/gemm/ab.sh 2>&1 | tail -10; mv "$OUT/ab.jsonl" "$OUT/ab_128x256x64.jsonl"
VARIANTS="CTILE_STAGES=1 -" CONFIG=128x128x64 SHAPES="8192x8192x512" \
  timeout 60 bench/gemm/ab.sh 2>&1 | tail -4; mv "$OUT/ab.jsonl" "$OUT/ab_128x128x64.jsonl"
source bench/gemm/common.sh
cmake --build "$build" --target ctile_attention_bench -j "$(nproc)" >"$out/att_build.log" 2>&1 || tail -20 "$out/att_build.log"
for v in CTILE_STAGES=1 -; do
  export CTILE_CACHE_DIR=$build/kc-att; rm -rf "$CTILE_CACHE_DIR"
  ( [[ $v != - ]] && export "$v"; timeout 80 "$build/bench/ctile_attention_bench" --prefill-only --only s4096_d128,s4096_d128_causal,s16384_d128_causal --out "$out/att_${v//=/}.jsonl" >"$out/att_${v//=/}.log" 2>&1 ) || echo "att $v failed"
done
python3 - "$out" <<'PY'
import json,sys
o=sys.argv[1]; rows={}
for tag,f in (("old","att_CTILE_STAGES1.jsonl"),("new","att_-.jsonl")):
    try:
        for l in open(f"{o}/{f}"):
            r=json.loads(l); rows.setdefault((r["kernel"],r["name"]),{})[tag]=(r.get("tflops"),r.get("ok"))
    except FileNotFoundError: print("missing",f)
for k,v in rows.items():
    a=v.get("old",(None,))[0]; b=v.get("new",(None,))[0]
    print(k, v, a and b and round(b/a,3))
PY
rm -f "$out/att_build.log" "$out/ab.log" "$out/ab_build.log"
