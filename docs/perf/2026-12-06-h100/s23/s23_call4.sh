#!/usr/bin/env bash
# Session 23, call 4 (the last ~250 s of device time): the two cheapest questions of call 3 at one
# shape, printed as they finish: K steps of 128 with TMA, and cp.async three steps ahead.
source bench/gemm/common.sh
t0=$SECONDS
build_gemm_bench "$out/build.log" || exit 1
echo "built at $((SECONDS-t0))s"
export CTILE_CACHE_DIR="$build/kernel-cache"
b="$build/bench/ctile_gemm_bench"
for v in tma pf3 tma_k128; do
  case $v in tma) e="CTILE_TMA=1"; c=64x64x64;; tma_k128) e="CTILE_TMA=1"; c=64x64x128;; pf3) e="CTILE_TMA=-1 CTILE_LOOP_PREFETCH=3"; c=64x64x64;; esac
  timeout 40 env $e "$b" --rows skinny --only 128x2560x4096 --config $c --reps 30 --out "$out/$v.jsonl" > "$out/$v.log" 2>&1
  python3 -c "import json,sys; [print('$v', r['config'], round(r['ms']*1e3,1), 'us') for r in map(json.loads, open(sys.argv[1])) if r.get('ok')]" "$out/$v.jsonl"
  echo "$v done at $((SECONDS-t0))s"
done
