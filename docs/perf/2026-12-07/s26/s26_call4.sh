#!/usr/bin/env bash
# Session 26, call 4: call 3's profile put the 64-row split-K partial at one CTA an SM (255
# registers a thread, 141-149 KB of shared memory) with ~1 us of set-up and epilogue per tile block
# beside 8 K steps: the same rows with two CTAs an SM asked for (min_ctas 2: registers capped for
# two; K steps of 64 for a ring that fits twice), ring slots 3, and both.
t0=$SECONDS
source bench/gemm/common.sh
build_gemm_bench "$out/build.log" || exit 1
echo "built at $((SECONDS-t0))s"
export CTILE_CACHE_DIR="$build/kernel-cache"
b="$build/bench/ctile_gemm_bench"
rm -f "$out"/*.jsonl "$out"/*.log
show() {
  python3 -c "import json,sys; [print(sys.argv[1], r['shape'], r['config'], round(r['ms']*1e3,1) if r.get('ok') else r.get('error','')[:160], 'us') for r in map(json.loads, open(sys.argv[2]))]" "$1" "$2"
}
shapes=16x2560x4096,128x2560x4096,128x6144x2560
while IFS='|' read -r name envs cfgs; do
  [[ -z "$name" ]] && continue
  timeout 80 env $envs "$b" --rows skinny --only $shapes --config $cfgs --reps 10 --out "$out/$name.jsonl" > "$out/$name.log" 2>&1
  show "$name" "$out/$name.jsonl" | grep "/s"
done <<'ROWS'
def|CTILE_X=0|64x64x128,64x64x64
min2|CTILE_MIN_CTAS=2|64x64x128,64x64x64
min2_r3|CTILE_MIN_CTAS=2 CTILE_RING_SLOTS=3|64x64x128
min2_st2|CTILE_MIN_CTAS=2 CTILE_STAGES=2|64x64x64
ROWS
echo "rows done at $((SECONDS-t0))s"
tar -czf "$out/records4.tar.gz" -C "$out" $(cd "$out" && ls *.jsonl *.log 2>/dev/null) 2>/dev/null; rm -f "$out"/*.log "$out"/*.jsonl
echo "all done at $((SECONDS-t0))s"
